// A 5×5 filter over a grey image, one thread per output pixel. The weights live in constant memory (the
// page writes them with module.global('weights')): every thread reads the same weight at the same time,
// which constant memory broadcasts. Pixels past the border repeat the edge pixel.
__constant__ int weights[25];

extern "C" __global__ void convolve(const unsigned char *in, unsigned char *out, int width, int height, int shift, int bias)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    int sum = 0;
    for (int dy = -2; dy <= 2; ++dy) {
        int sy = min(max(y + dy, 0), height - 1);
        for (int dx = -2; dx <= 2; ++dx) {
            int sx = min(max(x + dx, 0), width - 1);
            sum += weights[(dy + 2) * 5 + dx + 2] * in[sy * width + sx];
        }
    }
    int v = ((sum + (1 << (shift - 1))) >> shift) + bias;
    out[y * width + x] = (unsigned char)min(max(v, 0), 255);
}
