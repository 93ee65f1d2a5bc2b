// *total += sum of x[i]^2: each block reduces its part in shared memory, then one atomic add per block.
#define BLOCK 256

extern "C" __global__ void sumSquares(const int *x, int n, unsigned long long *total)
{
    __shared__ unsigned long long part[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    long long v = i < n ? x[i] : 0;
    part[threadIdx.x] = (unsigned long long)(v * v);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            part[threadIdx.x] += part[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(total, part[0]);
}
