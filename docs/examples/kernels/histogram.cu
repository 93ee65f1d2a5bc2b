// 256-bin histogram of bytes. Atomics on one global array would make every thread wait on the same 256
// counters; here each block counts into its own copy in shared memory, then adds it to the global bins
// with one atomicAdd per bin.
extern "C" __global__ void histogram256(const unsigned char *data, int n, unsigned int *bins)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&bins[b], local[b]);
}
