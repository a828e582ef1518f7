/* What the small_k stages share (sgemm_25_small_k.cu float,
 * hgemm_11_small_k.cu float16 and bfloat16, dgemm_06_small_k.cu double):
 * products with a short K (K <= 32), outer products and their sums, where
 * the work is writing C, as templates over gemv.cuh's operand types.
 *
 * With K this short a tile stage spends its time filling and draining its
 * pipeline, and where N is not a multiple of 4 its C stores go one value at
 * a time from threads 8 or 16 columns apart (README, "Measurements behind
 * the stages", 1952 x 12555 x 1).  Here C is written the way a copy writes:
 * a warp owns a strip of 32 x Q columns (lane, lane + 32, ...: coalesced
 * whatever the alignment) and a band of R rows; it keeps the strip's K x Q
 * values of B in registers, read once (Q = 4, 2 for double: 16 bytes of
 * accumulators per lane and k), and for each row of its band reads the
 * row's K values of A (one address per warp: a broadcast; 16 bytes a load
 * where the rows are whole, aligned units) and writes Q sums per lane.  R
 * is chosen so the grid is one wave of the warps an SM holds (8 to 32, as
 * K's registers allow); B, K x N, is read R times fewer than C is written.
 * Where K > 16 a warp takes its rows two at a time, both rows' loads of A
 * in flight together.  The stack runs in one launch (the product is a grid
 * index); broadcast operands have stride 0.
 *
 * gemmcli's own, for the memory-bound shapes.  Run through its stages
 * (K at most 32), e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel small_k --verify --repeat 20 */
#ifndef GC_KERNELS_SMALL_K_CUH
#define GC_KERNELS_SMALL_K_CUH

#include "kernels/memory_bound/gemv.cuh"

enum {
    SMALL_K_MAX = 32,
    SMALL_K_THREADS = 256,
    SMALL_K_MOST_ROWS = 64
};

template <typename E>
struct small_k_shape {
    static constexpr int Q = 16 / (int)sizeof(typename E::acc);   /* columns per lane */
    static constexpr int COLS = 32 * Q;                            /* columns per warp */
};

template <typename E>
struct small_k_args {
    const typename E::elem *a, *b;
    typename E::acc *c;
    typename E::acc alpha, beta;
    int m, n, k;
    long long batch, stride_a, stride_b, stride_c;
    int rows_per_warp;
    long long strips_per_product;
};

/* A row of C's strip, its Q sums a lane: alpha and beta applied, the
 * columns past N left alone. */
template <typename E>
static __device__ __forceinline__ void small_k_store(const small_k_args<E> &p,
                                                     typename E::acc *cr,
                                                     const typename E::acc (&sum)[small_k_shape<E>::Q],
                                                     int j0, int lane)
{
    typedef typename E::acc T;
#pragma unroll
    for (int q = 0; q < small_k_shape<E>::Q; q++) {
        int j = j0 + lane + 32 * q;
        if (j < p.n)
            cr[j] = p.beta != T(0) ? p.alpha * sum[q] + p.beta * cr[j] : p.alpha * sum[q];
    }
}

/* One row of C's strip from its row of A (ar), the strip's B in bv:
 * loads and multiply-adds in turn, as the registers of a K over 16 or
 * of double allow. */
template <typename E, int KMAX, bool VEC>
static __device__ __forceinline__ void small_k_row(const small_k_args<E> &p,
                                                   const typename E::elem *ar,
                                                   const typename E::acc (&bv)[KMAX][small_k_shape<E>::Q],
                                                   typename E::acc *cr, int j0, int lane)
{
    typedef typename E::acc T;
    constexpr int Q = small_k_shape<E>::Q;
    constexpr int W = VEC ? (E::vec < KMAX ? E::vec : KMAX) : 1;
    T sum[Q];
#pragma unroll
    for (int q = 0; q < Q; q++)
        sum[q] = T(0);
#pragma unroll
    for (int k0 = 0; k0 < KMAX; k0 += W) {
        if (k0 < p.k) {
            T x[W];
            if (VEC)
                E::template widen<W>(gemv_load<E, W>(ar + k0).w, x);
            else
                x[0] = gemv_load1<E>(ar + k0);
#pragma unroll
            for (int t = 0; t < W; t++)
#pragma unroll
                for (int q = 0; q < Q; q++)
                    sum[q] = gemv_fma(x[t], bv[k0 + t][q], sum[q]);
        }
    }
    small_k_store<E>(p, cr, sum, j0, lane);
}

/* C[rows r0.., cols j0..] for one product; KMAX bounds k for the register
 * array; VEC: A's rows are whole, aligned units of E::vec values. */
template <typename E, int KMAX, bool VEC>
static __global__ void __launch_bounds__(SMALL_K_THREADS, 1)
small_k_kernel(small_k_args<E> p)
{
    typedef typename E::acc T;
    constexpr int Q = small_k_shape<E>::Q, COLS = small_k_shape<E>::COLS;
    constexpr int W = VEC ? (E::vec < KMAX ? E::vec : KMAX) : 1;
    long long item = (long long)blockIdx.x * (SMALL_K_THREADS / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    long long col_strips = (p.n + COLS - 1) / COLS;
    if (item >= p.strips_per_product * p.batch)
        return;
    long long prod = item / p.strips_per_product, rest = item % p.strips_per_product;
    int j0 = (int)(rest % col_strips) * COLS;
    int r0 = (int)(rest / col_strips) * p.rows_per_warp;
    const typename E::elem *a = p.a + prod * p.stride_a;
    const typename E::elem *b = p.b + prod * p.stride_b;
    T *c = p.c + prod * p.stride_c;

    /* The strip of B: every load issued before any value is widened (raw
     * words, 0 bits past K or N: 0 in every type).  Widened as each
     * arrived, the warp waited on a round trip every few loads (float16's
     * HADD2.F32 and double's moves after 3 to 5 loads: some 40 round trips
     * in a row before the first row, SASS). */
    gemv_unit<E, 1> raw[KMAX][Q];
#pragma unroll
    for (int kk = 0; kk < KMAX; kk++)
#pragma unroll
        for (int q = 0; q < Q; q++) {
            int j = j0 + lane + 32 * q;
            raw[kk][q] = gemv_unit<E, 1>();
            if (kk < p.k && j < p.n)
                raw[kk][q] = gemv_load<E, 1>(b + (size_t)kk * p.n + j);
        }
    T bv[KMAX][Q];
#pragma unroll
    for (int kk = 0; kk < KMAX; kk++)
#pragma unroll
        for (int q = 0; q < Q; q++)
            E::template widen<1>(raw[kk][q].w, &bv[kk][q]);
    int r1 = min(p.m, r0 + p.rows_per_warp);
    /* RP rows a pass, their loads of A issued together: two where K > 16,
     * the sums are 4-byte values and the registers hold both rows' A (float,
     * and 16-bit rows of whole 16-byte units; the kernel holds one block an SM
     * either way, and a row at a time waits out a load's latency per row:
     * 7271 x 23558 x 24 float at 0.74 TB/s of C, NVIDIA H200, 2026-11-26);
     * a pass past the band's end reads its last row again and stores
     * nothing for it. */
    constexpr int RP =
        KMAX > 16 && sizeof(T) == 4 && (VEC || sizeof(typename E::elem) == 4) ? 2 : 1;
    if constexpr (RP == 1) {
        for (int r = r0; r < r1; r++)
            small_k_row<E, KMAX, VEC>(p, a + (size_t)r * p.k, bv, c + (size_t)r * p.n, j0, lane);
    } else {
        for (int r = r0; r < r1; r += RP) {
            T x[RP][KMAX];
#pragma unroll
            for (int i = 0; i < RP; i++) {
                const typename E::elem *ar = a + (size_t)min(r + i, r1 - 1) * p.k;
#pragma unroll
                for (int k0 = 0; k0 < KMAX; k0 += W)
                    if (k0 < p.k) {
                        if (VEC)
                            E::template widen<W>(gemv_load<E, W>(ar + k0).w, &x[i][k0]);
                        else
                            x[i][k0] = gemv_load1<E>(ar + k0);
                    }
            }
#pragma unroll
            for (int i = 0; i < RP; i++) {
                T sum[Q];
#pragma unroll
                for (int q = 0; q < Q; q++)
                    sum[q] = T(0);
#pragma unroll
                for (int kk = 0; kk < KMAX; kk++)
                    if (kk < p.k)
#pragma unroll
                        for (int q = 0; q < Q; q++)
                            sum[q] = gemv_fma(x[i][kk], bv[kk][q], sum[q]);
                if (r + i >= r1)
                    break;
                small_k_store<E>(p, c + (size_t)(r + i) * p.n, sum, j0, lane);
            }
        }
    }
}

static inline int small_k_check(const char *name, const struct gemm_problem *p, char *why,
                                size_t n)
{
    if (p->k > SMALL_K_MAX) {
        snprintf(why, n, "%s computes products with K <= %d; this one has K = %lld", name,
                 SMALL_K_MAX, (long long)p->k);
        return 0;
    }
    return 1;
}

/* The warps of the kernel for KMAX an SM holds at once (its registers
 * decide: K x Q values of B a lane), asked of the runtime once per
 * kernel; 8 where it cannot say. */
template <typename E, int KMAX, bool VEC>
static int small_k_warps_per_sm()
{
    static const int warps = [] {
        int blocks = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, small_k_kernel<E, KMAX, VEC>,
                                                          SMALL_K_THREADS, 0) != cudaSuccess ||
            blocks < 1)
            blocks = 1;
        return blocks * (SMALL_K_THREADS / 32);
    }();
    return warps;
}

template <typename E, int KMAX>
static int small_k_warps_k(bool vec)
{
    return vec ? small_k_warps_per_sm<E, KMAX, true>() : small_k_warps_per_sm<E, KMAX, false>();
}

static inline int small_k_kmax(long long k)
{
    return k <= 4 ? 4 : k <= 8 ? 8 : k <= 16 ? 16 : SMALL_K_MAX;
}

template <typename E>
static int small_k_warps(long long k, bool vec)
{
    switch (small_k_kmax(k)) {
    case 4: return small_k_warps_k<E, 4>(vec);
    case 8: return small_k_warps_k<E, 8>(vec);
    case 16: return small_k_warps_k<E, 16>(vec);
    default: return small_k_warps_k<E, SMALL_K_MAX>(vec);
    }
}

template <typename E, int KMAX>
static void small_k_launch_k(const small_k_args<E> &g, bool vec, unsigned blocks,
                             cudaStream_t stream)
{
    if (vec)
        small_k_kernel<E, KMAX, true><<<blocks, SMALL_K_THREADS, 0, stream>>>(g);
    else
        small_k_kernel<E, KMAX, false><<<blocks, SMALL_K_THREADS, 0, stream>>>(g);
}

/* Runs a family's problem struct (sgemm_problem, dgemm_problem,
 * hgemm_problem: the same fields, dense rows). */
template <typename E, typename P>
static cudaError_t small_k_run_problem(const P *p, const struct launch_env *env)
{
    typedef typename E::acc T;
    constexpr int COLS = small_k_shape<E>::COLS;
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return cudaSuccess;
    long long col_strips = (p->n + COLS - 1) / COLS;
    /* A's rows as 16-byte units: K whole units, every row and product
     * starting on one. */
    bool vec = p->k % E::vec == 0 && (uintptr_t)p->a % 16 == 0 &&
               (p->batch == 1 || p->stride_a % E::vec == 0);
    /* Rows per warp: the time is about the waves of warps times the rows
     * each takes, so of the bands of rows that fill 1 to 4 whole waves of
     * the warps the SMs hold (8 an SM for K > 16, whose B takes 195-209
     * registers a lane) the one with the fewest waves x rows.  More waves
     * of fewer rows each load their strip of B again: 166 x 4444 x 30
     * float16 on rows of 2, 2.8 waves at 12.5% occupancy (ncu), 34 us
     * where mma_sync took 12 (bench), NVIDIA H200, 2026-11-26.  And the
     * bands that just cover one wave can spill into a second: 101 x 26584
     * x 17 float16 on 6 bands of 17 rows ran 156 blocks of one a SM on 132
     * SMs, 36.8 us (ncu, H200), where 5 bands of 21 rows make one wave. */
    int sms = env->sm_count > 0 ? env->sm_count : 132;
    long long want_warps = (long long)small_k_warps<E>(p->k, vec) * sms;
    long long per_band = col_strips * p->batch;
    long long least = (p->m + SMALL_K_MOST_ROWS - 1) / SMALL_K_MOST_ROWS;
    long long rows = 0, best = 0;
    for (long long w = 1; w <= 4; w++) {
        long long bands = w * want_warps / per_band;
        bands = bands < least ? least : bands > p->m ? p->m : bands;
        long long r = (p->m + bands - 1) / bands;
        long long warps = per_band * ((p->m + r - 1) / r);
        long long cost = (warps + want_warps - 1) / want_warps * r;
        if (rows == 0 || cost < best) {
            rows = r;
            best = cost;
        }
    }
    long long strips = col_strips * ((p->m + rows - 1) / rows);
    long long warps = strips * p->batch;
    long long blocks = (warps + SMALL_K_THREADS / 32 - 1) / (SMALL_K_THREADS / 32);
    if (blocks > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    small_k_args<E> g;
    g.a = p->a;
    g.b = p->b;
    g.c = p->c;
    g.alpha = (T)p->alpha;
    g.beta = (T)p->beta;
    g.m = p->m;
    g.n = p->n;
    g.k = p->k;
    g.batch = p->batch;
    g.stride_a = p->stride_a;
    g.stride_b = p->stride_b;
    g.stride_c = p->stride_c;
    g.rows_per_warp = (int)rows;
    g.strips_per_product = strips;
    unsigned nb = (unsigned)blocks;
    switch (small_k_kmax(p->k)) {
    case 4: small_k_launch_k<E, 4>(g, vec, nb, env->stream); break;
    case 8: small_k_launch_k<E, 8>(g, vec, nb, env->stream); break;
    case 16: small_k_launch_k<E, 16>(g, vec, nb, env->stream); break;
    default: small_k_launch_k<E, SMALL_K_MAX>(g, vec, nb, env->stream); break;
    }
    return launch_result();
}

template <typename E>
static cudaError_t small_k_attr(struct kernel_attr *out)
{
    return kernel_attr_of(small_k_kernel<E, SMALL_K_MAX, true>, SMALL_K_THREADS, 0, out);
}

#endif
