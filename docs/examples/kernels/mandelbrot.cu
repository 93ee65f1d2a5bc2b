// Escape-time Mandelbrot: one thread per pixel counts the steps of z ← z² + c before |z| > 2, at most
// maxIter. The arithmetic is int32 in Q12 fixed point (4096 = 1.0), so the GPU, WebGPU, the emulator and
// the page's JS reference count exactly the same steps. |z| ≤ 2 before each step keeps every product
// below 2^31.
extern "C" __global__ void mandelbrot(unsigned int *counts, int width, int height, int x0, int y0, int step, int maxIter)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height)
        return;
    int cr = x0 + px * step, ci = y0 + py * step;
    int zr = 0, zi = 0, k = 0;
    for (; k < maxIter; ++k) {
        int rr = (zr * zr) >> 12, ii = (zi * zi) >> 12;
        if (rr + ii > (4 << 12))
            break;
        zi = ((zr * zi) >> 11) + ci;   // 2·zr·zi
        zr = rr - ii + cr;
    }
    counts[py * width + px] = k;
}
