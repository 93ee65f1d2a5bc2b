// Escape-time Mandelbrot in 20.12 fixed point (exact integer arithmetic: every device, the emulator and
// JS give the same counts). iters[row * width + col] = steps before |z| > 2, at most maxIter.
extern "C" __global__ void mandelbrot(unsigned char *iters, int width, int height, int maxIter)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= width || row >= height)
        return;
    const int one = 1 << 12;
    int cx = col * 3 * one / width - 5 * one / 2;   // re in [-2.5, 0.5)
    int cy = row * 3 * one / height - 3 * one / 2;  // im in [-1.5, 1.5)
    int x = 0, y = 0, n = 0;
    while (n < maxIter) {
        int x2 = (x * x) >> 12, y2 = (y * y) >> 12;
        if (x2 + y2 > 4 * one)
            break;
        y = ((2 * x * y) >> 12) + cy;
        x = x2 - y2 + cx;
        n++;
    }
    iters[row * width + col] = (unsigned char)n;
}
