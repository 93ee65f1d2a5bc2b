// Counts the values of `data` into `bins` buckets (value % bins), with one global atomic per element.
extern "C" __global__ void histogram(const unsigned int *data, int n, unsigned int *counts, int bins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&counts[data[i] % bins], 1u);
}
