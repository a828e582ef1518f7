/* GPU kernel test: every kernel of gemm_kernels[] and transpose_kernels[]
 * at ragged shapes on fresh random data.
 *
 * mul: each case draws A, B (and C0 when beta != 0) from N(0, 1), computes
 * the product in FP64 on the device (ref_dgemm) and measures every kernel's
 * relative Frobenius error ||C - R|| / ||R|| against it.  Before each run C
 * is poisoned with NaN (or holds C0 when beta != 0), so an element a kernel
 * fails to write fails the test.  A kernel passes when its result is
 * finite, its error is at most twice cuBLAS's on the same inputs plus
 * MUL_TINY (at tiny K both errors are a handful of roundings), and below
 * the absolute bound MUL_ABS_BOUND.  A kernel that sums each output along K
 * in one FP32 chain (every stage but splitk) has an error growing like
 * sqrt(K) * 2^-24; where cuBLAS splits K (256x256x65536) that is several
 * times cuBLAS's error.  Such a result, within MUL_SEQ_SCALE * sqrt(K) *
 * 2^-24, is reported as "ok-seq" and counted as passed, separately.
 * transpose: every kernel that takes the element size, on random bits,
 * compared bit for bit with the host's transpose (the copy kernels with the
 * input, and cuBLAS geam up to NaN payloads); output poisoned first.
 *
 *   gpu_kernels [--small] [--kernel NAME]... [--shape MxNxK]... [--op mul|transpose]
 *   gpu_kernels --time [--kernel NAME]... [--shape MxNxK]...
 *
 * --small keeps the shapes that compute-sanitizer can get through.  --time
 * prints TFLOP/s and % of cuBLAS per kernel and shape instead (median of
 * repeats after a warm-up, inputs rotated so that L2 holds no stale copy).
 * Without a CUDA device it says so and exits 0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#include "kernels/registry.h"
#include "kernels/sgemm.h"

#define MUL_TINY 1e-7
#define MUL_ABS_BOUND 5e-5
#define MUL_SEQ_SCALE 0.5
/* Host kernels beyond this many FLOP are skipped (they would take seconds). */
#define HOST_FLOP_LIMIT 4e9
#define MAX_PICK 32

struct mul_case {
    int m, n, k;
    float alpha, beta;
    int small;      /* part of --small */
};

static const struct mul_case mul_cases[] = {
    { 1, 1, 1, 1.0f, 0.0f, 1 },
    { 1, 1, 1, -0.5f, 2.0f, 1 },
    { 7, 13, 5, 1.0f, 0.0f, 1 },
    { 7, 13, 5, 1.5f, -0.75f, 1 },
    { 33, 65, 17, 1.0f, 0.0f, 1 },
    { 33, 65, 17, 0.5f, 1.0f, 1 },
    { 127, 129, 255, 1.0f, 0.0f, 1 },
    { 127, 129, 255, -1.0f, 0.5f, 1 },
    { 64, 64, 64, 1.0f, 0.0f, 1 },
    { 1000, 3000, 500, 1.0f, 0.0f, 0 },
    { 1000, 3000, 500, 0.75f, -1.25f, 0 },
    { 1024, 1024, 1024, 1.0f, 0.0f, 0 },
    { 4097, 4097, 4097, 1.0f, 0.0f, 0 },
    { 4097, 4097, 4097, 1.0f, 1.0f, 0 },
    { 256, 256, 65536, 1.0f, 0.0f, 0 },
    { 65536, 64, 1024, 1.0f, 0.0f, 0 },
    { 65536, 64, 1024, 2.0f, -1.0f, 0 },
    /* A few rows and columns past whole 128x128 tiles, with a full wave of
     * them: edge_peel computes those edges apart. */
    { 2183, 2056, 77, 1.5f, -0.5f, 0 },
    { 2049, 4104, 1000, 1.0f, 0.0f, 0 },
};

struct xpose_case {
    int rows, cols;
    int small;
};

static const struct xpose_case xpose_cases[] = {
    { 1, 1, 1 }, { 1, 1000, 1 }, { 1000, 1, 1 }, { 33, 65, 1 },
    { 7001, 3000, 0 }, { 4096, 4096, 0 },
};

static const int time_shapes[][3] = {
    { 1024, 1024, 1024 }, { 2048, 2048, 2048 }, { 4096, 4096, 4096 }, { 8192, 8192, 8192 },
    { 4097, 4097, 4097 }, { 1000, 3000, 500 }, { 256, 256, 65536 }, { 65536, 64, 1024 },
};

struct options {
    int small, time, do_mul, do_xpose;
    const char *kernels[MAX_PICK];
    int nkernels;
    int shapes[MAX_PICK][3];
    int nshapes;
};

struct ctx {
    cudaStream_t stream;
    cublasHandle_t cublas;
    struct launch_env env;
    int passed, failed, seq_only;
    uint64_t rng;
};

static int picked(const struct options *o, const char *name)
{
    if (o->nkernels == 0)
        return 1;
    for (int i = 0; i < o->nkernels; i++)
        if (strcmp(o->kernels[i], name) == 0)
            return 1;
    return 0;
}

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill_normal(float *x, size_t count, uint64_t *s)
{
    for (size_t i = 0; i < count; i += 2) {
        double u1 = ((rng_next(s) >> 11) + 1.0) * 0x1.0p-53;
        double u2 = (rng_next(s) >> 11) * 0x1.0p-53;
        double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586 * u2;
        x[i] = (float)(r * cos(t));
        if (i + 1 < count)
            x[i + 1] = (float)(r * sin(t));
    }
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            fprintf(stderr, "gpu_kernels: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                       \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "gpu_kernels: out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* Relative Frobenius error of c against ref; -1 if c holds a non-finite value. */
static double rel_error(const float *c, const double *ref, size_t count)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(c[i]))
            return -1.0;
        double d = c[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* ok: 1 pass, 2 pass within the sequential-sum bound only, 0 fail. */
static void report(struct ctx *x, int ok, const char *name, const char *shape,
                   const char *detail)
{
    printf("%-16s %-24s %-6s %s\n", name, shape, ok == 2 ? "ok-seq" : ok ? "ok" : "FAIL", detail);
    if (ok == 2)
        x->seq_only++;
    fflush(stdout);
    if (ok)
        x->passed++;
    else
        x->failed++;
}

static void test_mul_case(struct ctx *x, const struct options *o, const struct mul_case *mc)
{
    size_t sa = (size_t)mc->m * mc->k, sb = (size_t)mc->k * mc->n, sc = (size_t)mc->m * mc->n;
    double flop = 2.0 * mc->m * mc->n * mc->k;
    float *ha = host_alloc(sa * 4), *hb = host_alloc(sb * 4), *hc0 = host_alloc(sc * 4);
    float *hc = host_alloc(sc * 4);
    double *href = host_alloc(sc * 8);
    fill_normal(ha, sa, &x->rng);
    fill_normal(hb, sb, &x->rng);
    if (mc->beta != 0.0f)
        fill_normal(hc0, sc, &x->rng);
    float *da, *db, *dc, *dc0;
    double *dref;
    CHECK(cudaMalloc((void **)&da, sa * 4));
    CHECK(cudaMalloc((void **)&db, sb * 4));
    CHECK(cudaMalloc((void **)&dc, sc * 4));
    CHECK(cudaMalloc((void **)&dc0, sc * 4));
    CHECK(cudaMalloc((void **)&dref, sc * 8));
    CHECK(cudaMemcpy(da, ha, sa * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb, sb * 4, cudaMemcpyHostToDevice));
    if (mc->beta != 0.0f)
        CHECK(cudaMemcpy(dc0, hc0, sc * 4, cudaMemcpyHostToDevice));
    CHECK(ref_dgemm(mc->m, mc->n, mc->k, mc->alpha, da, db, mc->beta, dc0, dref, x->stream));
    CHECK(cudaStreamSynchronize(x->stream));
    CHECK(cudaMemcpy(href, dref, sc * 8, cudaMemcpyDeviceToHost));

    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d%s", mc->m, mc->n, mc->k,
             mc->beta != 0.0f ? " beta!=0" : "");
    double cublas_err = -1.0;
    /* cuBLAS first: its error sets the bar for the others. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < gemm_kernel_count; i++) {
            const struct gemm_kernel *kern = &gemm_kernels[i];
            int is_ref = (kern->flags & KERNEL_REFERENCE) != 0;
            if (is_ref != (pass == 0) || (pass == 1 && !picked(o, kern->name)))
                continue;
            struct sgemm_problem p = { mc->m, mc->n, mc->k, mc->alpha, mc->beta, da, db, dc };
            char detail[160];
            if (kern->flags & KERNEL_HOST) {
                if (flop > HOST_FLOP_LIMIT) {
                    printf("%-16s %-24s skip   %.1f GFLOP, beyond the host kernel limit of %.0f\n",
                           kern->name, shape, flop / 1e9, HOST_FLOP_LIMIT / 1e9);
                    continue;
                }
                memcpy(hc, hc0, sc * 4);
                if (mc->beta == 0.0f)
                    memset(hc, 0xff, sc * 4);
                struct sgemm_problem hp = { mc->m, mc->n, mc->k, mc->alpha, mc->beta, ha, hb, hc };
                kern->host(&hp, 16);
            } else {
                if (mc->beta != 0.0f)
                    CHECK(cudaMemcpy(dc, dc0, sc * 4, cudaMemcpyDeviceToDevice));
                else
                    CHECK(cudaMemset(dc, 0xff, sc * 4));
                cudaError_t err = kern->launch(&p, &x->env);
                if (err == cudaSuccess)
                    err = cudaStreamSynchronize(x->stream);
                if (err != cudaSuccess) {
                    snprintf(detail, sizeof detail, "launch failed: %s", cudaGetErrorString(err));
                    report(x, 0, kern->name, shape, detail);
                    if (err != cudaErrorInvalidConfiguration && err != cudaErrorInvalidValue) {
                        fprintf(stderr, "gpu_kernels: device error, stopping\n");
                        exit(1);
                    }
                    continue;
                }
                CHECK(cudaMemcpy(hc, dc, sc * 4, cudaMemcpyDeviceToHost));
            }
            double e = rel_error(hc, href, sc);
            int ok;
            if (pass == 0) {
                cublas_err = e;
                ok = e >= 0.0 && e <= MUL_ABS_BOUND;
                snprintf(detail, sizeof detail, "rel err %.2e (reference)", e);
            } else {
                double bound = 2.0 * (cublas_err > 0.0 ? cublas_err : 0.0) + MUL_TINY;
                double seq_bound = MUL_SEQ_SCALE * sqrt((double)mc->k) * 0x1p-24;
                ok = e >= 0.0 && e <= bound && e <= MUL_ABS_BOUND;
                if (!ok && e >= 0.0 && e <= seq_bound && e <= MUL_ABS_BOUND)
                    ok = 2;
                if (e < 0.0)
                    snprintf(detail, sizeof detail, "non-finite output (unwritten element?)");
                else
                    snprintf(detail, sizeof detail, "rel err %.2e  (%.2fx cuBLAS, bound %.2e)", e,
                             cublas_err > 0.0 ? e / cublas_err : 0.0, bound);
            }
            report(x, ok, kern->name, shape, detail);
        }
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dc0);
    cudaFree(dref);
    free(ha);
    free(hb);
    free(hc0);
    free(hc);
    free(href);
}

/* Bitwise equality; with nan_any, two NaNs of the element's float type
 * also match whatever their payloads. */
static int same_element(const unsigned char *a, const unsigned char *b, size_t es, int nan_any)
{
    if (memcmp(a, b, es) == 0)
        return 1;
    if (nan_any && es == 4) {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return isnan(x) && isnan(y);
    }
    if (nan_any && es == 8) {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return isnan(x) && isnan(y);
    }
    return 0;
}

static void test_xpose_case(struct ctx *x, const struct options *o, const struct xpose_case *tc,
                            size_t es)
{
    size_t count = (size_t)tc->rows * tc->cols, bytes = count * es;
    unsigned char *hin = host_alloc(bytes), *hout = host_alloc(bytes), *want = host_alloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        hin[i] = (unsigned char)rng_next(&x->rng);
    for (size_t r = 0; r < (size_t)tc->rows; r++)
        for (size_t c = 0; c < (size_t)tc->cols; c++)
            memcpy(want + (c * tc->rows + r) * es, hin + (r * tc->cols + c) * es, es);
    void *din, *dout;
    CHECK(cudaMalloc(&din, bytes));
    CHECK(cudaMalloc(&dout, bytes));
    CHECK(cudaMemcpy(din, hin, bytes, cudaMemcpyHostToDevice));
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%d e%zu", tc->rows, tc->cols, es);
    for (size_t i = 0; i < transpose_kernel_count; i++) {
        const struct transpose_kernel *kern = &transpose_kernels[i];
        if (!picked(o, kern->name) || !(kern->elem_sizes & (1u << es)))
            continue;
        /* The bandwidth references copy; they are checked as copies. */
        const unsigned char *expect = (kern->flags & KERNEL_BENCH_ONLY) ? hin : want;
        /* cuBLAS's geam computes 1*x + 0, which may rewrite a NaN's payload:
         * for it (only) every NaN matches every NaN. */
        int nan_any = (kern->flags & KERNEL_REFERENCE) != 0;
        memset(hout, 0xff, bytes);
        if (kern->flags & KERNEL_HOST) {
            struct transpose_problem hp = { tc->rows, tc->cols, es, hin, hout };
            kern->host(&hp);
        } else {
            struct transpose_problem p = { tc->rows, tc->cols, es, din, dout };
            CHECK(cudaMemset(dout, 0xff, bytes));
            cudaError_t err = kern->launch(&p, &x->env);
            if (err == cudaSuccess)
                err = cudaStreamSynchronize(x->stream);
            if (err != cudaSuccess) {
                char detail[160];
                snprintf(detail, sizeof detail, "launch failed: %s", cudaGetErrorString(err));
                report(x, 0, kern->name, shape, detail);
                continue;
            }
            CHECK(cudaMemcpy(hout, dout, bytes, cudaMemcpyDeviceToHost));
        }
        size_t bad = 0;
        for (size_t e = 0; e < count; e++)
            bad += !same_element(hout + e * es, expect + e * es, es, nan_any);
        char detail[160];
        snprintf(detail, sizeof detail, bad ? "%zu elements differ"
                 : nan_any ? "bit-exact but NaN payloads" : "bit-exact", bad);
        report(x, bad == 0, kern->name, shape, detail);
    }
    cudaFree(din);
    cudaFree(dout);
    free(hin);
    free(hout);
    free(want);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of one kernel, rotating over `sets` input sets. */
static float time_kernel(struct ctx *x, const struct gemm_kernel *kern, struct sgemm_problem *sets,
                         int nsets, int *ok)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    float ms[64];
    int reps = 1;
    *ok = 1;
    for (int r = -1; r < reps; r++) {
        struct sgemm_problem *p = &sets[(r + 1) % nsets];
        CHECK(cudaEventRecord(start, x->stream));
        cudaError_t err = kern->launch(p, &x->env);
        CHECK(cudaEventRecord(stop, x->stream));
        if (err == cudaSuccess)
            err = cudaEventSynchronize(stop);
        if (err != cudaSuccess) {
            fprintf(stderr, "gpu_kernels: %s: %s\n", kern->name, cudaGetErrorString(err));
            *ok = 0;
            break;
        }
        float t;
        CHECK(cudaEventElapsedTime(&t, start, stop));
        if (r < 0) {
            /* warm-up: its time sets how many repeats fit in ~300 ms */
            reps = t > 1000.0f ? 1 : (int)(300.0f / (t > 0.01f ? t : 0.01f));
            reps = reps < 5 ? (t > 1000.0f ? 1 : 5) : reps > 64 ? 64 : reps;
            if (t > 1000.0f) {
                ms[0] = t;
                break;
            }
        } else {
            ms[r] = t;
        }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    qsort(ms, (size_t)reps, sizeof ms[0], cmp_float);
    return ms[reps / 2];
}

static void time_shape(struct ctx *x, const struct options *o, int m, int n, int k)
{
    size_t sa = (size_t)m * k, sb = (size_t)k * n, sc = (size_t)m * n;
    size_t set_bytes = (sa + sb + sc) * 4;
    int nsets = (int)((200u << 20) / set_bytes) + 1;
    if (nsets > 8)
        nsets = 8;
    struct sgemm_problem sets[8];
    float *h = host_alloc((sa > sb ? sa : sb) * 4);
    for (int s = 0; s < nsets; s++) {
        float *a, *b, *c;
        CHECK(cudaMalloc((void **)&a, sa * 4));
        CHECK(cudaMalloc((void **)&b, sb * 4));
        CHECK(cudaMalloc((void **)&c, sc * 4));
        fill_normal(h, sa, &x->rng);
        CHECK(cudaMemcpy(a, h, sa * 4, cudaMemcpyHostToDevice));
        fill_normal(h, sb, &x->rng);
        CHECK(cudaMemcpy(b, h, sb * 4, cudaMemcpyHostToDevice));
        struct sgemm_problem p = { m, n, k, 1.0f, 0.0f, a, b, c };
        sets[s] = p;
    }
    free(h);
    double flop = 2.0 * m * n * k;
    float cublas_ms = 0.0f;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < gemm_kernel_count; i++) {
            const struct gemm_kernel *kern = &gemm_kernels[i];
            int is_ref = (kern->flags & KERNEL_REFERENCE) != 0;
            if ((kern->flags & KERNEL_HOST) || is_ref != (pass == 0) ||
                (pass == 1 && !picked(o, kern->name)))
                continue;
            int ok;
            float t = time_kernel(x, kern, sets, nsets, &ok);
            if (!ok)
                continue;
            if (pass == 0)
                cublas_ms = t;
            printf("time %-16s %5dx%5dx%5d %9.3f ms %7.2f TFLOP/s %6.1f%% of cuBLAS\n", kern->name,
                   m, n, k, t, flop / t / 1e9, 100.0 * cublas_ms / t);
            fflush(stdout);
        }
    }
    for (int s = 0; s < nsets; s++) {
        cudaFree((void *)sets[s].a);
        cudaFree((void *)sets[s].b);
        cudaFree(sets[s].c);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: gpu_kernels [--small] [--time] [--op mul|transpose] "
                    "[--kernel NAME]... [--shape MxNxK]...\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct options o = { 0, 0, 1, 1, { 0 }, 0, { { 0 } }, 0 };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--small") == 0) {
            o.small = 1;
        } else if (strcmp(argv[i], "--time") == 0) {
            o.time = 1;
        } else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            i++;
            o.do_mul = strcmp(argv[i], "mul") == 0;
            o.do_xpose = strcmp(argv[i], "transpose") == 0;
            if (!o.do_mul && !o.do_xpose)
                return usage();
        } else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc && o.nkernels < MAX_PICK) {
            o.kernels[o.nkernels++] = argv[++i];
        } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc && o.nshapes < MAX_PICK) {
            int *s = o.shapes[o.nshapes++];
            if (sscanf(argv[++i], "%dx%dx%d", &s[0], &s[1], &s[2]) != 3 || s[0] < 1 ||
                s[1] < 1 || s[2] < 1)
                return usage();
        } else {
            return usage();
        }
    }

    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("gpu_kernels: skipped: no CUDA device (%s)\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "none found");
        return 0;
    }
    struct ctx x;
    memset(&x, 0, sizeof x);
    x.rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(kernels_prepare_device());
    CHECK(cudaStreamCreate(&x.stream));
    if (cublasCreate(&x.cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "gpu_kernels: cublasCreate failed\n");
        return 2;
    }
    x.env.stream = x.stream;
    x.env.cublas = x.cublas;
    x.env.sm_count = prop.multiProcessorCount;
    printf("gpu_kernels on %s (%d SMs), seed %llu\n", prop.name, prop.multiProcessorCount,
           (unsigned long long)x.rng);

    if (o.time) {
        int n = o.nshapes ? o.nshapes : (int)(sizeof time_shapes / sizeof time_shapes[0]);
        for (int i = 0; i < n; i++) {
            const int *s = o.nshapes ? o.shapes[i] : time_shapes[i];
            time_shape(&x, &o, s[0], s[1], s[2]);
        }
        cublasDestroy(x.cublas);
        cudaStreamDestroy(x.stream);
        return 0;
    }

    if (o.do_mul) {
        if (o.nshapes) {
            for (int i = 0; i < o.nshapes; i++) {
                struct mul_case mc = { o.shapes[i][0], o.shapes[i][1], o.shapes[i][2], 1.0f, 0.0f, 1 };
                test_mul_case(&x, &o, &mc);
                mc.alpha = 0.5f;
                mc.beta = -1.0f;
                test_mul_case(&x, &o, &mc);
            }
        } else {
            for (size_t i = 0; i < sizeof mul_cases / sizeof mul_cases[0]; i++)
                if (!o.small || mul_cases[i].small)
                    test_mul_case(&x, &o, &mul_cases[i]);
        }
    }
    if (o.do_xpose && !o.nshapes) {
        for (size_t i = 0; i < sizeof xpose_cases / sizeof xpose_cases[0]; i++)
            for (size_t es = 2; es <= 8; es *= 2)
                if (!o.small || xpose_cases[i].small)
                    test_xpose_case(&x, &o, &xpose_cases[i], es);
    }
    cublasDestroy(x.cublas);
    cudaStreamDestroy(x.stream);
    if (x.seq_only)
        printf("gpu_kernels: %d passed (%d within the sequential-sum bound only), %d failed\n",
               x.passed, x.seq_only, x.failed);
    else
        printf("gpu_kernels: %d passed, %d failed\n", x.passed, x.failed);
    return x.failed ? 1 : 0;
}
