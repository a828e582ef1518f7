/* Stacks of small products (M, N, K <= 64), the kernel shared by the small
 * stages of each family: sgemm_23_small.cu (float), dgemm_04_small.cu
 * (double), hgemm_09_small.cu (float16 and bfloat16 operands, FP32
 * accumulation, float C).
 *
 * Such a stack is bound by memory: 8x8x8 in float does 1024 flops per 768
 * bytes of A, B and C, 32x32x32 65536 per 12 KB.  The kernel streams the
 * operands through shared memory and computes each product where it
 * lands:
 *   - A persistent grid (SMs x the blocks of 128 threads that fit on one)
 *     walks the stack in chunks of P consecutive products, chunk
 *     blockIdx.x + i * gridDim.x; while a block multiplies one chunk, the
 *     next one's A and B arrive by cp.async into its second buffer (one
 *     buffer, and the copies issued after the products, where two do not
 *     fit).  An operand with stride 0 is copied once, outside the buffers.
 *   - Copies move 16-byte units of a product's rows where the rows, the
 *     stride and the base allow it, else 8, 4, or (16-bit types) 2 bytes;
 *     a warp's copies walk consecutive addresses, so a dense stack streams
 *     as one contiguous range.
 *   - In shared memory each row of A (k values) and of B (n values) starts
 *     on a 16-byte unit, rows an odd number of units apart and products an
 *     odd number of units apart, so that the rows and products a warp reads
 *     at once fall in different banks.  Values past K in A's rows and rows
 *     of B past K stay zero (written once at the start), so the inner loop
 *     walks K in whole units without a tail.
 *   - A product's C is cut into tiles of TM x TN results, one per work item;
 *     a thread takes rows ti, ti + TI, ... (TI = ceil(M / TM)) and TN
 *     adjacent columns, reads a unit of k values from each of its TM rows of
 *     A and TN / (values per unit) units of each row of B, and keeps TM x TN
 *     sums in registers: for float, 4x4 results take 8 LDS.128 per 64 FFMA.
 *     Rows past M and columns past N read clamped addresses and are not
 *     stored.
 *   - C goes from registers to global memory: 16-byte stores where N is a
 *     multiple of the unit, the lanes of a warp covering whole rows of C
 *     (rows of several products when they are narrow), so that with rows
 *     of 32 bytes or more each 32-byte sector is written whole by one
 *     instruction.  beta != 0 reads C0 at the same addresses; K = 0 stores
 *     beta C0, alpha not applied to the empty sum.
 * P is the most products whose buffers fit the block's share of shared
 * memory (and whose tiles the block's threads cover), lowered where that
 * evens out the chunks over the grid; two buffers are used unless they
 * leave less than half the chunk one buffer would hold and fewer items
 * than half the threads.
 *
 * gemmcli's own, for the memory-bound shapes.  Run through its stages
 * (a.npy and b.npy stacks of small matrices), e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel small --verify --repeat 20 */
#ifndef GC_KERNELS_SMALL_CUH
#define GC_KERNELS_SMALL_CUH

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/gemm.h"
#include "kernels/common.cuh"

enum {
    SMALL_THREADS = 128,
    SMALL_MAX_DIM = 64,      /* the largest M, N and K the stages take */
    SMALL_UNIT = 16          /* bytes in a unit of shared memory */
};

/* What a stage checks beyond the registry's generic conditions. */
static int small_check(const char *name, const struct gemm_problem *p, char *why, size_t n)
{
    if (p->m > SMALL_MAX_DIM || p->n > SMALL_MAX_DIM || p->k > SMALL_MAX_DIM) {
        snprintf(why, n, "%s computes products with M, N, K <= %d; this one is %lldx%lldx%lld",
                 name, SMALL_MAX_DIM, (long long)p->m, (long long)p->n, (long long)p->k);
        return 0;
    }
    return 1;
}

/* An operand type: its accumulator (also C's type), the values in a
 * 16-byte unit, and their widening to the accumulator. */
template <typename T> struct small_elem;

template <> struct small_elem<float> {
    typedef float acc;
    static constexpr int vec = 4;
    static __device__ __forceinline__ void widen(uint4 u, float *v)
    {
        v[0] = __uint_as_float(u.x);
        v[1] = __uint_as_float(u.y);
        v[2] = __uint_as_float(u.z);
        v[3] = __uint_as_float(u.w);
    }
};

template <> struct small_elem<double> {
    typedef double acc;
    static constexpr int vec = 2;
    static __device__ __forceinline__ void widen(uint4 u, double *v)
    {
        v[0] = __hiloint2double((int)u.y, (int)u.x);
        v[1] = __hiloint2double((int)u.w, (int)u.z);
    }
};

template <> struct small_elem<__half> {
    typedef float acc;
    static constexpr int vec = 8;
    static __device__ __forceinline__ void widen(uint4 u, float *v)
    {
        const unsigned w[4] = { u.x, u.y, u.z, u.w };
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[i]));
            v[2 * i] = f.x;
            v[2 * i + 1] = f.y;
        }
    }
};

/* bfloat16 is the top half of a float: widening is a shift or a mask. */
template <> struct small_elem<__nv_bfloat16> {
    typedef float acc;
    static constexpr int vec = 8;
    static __device__ __forceinline__ void widen(uint4 u, float *v)
    {
        const unsigned w[4] = { u.x, u.y, u.z, u.w };
#pragma unroll
        for (int i = 0; i < 4; i++) {
            v[2 * i] = __uint_as_float(w[i] << 16);
            v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
        }
    }
};

static __device__ __forceinline__ float small_fma(float a, float b, float c)
{
    return fmaf(a, b, c);
}

static __device__ __forceinline__ double small_fma(double a, double b, double c)
{
    return fma(a, b, c);
}

/* A configuration: operand type T; products with M and N up to MAXD; TM x
 * TN results per work item; up to ITEMS work items per thread and chunk;
 * MINB blocks of SMALL_THREADS per SM (registers and shared memory are
 * sized for that many). */
template <typename T, int MAXD, int TM, int TN, int ITEMS, int MINB>
struct small_cfg {
    typedef T elem;
    typedef typename small_elem<T>::acc acc;
    static constexpr int max_dim = MAXD, tm = TM, tn = TN, items = ITEMS, min_blocks = MINB;
    static constexpr int vec = small_elem<T>::vec;      /* operand values per unit */
    static constexpr int tn_units = TN / vec;           /* units of a row of B per item */
    static constexpr int c_vec = SMALL_UNIT / (int)sizeof(acc);   /* values of C per store */
    static_assert(TN % vec == 0, "an item's columns of B are whole 16-byte units");
    static_assert(TN % c_vec == 0, "an item's columns of C are whole 16-byte stores");
    static_assert(((MAXD + TM - 1) / TM) * ((MAXD + TN - 1) / TN) <= ITEMS * SMALL_THREADS,
                  "the threads of a block cover the tiles of one product of the class");
    static_assert(MAXD <= SMALL_MAX_DIM, "a class within the stage's limit");
};

/* The kernel's arguments; offsets and strides in shared memory are in
 * 16-byte units. */
template <class C>
struct small_args {
    const typename C::elem *a, *b;
    typename C::acc *c;
    long long stride_a, stride_b;     /* elements; 0: the same matrix for every product */
    int lda, ldb;                     /* elements between rows of A and of B */
    int m, n, k, batch;
    typename C::acc alpha, beta;
    int per_chunk, nbuf;              /* P products per chunk, 1 or 2 buffers */
    int tiles_m, tiles_n;             /* ceil(M / TM), ceil(N / TN) */
    int k_units, n_units;             /* units of a row of A, of B */
    int a_ld, b_ld;                   /* rows of A, of B in shared memory */
    int a_ps, b_ps;                   /* products of A, of B in a buffer; 0: broadcast */
    int a_off, b_off;                 /* A and B of product 0 of buffer 0 */
    int a_bstep, b_bstep;             /* buffer 1 is this much further (0: broadcast) */
    int a_copy, b_copy;               /* bytes per copy: 16, 8, 4 or 2 */
    int a_cols, b_cols;               /* copies per row of A, of B */
    int smem_units;
    int c_vec;                        /* C in 16-byte stores */
};

extern __shared__ uint4 small_smem[];

/* A thread's walk over the copies of up to P products of rows x cols
 * copies each: copy u = tid + i * SMALL_THREADS, as (product, row, column),
 * advanced without divisions. */
struct small_walk {
    int p, r, c;
    int dp, dr, dc;
    int rows, cols;

    __device__ __forceinline__ small_walk(int rows_, int cols_) : rows(rows_), cols(cols_)
    {
        int per = rows * cols;
        if (per == 0) {
            p = SMALL_MAX_DIM * SMALL_THREADS;   /* past every chunk: nothing to copy */
            r = c = dp = dr = dc = 0;
            return;
        }
        int tid = threadIdx.x;
        p = tid / per;
        r = (tid - p * per) / cols;
        c = tid - p * per - r * cols;
        dp = SMALL_THREADS / per;
        dr = (SMALL_THREADS - dp * per) / cols;
        dc = SMALL_THREADS - dp * per - dr * cols;
    }

    __device__ __forceinline__ void next()
    {
        c += dc;
        r += dr;
        p += dp;
        if (c >= cols) {
            c -= cols;
            r++;
        }
        if (r >= rows) {
            r -= rows;
            p++;
        }
    }
};

/* Copies of BYTES bytes, for products [0, np): row r of product p goes
 * from src + p * src_ps + r * src_rs to dst + p * dst_ps + r * dst_rs. */
template <int BYTES>
static __device__ __forceinline__ void small_copy_as(unsigned dst, int dst_ps, int dst_rs,
                                                     const char *src, long long src_ps,
                                                     long long src_rs, small_walk w, int np)
{
    for (; w.p < np; w.next()) {
        const char *s = src + w.p * src_ps + w.r * src_rs + w.c * BYTES;
        unsigned d = dst + w.p * dst_ps + w.r * dst_rs + w.c * BYTES;
        if (BYTES == 16) {
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
        } else if (BYTES >= 4) {
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(d), "l"(s),
                         "n"(BYTES));
        } else {
            unsigned short v = __ldg(reinterpret_cast<const unsigned short *>(s));
            asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(d), "h"(v));
        }
    }
}

template <class C>
static __device__ __forceinline__ void small_copy(int bytes, unsigned dst, int dst_ps, int dst_rs,
                                                  const typename C::elem *src, long long src_ps,
                                                  int src_rs, const small_walk &w, int np)
{
    constexpr int es = (int)sizeof(typename C::elem);
    const char *s = reinterpret_cast<const char *>(src);
    long long sps = src_ps * es, srs = (long long)src_rs * es;
    dst_ps *= SMALL_UNIT;
    dst_rs *= SMALL_UNIT;
    if (bytes == 16) {
        small_copy_as<16>(dst, dst_ps, dst_rs, s, sps, srs, w, np);
    } else if (bytes == 8) {
        small_copy_as<8>(dst, dst_ps, dst_rs, s, sps, srs, w, np);
    } else if constexpr (es <= 4) {
        if (bytes == 4)
            small_copy_as<4>(dst, dst_ps, dst_rs, s, sps, srs, w, np);
        else if constexpr (es == 2)
            small_copy_as<2>(dst, dst_ps, dst_rs, s, sps, srs, w, np);
    }
}

static __device__ __forceinline__ void small_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

static __device__ __forceinline__ void small_wait_all(void)
{
    asm volatile("cp.async.wait_group 0;\n" ::);
}

/* The copies of chunk `chunk` into buffer `buf` (operands that move). */
template <class C>
static __device__ __forceinline__ void small_issue(const struct small_args<C> &g, unsigned base,
                                                   const small_walk &wa, const small_walk &wb,
                                                   long long chunk, int buf)
{
    long long p0 = chunk * g.per_chunk;
    int np = (int)min((long long)g.per_chunk, (long long)g.batch - p0);
    if (g.a_ps)
        small_copy<C>(g.a_copy, base + (unsigned)(g.a_off + buf * g.a_bstep) * SMALL_UNIT, g.a_ps,
                      g.a_ld, g.a + p0 * g.stride_a, g.stride_a, g.lda, wa, np);
    if (g.b_ps)
        small_copy<C>(g.b_copy, base + (unsigned)(g.b_off + buf * g.b_bstep) * SMALL_UNIT, g.b_ps,
                      g.b_ld, g.b + p0 * g.stride_b, g.stride_b, g.ldb, wb, np);
}

/* One work item: rows ti + TI * r (r < TM) and columns [tj * TN, +TN) of
 * product p of the chunk in buffer buf, product p0 + p of the stack. */
template <class C>
static __device__ __forceinline__ void small_item(const struct small_args<C> &g, int buf, int p,
                                                  long long p0, int ti, int tj)
{
    typedef typename C::acc acc;
    typedef small_elem<typename C::elem> E;
    constexpr int TM = C::tm, TN = C::tn, TNU = C::tn_units, VEC = C::vec, CV = C::c_vec;
    const int a0 = g.a_off + buf * g.a_bstep + p * g.a_ps;
    const int b0 = g.b_off + buf * g.b_bstep + p * g.b_ps;
    int arow[TM], bcol[TNU];
#pragma unroll
    for (int r = 0; r < TM; r++)
        arow[r] = a0 + min(ti + g.tiles_m * r, g.m - 1) * g.a_ld;
#pragma unroll
    for (int q = 0; q < TNU; q++)
        bcol[q] = b0 + min(tj * TNU + q, g.n_units - 1);
    acc sum[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; r++)
#pragma unroll
        for (int c = 0; c < TN; c++)
            sum[r][c] = 0;
    /* Two units of k per pass for float and double (8 or 4 steps), one
     * for 16-bit operands (8 steps). */
#pragma unroll(VEC >= 8 ? 1 : 2)
    for (int kq = 0; kq < g.k_units; kq++) {
        acc av[TM][VEC];
#pragma unroll
        for (int r = 0; r < TM; r++)
            E::widen(small_smem[arow[r] + kq], av[r]);
#pragma unroll
        for (int kk = 0; kk < VEC; kk++) {
            const int brow = (kq * VEC + kk) * g.b_ld;
            acc bv[TN];
#pragma unroll
            for (int q = 0; q < TNU; q++)
                E::widen(small_smem[bcol[q] + brow], bv + q * VEC);
#pragma unroll
            for (int r = 0; r < TM; r++)
#pragma unroll
                for (int c = 0; c < TN; c++)
                    sum[r][c] = small_fma(av[r][kk], bv[c], sum[r][c]);
        }
    }
    acc *cp = g.c + (p0 + p) * g.m * (long long)g.n;
#pragma unroll
    for (int r = 0; r < TM; r++) {
        int i = ti + g.tiles_m * r;
        if (i >= g.m)
            continue;
        acc *crow = cp + (long long)i * g.n;
#pragma unroll
        for (int q = 0; q < TN / CV; q++) {
            int j = tj * TN + q * CV;
            if (g.c_vec) {
                if (j >= g.n)
                    continue;
                __align__(16) acc v[CV];
#pragma unroll
                for (int e = 0; e < CV; e++)
                    v[e] = g.alpha * sum[r][q * CV + e];
                if (g.beta != 0) {
                    __align__(16) acc old[CV];
                    *reinterpret_cast<uint4 *>(old) = *reinterpret_cast<const uint4 *>(crow + j);
#pragma unroll
                    for (int e = 0; e < CV; e++)
                        v[e] = small_fma(g.beta, old[e], v[e]);
                }
                *reinterpret_cast<uint4 *>(crow + j) = *reinterpret_cast<const uint4 *>(v);
            } else {
#pragma unroll
                for (int e = 0; e < CV; e++) {
                    if (j + e >= g.n)
                        continue;
                    acc v = g.alpha * sum[r][q * CV + e];
                    if (g.beta != 0)
                        v = small_fma(g.beta, crow[j + e], v);
                    crow[j + e] = v;
                }
            }
        }
    }
}

template <class C>
static __global__ void __launch_bounds__(SMALL_THREADS, C::min_blocks)
small_kernel(const struct small_args<C> g)
{
    const int tid = threadIdx.x;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    for (int i = tid; i < g.smem_units; i += SMALL_THREADS)
        small_smem[i] = zero;
    /* This thread's work items, the same in every chunk. */
    const int tiles = g.tiles_m * g.tiles_n;
    int ip[C::items], iti[C::items], itj[C::items];
#pragma unroll
    for (int s = 0; s < C::items; s++) {
        int w = tid + s * SMALL_THREADS;
        ip[s] = w / tiles;
        int t = w - ip[s] * tiles;
        iti[s] = t / g.tiles_n;
        itj[s] = t - iti[s] * g.tiles_n;
    }
    const small_walk wa(g.m, g.a_cols), wb(g.k, g.b_cols);
    const unsigned base = (unsigned)__cvta_generic_to_shared(small_smem);
    const long long chunks = ((long long)g.batch + g.per_chunk - 1) / g.per_chunk;
    long long chunk = blockIdx.x;
    __syncthreads();   /* the zeros land before any copy */
    if (!g.a_ps)
        small_copy<C>(g.a_copy, base + (unsigned)g.a_off * SMALL_UNIT, 0, g.a_ld, g.a, 0, g.lda,
                      wa, 1);
    if (!g.b_ps)
        small_copy<C>(g.b_copy, base + (unsigned)g.b_off * SMALL_UNIT, 0, g.b_ld, g.b, 0, g.ldb,
                      wb, 1);
    small_issue<C>(g, base, wa, wb, chunk, 0);
    small_commit();
    for (int round = 0; chunk < chunks; round++) {
        const long long next = chunk + gridDim.x;
        const int buf = g.nbuf == 2 ? (round & 1) : 0;
        small_wait_all();
        __syncthreads();   /* chunk landed; every thread is done with the other buffer */
        if (g.nbuf == 2 && next < chunks) {
            small_issue<C>(g, base, wa, wb, next, buf ^ 1);
            small_commit();
        }
        const long long p0 = chunk * g.per_chunk;
        const int np = (int)min((long long)g.per_chunk, (long long)g.batch - p0);
#pragma unroll
        for (int s = 0; s < C::items; s++)
            if (ip[s] < np)
                small_item<C>(g, buf, ip[s], p0, iti[s], itj[s]);
        if (g.nbuf == 1 && next < chunks) {
            __syncthreads();   /* every thread is done with the buffer */
            small_issue<C>(g, base, wa, wb, next, 0);
            small_commit();
        }
        chunk = next;
    }
}

/* Shared memory a block may take when MINB blocks share an SM. */
static cudaError_t small_budget(int min_blocks, size_t *bytes)
{
    int dev, per_sm, optin, reserved;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev);
    if (err != cudaSuccess)
        return err;
    long share = (long)per_sm / min_blocks - reserved;
    *bytes = (size_t)(share < optin ? share : optin);
    return cudaSuccess;
}

/* The widest copy (16, 8, 4 bytes, or the element) that every row start
 * and row end of an operand is aligned to. */
static int small_copy_bytes(const void *base, long long row_bytes, long long ld_bytes,
                            long long stride_bytes, int elem)
{
    for (int bytes = SMALL_UNIT; bytes > elem; bytes /= 2)
        if ((uintptr_t)base % bytes == 0 && row_bytes % bytes == 0 && ld_bytes % bytes == 0 &&
            stride_bytes % bytes == 0)
            return bytes;
    return elem;
}

/* Fills in the layout of g (whose problem fields are set), picks P and
 * the grid, and launches. */
template <class C>
static cudaError_t small_launch(struct small_args<C> g, const struct launch_env *env)
{
    constexpr int es = (int)sizeof(typename C::elem);
    if (g.m > SMALL_MAX_DIM || g.n > SMALL_MAX_DIM || g.k > SMALL_MAX_DIM || g.m < 0 || g.n < 0 ||
        g.k < 0)
        return cudaErrorInvalidValue;
    if (g.m == 0 || g.n == 0 || g.batch < 1)
        return cudaSuccess;
    if (g.batch == 1)
        g.stride_a = g.stride_b = 0;
    if (g.k == 0)
        g.alpha = 0;   /* an empty sum: C = beta C0, whatever alpha is */
    g.tiles_m = (g.m + C::tm - 1) / C::tm;
    g.tiles_n = (g.n + C::tn - 1) / C::tn;
    g.k_units = (g.k + C::vec - 1) / C::vec;
    g.n_units = (g.n + C::vec - 1) / C::vec;
    g.a_ld = g.k_units | 1;
    g.b_ld = g.n_units | 1;
    const int psa = (g.m * g.a_ld) | 1, psb = (g.k_units * C::vec * g.b_ld) | 1;
    const bool a_once = g.stride_a == 0, b_once = g.stride_b == 0;
    const long fixed = (a_once ? psa : 0) + (b_once ? psb : 0);
    const long moving = (a_once ? 0 : psa) + (b_once ? 0 : psb);
    size_t budget;
    cudaError_t err = small_budget(C::min_blocks, &budget);
    if (err != cudaSuccess)
        return err;
    long room = (long)(budget / SMALL_UNIT) - fixed;
    long by_items = (long)C::items * SMALL_THREADS / ((long)g.tiles_m * g.tiles_n);
    long most = by_items < g.batch ? by_items : g.batch;
    long cap2 = moving ? room / (2 * moving) : most, cap1 = moving ? room / moving : most;
    cap2 = cap2 < most ? cap2 : most;
    cap1 = cap1 < most ? cap1 : most;
    if (cap1 < 1 || room < 0)
        return cudaErrorInvalidConfiguration;
    /* Two buffers where their chunk is at least half of one buffer's, or
     * still gives half the threads an item. */
    g.nbuf = cap2 >= 1 && (2 * cap2 >= cap1 || cap2 * g.tiles_m * g.tiles_n >= SMALL_THREADS / 2)
                 ? 2 : 1;
    long cap = g.nbuf == 2 ? cap2 : cap1;
    /* P: fewest rounds of the grid, each costing P products' time plus about
     * two of fixed work (the barrier, the first copies' latency). */
    long slots = (long)(env->sm_count > 0 ? env->sm_count : 1) * C::min_blocks;
    long best = cap, best_cost = -1;
    for (long p = cap; p >= 1; p--) {
        long chunks = (g.batch + p - 1) / p;
        long cost = (chunks + slots - 1) / slots * (p + 2);
        if (best_cost < 0 || cost < best_cost) {
            best = p;
            best_cost = cost;
        }
    }
    g.per_chunk = (int)best;
    const int per_buf = g.per_chunk * (int)moving;
    g.a_ps = a_once ? 0 : psa;
    g.b_ps = b_once ? 0 : psb;
    g.a_off = a_once ? 0 : (int)fixed;
    g.b_off = b_once ? (a_once ? psa : 0) : (int)fixed + (a_once ? 0 : g.per_chunk * psa);
    g.a_bstep = a_once ? 0 : per_buf;
    g.b_bstep = b_once ? 0 : per_buf;
    g.smem_units = (int)fixed + g.nbuf * per_buf;
    g.a_copy = small_copy_bytes(g.a, (long long)g.k * es, (long long)g.lda * es,
                                g.stride_a * es, es);
    g.b_copy = small_copy_bytes(g.b, (long long)g.n * es, (long long)g.ldb * es,
                                g.stride_b * es, es);
    g.a_cols = g.k * es / g.a_copy;
    g.b_cols = g.n * es / g.b_copy;
    g.c_vec = g.n % C::c_vec == 0 && (uintptr_t)g.c % SMALL_UNIT == 0;
    long chunks = (g.batch + g.per_chunk - 1) / g.per_chunk;
    unsigned grid = (unsigned)(chunks < slots ? chunks : slots);
    size_t smem = (size_t)g.smem_units * SMALL_UNIT;
    if (smem > 48 * 1024) {
        err = cudaFuncSetAttribute(small_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)smem);
        if (err != cudaSuccess)
            return err;
    }
    small_kernel<C><<<grid, SMALL_THREADS, smem, env->stream>>>(g);
    return launch_result();
}

/* The arguments for a family's problem (before the layout). */
template <class C, class PROB>
static struct small_args<C> small_args_of(const PROB *p, int lda, int ldb)
{
    struct small_args<C> g;
    memset(&g, 0, sizeof g);
    g.a = reinterpret_cast<const typename C::elem *>(p->a);
    g.b = reinterpret_cast<const typename C::elem *>(p->b);
    g.c = p->c;
    g.stride_a = p->stride_a;
    g.stride_b = p->stride_b;
    g.lda = lda;
    g.ldb = ldb;
    g.m = p->m;
    g.n = p->n;
    g.k = p->k;
    g.batch = p->batch;
    g.alpha = p->alpha;
    g.beta = p->beta;
    return g;
}

/* The class of the product: MID for M and N up to its max_dim, else WIDE. */
template <class MID, class WIDE>
static cudaError_t small_run(const struct small_args<MID> &g, const struct launch_env *env)
{
    if (g.m <= MID::max_dim && g.n <= MID::max_dim)
        return small_launch<MID>(g, env);
    struct small_args<WIDE> w;
    memset(&w, 0, sizeof w);
    w.a = g.a;
    w.b = g.b;
    w.c = g.c;
    w.stride_a = g.stride_a;
    w.stride_b = g.stride_b;
    w.lda = g.lda;
    w.ldb = g.ldb;
    w.m = g.m;
    w.n = g.n;
    w.k = g.k;
    w.batch = g.batch;
    w.alpha = g.alpha;
    w.beta = g.beta;
    return small_launch<WIDE>(w, env);
}

/* `gemmcli kernels --details`: the MID configuration at its share of an
 * SM's shared memory. */
template <class C>
static cudaError_t small_attr(struct kernel_attr *out)
{
    size_t budget;
    cudaError_t err = small_budget(C::min_blocks, &budget);
    if (err != cudaSuccess)
        return err;
    return kernel_attr_of(small_kernel<C>, SMALL_THREADS, budget, out);
}

#endif
