/* Checks and times every kernel of transpose_kernels[] on its own, before
 * and beside the program's bench: correctness at ragged shapes, every
 * element size the kernel claims, aligned and misaligned buffers, output
 * poisoned before each run; then GB/s (bytes read + written) against the
 * device-to-device copy, the `copy` kernel and cuBLAS geam, median of
 * cudaEvent timings after a warm-up.
 *
 *   time_transpose [-c] [-t] [-s] [-k NAME]...
 *   -c: checks only, -t: timing only, -s: small shapes only (for the sanitizers)
 *
 * Exit status 1 when any check fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels/registry.h"
#include "kernels/transpose.h"

#define CHECK_CUDA(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "time_transpose: %s:%d: %s: %s\n", __FILE__, __LINE__, \
                    #call, cudaGetErrorString(err_));                           \
            exit(2);                                                            \
        }                                                                       \
    } while (0)

struct shape {
    int rows, cols;
};

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Random bits; for geam, finite floating-point values (exponent bits kept
 * below all-ones) since cuBLAS does arithmetic on them. */
static void fill_random(void *buf, size_t bytes, size_t es, int finite, uint64_t *seed)
{
    uint64_t *w = buf;
    size_t nw = bytes / 8;
    for (size_t i = 0; i < nw; i++)
        w[i] = rng_next(seed);
    unsigned char *b = buf;
    for (size_t i = nw * 8; i < bytes; i++)
        b[i] = (unsigned char)rng_next(seed);
    if (!finite)
        return;
    size_t n = bytes / es;
    if (es == 4) {
        uint32_t *f = buf;
        for (size_t i = 0; i < n; i++)
            f[i] &= 0xBFFFFFFFu;   /* clear the top exponent bit */
    } else if (es == 8) {
        uint64_t *d = buf;
        for (size_t i = 0; i < n; i++)
            d[i] &= 0xBFFFFFFFFFFFFFFFull;
    }
}

static void host_transpose(const void *in, void *out, int rows, int cols, size_t es)
{
    const char *src = in;
    char *dst = out;
    for (size_t r = 0; r < (size_t)rows; r++)
        for (size_t c = 0; c < (size_t)cols; c++)
            memcpy(dst + (c * rows + r) * es, src + (r * cols + c) * es, es);
}

static int selected(const char *name, char **only, int n_only)
{
    if (n_only == 0)
        return 1;
    for (int i = 0; i < n_only; i++)
        if (strcmp(only[i], name) == 0)
            return 1;
    return 0;
}

static const struct transpose_kernel *transpose_kernel_find_local(const char *name)
{
    for (size_t i = 0; i < transpose_kernel_count; i++)
        if (strcmp(transpose_kernels[i].name, name) == 0)
            return &transpose_kernels[i];
    return NULL;
}

struct env_bundle {
    struct launch_env env;
    cudaEvent_t ev0, ev1;
};

/* Runs kernel k on device buffers; returns the launch error. */
static cudaError_t run_kernel(const struct transpose_kernel *k, const struct transpose_problem *p,
                              const struct env_bundle *eb)
{
    if (k->flags & KERNEL_HOST) {
        k->host(p);
        return cudaSuccess;
    }
    return k->launch(p, &eb->env);
}

/* One check: returns the number of wrong elements (or -1 on a launch error). */
static long check_one(const struct transpose_kernel *k, int rows, int cols, size_t es,
                      size_t offset, const void *h_in, const void *h_ref, void *h_out,
                      void *d_in_base, void *d_out_base, const struct env_bundle *eb)
{
    size_t bytes = (size_t)rows * cols * es;
    int is_copy = (k->flags & KERNEL_BENCH_ONLY) != 0;
    struct transpose_problem p = { rows, cols, es, NULL, NULL };
    if (k->flags & KERNEL_HOST) {
        memset(h_out, 0xFF, bytes);
        p.in = h_in;
        p.out = h_out;
        k->host(&p);
    } else {
        char *d_in = (char *)d_in_base + offset, *d_out = (char *)d_out_base + offset;
        CHECK_CUDA(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemset(d_out_base, 0xFF, bytes + 64));
        p.in = d_in;
        p.out = d_out;
        cudaError_t err = run_kernel(k, &p, eb);
        if (err == cudaSuccess)
            err = cudaDeviceSynchronize();
        if (err != cudaSuccess) {
            fprintf(stderr, "  %s %dx%d es=%zu: %s\n", k->name, rows, cols, es,
                    cudaGetErrorString(err));
            return -1;
        }
        CHECK_CUDA(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
        /* Nothing past the end may be written. */
        unsigned char tail[32];
        CHECK_CUDA(cudaMemcpy(tail, d_out + bytes, sizeof tail, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < sizeof tail; i++)
            if (tail[i] != 0xFF)
                return -2;
    }
    const void *want = is_copy ? h_in : h_ref;
    if (memcmp(h_out, want, bytes) == 0)
        return 0;
    long bad = 0;
    const unsigned char *a = h_out, *b = want;
    for (size_t i = 0; i < bytes; i += es)
        if (memcmp(a + i, b + i, es) != 0)
            bad++;
    return bad;
}

static int run_checks(char **only, int n_only, int small, const struct env_bundle *eb)
{
    static const struct shape shapes[] = {
        { 1, 1 }, { 1, 7 }, { 7, 1 }, { 7, 13 }, { 33, 65 }, { 127, 129 }, { 64, 64 },
        { 65, 63 }, { 128, 256 }, { 1, 100003 }, { 100003, 1 }, { 3, 100003 },
        { 1031, 4099 }, { 3000001, 1 }, { 1, 3000001 }, { 7001, 3000 }, { 3000, 7001 },
        { 2048, 2048 },
    };
    const size_t n_shapes = sizeof shapes / sizeof shapes[0];
    size_t max_bytes = 0;
    for (size_t s = 0; s < n_shapes; s++) {
        size_t b = (size_t)shapes[s].rows * shapes[s].cols * 8;
        if (b > max_bytes)
            max_bytes = b;
    }
    void *h_in = malloc(max_bytes), *h_ref = malloc(max_bytes), *h_out = malloc(max_bytes);
    void *d_in, *d_out;
    if (!h_in || !h_ref || !h_out) {
        fprintf(stderr, "time_transpose: out of host memory\n");
        exit(2);
    }
    CHECK_CUDA(cudaMalloc(&d_in, max_bytes + 64));
    CHECK_CUDA(cudaMalloc(&d_out, max_bytes + 64));

    long fails[64] = { 0 }, runs[64] = { 0 };
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t s = 0; s < n_shapes; s++) {
        int rows = shapes[s].rows, cols = shapes[s].cols;
        if (small && (size_t)rows * cols > 20000)
            continue;
        for (size_t es = 2; es <= 8; es *= 2) {
            size_t bytes = (size_t)rows * cols * es;
            for (int finite = 0; finite <= 1; finite++) {
                fill_random(h_in, bytes, es, finite, &seed);
                host_transpose(h_in, h_ref, rows, cols, es);
                for (size_t i = 0; i < transpose_kernel_count; i++) {
                    const struct transpose_kernel *k = &transpose_kernels[i];
                    int wants_finite = (k->flags & KERNEL_REFERENCE) != 0;
                    if (!(k->elem_sizes & (1u << es)) || wants_finite != finite ||
                        !selected(k->name, only, n_only))
                        continue;
                    /* Aligned, then both buffers one element off 16-byte alignment. */
                    for (int mis = 0; mis <= ((k->flags & KERNEL_HOST) ? 0 : 1); mis++) {
                        long bad = check_one(k, rows, cols, es, mis ? es : 0, h_in, h_ref,
                                             h_out, d_in, d_out, eb);
                        runs[i]++;
                        if (bad != 0) {
                            fails[i]++;
                            fprintf(stderr, "FAIL %s %dx%d elem %zu%s: %ld\n", k->name, rows,
                                    cols, es, mis ? " misaligned" : "", bad);
                        }
                    }
                }
            }
        }
    }

    /* geam on arbitrary bit patterns (NaN payloads included): reported, not failed. */
    for (size_t i = 0; i < transpose_kernel_count; i++) {
        const struct transpose_kernel *k = &transpose_kernels[i];
        if (!(k->flags & KERNEL_REFERENCE) || !selected(k->name, only, n_only) || small)
            continue;
        for (size_t es = 4; es <= 8; es *= 2) {
            size_t bytes = (size_t)1031 * 4099 * es;
            fill_random(h_in, bytes, es, 0, &seed);
            host_transpose(h_in, h_ref, 1031, 4099, es);
            long bad = check_one(k, 1031, 4099, es, 0, h_in, h_ref, h_out, d_in, d_out, eb);
            printf("note: %s on random bit patterns, elem %zu: %ld of %d elements differ\n",
                   k->name, es, bad, 1031 * 4099);
        }
    }

    /* The in-place square transpose. */
    static const int sq[] = { 1, 2, 31, 32, 33, 100, 1025, 4099 };
    long ip_runs = 0, ip_fails = 0;
    if (selected("inplace", only, n_only)) {
        for (size_t s = 0; s < sizeof sq / sizeof sq[0]; s++) {
            if (small && sq[s] > 100)
                continue;
            for (size_t es = 2; es <= 8; es *= 2) {
                int n = sq[s];
                size_t bytes = (size_t)n * n * es;
                fill_random(h_in, bytes, es, 0, &seed);
                host_transpose(h_in, h_ref, n, n, es);
                CHECK_CUDA(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));
                cudaError_t err = transpose_inplace_square_launch(d_in, n, es, &eb->env);
                if (err == cudaSuccess)
                    err = cudaDeviceSynchronize();
                ip_runs++;
                if (err != cudaSuccess) {
                    ip_fails++;
                    fprintf(stderr, "FAIL inplace %d elem %zu: %s\n", n, es, cudaGetErrorString(err));
                    continue;
                }
                CHECK_CUDA(cudaMemcpy(h_out, d_in, bytes, cudaMemcpyDeviceToHost));
                if (memcmp(h_out, h_ref, bytes) != 0) {
                    ip_fails++;
                    fprintf(stderr, "FAIL inplace %d elem %zu\n", n, es);
                }
            }
        }
    }

    int total_fail = 0;
    printf("\ncorrectness (poisoned outputs, random inputs, aligned + misaligned):\n");
    for (size_t i = 0; i < transpose_kernel_count; i++) {
        if (runs[i] == 0)
            continue;
        printf("  %-10s %4ld runs  %s\n", transpose_kernels[i].name, runs[i],
               fails[i] ? "FAILED" : "ok");
        total_fail += fails[i] != 0;
    }
    if (ip_runs) {
        printf("  %-10s %4ld runs  %s\n", "inplace", ip_runs, ip_fails ? "FAILED" : "ok");
        total_fail += ip_fails != 0;
    }
    free(h_in);
    free(h_ref);
    free(h_out);
    CHECK_CUDA(cudaFree(d_in));
    CHECK_CUDA(cudaFree(d_out));
    return total_fail;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

enum { warmups = 3, reps = 21 };

/* Median milliseconds of one kernel (k == NULL: cudaMemcpyAsync D2D). */
static float time_one(const struct transpose_kernel *k, const struct transpose_problem *p,
                      const struct env_bundle *eb)
{
    float t[reps];
    size_t bytes = (size_t)p->rows * p->cols * p->elem_size;
    for (int i = 0; i < warmups + reps; i++) {
        CHECK_CUDA(cudaEventRecord(eb->ev0, eb->env.stream));
        if (k)
            CHECK_CUDA(k->launch(p, &eb->env));
        else
            CHECK_CUDA(cudaMemcpyAsync(p->out, p->in, bytes, cudaMemcpyDeviceToDevice,
                                       eb->env.stream));
        CHECK_CUDA(cudaEventRecord(eb->ev1, eb->env.stream));
        CHECK_CUDA(cudaEventSynchronize(eb->ev1));
        if (i >= warmups)
            CHECK_CUDA(cudaEventElapsedTime(&t[i - warmups], eb->ev0, eb->ev1));
    }
    qsort(t, reps, sizeof t[0], cmp_float);
    return t[reps / 2];
}

static void run_timing(char **only, int n_only, const struct env_bundle *eb)
{
    struct case_ {
        int rows, cols;
        size_t es;
    };
    static const struct case_ cases[] = {
        { 4096, 4096, 4 }, { 8192, 8192, 4 }, { 16384, 16384, 4 }, { 7001, 3000, 4 },
        { 3000, 7001, 4 }, { 8192, 8192, 2 }, { 8192, 8192, 8 }, { 7001, 3000, 2 },
        { 7001, 3000, 8 },
    };
    printf("\n%-10s %-12s %4s %9s %8s %7s %7s %7s\n", "kernel", "shape", "elem", "ms", "GB/s",
           "%memcpy", "%copy", "%geam");
    uint64_t seed = 12345;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int rows = cases[c].rows, cols = cases[c].cols;
        size_t es = cases[c].es, bytes = (size_t)rows * cols * es;
        void *h = malloc(bytes), *d_in, *d_out;
        if (!h) {
            fprintf(stderr, "time_transpose: out of host memory\n");
            exit(2);
        }
        fill_random(h, bytes, es, 1, &seed);
        CHECK_CUDA(cudaMalloc(&d_in, bytes));
        CHECK_CUDA(cudaMalloc(&d_out, bytes));
        CHECK_CUDA(cudaMemcpy(d_in, h, bytes, cudaMemcpyHostToDevice));
        free(h);
        struct transpose_problem p = { rows, cols, es, d_in, d_out };
        double gb = 2.0 * bytes / 1e9;
        float t_memcpy = time_one(NULL, &p, eb);
        float t_copy = 0, t_geam = 0;
        const struct transpose_kernel *copy = transpose_kernel_find_local("copy");
        const struct transpose_kernel *geam = transpose_kernel_find_local("geam");
        if (copy)
            t_copy = time_one(copy, &p, eb);
        if (geam && (geam->elem_sizes & (1u << es)))
            t_geam = time_one(geam, &p, eb);
        char shape[32];
        snprintf(shape, sizeof shape, "%dx%d", rows, cols);
        printf("%-10s %-12s %4zu %9.4f %8.1f %6.1f%% %7s %7s\n", "memcpy", shape, es, t_memcpy,
               gb / (t_memcpy * 1e-3), 100.0, "", "");
        for (size_t i = 0; i < transpose_kernel_count; i++) {
            const struct transpose_kernel *k = &transpose_kernels[i];
            if ((k->flags & KERNEL_HOST) || !(k->elem_sizes & (1u << es)) ||
                !selected(k->name, only, n_only))
                continue;
            float t = time_one(k, &p, eb);
            char pc[16] = "", pg[16] = "";
            if (t_copy > 0)
                snprintf(pc, sizeof pc, "%.1f%%", 100.0 * t_copy / t);
            if (t_geam > 0)
                snprintf(pg, sizeof pg, "%.1f%%", 100.0 * t_geam / t);
            printf("%-10s %-12s %4zu %9.4f %8.1f %6.1f%% %7s %7s\n", k->name, shape, es, t,
                   gb / (t * 1e-3), 100.0 * t_memcpy / t, pc, pg);
        }
        if (selected("inplace", only, n_only) && rows == cols && es == 4) {
            float tt[reps];
            for (int i = 0; i < warmups + reps; i++) {
                CHECK_CUDA(cudaEventRecord(eb->ev0, eb->env.stream));
                CHECK_CUDA(transpose_inplace_square_launch(d_in, rows, es, &eb->env));
                CHECK_CUDA(cudaEventRecord(eb->ev1, eb->env.stream));
                CHECK_CUDA(cudaEventSynchronize(eb->ev1));
                if (i >= warmups)
                    CHECK_CUDA(cudaEventElapsedTime(&tt[i - warmups], eb->ev0, eb->ev1));
            }
            qsort(tt, reps, sizeof tt[0], cmp_float);
            float t = tt[reps / 2];
            char pc[16] = "", pg[16] = "";
            if (t_copy > 0)
                snprintf(pc, sizeof pc, "%.1f%%", 100.0 * t_copy / t);
            if (t_geam > 0)
                snprintf(pg, sizeof pg, "%.1f%%", 100.0 * t_geam / t);
            printf("%-10s %-12s %4zu %9.4f %8.1f %6.1f%% %7s %7s\n", "inplace", shape, es, t,
                   gb / (t * 1e-3), 100.0 * t_memcpy / t, pc, pg);
        }
        CHECK_CUDA(cudaFree(d_in));
        CHECK_CUDA(cudaFree(d_out));
    }
}

static void print_attrs(char **only, int n_only)
{
    printf("\n%-10s %5s %7s %6s %7s %11s\n", "kernel", "regs", "smem", "local", "threads",
           "blocks/SM");
    for (size_t i = 0; i < transpose_kernel_count; i++) {
        const struct transpose_kernel *k = &transpose_kernels[i];
        struct kernel_attr a;
        if (!k->attr || !selected(k->name, only, n_only))
            continue;
        CHECK_CUDA(k->attr(&a));
        printf("%-10s %5d %7zu %6zu %7d %11d\n", k->name, a.regs, a.smem_static,
               a.local_bytes, a.threads, a.blocks_per_sm);
    }
}

int main(int argc, char **argv)
{
    int checks = 1, timing = 1, small = 0, n_only = 0;
    char *only[32];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0)
            timing = 0;
        else if (strcmp(argv[i], "-s") == 0)
            small = 1;
        else if (strcmp(argv[i], "-t") == 0)
            checks = 0;
        else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc && n_only < 32)
            only[n_only++] = argv[++i];
        else {
            fprintf(stderr, "usage: time_transpose [-c] [-t] [-s] [-k NAME]...\n");
            return 2;
        }
    }
    struct cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    printf("device: %s, %d SMs, L2 %d MB, %s\n", prop.name, prop.multiProcessorCount,
           prop.l2CacheSize >> 20, date);

    struct env_bundle eb;
    memset(&eb, 0, sizeof eb);
    CHECK_CUDA(cudaStreamCreate(&eb.env.stream));
    if (cublasCreate(&eb.env.cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "time_transpose: cublasCreate failed\n");
        return 2;
    }
    eb.env.sm_count = prop.multiProcessorCount;
    CHECK_CUDA(cudaEventCreate(&eb.ev0));
    CHECK_CUDA(cudaEventCreate(&eb.ev1));

    int failed = 0;
    print_attrs(only, n_only);
    if (checks)
        failed = run_checks(only, n_only, small, &eb);
    if (timing)
        run_timing(only, n_only, &eb);
    cublasDestroy(eb.env.cublas);
    if (checks)
        printf("\nchecks: %s\n", failed ? "FAILED" : "all passed");
    return failed ? 1 : 0;
}
