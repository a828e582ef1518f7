/* cpu: every signature on the host, for machines without a GPU and as a
 * test oracle.
 *
 * Threads take bands of the stack's rows of C (all products' rows laid end
 * to end).  Within a band, for each block of 512 columns the loop order is
 * i, k, j: one element of A times a contiguous piece of a row of B added
 * into a row of accumulators that stays in L1, which the compiler
 * vectorises.  Floating-point accumulators are double: each float or half
 * product is exact in double, so the f32 and f16 results are the FP64 sum
 * rounded once, more accurate than any FP32 GPU kernel, and the host
 * kernel's own error never decides a test.  tf32 rounds the operands to
 * TF32 first, as the tensor cores' TF32 mode does; tf32x3 is computed as
 * f32 is (its three products aim at FP32's accuracy, which this exceeds).
 * int64 accumulates modulo 2^64 in unsigned arithmetic, exactly as NumPy's
 * integer matmul wraps; int8, int16 and int32 operands modulo 2^32, as
 * the int8 stages do (where the limbs stage keeps 16 bits, so do these).
 *
 * gemmcli's own.  Run and checked by (no GPU needed):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel cpu --verify --repeat 20 */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels/registry.h"

enum { CPU_BLOCK_N = 512 };

/* x rounded to TF32 (10 bits of mantissa), to nearest, ties away from
 * zero, as cvt.rna.tf32.f32 does; values that would overflow are cut
 * instead, non-finite ones kept. */
static double tf32_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return x;
    uint32_t r = (u + 0x1000u) & 0xffffe000u;
    if ((r & 0x7f800000u) == 0x7f800000u)
        r = u & 0xffffe000u;
    float y;
    memcpy(&y, &r, sizeof y);
    return y;
}

static double load_in(const struct gemm_problem *p, const void *base, int64_t i)
{
    switch (p->sig) {
    case GEMM_F32:
    case GEMM_TF32X3: return ((const float *)base)[i];
    case GEMM_TF32: return tf32_round(((const float *)base)[i]);
    case GEMM_F16: return gc_half_to_float(((const uint16_t *)base)[i]);
    case GEMM_BF16: return gc_bf16_to_float(((const uint16_t *)base)[i]);
    default: return ((const double *)base)[i];
    }
}

static void float_rows(const struct gemm_problem *p, int64_t r0, int64_t r1)
{
    double acc[CPU_BLOCK_N];
    for (int64_t j0 = 0; j0 < p->n; j0 += CPU_BLOCK_N) {
        int64_t nb = p->n - j0 < CPU_BLOCK_N ? p->n - j0 : CPU_BLOCK_N;
        for (int64_t r = r0; r < r1; r++) {
            int64_t b = r / p->m, i = r % p->m;
            const char *a = (const char *)p->a;
            memset(acc, 0, sizeof(double) * (size_t)nb);
            for (int64_t k = 0; k < p->k; k++) {
                double av = load_in(p, a, b * p->stride_a + i * p->lda + k);
                int64_t at = b * p->stride_b + k * p->ldb + j0;
                if (p->sig == GEMM_F32 || p->sig == GEMM_TF32X3) {
                    const float *brow = (const float *)p->b + at;
                    for (int64_t j = 0; j < nb; j++)
                        acc[j] += av * brow[j];
                } else if (p->sig == GEMM_F64) {
                    const double *brow = (const double *)p->b + at;
                    for (int64_t j = 0; j < nb; j++)
                        acc[j] += av * brow[j];
                } else {
                    for (int64_t j = 0; j < nb; j++)
                        acc[j] += av * load_in(p, p->b, at + j);
                }
            }
            int64_t at = b * p->stride_c + i * p->ldc + j0;
            for (int64_t j = 0; j < nb; j++) {
                if (p->sig == GEMM_F64) {
                    double *c = (double *)p->c + at + j;
                    *c = p->beta == 0 ? p->alpha * acc[j] : p->alpha * acc[j] + p->beta * *c;
                } else {
                    float *c = (float *)p->c + at + j;
                    *c = (float)(p->beta == 0 ? p->alpha * acc[j]
                                              : p->alpha * acc[j] + p->beta * (double)*c);
                }
            }
        }
    }
}

/* Exact integer rows: operands of type IN, sums in the unsigned type ACC
 * (wrapping modulo 2^64 for int64, 2^32 for int8's int32 C), C of type
 * OUT.  Integers take no scalars (the exact path applies them after): a
 * nonzero beta sums into C. */
#define INT_ROWS(name, IN, ACC, OUT)                                                   \
    static void name(const struct gemm_problem *p, int64_t r0, int64_t r1)           \
    {                                                                                  \
        ACC acc[CPU_BLOCK_N];                                                          \
        const IN *A = p->a, *B = p->b;                                                 \
        OUT *C = p->c;                                                                 \
        for (int64_t j0 = 0; j0 < p->n; j0 += CPU_BLOCK_N) {                           \
            int64_t nb = p->n - j0 < CPU_BLOCK_N ? p->n - j0 : CPU_BLOCK_N;            \
            for (int64_t r = r0; r < r1; r++) {                                        \
                int64_t b = r / p->m, i = r % p->m;                                    \
                memset(acc, 0, sizeof acc[0] * (size_t)nb);                            \
                for (int64_t k = 0; k < p->k; k++) {                                   \
                    ACC av = (ACC)A[b * p->stride_a + i * p->lda + k];                 \
                    const IN *brow = B + b * p->stride_b + k * p->ldb + j0;            \
                    for (int64_t j = 0; j < nb; j++)                                   \
                        acc[j] += av * (ACC)brow[j];                                   \
                }                                                                      \
                OUT *c = C + b * p->stride_c + i * p->ldc + j0;                        \
                for (int64_t j = 0; j < nb; j++)                                       \
                    c[j] = (OUT)((p->beta != 0 ? (ACC)c[j] : 0) + acc[j]);             \
            }                                                                          \
        }                                                                              \
    }
INT_ROWS(int_rows, uint64_t, uint64_t, uint64_t)
INT_ROWS(i8_rows, int8_t, uint32_t, int32_t)
INT_ROWS(i16_rows, int16_t, uint32_t, int32_t)
INT_ROWS(i32_rows, int32_t, uint32_t, int32_t)

static void cpu_slice(void *arg, size_t begin, size_t end)
{
    const struct gemm_problem *p = arg;
    if (p->sig == GEMM_I8)
        i8_rows(p, (int64_t)begin, (int64_t)end);
    else if (p->sig == GEMM_I16)
        i16_rows(p, (int64_t)begin, (int64_t)end);
    else if (p->sig == GEMM_I32)
        i32_rows(p, (int64_t)begin, (int64_t)end);
    else if (p->sig == GEMM_I64)
        int_rows(p, (int64_t)begin, (int64_t)end);
    else
        float_rows(p, (int64_t)begin, (int64_t)end);
}

int ozaki_cpu(const struct gemm_problem *p, int threads);

void gemm_cpu(const struct gemm_problem *p, int threads)
{
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return;
    if (p->sig == GEMM_OZAKI || p->sig == GEMM_OZAKI32) {
        /* (its own file; out of host memory, C is left NaN, which --verify
         * and every check see) */
        if (ozaki_cpu(p, threads) != 0)
            for (int64_t z = 0; z < p->batch; z++)
                for (int64_t i = 0; i < p->m; i++)
                    for (int64_t j = 0; j < p->n; j++) {
                        int64_t e = z * p->stride_c + i * p->ldc + j;
                        if (p->sig == GEMM_OZAKI32)
                            ((float *)p->c)[e] = NAN;
                        else
                            ((double *)p->c)[e] = NAN;
                    }
        return;
    }
    parallel_for(threads, (size_t)(p->batch * p->m), 1, cpu_slice, (void *)p);
}
