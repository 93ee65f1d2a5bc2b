// The WebGPU bench's workloads for what exactness costs there (bench/webgpu-page.ts, issue 26): nvcc compiles
// `sqrtf(a) / b` to sqrt.rn.f32 and div.rn.f32, which the WebGPU backend computes exactly in integer arithmetic
// (wgsl-lib.ts kp_f32_sqrt, kp_f32_div), and a double-precision vector add to add.f64, which it computes in
// software binary64 (WGSL has no f64). The hand-written WGSL beside them (bench/webgpu-hand.ts) uses WGSL's
// own sqrt and `/`, and adds in f32 (what a WebGPU developer would write), so the ratios are what the exact
// roundings and software f64 cost. Written for kernelpack.
extern "C" __global__ void div_sqrt(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = sqrtf(a[i]) / b[i];
}

extern "C" __global__ void vec_add_f64(const double *a, const double *b, double *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
