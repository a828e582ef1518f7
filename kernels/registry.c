/* The registry's questions: look-ups by name, can_implement, workspace,
 * the signatures, and the device set-up the kernels rely on.  The family
 * dispatchers that run a row are in gemm_dispatch.c. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/gemm.h"
#include "core/error.h"
#include "core/suggest.h"

const struct gemm_sig_info gemm_sigs[GEMM_SIG_COUNT] = {
    [GEMM_F32] = { "f32", GC_F32, GC_F32, "FP32", NULL, GEMM_F32, 1e-4, 5e-5, 1, 0 },
    [GEMM_F16] = { "f16", GC_F16, GC_F32, "f16 operands, FP32 accumulation", NULL, GEMM_F16,
                   2e-3, 5e-5, 2, GEMM_SIG_TENSOR_CORES },
    [GEMM_BF16] = { "bf16", GC_BF16, GC_F32, "bf16 operands, FP32 accumulation", NULL, GEMM_BF16,
                    1.5e-2, 5e-5, 3, GEMM_SIG_TENSOR_CORES },
    [GEMM_F64] = { "f64", GC_F64, GC_F64, "FP64", NULL, GEMM_F64, 1e-10, 1e-12, 6, 0 },
    [GEMM_I64] = { "i64", GC_I64, GC_I64, "exact int64, modulo 2^64", NULL, GEMM_I64, 1e-4, 0, 0,
                   0 },
    [GEMM_TF32] = { "tf32", GC_F32, GC_F32, "TF32 tensor cores, FP32 accumulation", "tf32",
                    GEMM_TF32, 2e-3, 2e-3, 4, GEMM_SIG_TENSOR_CORES },
    [GEMM_TF32X3] = { "tf32x3", GC_F32, GC_F32, "3xTF32 tensor cores, FP32 accumulation",
                      "tf32x3", GEMM_F32, 1e-4, 5e-5, 5, GEMM_SIG_TENSOR_CORES },
    [GEMM_I8] = { "i8", GC_I8, GC_I32, "int8 operands, exact int32 sums modulo 2^32", NULL,
                  GEMM_I8, 1e-4, 0, 0, GEMM_SIG_TENSOR_CORES },
    [GEMM_OZAKI] = { "ozaki", GC_F64, GC_F64, "FP64 from int8 products (Ozaki scheme II)",
                     "ozaki", GEMM_F64, 1e-10, 1e-12, 0, 0 },
    [GEMM_I16] = { "i16", GC_I16, GC_I32, "int16 operands, exact sums modulo 2^16", NULL,
                   GEMM_I16, 1e-4, 0, 0, GEMM_SIG_TENSOR_CORES },
    [GEMM_I32] = { "i32", GC_I32, GC_I32, "int32 operands, exact int32 sums modulo 2^32", NULL,
                   GEMM_I32, 1e-4, 0, 0, GEMM_SIG_TENSOR_CORES },
    [GEMM_OZAKI32] = { "ozaki32", GC_F32, GC_F32,
                       "FP32-class from int8 products (Ozaki scheme II, fewer moduli)", "ozaki32",
                       GEMM_F32, 1e-4, 5e-5, 0, 0 },
};

/* What a result stored in a float dtype carries on top of the arithmetic's
 * error: its own rounding, with room for the sums before it.  Others: the
 * FP64 figure (integer results are checked exactly). */
static const double result_tol[GC_DTYPE_COUNT] = {
    [GC_BF16] = 3e-2, [GC_F16] = 4e-3, [GC_F32] = 1e-4,
};
#define RESULT_TOL_OTHER 1e-10

int gemm_sig_by_name(const char *name)
{
    for (int s = 0; s < GEMM_SIG_COUNT; s++)
        if (strcmp(name, gemm_sigs[s].name) == 0)
            return s;
    int dt = gc_dtype_parse(name);
    for (int s = 0; s < GEMM_SIG_COUNT && dt >= 0; s++)
        if (gemm_sigs[s].in == (enum gc_dtype)dt && !gemm_sigs[s].compute)
            return s;
    return -1;
}

double gemm_sig_verify_tol(enum gemm_sig sig, enum gc_dtype result)
{
    double by_dtype = result_tol[result] > 0 ? result_tol[result] : RESULT_TOL_OTHER;
    double by_sig = gemm_sigs[sig].verify_tol;
    return by_dtype > by_sig ? by_dtype : by_sig;
}

void gemm_problem_dense(struct gemm_problem *p)
{
    p->lda = p->k;
    p->ldb = p->n;
    p->ldc = p->n;
    p->stride_c = p->m * p->n;
}

const struct gemm_kernel *gemm_kernel_find(const char *name)
{
    for (size_t i = 0; i < gemm_kernel_count; i++)
        if (strcmp(gemm_kernels[i].name, name) == 0)
            return &gemm_kernels[i];
    return NULL;
}

const struct transpose_kernel *transpose_kernel_find(const char *name)
{
    for (size_t i = 0; i < transpose_kernel_count; i++)
        if (strcmp(transpose_kernels[i].name, name) == 0)
            return &transpose_kernels[i];
    return NULL;
}

/* The refusal of an unknown kernel name, with the nearest that `s` found. */
static int kernel_unknown(const char *op, const char *name, const struct suggest *s)
{
    const char *near = suggest_result(s);
    if (near)
        return gc_fail(GC_EXIT_USAGE, "unknown %s kernel '%s': did you mean '%s'? (see 'gemmcli "
                       "kernels')", op, name, near);
    return gc_fail(GC_EXIT_USAGE, "unknown %s kernel '%s' (see 'gemmcli kernels')", op, name);
}

int gemm_kernel_unknown(const char *name)
{
    struct suggest s;
    suggest_init(&s, name);
    suggest_offer(&s, "auto");
    for (size_t i = 0; i < gemm_kernel_count; i++)
        suggest_offer(&s, gemm_kernels[i].name);
    return kernel_unknown("mul", name, &s);
}

int transpose_kernel_unknown(const char *name)
{
    struct suggest s;
    suggest_init(&s, name);
    suggest_offer(&s, "auto");
    for (size_t i = 0; i < transpose_kernel_count; i++)
        suggest_offer(&s, transpose_kernels[i].name);
    return kernel_unknown("transpose", name, &s);
}

void gemm_sigs_text(unsigned sigs, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int s = 0; s < GEMM_SIG_COUNT; s++)
        if (sigs & (1u << s) && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "",
                                     gemm_sigs[s].name);
}

int gemm_can_implement(const struct gemm_kernel *k, const struct gemm_problem *p, char *why,
                       size_t n)
{
    if (!(k->sigs & (1u << p->sig))) {
        char have[96];
        gemm_sigs_text(k->sigs, have, sizeof have);
        snprintf(why, n, "kernel '%s' computes %s (%s); this product needs %s (%s)", k->name,
                 have, gemm_sigs[__builtin_ctz(k->sigs)].arith, gemm_sigs[p->sig].name,
                 gemm_sigs[p->sig].arith);
        return 0;
    }
    if (!(k->flags & KERNEL_HOST) && p->cc == GEMM_CC_ANY) {
        /* Asked before a device is open: its checks come later. */
    } else if (!(k->flags & KERNEL_HOST) && (k->flags & KERNEL_ARCH_EXACT) &&
               p->cc != k->cc_min) {
        snprintf(why, n, "kernel '%s' is built for compute capability %d.%d alone (it uses that "
                 "architecture's own instructions); this GPU is %d.%d", k->name, k->cc_min / 10,
                 k->cc_min % 10, p->cc / 10, p->cc % 10);
        return 0;
    } else if (!(k->flags & KERNEL_HOST) && p->cc < k->cc_min) {
        snprintf(why, n, "kernel '%s' needs a GPU of compute capability %d.%d or later; this "
                 "one is %d.%d", k->name, k->cc_min / 10, k->cc_min % 10, p->cc / 10,
                 p->cc % 10);
        return 0;
    }
    if (p->m > INT_MAX || p->n > INT_MAX || p->k > INT_MAX) {
        snprintf(why, n, "kernel '%s' takes dimensions up to %d; this product is %lldx%lldx%lld",
                 k->name, INT_MAX, (long long)p->m, (long long)p->n, (long long)p->k);
        return 0;
    }
    if (!(k->flags & KERNEL_ANY_LD) &&
        (p->lda != p->k || p->ldb != p->n || p->ldc != p->n || p->stride_c != p->m * p->n)) {
        snprintf(why, n, "kernel '%s' takes packed matrices only", k->name);
        return 0;
    }
    if (k->check && !k->check(p, why, n))
        return 0;
    return 1;
}

size_t gemm_workspace_bytes(const struct gemm_kernel *k, const struct gemm_problem *p)
{
    size_t own = k->workspace ? k->workspace(p) : 0;
    return (k->flags & KERNEL_SPLIT_K) ? own + gemm_split_workspace(k, p) : own;
}

cudaError_t kernels_prepare_device(void)
{
    int dev;
    cudaMemPool_t pool;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetDefaultMemPool(&pool, dev);
    if (err != cudaSuccess)
        return err;
    uint64_t keep = UINT64_MAX;
    return cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
}
