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
 * accumulators per lane and k; half that where K > 16 but for float, see
 * small_k_shape), and writes Q sums per lane for each row
 * of its band.  A's rows reach the warp through its own share of shared
 * memory, a chunk of rows at a time: one coalesced load of the chunk (16
 * values a lane, all in flight), widened once, then each row's K values
 * read by every lane from one address (a broadcast, 16 bytes a load), two
 * rows a pass.  No load the sums wait on is conditional: a value past K,
 * N or the band loads a valid address and is replaced by 0 (a conditional
 * load's value is moved into place at once, and the move waits for the
 * load, one round trip per load or two).  R is chosen so the grid is one
 * wave of the warps an SM holds (8 to 32, as K's registers allow); B, K x
 * N, is read R times fewer than C is written.  The stack runs in one
 * launch (the product is a grid index); broadcast operands have stride 0.
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
    SMALL_K_MOST_ROWS = 64,
    SMALL_K_CHUNK_VALUES = 512,    /* a warp's values of A in shared memory */
    SMALL_K_B_BATCH = 8            /* rows of B's strip loaded at once */
};

/* Columns per lane: 16 bytes of accumulators.  Where K > 16, B's K x Q
 * registers leave one block an SM (8 warps); halving Q leaves two, at the
 * cost of reading each row of A for half the columns.  float16, bfloat16
 * and double take the half (their rows of A are cheap to read twice, or
 * their sums wait longest); float keeps the whole, which measured faster
 * (README, "Measurements behind the stages"). */
template <typename E, int KMAX>
struct small_k_shape {
    static constexpr bool HALF = KMAX > 16 && sizeof(typename E::elem) != sizeof(float);
    static constexpr int Q = 16 / (int)sizeof(typename E::acc) / (HALF ? 2 : 1);
    static constexpr int COLS = 32 * Q;                            /* columns per warp */
    static constexpr int BLOCKS = KMAX <= 16 || HALF ? 2 : 1;      /* an SM, for the bound */
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
template <typename E, int Q>
static __device__ __forceinline__ void small_k_store(const small_k_args<E> &p,
                                                     typename E::acc *cr,
                                                     const typename E::acc (&sum)[Q],
                                                     int j0, int lane)
{
    typedef typename E::acc T;
#pragma unroll
    for (int q = 0; q < Q; q++) {
        int j = j0 + lane + 32 * q;
        if (j < p.n)
            cr[j] = p.beta != T(0) ? p.alpha * sum[q] + p.beta * cr[j] : p.alpha * sum[q];
    }
}

/* A warp's rows of A a chunk at a time: up to SMALL_K_CHUNK_VALUES values a
 * chunk (ROWS rows of KMAX, 16 loads a lane, all in flight), widened into
 * its share of shared memory, a row every KMAX values.  Double's sums at
 * K > 16 take half that: 16 loaded doubles a lane beside B's strip made
 * ptxas spill at two blocks an SM, and 8 ran as fast there (at K <= 16,
 * slower: README, "Measurements behind the stages"). */
template <typename E, int KMAX>
struct small_k_chunk {
    typedef typename E::acc T;
    static constexpr int VALUES = sizeof(T) > 4 && KMAX > 16 ? SMALL_K_CHUNK_VALUES / 2
                                                             : SMALL_K_CHUNK_VALUES;
    static constexpr int ROWS = VALUES / KMAX < SMALL_K_MOST_ROWS ? VALUES / KMAX
                                                                 : SMALL_K_MOST_ROWS;
    static constexpr int LOADS = ROWS * KMAX / 32;   /* a lane's */
    static constexpr int V = 16 / (int)sizeof(T);    /* values a shared-memory load */
    static_assert(ROWS * KMAX % 32 == 0 && KMAX % V == 0, "whole loads");
};

/* Rows rc .. rc + rows - 1 of A into as (KMAX values a row: A's K, then
 * zeros, whose B is zero too); a lane's loads all issued before any value
 * is widened or stored. */
template <typename E, int KMAX>
static __device__ __forceinline__ void small_k_fill(const small_k_args<E> &p,
                                                    const typename E::elem *a, int rc, int rows,
                                                    typename E::acc *as, int lane)
{
    typedef small_k_chunk<E, KMAX> C;
    typedef typename E::acc T;
    gemv_unit<E, 1> raw[C::LOADS];
#pragma unroll
    for (int i = 0; i < C::LOADS; i++) {
        int idx = lane + 32 * i, row = idx / KMAX, kk = idx % KMAX;
        bool in = row < rows && kk < p.k;
        raw[i] = gemv_load<E, 1>(in ? a + (size_t)(rc + row) * p.k + kk : a);
    }
#pragma unroll
    for (int i = 0; i < C::LOADS; i++) {
        int idx = lane + 32 * i, row = idx / KMAX, kk = idx % KMAX;
        T v;
        E::template widen<1>(raw[i].w, &v);
        as[idx] = row < rows && kk < p.k ? v : T(0);
    }
}

/* C[rows r0.., cols j0..] for one product; KMAX bounds k for the register
 * array. */
template <typename E, int KMAX>
static __global__ void __launch_bounds__(SMALL_K_THREADS, small_k_shape<E, KMAX>::BLOCKS)
small_k_kernel(small_k_args<E> p)
{
    typedef typename E::acc T;
    typedef small_k_chunk<E, KMAX> C;
    constexpr int Q = small_k_shape<E, KMAX>::Q, COLS = small_k_shape<E, KMAX>::COLS, V = C::V;
    __shared__ __align__(16) T a_chunk[SMALL_K_THREADS / 32][C::ROWS * KMAX];
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
    T *as = a_chunk[threadIdx.x / 32];

    int r1 = min(p.m, r0 + p.rows_per_warp);
    if (p.k == 0) {   /* C = beta C, and A and B may hold nothing to read */
        T zero[Q];
#pragma unroll
        for (int q = 0; q < Q; q++)
            zero[q] = T(0);
        for (int r = r0; r < r1; r++)
            small_k_store<E, Q>(p, c + (size_t)r * p.n, zero, j0, lane);
        return;
    }

    /* The strip of B, SMALL_K_B_BATCH rows of it at a time: each batch's
     * loads all issued before any value is widened, and none of them
     * conditional (a value past K or N loads B's first and is replaced by
     * 0).  A conditional load's value was moved into place at once, and
     * the move waited for it: two loads at a time, some 64 round trips in
     * a row at K = 32 before the first row (SASS). */
    T bv[KMAX][Q];
    constexpr int KB = KMAX < SMALL_K_B_BATCH ? KMAX : SMALL_K_B_BATCH;
#pragma unroll
    for (int k0 = 0; k0 < KMAX; k0 += KB) {
        if (k0 >= p.k)
            break;
        gemv_unit<E, 1> raw[KB][Q];
#pragma unroll
        for (int kk = 0; kk < KB; kk++)
#pragma unroll
            for (int q = 0; q < Q; q++) {
                int j = j0 + lane + 32 * q;
                bool in = k0 + kk < p.k && j < p.n;
                raw[kk][q] = gemv_load<E, 1>(in ? b + (size_t)(k0 + kk) * p.n + j : b);
            }
#pragma unroll
        for (int kk = 0; kk < KB; kk++)
#pragma unroll
            for (int q = 0; q < Q; q++) {
                T v;
                E::template widen<1>(raw[kk][q].w, &v);
                bv[k0 + kk][q] = k0 + kk < p.k && j0 + lane + 32 * q < p.n ? v : T(0);
            }
    }
    /* A's rows through shared memory, a chunk at a time.  Read from
     * global memory a row at a time, each row's loads waited out before its
     * sums, the band took a round trip a row (float16 4619 x 914 x 19, 35
     * rows a warp at 8 warps an SM, with B's conditional loads above: 30.2
     * us where cuBLAS took 17.2; 19.6 now, NVIDIA H100, 2026-11-27).  Two
     * rows a pass: twice the independent sums; a chunk's rows past its end
     * are zeros, computed and not stored. */
    for (int rc = r0; rc < r1; rc += C::ROWS) {
        int rows = min(C::ROWS, r1 - rc);
        __syncwarp();
        small_k_fill<E, KMAX>(p, a, rc, rows, as, lane);
        __syncwarp();
        for (int r = 0; r < rows; r += 2) {
            T sum[2][Q];
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int q = 0; q < Q; q++)
                    sum[i][q] = T(0);
#pragma unroll
            for (int k0 = 0; k0 < KMAX; k0 += V) {
                if (k0 < p.k) {
#pragma unroll
                    for (int i = 0; i < 2; i++) {
                        T x[V];
                        const T *ar = as + (r + i) * KMAX + k0;
                        if constexpr (V == 4) {
                            float4 v = *reinterpret_cast<const float4 *>(ar);
                            x[0] = v.x;
                            x[1] = v.y;
                            x[2] = v.z;
                            x[3] = v.w;
                        } else {
                            double2 v = *reinterpret_cast<const double2 *>(ar);
                            x[0] = v.x;
                            x[1] = v.y;
                        }
#pragma unroll
                        for (int t = 0; t < V; t++)
#pragma unroll
                            for (int q = 0; q < Q; q++)
                                sum[i][q] = gemv_fma(x[t], bv[k0 + t][q], sum[i][q]);
                    }
                }
            }
            small_k_store<E, Q>(p, c + (size_t)(rc + r) * p.n, sum[0], j0, lane);
            if (r + 1 < rows)
                small_k_store<E, Q>(p, c + (size_t)(rc + r + 1) * p.n, sum[1], j0, lane);
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
template <typename E, int KMAX>
static int small_k_warps_per_sm()
{
    static const int warps = [] {
        int blocks = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, small_k_kernel<E, KMAX>,
                                                          SMALL_K_THREADS, 0) != cudaSuccess ||
            blocks < 1)
            blocks = 1;
        return blocks * (SMALL_K_THREADS / 32);
    }();
    return warps;
}

static inline int small_k_kmax(long long k)
{
    return k <= 4 ? 4 : k <= 8 ? 8 : k <= 16 ? 16 : SMALL_K_MAX;
}

template <typename E>
static int small_k_warps(long long k)
{
    switch (small_k_kmax(k)) {
    case 4: return small_k_warps_per_sm<E, 4>();
    case 8: return small_k_warps_per_sm<E, 8>();
    case 16: return small_k_warps_per_sm<E, 16>();
    default: return small_k_warps_per_sm<E, SMALL_K_MAX>();
    }
}

template <typename E, int KMAX>
static void small_k_launch_k(const small_k_args<E> &g, unsigned blocks, cudaStream_t stream)
{
    small_k_kernel<E, KMAX><<<blocks, SMALL_K_THREADS, 0, stream>>>(g);
}

/* Runs a family's problem struct (sgemm_problem, dgemm_problem,
 * hgemm_problem: the same fields, dense rows). */
template <typename E, typename P>
static cudaError_t small_k_run_problem(const P *p, const struct launch_env *env)
{
    typedef typename E::acc T;
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return cudaSuccess;
    const int COLS = small_k_kmax(p->k) > 16 ? small_k_shape<E, SMALL_K_MAX>::COLS
                                             : small_k_shape<E, 16>::COLS;
    long long col_strips = (p->n + COLS - 1) / COLS;
    /* Rows per warp: the time is about the waves of warps times the rows
     * each takes, so of the bands of rows that fill 1 to 4 whole waves of
     * the warps the SMs hold (8 an SM for K > 16, whose B takes 194-198
     * registers a lane; 16 for K <= 16, held to 128 registers) the one
     * with the fewest waves x rows.  More waves of fewer rows each load
     * their strip of B again: 166 x 4444 x 30 float16 on rows of 2, 2.8
     * waves at 12.5% occupancy (ncu), 34 us where mma_sync took 12
     * (bench), NVIDIA H200, 2026-11-26.  And the
     * bands that just cover one wave can spill into a second: 101 x 26584
     * x 17 float16 on 6 bands of 17 rows ran 156 blocks of one a SM on 132
     * SMs, 36.8 us (ncu, H200), where 5 bands of 21 rows make one wave. */
    int sms = env->sm_count > 0 ? env->sm_count : 132;
    long long want_warps = (long long)small_k_warps<E>(p->k) * sms;
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
    case 4: small_k_launch_k<E, 4>(g, nb, env->stream); break;
    case 8: small_k_launch_k<E, 8>(g, nb, env->stream); break;
    case 16: small_k_launch_k<E, 16>(g, nb, env->stream); break;
    default: small_k_launch_k<E, SMALL_K_MAX>(g, nb, env->stream); break;
    }
    return launch_result();
}

template <typename E>
static cudaError_t small_k_attr(struct kernel_attr *out)
{
    return kernel_attr_of(small_k_kernel<E, SMALL_K_MAX>, SMALL_K_THREADS, 0, out);
}

#endif
