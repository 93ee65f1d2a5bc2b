// Sum of n integers in two launches of one kernel. Each block adds up its share (a grid-stride loop, two
// elements per step) into a register, then the block's 256 values are summed as a tree in shared memory:
// half the threads add the other half's values, a barrier, and again, until s[0] holds the block's sum.
// The first launch writes one partial sum per block; the second, with one block, sums the partials.
#define BLOCK 256

extern "C" __global__ void blockSum(const int *in, int n, int *partial)
{
    __shared__ int s[BLOCK];
    int t = threadIdx.x;
    int sum = 0;
    for (int i = blockIdx.x * 2 * BLOCK + t; i < n; i += gridDim.x * 2 * BLOCK) {
        sum += in[i];
        if (i + BLOCK < n)
            sum += in[i + BLOCK];
    }
    s[t] = sum;
    __syncthreads();
    for (int half = BLOCK / 2; half > 0; half >>= 1) {
        if (t < half)
            s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = s[0];
}
