// C = A * B for n x n int matrices, one thread per element of C (2D grid of 2D blocks).
extern "C" __global__ void matmul(const int *a, const int *b, int *c, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n)
        return;
    int sum = 0;
    for (int k = 0; k < n; k++)
        sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
}
