// The WebGPU bench's division and square-root workload (bench/webgpu-page.ts, issue 26 item 4): nvcc compiles
// `sqrtf(a) / b` to sqrt.rn.f32 and div.rn.f32, which the WebGPU backend computes exactly in integer arithmetic
// (wgsl-lib.ts kp_f32_sqrt, kp_f32_div); the hand-written WGSL beside it (bench/webgpu-hand.ts) uses WGSL's own
// sqrt and `/`, so the ratio is what the exact roundings cost. Written for kernelpack.
extern "C" __global__ void div_sqrt(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = sqrtf(a[i]) / b[i];
}
