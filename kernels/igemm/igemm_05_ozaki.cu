/* i8_ozaki: float64 products from int8 ones on Hopper's integer tensor
 * cores (Ozaki scheme II), for `--compute ozaki`, and float32 ones for
 * `--compute ozaki32`: the method of the host reference
 * (kernels/reference/ozaki_cpu.c, which says why it is exact), its int8
 * products on `i8_igmma` (kernels/igemm/igemm_03_igmma.cu).
 *
 * Each row i of A is scaled by 2^s_i so that its largest finite magnitude
 * lies just under 2^beta (54 bits for ozaki, 28 for ozaki32: float's 24
 * and four more) and rounded to integers, A'; each column j of B by
 * 2^t_j, B'.  C' = A' B' is an integer below P/2 in magnitude, P the
 * product of L pairwise coprime moduli p <= 256 (L = 16 for K = 8192, 9
 * for ozaki32), and is known from its residues modulo each p:
 *
 *   1. two passes find s_i and t_j (and which rows and columns hold an
 *      infinity or a NaN);
 *   2. one pass over each operand writes its residues modulo every p as
 *      int8 in [-p/2, p/2), A's rows and B's columns (k-major, through a
 *      tile in shared memory) of K padded to 16 bytes (K longer than
 *      65536 in pieces, each an int8 product whose int32 sums cannot leave
 *      int32: 128 x 128 x 65536 = 2^30);
 *   3. for each p and piece, an int8 product on `i8_igmma`, which takes B
 *      k-major as it is (no pass of its own over it) and writes its sums
 *      modulo p as int8 digits (folded into the last piece's), where an
 *      int32 C would be written and read back;
 *   4. a pass over C: Garner's algorithm turns the L residues into mixed
 *      radix digits, which sum, most significant first, in double-double
 *      (106 bits; C' needs its top 53 only) to C' 2^-(s_i + t_j), rounded
 *      once to double, then alpha C + beta C0 (rounded once to float for
 *      ozaki32).  Rows and columns with an
 *      infinity or a NaN are summed as float64 GEMM sums them.
 *
 * Work at N^3: L int8 products (16 at 8192^3, 9 for ozaki32) against
 * DGEMM's (SGEMM's) one; the passes read A and B once each, and Garner's
 * reads the L digits of each element of C once.
 *
 * gemmcli's own; the method is Ozaki, Uchino and Imamura's scheme II (the
 * Chinese remainder theorem over int8 products), Garner's algorithm for
 * the mixed radix form, Dekker's and Knuth's exact products and sums for
 * the double-double Horner.
 *
 * Run and checked by (a.npy and b.npy float64; float32 with ozaki32):
 *   gemmcli mul a.npy b.npy -o c.npy --compute ozaki --kernel i8_ozaki --verify */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/common.cuh"
#include "kernels/gemm.h"
#include "kernels/ozaki.h"

extern "C" cudaError_t i8gemm_igmma_launch_mod(const struct i8gemm_problem *p, const int8_t *bt,
                                               int8_t *digits, int mod_p, int fold,
                                               const struct launch_env *env);
extern "C" int i8gemm_igmma_check(const struct gemm_problem *p, char *why, size_t n);

/* The host reference's moduli and rules (kernels/ozaki.h), the moduli
 * also in constant memory for the passes. */
__constant__ int oz_moduli[OZAKI_MOST] = OZAKI_MODULI;

enum {
    OZ_MOST = OZAKI_MOST,
    OZ_ALIGN = 256,
    OZ_THREADS = 256,
};

/* Garner's weights as a kernel's argument. */
struct oz_weights {
    int w[OZ_MOST];
};

/* The product's layout in the workspace. */
struct oz_plan {
    int nmod, beta;
    long long pieces, piece_k, kp;  /* K in pieces of piece_k, each padded to kp */
    size_t shifts, res_a, res_b, digits, total;
};

static size_t oz_up(size_t bytes) { return (bytes + OZ_ALIGN - 1) / OZ_ALIGN * OZ_ALIGN; }

static struct oz_plan oz_plan_of(long long m, long long n, long long k, int fp32)
{
    struct oz_plan z;
    z.beta = fp32 ? OZAKI_BETA32 : OZAKI_BETA;
    z.nmod = ozaki_count(k, &z.beta);
    z.pieces = (k + OZAKI_PIECE - 1) / OZAKI_PIECE;
    z.piece_k = (k + z.pieces - 1) / z.pieces;
    z.kp = (z.piece_k + 15) / 16 * 16;
    /* s and t; B's columns' largest magnitudes and non-finite counts;
     * the flags of rows and columns that are all finite */
    z.shifts = oz_up((size_t)n * (sizeof(unsigned long long) + sizeof(int)) +
                     (size_t)(m + n) * (sizeof(int) + 1));
    z.res_a = oz_up((size_t)z.nmod * z.pieces * m * z.kp);
    z.res_b = oz_up((size_t)z.nmod * z.pieces * z.kp * n);
    z.digits = oz_up((size_t)z.nmod * m * n);
    z.total = z.shifts + z.res_a + z.res_b + z.digits;
    return z;
}

/* The power of two that brings a largest magnitude `most` just under
 * 2^beta (0 for none). */
static __device__ __forceinline__ int oz_shift(double most, int beta)
{
    if (most == 0)
        return 0;
    int e;
    frexp(most, &e);
    return beta - e;
}

/* A block a row of A: its shift and whether it is all finite. */
template <typename T>
static __global__ void __launch_bounds__(OZ_THREADS)
oz_rows(const T *a, int m, int k, int beta, int *s, char *ok)
{
    __shared__ double most[OZ_THREADS];
    __shared__ int bad[OZ_THREADS];
    for (int i = blockIdx.x; i < m; i += gridDim.x) {
        double best = 0;
        int nonfinite = 0;
        for (int q = threadIdx.x; q < k; q += blockDim.x) {
            double v = fabs((double)a[(long long)i * k + q]);
            if (isfinite(v))
                best = fmax(best, v);
            else
                nonfinite = 1;
        }
        most[threadIdx.x] = best;
        bad[threadIdx.x] = nonfinite;
        __syncthreads();
        for (int w = blockDim.x / 2; w > 0; w /= 2) {
            if (threadIdx.x < w) {
                most[threadIdx.x] = fmax(most[threadIdx.x], most[threadIdx.x + w]);
                bad[threadIdx.x] |= bad[threadIdx.x + w];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            s[i] = oz_shift(most[0], beta);
            ok[i] = !bad[0];
        }
        __syncthreads();
    }
}

/* The columns of B: a thread a column (a warp reads side by side along a
 * row), a block row a range of K (y); the largest finite magnitude and
 * whether any value is not finite go to `most` and `bad` (zeroed first)
 * by atomics: a positive double's bits order as its value. */
template <typename T>
static __global__ void __launch_bounds__(OZ_THREADS)
oz_cols(const T *b, int n, int k, int rows_each, unsigned long long *most, int *bad)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    int q0 = blockIdx.y * rows_each, q1 = q0 + rows_each < k ? q0 + rows_each : k;
    double best = 0;
    int nonfinite = 0;
    for (int q = q0; q < q1; q++) {
        double v = fabs((double)b[(long long)q * n + j]);
        if (isfinite(v))
            best = fmax(best, v);
        else
            nonfinite = 1;
    }
    if (best > 0)
        atomicMax(most + j, (unsigned long long)__double_as_longlong(best));
    if (nonfinite)
        atomicOr(bad + j, 1);
}

static __global__ void __launch_bounds__(OZ_THREADS)
oz_cols_shift(const unsigned long long *most, const int *bad, int n, int beta, int *t, char *ok)
{
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
        t[j] = oz_shift(__longlong_as_double((long long)most[j]), beta);
        ok[j] = !bad[j];
    }
}

/* x (an integer below 2^54 in magnitude, held exactly in a double)
 * modulo p, in [-p/2, p/2) for even p and [-(p-1)/2, (p-1)/2] for odd:
 * the quotient's rounding is corrected on the exact remainder. */
static __device__ __forceinline__ int oz_residue(double x, int p)
{
    double q = floor(x * (1.0 / p));
    int r = (int)fma(-q, (double)p, x);   /* exact: |r| is a few p at most */
    r %= p;
    r += r < 0 ? p : 0;
    return r >= (p + 1) / 2 ? r - p : r;
}

/* An operand's value scaled by its row's or column's power of two and
 * rounded to an integer (a non-finite one as 0: its row or column is
 * summed apart). */
static __device__ __forceinline__ double oz_scaled(double v, int shift)
{
    return isfinite(v) ? rint(scalbn(v, shift)) : 0.0;
}

/* A's residues: modulus l, piece g, row i at ((l pieces + g) m + i) kp,
 * zeros past the piece.  A block a row (x), its threads along it (y). */
template <typename T>
static __global__ void __launch_bounds__(OZ_THREADS)
oz_split_a(const T *a, int m, int k, const int *s, int nmod, long long pieces,
           long long piece_k, long long kp, int8_t *out)
{
    for (long long i = blockIdx.x; i < m; i += gridDim.x)
        for (long long col = blockIdx.y * (long long)blockDim.x + threadIdx.x; col < pieces * kp;
             col += (long long)gridDim.y * blockDim.x) {
            long long g = col / kp, kk = col % kp, q = g * piece_k + kk;
            double x = kk < piece_k && q < k ? oz_scaled((double)a[i * k + q], s[i]) : 0.0;
            for (int l = 0; l < nmod; l++)
                out[((l * pieces + g) * m + i) * kp + kk] = (int8_t)oz_residue(x, oz_moduli[l]);
        }
}

/* B's residues k-major, as i8_igmma's product takes B with no pass of its
 * own: modulus l, piece g, column j at ((l pieces + g) n + j) kp, zeros
 * past the piece.  A block a 32 x 32 tile of the padded rows (y) and the
 * columns (x): read along B's rows, scaled once, then each modulus's
 * residues written along the tile's columns, 32 bytes a warp. */
enum { OZ_TILE = 32, OZ_TILE_ROWS = 8 };

template <typename T>
static __global__ void __launch_bounds__(OZ_TILE * OZ_TILE_ROWS)
oz_split_b(const T *b, int n, int k, const int *t, int nmod, long long pieces,
           long long piece_k, long long kp, int8_t *out)
{
    __shared__ double xs[OZ_TILE][OZ_TILE + 1];
    long long rows = pieces * kp;
    long long row0 = (long long)blockIdx.y * OZ_TILE;
    long long j0 = (long long)blockIdx.x * OZ_TILE;
    for (int r = threadIdx.y; r < OZ_TILE; r += OZ_TILE_ROWS) {
        long long row = row0 + r, j = j0 + threadIdx.x;
        long long g = row / kp, kk = row % kp, q = g * piece_k + kk;
        double x = 0.0;
        if (row < rows && j < n && kk < piece_k && q < k)
            x = oz_scaled((double)b[q * n + j], t[j]);
        xs[r][threadIdx.x] = x;
    }
    __syncthreads();
    for (int l = 0; l < nmod; l++)
        for (int c = threadIdx.y; c < OZ_TILE; c += OZ_TILE_ROWS) {
            long long row = row0 + threadIdx.x, j = j0 + c;
            if (row >= rows || j >= n)
                continue;
            long long g = row / kp, kk = row % kp;
            out[((l * pieces + g) * n + j) * kp + kk] =
                (int8_t)oz_residue(xs[threadIdx.x][c], oz_moduli[l]);
        }
}

/* x modulo p in [0, p), for |x| < 2^24 (exact as a float): the quotient
 * from the reciprocal (one MUFU.RCP), off by one at most, then corrected;
 * a fraction of an integer remainder's cost (exhaustively checked for
 * every modulus over -400..65836, the range Garner's steps reach). */
static __device__ __forceinline__ int oz_mod(int x, int p)
{
    int q = __float2int_rd(__int2float_rn(x) * __frcp_rn(__int2float_rn(p)));
    int r = x - q * p;
    r += r < 0 ? p : 0;
    return r >= p ? r - p : r;
}

/* Double-double x p + v: Dekker's product by fma, Knuth's sum. */
static __device__ __forceinline__ void oz_dd_mul_add(double &hi, double &lo, double p, double v)
{
    double ph = hi * p, pl = fma(hi, p, -ph) + lo * p;
    double sh = ph + v, bv = sh - ph, sl = (ph - (sh - bv)) + (v - bv);
    sl += pl;
    hi = sh + sl;
    lo = sl - (hi - sh);
}

/* The digits turned into C: Garner's mixed radix form, the double-double
 * Horner, the scales, alpha and beta; a row or column with an infinity or
 * a NaN summed in doubles as float64 GEMM sums it. */
template <typename T>
static __global__ void __launch_bounds__(OZ_THREADS)
oz_garner(const int8_t *digits, int nmod, int m, int n, int k, const int *s, const int *t,
          const char *ok_a, const char *ok_b, struct oz_weights w, const T *a, const T *b,
          double alpha, double beta, T *c)
{
    long long mn = (long long)m * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < mn;
         e += (long long)gridDim.x * blockDim.x) {
        int i = (int)(e / n), j = (int)(e % n);
        double x;
        if (ok_a[i] && ok_b[j]) {
            int v[OZ_MOST];
            for (int l = 0; l < nmod; l++) {
                int p = oz_moduli[l], acc = 0;
                for (int q = l - 1; q >= 0; q--)
                    acc = oz_mod(v[q] + oz_moduli[q] * acc, p);
                int r = oz_mod(oz_mod(digits[l * mn + e] - acc, p) * w.w[l], p);
                v[l] = r >= (p + 1) / 2 ? r - p : r;
            }
            double hi = v[nmod - 1], lo = 0;
            for (int l = nmod - 2; l >= 0; l--)
                oz_dd_mul_add(hi, lo, (double)oz_moduli[l], (double)v[l]);
            int shift = -(s[i] + t[j]);
            x = scalbn(hi, shift) + scalbn(lo, shift);
        } else {
            /* (as the float GEMM of T sums it) */
            T sum = 0;
            for (int q = 0; q < k; q++)
                sum += a[(long long)i * k + q] * b[(long long)q * n + j];
            x = (double)sum;
        }
        c[e] = (T)(beta == 0 ? alpha * x : alpha * x + beta * (double)c[e]);
    }
}

static unsigned oz_blocks(long long work)
{
    long long b = (work + OZ_THREADS - 1) / OZ_THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 16 ? 65535 * 16 : b);
}

/* rows blocks (at most 2^31 - 1) by enough blocks to cover per_row. */
static dim3 oz_grid(long long rows, long long per_row)
{
    long long x = rows < 0x7fffffffll ? rows : 0x7fffffffll;
    long long y = (per_row + OZ_THREADS - 1) / OZ_THREADS;
    y = y < 65535 ? y : 65535;
    return dim3((unsigned)(x > 0 ? x : 1), (unsigned)(y > 0 ? y : 1));
}

/* One product (the dispatcher walks the stack). */
template <typename T>
static cudaError_t oz_product(const struct ozgemm_problem *p, const T *a, const T *b, T *c,
                              const struct launch_env *env)
{
    struct oz_plan z = oz_plan_of(p->m, p->n, p->k, p->fp32);
    struct oz_weights w;
    ozaki_weights(z.nmod, w.w);
    char *ws = NULL;
    cudaError_t err = cudaMallocAsync((void **)&ws, z.total, env->stream);
    if (err != cudaSuccess)
        return err;
    unsigned long long *most = (unsigned long long *)ws;
    int *bad = (int *)(most + p->n), *s = bad + p->n, *t = s + p->m;
    char *ok_a = (char *)(t + p->n), *ok_b = ok_a + p->m;
    int8_t *res_a = (int8_t *)(ws + z.shifts), *res_b = (int8_t *)(ws + z.shifts + z.res_a);
    int8_t *digits = (int8_t *)(ws + z.shifts + z.res_a + z.res_b);
    long long mn = (long long)p->m * p->n;
    /* (B's columns: K in ranges enough to give the GPU some 4096 blocks) */
    long long col_blocks = (p->n + OZ_THREADS - 1) / OZ_THREADS;
    long long ranges = 4096 / col_blocks > 1 ? 4096 / col_blocks : 1;
    ranges = ranges < p->k ? ranges : p->k;
    ranges = ranges < 65535 ? ranges : 65535;
    int rows_each = (int)((p->k + ranges - 1) / ranges);
    err = cudaMemsetAsync(ws, 0, (size_t)p->n * (sizeof *most + sizeof *bad), env->stream);
    if (err == cudaSuccess) {
        oz_rows<<<p->m < 65535 * 16 ? p->m : 65535 * 16, OZ_THREADS, 0, env->stream>>>(
            a, p->m, p->k, z.beta, s, ok_a);
        oz_cols<<<dim3((unsigned)col_blocks, (unsigned)((p->k + rows_each - 1) / rows_each)),
                  OZ_THREADS, 0, env->stream>>>(b, p->n, p->k, rows_each, most, bad);
        oz_cols_shift<<<oz_blocks(p->n), OZ_THREADS, 0, env->stream>>>(most, bad, p->n, z.beta,
                                                                        t, ok_b);
        oz_split_a<<<oz_grid(p->m, z.pieces * z.kp), OZ_THREADS, 0, env->stream>>>(
            a, p->m, p->k, s, z.nmod, z.pieces, z.piece_k, z.kp, res_a);
        dim3 tiles((unsigned)((p->n + OZ_TILE - 1) / OZ_TILE),
                   (unsigned)((z.pieces * z.kp + OZ_TILE - 1) / OZ_TILE));
        oz_split_b<<<tiles, dim3(OZ_TILE, OZ_TILE_ROWS), 0, env->stream>>>(
            b, p->n, p->k, t, z.nmod, z.pieces, z.piece_k, z.kp, res_b);
        err = launch_result();
    }
    for (int l = 0; l < z.nmod && err == cudaSuccess; l++)
        for (long long g = 0; g < z.pieces && err == cudaSuccess; g++) {
            /* (C' modulo p straight from the product's accumulators) */
            struct i8gemm_problem q = { p->m, p->n, (int)z.kp,
                                        res_a + (l * z.pieces + g) * p->m * z.kp, NULL, NULL,
                                        1, 0, 0, mn, 0 };
            const int8_t *bt = res_b + (l * z.pieces + g) * z.kp * p->n;
            err = i8gemm_igmma_launch_mod(&q, bt, digits + l * mn, ozaki_modulus(l), g > 0, env);
        }
    if (err == cudaSuccess) {
        oz_garner<<<oz_blocks(mn), OZ_THREADS, 0, env->stream>>>(
            digits, z.nmod, p->m, p->n, p->k, s, t, ok_a, ok_b, w, a, b, p->alpha, p->beta, c);
        err = launch_result();
    }
    cudaError_t freed = cudaFreeAsync(ws, env->stream);
    return err != cudaSuccess ? err : freed;
}

extern "C" cudaError_t ozgemm_ozaki_launch(const struct ozgemm_problem *p,
                                           const struct launch_env *env)
{
    if (p->m < 0 || p->n < 0 || p->k < 1)
        return cudaErrorInvalidValue;
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    for (int z = 0; z < p->batch; z++) {
        cudaError_t err =
            p->fp32 ? oz_product(p, (const float *)p->a + z * p->stride_a,
                                 (const float *)p->b + z * p->stride_b,
                                 (float *)p->c + z * p->stride_c, env)
                    : oz_product(p, (const double *)p->a + z * p->stride_a,
                                 (const double *)p->b + z * p->stride_b,
                                 (double *)p->c + z * p->stride_c, env);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" cudaError_t ozgemm_ozaki_attr(struct kernel_attr *out)
{
    return kernel_attr_of(oz_garner<double>, OZ_THREADS, 0, out);
}

/* One residue product, as the int8 stage sees it. */
static struct gemm_problem oz_piece(const struct gemm_problem *p)
{
    struct oz_plan z = oz_plan_of(p->m, p->n, p->k, p->sig == GEMM_OZAKI32);
    struct gemm_problem q = *p;
    q.sig = GEMM_I8;
    q.k = z.kp;
    q.batch = 1;
    gemm_problem_dense(&q);
    q.stride_a = q.stride_b = 0;
    return q;
}

extern "C" int ozgemm_ozaki_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->k < 1) {
        snprintf(why, n, "K = 0: the int8 stage's tensor map has no dimension of 0");
        return 0;
    }
    if (p->m > 0x7fffffff / 2 || p->n > 0x7fffffff / 2) {
        snprintf(why, n, "M and N below 2^30");
        return 0;
    }
    struct gemm_problem q = oz_piece(p);
    return i8gemm_igmma_check(&q, why, n);
}

extern "C" size_t ozgemm_ozaki_workspace(const struct gemm_problem *p)
{
    struct oz_plan z = oz_plan_of(p->m, p->n, p->k, p->sig == GEMM_OZAKI32);
    return z.total;
}
