/* i8_limbs: int16 and int32 products on the int8 tensor cores, exact
 * modulo 2^16 (int16 operands) or 2^32 (int32 operands), the result
 * widths of NumPy's integer products that keep 16 or 32 bits.
 *
 * Each operand is cut into L byte limbs (L = 2 or 4, its bytes), signed
 * digits d_i in [-128, 127] with a = sum 256^i d_i: d_0 is the low byte
 * read as a signed byte, and each next one the byte of what is left once
 * the digit below is taken away.  The top digit may need 128, which is
 * kept as -128: it is multiplied by 256^(L-1), and the result is wanted
 * modulo 2^(8 L) only, where 256^(L-1) 128 and 256^(L-1) (-128) agree.
 * Modulo 2^(8 L) a product of limbs 256^(i+j) d_i e_j vanishes where
 * i + j >= L, so
 *
 *     C = sum over s < L of 256^s G_s,   G_s = sum over i + j = s of D_i E_j
 *
 * and each G_s is one int8 product of K (s + 1) values a row: A's digits
 * 0..s side by side in a row, [D_0 | D_1 | .. | D_s], against B's digits
 * stacked s..0, [E_s; ..; E_0].  Its int32 sums wrap modulo 2^32, which
 * holds the 8 L bits wanted.  The products run s = L-1 first, and before
 * each next one C is multiplied by 256 (Horner's rule on C, a pass of its
 * int32 values), the product then added into C by the int8 stage's own
 * `accumulate`.  With C0 (a product in steps of K) the sums go to a
 * buffer first and are added to C at the end.
 *
 * Work: L (L + 1) / 2 int8 products of K: 3 for int16, 10 for int32,
 * each on `i8_igmma` (kernels/igemm/igemm_03_igmma.cu), which writes B's
 * digits k-major as it does any B.  The digits of each product are cut
 * from the operands anew (a pass over A and B each), into rows of K
 * rounded up to 16 bytes and padded with zeros, so that the int8 stage
 * never copies A.
 *
 * gemmcli's own; the decomposition of a wide integer product into
 * byte-limb products on int8 engines follows Ozaki, Uchino and Imamura's
 * use of INT8 matrix engines (Ozaki scheme II), here without moduli: the
 * result's own width is the modulus.
 *
 * Run and checked by (a.npy and b.npy int16 or int32):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel i8_limbs --verify --repeat 20 */
#include <stdint.h>
#include <stdio.h>

#include "kernels/common.cuh"
#include "kernels/gemm.h"

/* The int8 stage each limb product runs on. */
extern "C" cudaError_t i8gemm_igmma_launch(const struct i8gemm_problem *p,
                                           const struct launch_env *env);
extern "C" int i8gemm_igmma_check(const struct gemm_problem *p, char *why, size_t n);
extern "C" size_t i8gemm_igmma_workspace(const struct gemm_problem *p);

enum { LIMB_ALIGN = 256, LIMB_THREADS = 256 };

/* Digit i (0-based) of v's signed base-256 digits; v's bytes below 8 (i +
 * 1) decide it. */
static __device__ __forceinline__ int8_t limb_digit(uint32_t v, int i)
{
    int8_t d = 0;
    for (int j = 0; j <= i; j++) {
        d = (int8_t)(v & 0xffu);
        v = (v - (uint32_t)(int32_t)d) >> 8;
    }
    return d;
}

static __device__ __forceinline__ uint32_t limb_load(const void *base, int bytes, long long at)
{
    return bytes == 2 ? (uint32_t)(int32_t)((const int16_t *)base)[at]
                      : (uint32_t)((const int32_t *)base)[at];
}

/* A's digits 0..s of each product, rows of (s + 1) kp bytes: digit i at
 * row offset i kp, zeros past K.  A block a row (x), its threads four
 * values of k each along it (y): no division per value, four digits a
 * 4-byte store (kp is a multiple of 16). */
static __global__ void __launch_bounds__(LIMB_THREADS)
limb_split_a(const void *a, int bytes, long long stride_a, int m, int k, int kp, int s,
             long long rows, int8_t *out)
{
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        long long src = row / m * stride_a + row % m * (long long)k;
        int8_t *dst = out + row * (long long)(s + 1) * kp;
        for (int col = 4 * (blockIdx.y * blockDim.x + threadIdx.x); col < kp;
             col += 4 * gridDim.y * blockDim.x) {
            uint32_t v[4];
#pragma unroll
            for (int t = 0; t < 4; t++)
                v[t] = col + t < k ? limb_load(a, bytes, src + col + t) : 0;
            for (int i = 0; i <= s; i++)
                *(char4 *)(dst + (long long)i * kp + col) =
                    make_char4(limb_digit(v[0], i), limb_digit(v[1], i), limb_digit(v[2], i),
                               limb_digit(v[3], i));
        }
    }
}

/* B's digits s..0 of each product stacked, (s + 1) kp rows of n: digit j
 * at row (s - j) kp, zero rows past K.  A block a row of k (x), four
 * columns a thread (y), stored as one word where rows of n bytes keep
 * words aligned. */
static __global__ void __launch_bounds__(LIMB_THREADS)
limb_split_b(const void *b, int bytes, long long stride_b, int n, int k, int kp, int s,
             long long rows, int8_t *out)
{
    bool words = n % 4 == 0;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        long long p = row / kp;
        int kk = (int)(row % kp);
        long long src = p * stride_b + (long long)kk * n;
        int8_t *dst = out + p * (long long)(s + 1) * kp * n + (long long)kk * n;
        for (int col = 4 * (blockIdx.y * blockDim.x + threadIdx.x); col < n;
             col += 4 * gridDim.y * blockDim.x) {
            uint32_t v[4];
#pragma unroll
            for (int t = 0; t < 4; t++)
                v[t] = kk < k && col + t < n ? limb_load(b, bytes, src + col + t) : 0;
            for (int j = 0; j <= s; j++) {
                int8_t *d = dst + (long long)(s - j) * kp * n + col;
                if (words)
                    *(char4 *)d = make_char4(limb_digit(v[0], j), limb_digit(v[1], j),
                                             limb_digit(v[2], j), limb_digit(v[3], j));
                else
                    for (int t = 0; t < 4 && col + t < n; t++)
                        d[t] = limb_digit(v[t], j);
            }
        }
    }
}

/* x = 256 x, or c += x when `add`, over `batch` products of mn values,
 * x's stride_x and c's stride_c apart: a product a block row (x). */
static __global__ void __launch_bounds__(LIMB_THREADS)
limb_combine(int32_t *x, long long stride_x, int32_t *c, long long stride_c, long long mn,
             long long batch, int add)
{
    for (long long b = blockIdx.x; b < batch; b += gridDim.x)
        for (long long i = blockIdx.y * (long long)blockDim.x + threadIdx.x; i < mn;
             i += (long long)gridDim.y * blockDim.x) {
            uint32_t v = (uint32_t)x[b * stride_x + i];
            if (add)
                c[b * stride_c + i] = (int32_t)((uint32_t)c[b * stride_c + i] + v);
            else
                x[b * stride_x + i] = (int32_t)(v << 8);
        }
}

/* rows blocks (at most 2^31 - 1) by enough blocks of LIMB_THREADS to
 * cover `per_row` values `each` a thread (at most 65535). */
static dim3 limb_grid(long long rows, long long per_row, int each)
{
    long long x = rows < 0x7fffffffll ? rows : 0x7fffffffll;
    long long y = (per_row + (long long)LIMB_THREADS * each - 1) / ((long long)LIMB_THREADS * each);
    y = y < 65535 ? y : 65535;
    return dim3((unsigned)(x > 0 ? x : 1), (unsigned)(y > 0 ? y : 1));
}

static long long limb_kp(long long k) { return (k + 15) / 16 * 16; }

static size_t limb_up(size_t bytes) { return (bytes + LIMB_ALIGN - 1) / LIMB_ALIGN * LIMB_ALIGN; }

/* The digits of the widest product (s = L - 1) and, with C0, the sums'
 * buffer. */
static void limb_sizes(long long m, long long n, long long k, long long batch, bool a_b, bool b_b,
                       int bytes, bool accumulate, size_t *sums, size_t *da, size_t *db)
{
    long long kp = limb_kp(k), nb = batch > 1 ? batch : 1;
    *sums = accumulate ? limb_up((size_t)(nb * m * n) * 4) : 0;
    *da = limb_up((size_t)((a_b ? nb : 1) * m * bytes * kp));
    *db = limb_up((size_t)((b_b ? nb : 1) * bytes * kp * n));
}

extern "C" cudaError_t limbgemm_limbs_launch(const struct limbgemm_problem *p,
                                             const struct launch_env *env)
{
    if (p->m < 0 || p->n < 0 || p->k < 1 || (p->bytes != 2 && p->bytes != 4))
        return cudaErrorInvalidValue;
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    int batch = p->batch > 1 ? p->batch : 1;
    bool a_b = batch > 1 && p->stride_a != 0, b_b = batch > 1 && p->stride_b != 0;
    int kp = (int)limb_kp(p->k), digits = p->bytes;
    size_t sums, da, db;
    limb_sizes(p->m, p->n, p->k, batch, a_b, b_b, digits, p->accumulate, &sums, &da, &db);
    char *ws = NULL;
    cudaError_t err = cudaMallocAsync((void **)&ws, sums + da + db, env->stream);
    if (err != cudaSuccess)
        return err;
    int8_t *dig_a = (int8_t *)(ws + sums), *dig_b = (int8_t *)(ws + sums + da);
    long long mn = (long long)p->m * p->n;
    int32_t *x = p->accumulate ? (int32_t *)ws : p->c;
    long long stride_x = p->accumulate ? mn : p->stride_c;
    long long na = a_b ? batch : 1, nb = b_b ? batch : 1;
    for (int s = digits - 1; s >= 0 && err == cudaSuccess; s--) {
        if (s < digits - 1) {
            limb_combine<<<limb_grid(batch, mn, 1), LIMB_THREADS, 0, env->stream>>>(
                x, stride_x, NULL, 0, mn, batch, 0);
            if ((err = launch_result()) != cudaSuccess)
                break;
        }
        long long ra = na * p->m, rb = nb * (long long)kp;
        limb_split_a<<<limb_grid(ra, kp, 4), LIMB_THREADS, 0, env->stream>>>(
            p->a, p->bytes, p->stride_a, p->m, p->k, kp, s, ra, dig_a);
        limb_split_b<<<limb_grid(rb, p->n, 4), LIMB_THREADS, 0, env->stream>>>(
            p->b, p->bytes, p->stride_b, p->n, p->k, kp, s, rb, dig_b);
        if ((err = launch_result()) != cudaSuccess)
            break;
        long long ks = (long long)(s + 1) * kp;
        struct i8gemm_problem q = { p->m, p->n, (int)ks, dig_a, dig_b, x, batch,
                                    a_b ? p->m * ks : 0, b_b ? ks * p->n : 0, stride_x,
                                    p->accumulate || s < digits - 1 };
        /* (with C0, the widest product starts the buffer afresh) */
        if (p->accumulate && s == digits - 1)
            q.accumulate = 0;
        err = i8gemm_igmma_launch(&q, env);
    }
    if (err == cudaSuccess && p->accumulate) {
        limb_combine<<<limb_grid(batch, mn, 1), LIMB_THREADS, 0, env->stream>>>(
            x, stride_x, p->c, p->stride_c, mn, batch, 1);
        err = launch_result();
    }
    cudaError_t freed = cudaFreeAsync(ws, env->stream);
    return err != cudaSuccess ? err : freed;
}

extern "C" cudaError_t limbgemm_limbs_attr(struct kernel_attr *out)
{
    return kernel_attr_of(limb_split_a, LIMB_THREADS, 0, out);
}

/* The widest limb product, as the int8 stage sees it. */
static struct gemm_problem limb_widest(const struct gemm_problem *p)
{
    struct gemm_problem q = *p;
    int digits = p->sig == GEMM_I16 ? 2 : 4;
    q.sig = GEMM_I8;
    q.k = digits * limb_kp(p->k);
    gemm_problem_dense(&q);
    q.stride_a = p->stride_a ? q.m * q.k : 0;
    q.stride_b = p->stride_b ? q.k * q.n : 0;
    return q;
}

extern "C" int limbgemm_limbs_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->k < 1) {
        snprintf(why, n, "K = 0: the int8 stage's tensor map has no dimension of 0");
        return 0;
    }
    if (limb_kp(p->k) * 4 > 0x7ffffff0) {
        snprintf(why, n, "K x 4 limbs must fit an int");
        return 0;
    }
    struct gemm_problem q = limb_widest(p);
    return i8gemm_igmma_check(&q, why, n);
}

extern "C" size_t limbgemm_limbs_workspace(const struct gemm_problem *p)
{
    size_t sums, da, db;
    int digits = p->sig == GEMM_I16 ? 2 : 4;
    bool stack = p->batch > 1;
    limb_sizes(p->m, p->n, p->k, p->batch, stack && p->stride_a != 0,
               stack && p->stride_b != 0, digits, p->beta != 0, &sums, &da, &db);
    struct gemm_problem q = limb_widest(p);
    return sums + da + db + i8gemm_igmma_workspace(&q);
}
