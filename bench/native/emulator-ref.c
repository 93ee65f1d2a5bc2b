/*
 * Native reference of bench/emulator.bench.ts (issue 24): each of the bench's six kernels as single-threaded
 * C with the algorithm and order of operations of the bench's plain JavaScript loop (layernorm: the summation
 * order of test/fixtures/emulator/reference.ts refLayernorm), on the same inputs, generated here by the same
 * formulas. The bench builds it with `gcc -O2 -ffp-contract=off` (float math stays float: no -ffast-math, no
 * a*b+c contracted into an fma), so every output is bit-identical to the JS loop's; the bench compares the
 * checksums.
 *
 *   emulator-ref <kernel> <sizes...>
 *     vec_add N | reduce_sum_shared N BLOCK | matmul_tile16 M | warp_reduce_down N | scan_block N BLOCK
 *     | layernorm_rows ROWS COLS BLOCK | reduce_unroll_last N BLOCK
 *
 * It sets the inputs up, prints `ready`, then answers one line per command read from stdin:
 *   t  runs the kernel once and prints the CPU time of that run alone (ns, CLOCK_PROCESS_CPUTIME_ID);
 *   s  prints the checksum of the outputs (the sum in double of every output element, in order, as the
 *      bench's sum() does; %.17g, so the bench reads back the exact double);
 *   q  (or end of input) exits.
 * One process serves all of a kernel's runs, so each timed run is the work alone, A/B interleaved by the
 * bench with the emulator and the JS loop.
 *
 * Written for kernelpack.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *msg)
{
    fprintf(stderr, "emulator-ref: %s\n", msg);
    exit(2);
}

static void *alloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) die("out of memory");
    return p;
}

static long arg(int argc, char **argv, int i)
{
    if (i >= argc) die("missing size argument (usage at the top of bench/native/emulator-ref.c)");
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v <= 0) die("sizes must be positive integers");
    return v;
}

static double sumf(const float *xs, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++) s += xs[i];
    return s;
}

static double sumi(const int32_t *xs, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++) s += xs[i];
    return s;
}

/* int32 addition with wrap-around, as `(a + b) | 0` in JavaScript (signed overflow is undefined in C). */
static inline int32_t add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* ---- vec_add: c[i] = a[i] + b[i] */
static long add_n;
static float *add_a, *add_b, *add_c;

static void add_setup(int argc, char **argv)
{
    add_n = arg(argc, argv, 2);
    add_a = alloc(add_n, 4), add_b = alloc(add_n, 4), add_c = alloc(add_n, 4);
    for (long i = 0; i < add_n; i++) {
        add_a[i] = (float)(i % 1000) * 0.5f;
        add_b[i] = (float)(i % 777) * 0.25f;
    }
}

static void add_run(void)
{
    for (long i = 0; i < add_n; i++) add_c[i] = add_a[i] + add_b[i];
}

static double add_sum(void) { return sumf(add_c, add_n); }

/* ---- reduce_sum_shared: per block, two loads per thread into a scratch array, then a halving tree */
static long red_n, red_block, red_blocks;
static float *red_in, *red_out, *red_s;

static void red_setup(int argc, char **argv)
{
    red_n = arg(argc, argv, 2), red_block = arg(argc, argv, 3);
    red_blocks = red_n / (2 * red_block);
    red_in = alloc(red_n, 4), red_out = alloc(red_blocks, 4), red_s = alloc(red_block, 4);
    for (long i = 0; i < red_n; i++) red_in[i] = (float)(i % 13 - 6);
}

static void red_run(void)
{
    float *s = red_s;
    for (long b = 0; b < red_blocks; b++) {
        long base = b * 2 * red_block;
        for (long t = 0; t < red_block; t++) s[t] = red_in[base + t] + red_in[base + t + red_block];
        for (long st = red_block >> 1; st > 0; st >>= 1)
            for (long t = 0; t < st; t++) s[t] = s[t] + s[t + st];
        red_out[b] = s[0];
    }
}

static double red_sum(void) { return sumf(red_out, red_blocks); }

/* ---- reduce_unroll_last: the halving tree down to 64 elements, then the last warp's six steps over 32 lanes
 * (each lane adds the element `off` above its own; in ascending lane order every read is of an element this
 * step has not written yet, as a warp in lockstep reads it) */
static long wsr_n, wsr_block, wsr_blocks;
static int32_t *wsr_in, *wsr_out, *wsr_s;

static void wsr_setup(int argc, char **argv)
{
    wsr_n = arg(argc, argv, 2), wsr_block = arg(argc, argv, 3);
    wsr_blocks = wsr_n / (2 * wsr_block);
    wsr_in = alloc(wsr_n, 4), wsr_out = alloc(wsr_blocks, 4), wsr_s = alloc(wsr_block, 4);
    for (long i = 0; i < wsr_n; i++) wsr_in[i] = (int32_t)(i % 13 - 6);
}

static void wsr_run(void)
{
    int32_t *s = wsr_s;
    for (long b = 0; b < wsr_blocks; b++) {
        long base = b * 2 * wsr_block;
        for (long t = 0; t < wsr_block; t++) s[t] = wsr_in[base + t] + wsr_in[base + t + wsr_block];
        for (long st = wsr_block >> 1; st > 32; st >>= 1)
            for (long t = 0; t < st; t++) s[t] = s[t] + s[t + st];
        for (long off = 32; off > 0; off >>= 1)
            for (long t = 0; t < 32; t++) s[t] = s[t] + s[t + off];
        wsr_out[b] = s[0];
    }
}

static double wsr_sum(void) { return sumi(wsr_out, wsr_blocks); }

/* ---- matmul_tile16: C = A B (M x M), one dot product per output in k order */
static long mm;
static float *mm_a, *mm_b, *mm_c;

static void mm_setup(int argc, char **argv)
{
    mm = arg(argc, argv, 2);
    mm_a = alloc(mm * mm, 4), mm_b = alloc(mm * mm, 4), mm_c = alloc(mm * mm, 4);
    for (long i = 0; i < mm * mm; i++) {
        mm_a[i] = (float)(i % 7 - 3);
        mm_b[i] = (float)(i % 5 - 2);
    }
}

static void mm_run(void)
{
    for (long r = 0; r < mm; r++)
        for (long col = 0; col < mm; col++) {
            float acc = 0.f;
            for (long t = 0; t < mm; t++) acc = acc + mm_a[r * mm + t] * mm_b[t * mm + col];
            mm_c[r * mm + col] = acc;
        }
}

static double mm_sum(void) { return sumf(mm_c, mm * mm); }

/* ---- warp_reduce_down: per warp, 5 shuffle-down steps over 32 lanes (a lane past the end keeps its value) */
static long warp_n;
static int32_t *warp_in, *warp_out;

static void warp_setup(int argc, char **argv)
{
    warp_n = arg(argc, argv, 2);
    warp_in = alloc(warp_n, 4), warp_out = alloc(warp_n / 32, 4);
    for (long i = 0; i < warp_n; i++) warp_in[i] = (int32_t)((int64_t)i * 7919 % 2001 - 1000);
}

static void warp_run(void)
{
    int32_t v[32];
    for (long w = 0; w < warp_n / 32; w++) {
        for (int l = 0; l < 32; l++) v[l] = warp_in[w * 32 + l];
        for (int off = 16; off > 0; off >>= 1)
            for (int l = 0; l < 32; l++) v[l] = add_wrap(v[l], v[l + off < 32 ? l + off : l]);
        warp_out[w] = v[0];
    }
}

static double warp_sum(void) { return sumi(warp_out, warp_n / 32); }

/* ---- scan_block: per block, log2(block) double-buffered Hillis-Steele passes */
static long scan_n, scan_block;
static int32_t *scan_in, *scan_out, *scan_sums, *scan_buf;

static void scan_setup(int argc, char **argv)
{
    scan_n = arg(argc, argv, 2), scan_block = arg(argc, argv, 3);
    scan_in = alloc(scan_n, 4), scan_out = alloc(scan_n, 4);
    scan_sums = alloc(scan_n / scan_block, 4), scan_buf = alloc(2 * scan_block, 4);
    for (long i = 0; i < scan_n; i++) scan_in[i] = (int32_t)((int64_t)i * 104729 % 201 - 100);
}

static void scan_run(void)
{
    int32_t *buf = scan_buf;
    long nt = scan_block;
    for (long b = 0; b < scan_n / nt; b++) {
        for (long t = 0; t < nt; t++) buf[t] = scan_in[b * nt + t];
        long pout = 0;
        for (long off = 1; off < nt; off <<= 1) {
            pout = 1 - pout;
            long pin = 1 - pout;
            for (long t = 0; t < nt; t++)
                buf[pout * nt + t] = t >= off ? add_wrap(buf[pin * nt + t], buf[pin * nt + t - off]) : buf[pin * nt + t];
        }
        for (long t = 0; t < nt; t++) scan_out[b * nt + t] = buf[pout * nt + t];
        scan_sums[b] = buf[pout * nt + nt - 1];
    }
}

static double scan_sum(void) { return sumi(scan_out, scan_n) + sumi(scan_sums, scan_n / scan_block); }

/* ---- layernorm_rows: refLayernorm's order: per-thread strided partial sums, a butterfly per warp, the warp
 *      totals (zero-padded to 32 lanes) through the same butterfly; f32 rounding after every operation */
static long ln_rows, ln_cols, ln_block;
static const float ln_eps = 1e-5f;
static float *ln_x, *ln_gamma, *ln_beta, *ln_y, *ln_parts;

static void ln_setup(int argc, char **argv)
{
    ln_rows = arg(argc, argv, 2), ln_cols = arg(argc, argv, 3), ln_block = arg(argc, argv, 4);
    if (ln_block % 32 || ln_block > 1024) die("layernorm block must be a multiple of 32, at most 1024");
    ln_x = alloc(ln_rows * ln_cols, 4), ln_y = alloc(ln_rows * ln_cols, 4);
    ln_gamma = alloc(ln_cols, 4), ln_beta = alloc(ln_cols, 4), ln_parts = alloc(ln_block, 4);
    for (long i = 0; i < ln_rows * ln_cols; i++)
        ln_x[i] = (float)((int64_t)((uint32_t)((uint64_t)i * 2654435761u) % 8001) - 4000) / 256.f;
    for (long i = 0; i < ln_cols; i++) {
        ln_gamma[i] = (float)(1 + i % 300) / 128.f;
        ln_beta[i] = (float)(i % 401 - 200) / 64.f;
    }
}

/* the butterfly of ln_warp_sum over 32 lanes, in place (reference.ts warpButterflySum) */
static float warp_butterfly(float *lanes)
{
    for (int m = 16; m > 0; m >>= 1)
        for (int l = 0; l < 32; l++)
            if (l < (l ^ m)) lanes[l] = lanes[l ^ m] = lanes[l] + lanes[l ^ m];
    return lanes[0];
}

/* ln_block_sum (reference.ts blockButterflySum) */
static float block_butterfly(const float *parts)
{
    float lanes[32], totals[32];
    long nw = ln_block >> 5;
    memset(totals, 0, sizeof totals);
    for (long w = 0; w < nw; w++) {
        for (int l = 0; l < 32; l++) lanes[l] = parts[w * 32 + l];
        totals[w] = warp_butterfly(lanes);
    }
    return warp_butterfly(totals);
}

static void ln_run(void)
{
    float *parts = ln_parts;
    const float fc = (float)ln_cols;
    for (long r = 0; r < ln_rows; r++) {
        const float *x = ln_x + r * ln_cols;
        float *y = ln_y + r * ln_cols;
        for (long t = 0; t < ln_block; t++) {
            float s = 0.f;
            for (long c = t; c < ln_cols; c += ln_block) s = s + x[c];
            parts[t] = s;
        }
        const float mean = block_butterfly(parts) / fc;
        for (long t = 0; t < ln_block; t++) {
            float q = 0.f;
            for (long c = t; c < ln_cols; c += ln_block) {
                const float d = x[c] - mean;
                q = q + d * d;
            }
            parts[t] = q;
        }
        const float rstd = 1.f / sqrtf(block_butterfly(parts) / fc + ln_eps);
        for (long c = 0; c < ln_cols; c++) y[c] = (x[c] - mean) * rstd * ln_gamma[c] + ln_beta[c];
    }
}

static double ln_sum(void) { return sumf(ln_y, ln_rows * ln_cols); }

static const struct {
    const char *name;
    void (*setup)(int, char **);
    void (*run)(void);
    double (*sum)(void);
} kernels[] = {
    { "vec_add", add_setup, add_run, add_sum },
    { "reduce_sum_shared", red_setup, red_run, red_sum },
    { "matmul_tile16", mm_setup, mm_run, mm_sum },
    { "warp_reduce_down", warp_setup, warp_run, warp_sum },
    { "scan_block", scan_setup, scan_run, scan_sum },
    { "layernorm_rows", ln_setup, ln_run, ln_sum },
    { "reduce_unroll_last", wsr_setup, wsr_run, wsr_sum },
};

static int64_t cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) die("clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) die("usage: emulator-ref <kernel> <sizes...> (see bench/native/emulator-ref.c)");
    int k = -1;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(argv[1], kernels[i].name) == 0) k = (int)i;
    if (k < 0) die("unknown kernel (vec_add, reduce_sum_shared, matmul_tile16, warp_reduce_down, scan_block, layernorm_rows, reduce_unroll_last)");
    kernels[k].setup(argc, argv);
    printf("ready\n");
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == 't') {
            int64_t t0 = cpu_ns();
            kernels[k].run();
            int64_t t1 = cpu_ns();
            printf("%lld\n", (long long)(t1 - t0));
        } else if (line[0] == 's') {
            printf("%.17g\n", kernels[k].sum());
        } else if (line[0] == 'q') {
            break;
        } else {
            die("unknown command (t, s or q)");
        }
        fflush(stdout);
    }
    return 0;
}
