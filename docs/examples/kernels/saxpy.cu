// out = a·x + y, one thread per element: the smallest useful kernel. Blocks of 256 threads cover the
// array; the last block's threads past n do nothing.
extern "C" __global__ void saxpy(int n, float a, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + y[i];
}
