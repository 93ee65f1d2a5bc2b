// Two versions of a block sum in shared memory. sumRacy forgets the barrier between storing the values
// and the first step of the tree: thread t reads s[t + 128], which thread t + 128 (another warp) may not
// have stored yet. On a GPU the sum is usually right anyway — until it is not. sumFixed has the barrier.
#define BLOCK 256

extern "C" __global__ void sumRacy(const int *in, int *out)
{
    __shared__ int s[BLOCK];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * BLOCK + t];
    for (int half = BLOCK / 2; half > 0; half >>= 1) {
        if (t < half)
            s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

extern "C" __global__ void sumFixed(const int *in, int *out)
{
    __shared__ int s[BLOCK];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * BLOCK + t];
    __syncthreads();
    for (int half = BLOCK / 2; half > 0; half >>= 1) {
        if (t < half)
            s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
