// Forward differences of a signal, d[i] = x[i+1] - x[i], one 256-element tile per block in shared memory.
#define TILE 256

__device__ void load_tile(float *s, int n, const float *x)
{
    int i = blockIdx.x * TILE + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    // the first element of the next tile, for the tile's last difference
    if (threadIdx.x == 0) {
        int next = (blockIdx.x + 1) * TILE;
        s[TILE] = next < n ? x[next] : 0.0f;
    }
    __syncthreads();
}

// Reuses the tile in place to save shared memory. BUG, seeded on purpose: thread t reads s[t + 1] while
// thread t + 1 overwrites it, with no barrier between. Since Volta the lanes of a warp need not run in
// lockstep, and threads 31 and 32 are in different warps anyway, so on a GPU thread t may read the new value.
// The emulator runs the threads in order, so the results come out right there and the tests pass;
// KERNELPACK_CHECK=1 (racecheck) reports the hazard, as compute-sanitizer does.
extern "C" __global__ void diff_inplace(int n, const float *x, float *d)
{
    __shared__ float s[TILE + 1];
    load_tile(s, n, x);
    float right = s[threadIdx.x + 1];
    s[threadIdx.x] = right - s[threadIdx.x];
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n - 1) d[i] = s[threadIdx.x];
}

// The fix: every thread has read its neighbour before any thread writes.
extern "C" __global__ void diff_synced(int n, const float *x, float *d)
{
    __shared__ float s[TILE + 1];
    load_tile(s, n, x);
    float right = s[threadIdx.x + 1];
    float left = s[threadIdx.x];
    __syncthreads();
    s[threadIdx.x] = right - left;
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n - 1) d[i] = s[threadIdx.x];
}
