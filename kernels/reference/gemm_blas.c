/* blas: float32 and float64 products on the host through OpenBLAS's
 * SGEMM and DGEMM, for machines without a GPU (auto's choice there, where
 * the library is installed: Debian's libopenblas0-pthread).
 *
 * The library is loaded on first use, as cuBLAS is
 * (kernels/reference/cublas_lazy.c): the binary builds, starts and runs
 * every other kernel without it, and the row's check refuses the kernel,
 * saying why, where it cannot be loaded.  Each product of a stack is one
 * cblas_?gemm call on row-major operands with their leading dimensions
 * (a shared operand: the same pointer each time); OpenBLAS spreads one call
 * over the threads asked for (openblas_set_num_threads).  It sums in the
 * operands' own precision, as NumPy's matmul does; `cpu`, which sums in
 * double, stays the reference for --verify.
 *
 * OpenBLAS's.  Run and checked by (no GPU needed):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel blas --verify --repeat 20 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "kernels/registry.h"

/* CBLAS's enums, as cblas.h numbers them. */
enum { BLAS_ROW_MAJOR = 101, BLAS_NO_TRANS = 111 };

struct blas_api {
    void *lib;
    void (*sgemm)(int, int, int, int, int, int, float, const float *, int, const float *, int,
                  float, float *, int);
    void (*dgemm)(int, int, int, int, int, int, double, const double *, int, const double *,
                  int, double, double *, int);
    void (*set_threads)(int);
    char why[256];      /* empty when loaded */
};

static struct blas_api blas;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_load(void)
{
    /* (the soname Debian's and OpenBLAS's own builds install, then the
     * development link) */
    static const char *const names[] = { "libopenblas.so.0", "libopenblas.so" };
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !blas.lib; i++)
        blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!blas.lib) {
        snprintf(blas.why, sizeof blas.why, "OpenBLAS could not be loaded (%s); on Debian it "
                 "is the package libopenblas0-pthread", dlerror());
        return;
    }
    *(void **)&blas.sgemm = dlsym(blas.lib, "cblas_sgemm");
    *(void **)&blas.dgemm = dlsym(blas.lib, "cblas_dgemm");
    *(void **)&blas.set_threads = dlsym(blas.lib, "openblas_set_num_threads");
    if (!blas.sgemm || !blas.dgemm)
        snprintf(blas.why, sizeof blas.why, "the OpenBLAS that was loaded has no cblas_sgemm "
                 "or cblas_dgemm");
}

static int gemm_blas_available(char *why, size_t n)
{
    pthread_once(&blas_once, blas_load);
    if (blas.why[0] && why && n)
        snprintf(why, n, "%s", blas.why);
    return !blas.why[0];
}

/* CBLAS takes int sizes: larger ones are refused by the check. */
static int fits_int(int64_t v)
{
    return v >= 0 && v <= 0x7fffffff;
}

int gemm_blas_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (!gemm_blas_available(why, n))
        return 0;
    if (!fits_int(p->m) || !fits_int(p->n) || !fits_int(p->k) || !fits_int(p->lda) ||
        !fits_int(p->ldb) || !fits_int(p->ldc)) {
        snprintf(why, n, "blas takes dimensions and rows of at most 2^31 - 1 values (CBLAS's "
                 "int); cpu takes the others");
        return 0;
    }
    return 1;
}

void gemm_blas(const struct gemm_problem *p, int threads)
{
    if (p->m < 1 || p->n < 1 || p->batch < 1 || !gemm_blas_available(NULL, 0))
        return;
    if (blas.set_threads && threads > 0)
        blas.set_threads(threads);
    int m = (int)p->m, n = (int)p->n, k = (int)p->k;
    /* (CBLAS wants leading dimensions of at least the row and 1, which an
     * empty K's operands need not have) */
    int lda = (int)(p->lda > k ? p->lda : k > 1 ? k : 1);
    int ldb = (int)(p->ldb > n ? p->ldb : n), ldc = (int)(p->ldc > n ? p->ldc : n);
    for (int64_t b = 0; b < p->batch; b++) {
        if (p->sig == GEMM_F64)
            blas.dgemm(BLAS_ROW_MAJOR, BLAS_NO_TRANS, BLAS_NO_TRANS, m, n, k, p->alpha,
                       (const double *)p->a + b * p->stride_a, lda,
                       (const double *)p->b + b * p->stride_b, ldb, p->beta,
                       (double *)p->c + b * p->stride_c, ldc);
        else
            blas.sgemm(BLAS_ROW_MAJOR, BLAS_NO_TRANS, BLAS_NO_TRANS, m, n, k, (float)p->alpha,
                       (const float *)p->a + b * p->stride_a, lda,
                       (const float *)p->b + b * p->stride_b, ldb, (float)p->beta,
                       (float *)p->c + b * p->stride_c, ldc);
    }
}
