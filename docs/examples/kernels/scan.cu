// Inclusive prefix sum. Within a warp, five __shfl_up_sync steps: lane i adds the value of lane i − d for
// d = 1, 2, 4, 8, 16, reading its neighbours' registers without shared memory. Then warp 0 scans the
// warps' totals the same way, and every warp adds the totals of the warps before it. scanBlocks also
// writes each block's total; scanned by a one-block launch of the same kernel, those become the
// offsets addOffsets adds to every block after the first.
__device__ int scanWarp(int v)
{
    int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += up;
    }
    return v;
}

extern "C" __global__ void scanBlocks(const int *in, int *out, int *blockTotals, int n)
{
    __shared__ int warpTotals[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = scanWarp(i < n ? in[i] : 0);
    if (lane == 31)
        warpTotals[warp] = v;
    __syncthreads();
    if (warp == 0)
        warpTotals[lane] = scanWarp(lane < (int)(blockDim.x >> 5) ? warpTotals[lane] : 0);
    __syncthreads();
    if (warp > 0)
        v += warpTotals[warp - 1];
    if (i < n)
        out[i] = v;
    if (threadIdx.x == blockDim.x - 1)
        blockTotals[blockIdx.x] = v;
}

extern "C" __global__ void addOffsets(int *out, const int *scannedTotals, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n)
        out[i] += scannedTotals[blockIdx.x - 1];
}
