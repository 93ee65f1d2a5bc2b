// Node addon over the generated wrapper C: the device images sit in this .node file (.nv_fatbin) and are
// registered with the CUDA runtime when it loads. Exports kernels(), device() and vecAdd(a, b).
#include <node_api.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include "vecadd.wrapper.h"

#define CHECK(call) do { if ((call) != napi_ok) { napi_throw_error(env, NULL, #call " failed"); return NULL; } } while (0)

static napi_value str(napi_env env, const char *s) {
  napi_value v;
  return napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v) == napi_ok ? v : NULL;
}

// [{ name, hostSymbol }] for every kernel the wrapper registered.
static napi_value kernels(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value list;
  CHECK(napi_create_array_with_length(env, kp_vecadd_kernels_count, &list));
  for (unsigned i = 0; i < kp_vecadd_kernels_count; i++) {
    napi_value k;
    CHECK(napi_create_object(env, &k));
    CHECK(napi_set_named_property(env, k, "name", str(env, kp_vecadd_kernels[i].name)));
    CHECK(napi_set_element(env, list, i, k));
  }
  return list;
}

// { count, status }: what the CUDA runtime reports (no GPU: count 0 and an error name).
static napi_value device(napi_env env, napi_callback_info info) {
  (void)info;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  napi_value out, n;
  CHECK(napi_create_object(env, &out));
  CHECK(napi_create_int32(env, err == cudaSuccess ? count : 0, &n));
  CHECK(napi_set_named_property(env, out, "count", n));
  CHECK(napi_set_named_property(env, out, "status", str(env, cudaGetErrorName(err))));
  return out;
}

// vecAdd(a: Float32Array, b: Float32Array): Float32Array, launched through the exported host symbol.
static napi_value vec_add(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  float *a, *b;
  size_t na, nb;
  napi_typedarray_type ta, tb;
  if (argc < 2 || napi_get_typedarray_info(env, argv[0], &ta, &na, (void **)&a, NULL, NULL) != napi_ok ||
      napi_get_typedarray_info(env, argv[1], &tb, &nb, (void **)&b, NULL, NULL) != napi_ok ||
      ta != napi_float32_array || tb != napi_float32_array || na != nb) {
    napi_throw_type_error(env, NULL, "vecAdd(a, b) takes two Float32Arrays of the same length");
    return NULL;
  }
  int n = (int)na;
  size_t bytes = na * sizeof(float);
  float *da = NULL, *db = NULL, *dc = NULL;
  napi_value result, buffer;
  float *c;
  CHECK(napi_create_arraybuffer(env, bytes, (void **)&c, &buffer));
  CHECK(napi_create_typedarray(env, napi_float32_array, na, buffer, 0, &result));
  cudaError_t err = cudaMalloc((void **)&da, bytes);
  if (!err) err = cudaMalloc((void **)&db, bytes);
  if (!err) err = cudaMalloc((void **)&dc, bytes);
  if (!err) err = cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
  if (!err) err = cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
  if (!err) {
    void *args[] = { &da, &db, &dc, &n };
    dim3 block = { 256, 1, 1 }, grid = { (unsigned)((n + 255) / 256), 1, 1 };
    err = cudaLaunchKernel((const void *)kp_vecadd_vecAdd, grid, block, args, 0, 0);
  }
  if (!err) err = cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  if (err) {
    napi_throw_error(env, cudaGetErrorName(err), cudaGetErrorString(err));
    return NULL;
  }
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    { "kernels", NULL, kernels, NULL, NULL, NULL, napi_default, NULL },
    { "device", NULL, device, NULL, NULL, NULL, napi_default, NULL },
    { "vecAdd", NULL, vec_add, NULL, NULL, NULL, napi_default, NULL },
  };
  CHECK(napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
