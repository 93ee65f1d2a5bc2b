// out[i] = sum of in[i - radius .. i + radius], clamped to the array: a 1D box filter, one thread per output.
extern "C" __global__ void windowSum(const int *in, int *out, int n, int radius)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int lo = max(i - radius, 0), hi = min(i + radius, n - 1);
    int sum = 0;
    for (int j = lo; j <= hi; j++)
        sum += in[j];
    out[i] = sum;
}
