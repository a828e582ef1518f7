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
 *      int8 in [-p/2, p/2), A's rows and B's columns (k-major) of K
 *      padded to 16 bytes (K longer than
 *      65536 in pieces, each an int8 product whose int32 sums cannot leave
 *      int32: 128 x 128 x 65536 = 2^30);
 *   3. for each p and piece, an int8 product on `i8_igmma`, which takes B
 *      k-major as it is (no pass of its own over it) and writes its sums
 *      times M_l^-1 modulo p as int8 digits, the sum's y (folded into the
 *      last piece's), where an int32 C would be written and read back;
 *   4. a pass over C: the Chinese remainder sum of kernels/ozaki.h turns
 *      each element's L digits into C' (the digits times constants cut
 *      into parts of 40 bits, each part's sum exact in a double; O(L)
 *      an element, where Garner's mixed radix digits take O(L^2)), within
 *      an ulp of C', then C' 2^-(s_i + t_j), alpha C + beta C0 (rounded
 *      once to float for ozaki32).  Rows and columns with an infinity or a
 *      NaN are summed as float64 GEMM sums them.
 *
 * The residues and the sum take no conversion instruction (kernels/ozaki.h
 * says how: a GPU converts at a quarter of its FP64 rate) and no integer
 * division; a thread splits 8 values along a row of A and stores 8 bytes
 * a modulus, or 8 down a column of B into a tile in shared memory whose
 * columns go out 64 bytes at a time; the sum takes four neighbours of C
 * a thread, a word of digits a modulus; the product's epilogue stages its
 * digits in shared memory and stores whole rows.
 *
 * Work at N^3: L int8 products (16 at 8192^3, 9 for ozaki32) against
 * DGEMM's (SGEMM's) one; the passes read A and B twice each (their
 * largest values, then the residues), and the sum reads the L digits of
 * each element of C once: the products take most of the time (the
 * README says how much at 8192^3).
 *
 * gemmcli's own; the method is Ozaki, Uchino and Imamura's scheme II (the
 * Chinese remainder theorem over int8 products).
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
                                               int8_t *digits, int mod_p, int mod_w, int fold,
                                               const struct launch_env *env);
extern "C" int i8gemm_igmma_check(const struct gemm_problem *p, char *why, size_t n);

enum {
    OZ_MOST = OZAKI_MOST,
    OZ_ALIGN = 256,
    OZ_THREADS = 256,
    OZ_A_RUN = 8,     /* values of k a thread splits in A's rows */
    OZ_B_RUN = 8,     /* and down B's columns */
    OZ_B_COLS = 32,   /* B's tile: 32 columns by 64 values of k */
    OZ_B_ROWS = OZ_B_RUN * OZ_THREADS / OZ_B_COLS,
    OZ_B_PITCH = OZ_B_ROWS + 8,   /* 18 words: a half warp's 8-byte stores in 32 banks */
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

/* 2^e for -1022 <= e <= 1023. */
static __device__ __forceinline__ double oz_pow2(int e)
{
    return __longlong_as_double((long long)(1023 + e) << 52);
}

/* An operand's value scaled by its row's or column's power of two
 * (-970 .. 1127: two exact steps), not yet rounded; a non-finite one as
 * 0 (its row or column is summed apart).  A step that falls under
 * double's normal range leaves a value far under 1/2, 0 once rounded. */
static __device__ __forceinline__ double oz_scaled(double v, int shift)
{
    int h = shift / 2;
    return isfinite(v) ? v * oz_pow2(h) * oz_pow2(shift - h) : 0.0;
}

/* The low bytes of four residues (ozaki_residue) as a word. */
static __device__ __forceinline__ uint32_t oz_word(double r0, double r1, double r2, double r3)
{
    return __byte_perm(__byte_perm((uint32_t)__double2loint(r0), (uint32_t)__double2loint(r1),
                                   0x0040),
                       __byte_perm((uint32_t)__double2loint(r2), (uint32_t)__double2loint(r3),
                                   0x0040),
                       0x5410);
}

/* The residues of `run` values (rint(x) = h 2^27 + lo) modulo each of
 * the first nmod moduli, packed four to a word: store(l, w) for each
 * modulus l, where the pass puts them. */
template <int run, typename Store>
static __device__ __forceinline__ void oz_residue_words(const double (&h)[run],
                                                        const double (&lo)[run],
                                                        const struct ozaki_residues &rs,
                                                        int nmod, Store store)
{
#pragma unroll
    for (int l = 0; l < OZ_MOST; l++) {
        if (l >= nmod)
            break;
        uint32_t w[run / 4];
#pragma unroll
        for (int v = 0; v < run / 4; v++)
            w[v] = oz_word(ozaki_residue(&rs, l, h[4 * v], lo[4 * v]),
                           ozaki_residue(&rs, l, h[4 * v + 1], lo[4 * v + 1]),
                           ozaki_residue(&rs, l, h[4 * v + 2], lo[4 * v + 2]),
                           ozaki_residue(&rs, l, h[4 * v + 3], lo[4 * v + 3]));
        store(l, w);
    }
}

/* A's residues: modulus l, piece g, row i at ((l pieces + g) m + i) kp,
 * zeros past the piece.  A thread OZ_A_RUN values along a row (kp is a
 * multiple of 16: a run never spans two pieces), a warp's stores 256
 * bytes side by side, a store a modulus. */
template <typename T>
static __global__ void __launch_bounds__(OZ_THREADS)
oz_split_a(const T *a, int m, int k, const int *s, struct ozaki_residues rs, int nmod,
           long long pieces, long long piece_k, long long kp, int8_t *out)
{
    long long runs = pieces * kp / OZ_A_RUN, total = m * runs;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long i = e / runs, col = e % runs * OZ_A_RUN;
        long long g = col / kp, kk = col % kp, q = g * piece_k + kk;
        double h[OZ_A_RUN], lo[OZ_A_RUN];
#pragma unroll
        for (int v = 0; v < OZ_A_RUN; v++)
            ozaki_halves(kk + v < piece_k && q + v < k ? oz_scaled((double)a[i * k + q + v], s[i])
                                                       : 0.0,
                         &h[v], &lo[v]);
        int8_t *dst = out + (g * m + i) * kp + kk;
        oz_residue_words(h, lo, rs, nmod, [&](int l, const uint32_t(&w)[OZ_A_RUN / 4]) {
            *reinterpret_cast<uint2 *>(dst + l * pieces * m * kp) = make_uint2(w[0], w[1]);
        });
    }
}

/* B's residues k-major, as i8_igmma's product takes B with no pass of its
 * own: modulus l, piece g, column j at ((l pieces + g) n + j) kp, zeros
 * past the piece.  A block a tile of OZ_B_COLS columns by OZ_B_ROWS
 * values of k: each thread reads OZ_B_RUN values down a column (a warp's
 * loads along B's rows) and puts their residues modulo every p in the
 * tile's slot for p in shared memory (20 slots of 2.25 KiB); after one
 * barrier each eight threads store a column's 64 bytes a modulus.  Three
 * blocks an SM: 8 values a thread keep the registers under 85 (16 took
 * 128, two blocks an SM, and the pass took 0.96 ms to A's 0.51 at 8192^3
 * float64; NVIDIA H200, 2026-11-28); one barrier a tile, where there was
 * one a modulus, took it from 0.875 to 0.820 ms (same GPU and day). */
template <typename T>
static __global__ void __launch_bounds__(OZ_THREADS, 3)
oz_split_b(const T *b, int n, int k, const int *t, struct ozaki_residues rs, int nmod,
           long long pieces, long long piece_k, long long kp, int8_t *out)
{
    __shared__ __align__(16) unsigned char st[OZ_MOST][OZ_B_COLS][OZ_B_PITCH];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int c = threadIdx.x / 8, chunk = threadIdx.x % 8;          /* (the stores') */
    long long rows = pieces * kp;
    long long j = (long long)blockIdx.x * OZ_B_COLS + lane, jc = j - lane + c;
    int shift = j < n ? t[j] : 0;
    for (long long row0 = (long long)blockIdx.y * OZ_B_ROWS; row0 < rows;
         row0 += (long long)gridDim.y * OZ_B_ROWS) {
        /* (a run of 8 lies in one piece: kp is a multiple of 16) */
        long long r0 = row0 + OZ_B_RUN * warp, g = r0 / kp, kk = r0 % kp, q = g * piece_k + kk;
        double h[OZ_B_RUN], lo[OZ_B_RUN];
#pragma unroll
        for (int v = 0; v < OZ_B_RUN; v++)
            ozaki_halves(j < n && r0 < rows && kk + v < piece_k && q + v < k
                             ? oz_scaled((double)b[(q + v) * n + j], shift)
                             : 0.0,
                         &h[v], &lo[v]);
        oz_residue_words(h, lo, rs, nmod, [&](int l, const uint32_t(&w)[OZ_B_RUN / 4]) {
            *reinterpret_cast<uint2 *>(&st[l][lane][OZ_B_RUN * warp]) = make_uint2(w[0], w[1]);
        });
        __syncthreads();
        long long rc = row0 + OZ_B_RUN * chunk, gc = rc / kp, kc = rc % kp;
        if (jc < n && rc < rows)
            for (int l = 0; l < nmod; l++)
                *reinterpret_cast<uint2 *>(out + ((l * pieces + gc) * n + jc) * kp + kc) =
                    *reinterpret_cast<const uint2 *>(&st[l][c][OZ_B_RUN * chunk]);
        __syncthreads();
    }
}

/* The digits turned into C: the Chinese remainder sum (kernels/ozaki.h)
 * of each element's L digits to C', scaled by 2^-(s_i + t_j), then alpha
 * and beta; a row or column with an infinity or a NaN summed in doubles
 * as float64 GEMM sums it.  A thread four neighbours of a row, a word of
 * digits a modulus (bytes where N is not a multiple of 4), every word
 * loaded before the first is used (one wait on memory, not L); each
 * digit is y itself (the product's epilogue took it times M_l^-1 modulo
 * p_l), a double by its bits and one subtraction, then `parts` FMAs (the
 * count the constants have, fixed at compile time: 3 for ozaki at K =
 * 8192, 2 for ozaki32).  Three blocks an SM: 80 registers at most, which
 * every count of parts fits unspilled. */
template <typename T, int parts>
static __global__ void __launch_bounds__(OZ_THREADS, 3)
oz_sum(const int8_t *digits, int m, int n, int k, const int *s, const int *t,
       const char *ok_a, const char *ok_b, const __grid_constant__ struct ozaki_crt crt,
       const T *a, const T *b, double alpha, double beta, T *c)
{
    long long mn = (long long)m * n, quads = (n + 3) / 4, total = m * quads;
    bool words = n % 4 == 0;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long i = e / quads;
        int j0 = (int)(e - i * quads) * 4, count = n - j0 < 4 ? n - j0 : 4;
        long long e0 = i * n + j0;
        uint32_t w[OZ_MOST];
#pragma unroll
        for (int l = 0; l < OZ_MOST; l++) {
            const int8_t *d = digits + l * mn + e0;
            w[l] = 0;
            if (l < crt.nmod) {
                if (words) {
                    w[l] = *reinterpret_cast<const uint32_t *>(d);
                } else {
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        w[l] |= u < count ? (uint32_t)(uint8_t)d[u] << 8 * u : 0u;
                }
            }
        }
        double sum[4][OZAKI_PARTS];
#pragma unroll
        for (int u = 0; u < 4; u++)
#pragma unroll
            for (int p = 0; p < OZAKI_PARTS; p++)
                sum[u][p] = 0;
#pragma unroll
        for (int l = 0; l < OZ_MOST; l++) {
            if (l >= crt.nmod)
                break;
            uint32_t biased = w[l] ^ 0x80808080u;   /* y + 128 in each byte */
#pragma unroll
            for (int u = 0; u < 4; u++) {
                /* 2^52 + y + 128 by its bits, less 2^52 + 128: y, exactly */
                double y = __hiloint2double(0x43300000, (int)__byte_perm(biased, 0, 0x4440 + u)) -
                           4503599627370624.0;
#pragma unroll
                for (int p = 0; p < parts; p++)
                    sum[u][p] = fma(y, crt.m[l][p], sum[u][p]);
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (u >= count)
                break;
            int j = j0 + u;
            double x;
            if (ok_a[i] && ok_b[j]) {
                x = scalbn(ozaki_crt_value(&crt, sum[u]), -(s[i] + t[j]));
            } else {
                /* (as the float GEMM of T sums it) */
                T dot = 0;
                for (int q = 0; q < k; q++)
                    dot += a[i * k + q] * b[(long long)q * n + j];
                x = (double)dot;
            }
            c[e0 + u] = (T)(beta == 0 ? alpha * x : alpha * x + beta * (double)c[e0 + u]);
        }
    }
}

static unsigned oz_blocks(long long work)
{
    long long b = (work + OZ_THREADS - 1) / OZ_THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 16 ? 65535 * 16 : b);
}

/* oz_sum for the constants' count of parts. */
template <typename T>
static cudaError_t oz_sum_launch(const int8_t *digits, const struct ozgemm_problem *p,
                                 const int *s, const int *t, const char *ok_a, const char *ok_b,
                                 const struct ozaki_crt &crt, const T *a, const T *b, T *c,
                                 const struct launch_env *env)
{
    unsigned blocks = oz_blocks(p->m * ((p->n + 3) / 4));
    switch (crt.parts) {
    case 1:
    case 2:
        oz_sum<T, 2><<<blocks, OZ_THREADS, 0, env->stream>>>(digits, p->m, p->n, p->k, s, t,
                                                             ok_a, ok_b, crt, a, b, p->alpha,
                                                             p->beta, c);
        break;
    case 3:
        oz_sum<T, 3><<<blocks, OZ_THREADS, 0, env->stream>>>(digits, p->m, p->n, p->k, s, t,
                                                             ok_a, ok_b, crt, a, b, p->alpha,
                                                             p->beta, c);
        break;
    default:
        oz_sum<T, OZAKI_PARTS><<<blocks, OZ_THREADS, 0, env->stream>>>(
            digits, p->m, p->n, p->k, s, t, ok_a, ok_b, crt, a, b, p->alpha, p->beta, c);
    }
    return launch_result();
}

/* One product (the dispatcher walks the stack). */
template <typename T>
static cudaError_t oz_product(const struct ozgemm_problem *p, const T *a, const T *b, T *c,
                              const struct launch_env *env)
{
    struct oz_plan z = oz_plan_of(p->m, p->n, p->k, p->fp32);
    struct ozaki_residues rs;
    ozaki_residues_of(&rs);
    struct ozaki_crt crt;
    ozaki_crt_of(z.nmod, &crt);
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
        oz_split_a<<<oz_blocks(p->m * (z.pieces * z.kp / OZ_A_RUN)), OZ_THREADS, 0, env->stream>>>(
            a, p->m, p->k, s, rs, z.nmod, z.pieces, z.piece_k, z.kp, res_a);
        long long tiles_k = (z.pieces * z.kp + OZ_B_ROWS - 1) / OZ_B_ROWS;
        dim3 grid_b((unsigned)((p->n + OZ_B_COLS - 1) / OZ_B_COLS),
                    (unsigned)(tiles_k < 65535 ? tiles_k : 65535));
        oz_split_b<<<grid_b, OZ_THREADS, 0, env->stream>>>(b, p->n, p->k, t, rs, z.nmod, z.pieces,
                                                            z.piece_k, z.kp, res_b);
        err = launch_result();
    }
    for (int l = 0; l < z.nmod && err == cudaSuccess; l++)
        for (long long g = 0; g < z.pieces && err == cudaSuccess; g++) {
            /* (the sum's digit y = C' M^-1 modulo p straight from the
             * product's accumulators) */
            struct i8gemm_problem q = { p->m, p->n, (int)z.kp,
                                        res_a + (l * z.pieces + g) * p->m * z.kp, NULL, NULL,
                                        1, 0, 0, mn, 0 };
            const int8_t *bt = res_b + (l * z.pieces + g) * z.kp * p->n;
            err = i8gemm_igmma_launch_mod(&q, bt, digits + l * mn, ozaki_modulus(l), crt.inv[l],
                                          g > 0, env);
        }
    if (err == cudaSuccess) {
        err = oz_sum_launch(digits, p, s, t, ok_a, ok_b, crt, a, b, c, env);
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
    return kernel_attr_of(oz_sum<double, 3>, OZ_THREADS, 0, out);
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
