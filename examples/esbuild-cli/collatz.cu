// steps[i] = number of Collatz steps (n -> n/2 or 3n+1) from n = i + 1 down to 1.
extern "C" __global__ void collatz(unsigned int *steps, unsigned int count)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    unsigned long long n = i + 1ull;
    unsigned int s = 0;
    while (n != 1) {
        n = (n & 1) ? 3 * n + 1 : n >> 1;
        s++;
    }
    steps[i] = s;
}
