/* What the thin stages share (sgemm_24_thin.cu float, hgemm_10_thin.cu
 * float16 and bfloat16, dgemm_05_thin.cu double): products with a thin
 * side, M <= 32 (a few rows times a wide matrix) or N <= 32 (a tall
 * matrix times a few columns), including the ones where M x N is tiny and
 * K long (8 x 8 x 4000000), as templates over gemv.cuh's operand types.
 * They are memory- or latency-bound: the wide operand should be read once
 * at the copy kernel's rate, and a few long dot products must be cut along
 * K to occupy every SM.
 *
 * The tile stages compute such a product on 128 x 128 tiles that are
 * mostly empty, through a handful of blocks; the gemv stages cover M = 1
 * and N = 1 only.  Q below is 16 bytes of accumulators:
 * 4 for float and for the 16-bit types (which accumulate in float), 2 for
 * double, and half that beyond 24 rows (thin_cols).
 *   - M <= 32: a thread owns Q columns of B (Q adjacent ones, read by
 *     one load along B's rows: 16 bytes, 8 for the 16-bit types; where
 *     N % Q, K % Q or the alignment forbid that, pairs of columns when N
 *     and K are even, else single ones, a thread's pieces tx pieces
 *     apart, so a warp's load still covers adjacent values) and keeps M x Q
 *     sums in registers, the kernel templated on a bound of M (4, 8, 16,
 *     24, 32; the smallest that fits is launched).  Q values of k at a
 *     time, A is read as broadcasts through L1: the lanes of a warp that
 *     share k share the address.  When N is narrow, or the blocks along N
 *     would be fewer than the SMs and K too short to make up for it by
 *     slices (a block then takes as few as 32 x Q columns), the block's
 *     threads are laid out as columns x k-lanes, and the k-lanes' sums
 *     are joined in shared memory in a fixed order (several threads a
 *     result where the block's results are fewer than its threads, met
 *     by shuffles): each thread's chain of loads along K, which a small
 *     grid waits on, gets shorter.
 *   - N <= 32 (and M > 32): a thread owns one row of A and its N sums
 *     (bound 4 ... 32), two rows from 16 columns on (thin_rows_per: a
 *     block of 128 threads); 256 rows x KC values of k of A (KC = 32, 16
 *     for double, halved for two rows a thread) are staged in shared
 *     memory, widened, the lanes of a warp reading
 *     adjacent pieces of a row's chunk (4 values a lane where K and the
 *     alignment allow, pairs where K is even, single values where it is
 *     odd: the warp's load covers the same whole chunks of rows either
 *     way; rows padded by one value, so the per-row reads are free of
 *     bank conflicts, and the stores too with one row a thread: with two,
 *     a chunk of 16 values leaves two lanes a bank where a warp's load
 *     spans more than one row), the matching KC x N piece of B
 *     beside them, read as broadcasts; the next chunk is fetched into
 *     registers while this one is multiplied.  The block's rows of C
 *     are one run of memory: the sums go out through shared memory, each
 *     thread storing adjacent values of it.
 *   - Both paths cut K into S slices over blockIdx.y, S chosen so the
 *     grid fills the blocks the device holds at once (the kernel's
 *     occupancy) without a part-filled second wave, each slice at least
 *     64 values of k deep (and 16 per k-lane; where 64 would leave the
 *     GPU short, the N path goes down to one chunk a slice and the M
 *     path to one step of every k-lane, up to a block an SM).  A grid
 *     that fills more than half the slots unsliced takes the count of
 *     slices whose waves and slabs cost least (thin_balance; README,
 *     "Measurements behind the stages").  The
 *     slices write their own M x N slabs of a workspace, added in a
 *     fixed order with alpha and beta applied, so the result does not
 *     depend on scheduling: by the launch itself where that sum is small
 *     (the last block of each block's region of C, join.cuh; those
 *     kernels are built apart, JOIN, so that the others keep the code
 *     they were measured as), else by gemv_reduce.  With S = 1 the
 *     kernel writes C itself.
 * A stack is one launch per 65535 products (blockIdx.z), with per-operand
 * strides; a stride of 0 shares an operand.  Both sides above 32 are
 * refused: M x Q or N sums per thread would spill.  Rows are dense (lda =
 * K, ldb = N).
 *
 * Registers.  The M path's kernels for up to 8 rows are held to 128
 * registers (two blocks an SM), the wider ones may take all 255; the N
 * path's wide-load kernels come out near 128, two blocks an SM, which
 * measured faster (README, "Measurements behind the stages"), and its
 * pair and single-value kernels up to 16 columns are held to 128 (beyond,
 * they spill at 128 and take more).  No kernel spills
 * (tests/sass_check.sh).
 *
 * Raw loads ahead.  The next chunk of the N path (and, for the 16-bit
 * types and double, the next step of B on the M path) is held in
 * registers as read and widened only when used: converting a 16-bit value
 * right after its load would stall the warp there, before the
 * multiply-adds that should hide the load.
 *
 * gemmcli's own, for the memory-bound shapes.  Run through its stages
 * (one side at most 32), e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel thin --verify --repeat 20 */
#ifndef GC_KERNELS_THIN_CUH
#define GC_KERNELS_THIN_CUH

#include <type_traits>

#include "kernels/memory_bound/gemv.cuh"

enum {
    THIN_THREADS = 256,
    THIN_MOST = 32,             /* the thin side's bound */
    THIN_MOST_F64_M = 24,       /* the rows' bound for double (thin_check) */
    THIN_ROWS = THIN_THREADS,   /* rows of A per block (N <= 32) */
    THIN_MIN_K = 64,            /* values of k per slice at least */
    THIN_LANE_K = 16,           /* values of k per k-lane and slice at least */
    THIN_MIN_K_SHORT = 32,      /* ... where a grid would leave SMs idle (M path) */
    THIN_SHORT_GRID_K = 256,    /* ... and K is at least this */
    THIN_MOST_SLICES = 1024,
    THIN_MOST_Z = 65535         /* products per launch (gridDim.z) */
};

/* The geometry of type E's kernels. */
template <typename E>
struct thin_shape {
    typedef typename E::acc T;
    static constexpr int KC = sizeof(T) == 8 ? 16 : 32; /* k per staged chunk (N <= 32) */
    static constexpr int U = E::vec < 4 ? E::vec : 4;   /* values per load of A (N <= 32) */
};

/* The N path's rows of A a thread owns for a bound of N: two from 16
 * columns on, so that each value of B read from shared memory feeds two
 * multiply-adds (one row a thread reads a value of B for each: 33918 x 24
 * x 274 float, 192 broadcast LDS.128 to 768 FFMA a warp and chunk, L1/TEX
 * busy about 88% of the SMs' active cycles, NVIDIA H100, 2026-11-26, ncu);
 * not for 32 columns of double, whose 64 sums a thread spill.
 * The block keeps THIN_ROWS rows with THIN_ROWS / rows threads, and its
 * chunks of k are as much shorter, so that a thread holds as many values
 * of the next chunk. */
template <typename E>
static __host__ __device__ constexpr int thin_rows_per(int bound)
{
    return bound >= 16 && bound * sizeof(typename E::acc) <= 192 ? 2 : 1;
}

template <typename E>
static __host__ __device__ constexpr int thin_n_threads(int bound)
{
    return THIN_ROWS / thin_rows_per<E>(bound);
}

template <typename E>
static __host__ __device__ constexpr int thin_n_kc(int bound)
{
    return thin_shape<E>::KC / thin_rows_per<E>(bound);
}

/* Q, the M path's columns per thread and values of k per step, for a
 * bound of M: 16 bytes of accumulators, 8 beyond 24 rows (32 x 2 doubles
 * of sums, with the loads ptxas issues ahead, spilled; 32 x 4 floats took
 * all 255 registers and ran 29 x 18832 x 4275 at 4.0 TFLOP/s where 24 rows
 * ran at 11.3, NVIDIA H200, 2026-11-26). */
template <typename E>
static __host__ __device__ constexpr int thin_cols(int bound)
{
    return (bound > 24 ? 8 : 16) / (int)sizeof(typename E::acc);
}

template <typename E>
struct thin_args {
    int m, n, k;
    int slice;                  /* values of k per blockIdx.y */
    int tx;                     /* column threads per block (M <= 32) */
    int batch;                  /* products in this launch */
    const typename E::elem *a, *b;
    typename E::acc *out;       /* C when gridDim.y == 1, else the workspace */
    long long sa, sb, sc;
    typename E::acc alpha, beta;
    typename E::acc *c;         /* C, where this launch joins its slices */
    unsigned *tickets;          /* the join's (join.cuh) */
    int group;                  /* its slices a ticket; 0: a second launch joins */
};

/* The join of a block's region of C (join.cuh) where the launch joins its
 * slices: `items` results, item i at row i / w and column j0 + i % w (w
 * 0: one run of memory, item i at j0 + i). */
template <typename E>
static __device__ __forceinline__ void thin_join(const thin_args<E> &p, long long j0, int w,
                                                 int items)
{
    typedef typename E::acc T;
    const long long count = (long long)p.m * p.n, z = blockIdx.z;
    T *c = p.c + z * p.sc;
    join_slices<T>(p.tickets, z * gridDim.x + blockIdx.x, (long long)gridDim.x * gridDim.z,
                   blockIdx.y, gridDim.y, p.group, p.out, count * p.batch, items, p.alpha, p.beta,
                   [&](int i, T **out) {
                       long long at = w ? (long long)(i / w) * p.n + j0 + i % w : j0 + i;
                       *out = c + at;
                       return z * count + at;
                   });
}

/* N values at p, widened, W at a time (p aligned to W values): one load
 * of N when W == N, pairs when W == 2, single values when W == 1; values
 * at or past `valid` read as 0 (`valid` is a multiple of W: the host takes
 * loads of W only where every row and slice starts and ends on one). */
template <typename E, int N, int W>
static __device__ __forceinline__ void thin_load(const typename E::elem *p, int valid,
                                                 typename E::acc *out)
{
    static_assert(N % W == 0, "whole loads");
#pragma unroll
    for (int i = 0; i < N; i += W) {
        if (i < valid) {
            E::template widen<W>(gemv_load<E, W>(p + i).w, out + i);
        } else {
#pragma unroll
            for (int e = 0; e < W; e++)
                out[i + e] = typename E::acc(0);
        }
    }
}

/* One result: into C with alpha and beta, or into the slice's slab. */
template <typename E>
static __device__ __forceinline__ void thin_store(const thin_args<E> &p, size_t at,
                                                  typename E::acc sum)
{
    typedef typename E::acc T;
    if (gridDim.y == 1) {
        T *c = p.out + (long long)blockIdx.z * p.sc + at;
        *c = p.beta != T(0) ? p.alpha * sum + p.beta * *c : p.alpha * sum;
    } else {
        size_t count = (size_t)p.m * p.n;
        p.out[((size_t)blockIdx.y * p.batch + blockIdx.z) * count + at] = sum;
    }
}

/* M <= MB: thread (x, y) of a block sums Q columns over the k-steps y,
 * y + ty, ... of the slice; the ty k-lanes are joined at the end.  The Q
 * columns are Q / W groups of W adjacent ones, group g at (g tx + x) W
 * from the block's first column: adjacent lanes read adjacent pieces of
 * B's rows whatever W is (W = Q: the thread's columns are adjacent). */
template <typename E, int MB, int W, bool JOIN>
static __global__ void __launch_bounds__(THIN_THREADS, MB <= 8 ? 2 : 1)
thin_m_kernel(thin_args<E> p)
{
    typedef typename E::acc T;
    constexpr int Q = thin_cols<E>(MB);
    const int tx = p.tx, ty = THIN_THREADS / tx;
    const int x = threadIdx.x % tx, y = threadIdx.x / tx;
    const int cols = Q * tx, j0 = blockIdx.x * cols;
    const typename E::elem *a = p.a + (long long)blockIdx.z * p.sa;
    const typename E::elem *b = p.b + (long long)blockIdx.z * p.sb;
    const int k0 = blockIdx.y * p.slice, k1 = min(p.k, k0 + p.slice);
    T acc[MB][Q];
#pragma unroll
    for (int i = 0; i < MB; i++)
#pragma unroll
        for (int c = 0; c < Q; c++)
            acc[i][c] = T(0);
    /* For the 16-bit types and double, B's next step waits in registers
     * as it was read (raw: widening a 16-bit value would wait for the
     * load) while this step's multiply-adds run: with a block an SM, a
     * step's loads are all there is in flight otherwise (double 18 x 18630
     * x 1004 took 174 us where it took 222 loading each step at its top,
     * 16 x 8192 x 4096 205 where 239).  float loads each step at its top:
     * ahead, its 24-row kernel, at 255 registers, ran 22 x 4518 x 18135 in
     * 480 us where it had taken 366 (NVIDIA H200, 2026-11-26). */
    typedef gemv_unit<E, W> unit_b;
    unit_b braw[Q][Q / W];
    constexpr bool ahead = sizeof(typename E::elem) < sizeof(T);   /* the 16-bit types */
    constexpr bool prefetch = sizeof(typename E::elem) != 4;       /* not float */
    /* The thread's columns: groups of GW adjacent ones, tx groups apart
     * (GW = W for the 16-bit types, so that a warp's single 2-byte loads
     * cover adjacent values; float and double keep their Q columns
     * adjacent). */
    constexpr int GW = ahead ? W : Q;
    auto col = [&](int c) { return j0 + ((c / GW) * tx + x) * GW + c % GW; };
    auto fetch_b = [&](int kk) {
#pragma unroll
        for (int t = 0; t < Q; t++) {
            const typename E::elem *row = b + (size_t)(kk + t) * p.n;
#pragma unroll
            for (int g = 0; g < Q / W; g++) {
                int j = col(g * W);
                if (kk + t < k1 && j < p.n) {
                    braw[t][g] = gemv_load<E, W>(row + j);
                } else {
                    braw[t][g] = unit_b();   /* 0 bits: 0 in every type */
                }
            }
        }
    };
    if (j0 + x * W < p.n) {
        int kk = k0 + Q * y;
        if (prefetch && kk < k1)
            fetch_b(kk);
        for (; kk < k1; kk += Q * ty) {
            if (!prefetch)
                fetch_b(kk);
            T bv[Q][Q];
#pragma unroll
            for (int t = 0; t < Q; t++)
#pragma unroll
                for (int g = 0; g < Q / W; g++)
                    E::template widen<W>(braw[t][g].w, &bv[t][g * W]);
            if (prefetch && kk + Q * ty < k1)
                fetch_b(kk + Q * ty);
#pragma unroll
            for (int i = 0; i < MB; i++) {
                /* Rows past M repeat the last one; their sums are dropped. */
                T av[Q];
                thin_load<E, Q, W>(a + (size_t)min(i, p.m - 1) * p.k + kk, k1 - kk, av);
#pragma unroll
                for (int t = 0; t < Q; t++)
#pragma unroll
                    for (int c = 0; c < Q; c++)
                        acc[i][c] = gemv_fma(av[t], bv[t][c], acc[i][c]);
            }
        }
    }
    /* Join the k-lanes, R rows at a time, each result summed over y in
     * order (with one k-lane, this is the store): the lanes that had a
     * step of the slice, the others' sums being 0 (a K of 1 over 256
     * k-lanes would otherwise read 256 values for each result), for the
     * 16-bit types; float and double read them all (with the bound known,
     * ptxas schedules their loop over K as before). */
    const int busy = ahead ? min(ty, (k1 - k0 + Q - 1) / Q) : ty;
    constexpr int R = MB < 8 ? MB : 8;
    static_assert(MB % R == 0, "the rows are joined R at a time");
    __shared__ __align__(16) T joined[R][THIN_THREADS * Q];
#pragma unroll
    for (int r0 = 0; r0 < MB; r0 += R) {
        if (r0 >= p.m)
            break;
#pragma unroll
        for (int ii = 0; ii < R; ii++)
#pragma unroll
            for (int c = 0; c < Q; c++)
                joined[ii][y * cols + col(c) - j0] = acc[r0 + ii][c];
        __syncthreads();
        if (R * cols >= THIN_THREADS) {
            for (int e = threadIdx.x; e < R * cols; e += THIN_THREADS) {
                int ii = e / cols, col = e % cols;
                int row = r0 + ii, jj = blockIdx.x * cols + col;
                const T *lane = joined[ii] + col;
                T sum = T(0);
                for (int yy = 0; yy < busy; yy++)
                    sum += lane[yy * cols];
                if (row < p.m && jj < p.n)
                    thin_store(p, (size_t)row * p.n + jj, sum);
            }
        } else {
            /* Fewer results than threads (few columns, many k-lanes: 256
             * k-lanes over 2 columns): `parts` adjacent lanes share a
             * result, each summing every parts-th k-lane in order, then
             * the parts meet in a fixed tree of shuffles. */
            const int parts = min(32, THIN_THREADS / (R * cols));
            int e = threadIdx.x / parts, part = threadIdx.x % parts;
            int ii = e / cols, col = e % cols;
            T sum = T(0);
            if (e < R * cols)
                for (int yy = part; yy < busy; yy += parts)
                    sum += joined[ii][yy * cols + col];
            for (int off = parts / 2; off > 0; off /= 2)
                sum += __shfl_xor_sync(0xffffffffu, sum, off);
            int row = r0 + ii, jj = blockIdx.x * cols + col;
            if (part == 0 && e < R * cols && row < p.m && jj < p.n)
                thin_store(p, (size_t)row * p.n + jj, sum);
        }
        __syncthreads();
    }
    if constexpr (JOIN) {
        const int w = min(cols, p.n - j0);
        thin_join(p, j0, w, p.m * w);
    }
}

/* N <= NB: a thread per row of A, its N sums in registers; A and B come
 * through shared memory KC values of k at a time.  A chunk's row is read
 * by KC / V adjacent lanes, V values each (4 with whole loads, else W), so
 * a warp's load covers whole pieces of rows (64 bytes for the 16-bit
 * types, 128 for float and double) whatever W is.
 *
 * The 16-bit types' pairs and wider loads keep A's chunk in shared memory
 * as read (RAW): each lane stores its units unwidened, 8 or 4 bytes at a
 * time, and a thread reads 8 values of its row by one 16-byte load and
 * widens them there.  Widened on the way in, each value went to shared
 * memory as a float of its own and came back one load per value: float16
 * 5228 x 14 x 44572 kept L1 89% busy and moved 1.58 TB/s, 47% of the
 * DRAM's peak, where cuBLAS moved 2.33 (NVIDIA H100, 2026-11-27, ncu).
 * Rows are padded by 8 values, 16 bytes: the 8 rows a quarter of a warp
 * reads at once start in 8 different groups of 4 banks.  (Single 2-byte
 * loads, an odd K, keep the widened chunk: stored raw, their kernel for 8
 * columns spilled at its 128-register bound.)  Chunks of 32 values on two
 * rows a thread too (64 bytes a row, not 32) held twice the raw values
 * ahead, 179 registers for 16 columns where 127 leave four blocks an SM,
 * and lost there: float16 26442 x 12 x 11304 0.387 -> 0.433 ms, where
 * this kernel takes 0.355 (NVIDIA H100, 2026-11-27). */
template <typename E, int NB, int W, bool JOIN>
static __global__ void __launch_bounds__(thin_n_threads<E>(NB),
                                         thin_rows_per<E>(NB) > 1           ? 2
                                         : W == thin_shape<E>::U ? 0
                                         : NB > 16               ? 1
                                                                 : 2)
thin_n_kernel(thin_args<E> p)
{
    typedef typename E::acc T;
    typedef typename E::elem S;
    constexpr bool RAW = sizeof(S) == 2 && W >= 2; /* A's chunk kept as read */
    constexpr int TR = thin_rows_per<E>(NB);      /* rows a thread: threadIdx.x + TH i */
    constexpr int TH = thin_n_threads<E>(NB);
    constexpr int KC = thin_n_kc<E>(NB);
    constexpr int V = W == thin_shape<E>::U ? 4 : W; /* values per lane and row */
    constexpr int LQ = KC / V;                    /* threads per row of a chunk, V values each */
    constexpr int RPP = TH / LQ;                  /* rows per pass */
    constexpr int PASSES = THIN_ROWS / RPP;
    constexpr int BN = (NB * KC + TH - 1) / TH;
    static_assert(THIN_ROWS == TH * TR && NB % 4 == 0 && KC % V == 0 && V % W == 0 &&
                      TH % LQ == 0 && TH % 32 == 0 && (!RAW || KC % 8 == 0),
                  "TR rows a thread; whole loads of W values");
    typedef std::conditional_t<RAW, S, T> A_STAGED;
    constexpr int PAD = RAW ? 8 : 1;
    __shared__ __align__(RAW ? 16 : alignof(T)) A_STAGED as[THIN_ROWS][KC + PAD];
    __shared__ __align__(16) T bs[KC][NB];
    const typename E::elem *a = p.a + (long long)blockIdx.z * p.sa;
    const typename E::elem *b = p.b + (long long)blockIdx.z * p.sb;
    const int r0 = blockIdx.x * THIN_ROWS;
    const int k0 = blockIdx.y * p.slice, k1 = min(p.k, k0 + p.slice);
    const int lq = threadIdx.x % LQ, lr = threadIdx.x / LQ;
    /* The next chunk waits in registers as it was read, widened only as
     * it goes to shared memory: a conversion right after the load would
     * wait for it there, before this chunk's multiply-adds. */
    typedef gemv_unit<E, W> unit_a;
    typedef gemv_unit<E, 1> unit_b;
    unit_a na[PASSES][V / W];
    unit_b nb[BN];
    auto fetch = [&](int c) {
        int kk = c + V * lq;
#pragma unroll
        for (int u = 0; u < PASSES; u++) {
            int row = r0 + lr + RPP * u;
            const typename E::elem *ar = a + (size_t)(row < p.m ? row : 0) * p.k + kk;
#pragma unroll
            for (int h = 0; h < V / W; h++) {
                if (row < p.m && kk + h * W < k1) {
                    na[u][h] = gemv_load<E, W>(ar + h * W);
                } else {
                    na[u][h] = unit_a();   /* 0 bits: 0 in every type */
                }
            }
        }
#pragma unroll
        for (int v = 0; v < BN; v++) {
            int e = threadIdx.x + v * TH, q = e / NB, jj = e % NB;
            nb[v] = e < NB * KC && c + q < k1 && jj < p.n
                        ? gemv_load<E, 1>(b + (size_t)(c + q) * p.n + jj) : unit_b();
        }
    };
    T acc[TR][NB];
#pragma unroll
    for (int i = 0; i < TR; i++)
#pragma unroll
        for (int jj = 0; jj < NB; jj++)
            acc[i][jj] = T(0);
    if (k0 < k1)
        fetch(k0);
    for (int c = k0; c < k1; c += KC) {
        __syncthreads();
#pragma unroll
        for (int u = 0; u < PASSES; u++)
#pragma unroll
            for (int h = 0; h < V / W; h++) {
                A_STAGED *to = &as[lr + RPP * u][V * lq + h * W];
                if constexpr (RAW && W == 4) {
                    *reinterpret_cast<uint2 *>(to) = make_uint2(na[u][h].w[0], na[u][h].w[1]);
                } else if constexpr (RAW) {
                    *reinterpret_cast<unsigned *>(to) = na[u][h].w[0];
                } else {
                    T wide[W];
                    E::template widen<W>(na[u][h].w, wide);
#pragma unroll
                    for (int i = 0; i < W; i++)
                        to[i] = wide[i];
                }
            }
#pragma unroll
        for (int v = 0; v < BN; v++) {
            int e = threadIdx.x + v * TH;
            if (e < NB * KC) {
                T wide;
                E::template widen<1>(nb[v].w, &wide);
                bs[e / NB][e % NB] = wide;
            }
        }
        __syncthreads();
        if (c + KC < k1)
            fetch(c + KC);
        if constexpr (RAW) {
#pragma unroll
            for (int q0 = 0; q0 < KC; q0 += 8) {
                T s[TR][8];
#pragma unroll
                for (int i = 0; i < TR; i++) {
                    uint4 v = *reinterpret_cast<const uint4 *>(&as[threadIdx.x + TH * i][q0]);
                    const unsigned w[4] = { v.x, v.y, v.z, v.w };
                    E::template widen<8>(w, s[i]);
                }
#pragma unroll
                for (int q = 0; q < 8; q++)
#pragma unroll
                    for (int jj = 0; jj < NB; jj++) {
                        T bq = bs[q0 + q][jj];
#pragma unroll
                        for (int i = 0; i < TR; i++)
                            acc[i][jj] = gemv_fma(s[i][q], bq, acc[i][jj]);
                    }
            }
        } else {
#pragma unroll
            for (int q = 0; q < KC; q++) {
                T s[TR];
#pragma unroll
                for (int i = 0; i < TR; i++)
                    s[i] = as[threadIdx.x + TH * i][q];
#pragma unroll
                for (int jj = 0; jj < NB; jj++) {
                    T bq = bs[q][jj];
#pragma unroll
                    for (int i = 0; i < TR; i++)
                        acc[i][jj] = gemv_fma(s[i], bq, acc[i][jj]);
                }
            }
        }
    }
    /* The block's rows of C (or of its slice's slab) are one run of
     * memory, rows x N values: they go out through shared memory (as's
     * space, RS rows at a time, rows padded by one value), each thread
     * storing adjacent values.  Stored straight from the sums, a warp's
     * store touched 32 rows N values apart, one sector each (62694 x 28
     * x 41 float: 45% of cuBLAS, NVIDIA H200, 2026-11-26). */
    if constexpr (sizeof(T) == 8 && NB == 8 && W == 1) {
        /* (8 columns of double on single loads: straight from the sums;
         * staged, the kernel spills at its 128-register bound) */
#pragma unroll
        for (int i = 0; i < TR; i++) {
            int row = r0 + threadIdx.x + TH * i;
            if (row >= p.m)
                break;
#pragma unroll
            for (int jj = 0; jj < NB; jj++)
                if (jj < p.n)
                    thin_store(p, (size_t)row * p.n + jj, acc[i][jj]);
        }
    } else {
        constexpr int FIT = (int)(sizeof(as) / ((NB + 1) * sizeof(T)));
        constexpr int RS = FIT >= THIN_ROWS ? THIN_ROWS : FIT >= 128 ? 128 : FIT >= 64 ? 64 : 32;
        static_assert(FIT >= RS && THIN_ROWS % RS == 0, "RS rows of C fit as's space");
        T (*cs)[NB + 1] = reinterpret_cast<T (*)[NB + 1]>(&as[0][0]);
        __syncthreads();   /* the last chunk's reads of as are done */
        for (int base = 0; base < THIN_ROWS && r0 + base < p.m; base += RS) {
#pragma unroll
            for (int i = 0; i < TR; i++) {
                int lr = threadIdx.x + TH * i - base;
                if (lr >= 0 && lr < RS)
#pragma unroll
                    for (int jj = 0; jj < NB; jj++)
                        cs[lr][jj] = acc[i][jj];
            }
            __syncthreads();
            int count = min(RS, p.m - (r0 + base)) * p.n;
            size_t at = (size_t)(r0 + base) * p.n;
            for (int e = threadIdx.x; e < count; e += TH)
                thin_store(p, at + e, cs[e / p.n][e % p.n]);
            __syncthreads();
        }
    }
    /* (the block's rows are one run: item i is element r0 N + i) */
    if constexpr (JOIN)
        thin_join(p, (long long)r0 * p.n, 0, (min(p.m, r0 + THIN_ROWS) - r0) * p.n);
}

/* ---- the host ---- */

/* The launch's shape: which path, its blocks along M or N, and the slices
 * of K. */
struct thin_plan {
    bool by_rows;               /* N <= 32 with M > 32: a thread per row of A */
    int bound;                  /* the template's bound of the thin side */
    int tx, blocks, slices, slice;
};

static inline int thin_bound(int side)
{
    return side <= 4 ? 4 : side <= 8 ? 8 : side <= 16 ? 16 : side <= 24 ? 24 : 32;
}

enum {
    THIN_BALANCE_MOST = 16,     /* slices thin_balance weighs at most */
    /* A launch's cost in bytes moved: 4 us at 3 TB/s. */
    THIN_LAUNCH_BYTES = 12000000
};

/* Slices for a grid of `blocks` that fills the slots more than half
 * unsliced (where the rule below takes 1): a block's time is its
 * chain of loads, whatever else shares its SM, so ceil(blocks x s /
 * slots) waves of K / s each take the time, plus the slabs of s slices,
 * written and read, and the reduction's launch.  The s, 1 to
 * THIN_BALANCE_MOST and `most`, that takes the least, where it is 3%
 * under the fewer slices' (float64 48074 x 8 x 1364: 188 blocks of rows
 * on 264 slots, 59% of cuBLAS in one wave with 76 slots idle; float16
 * and float kept their times there, within 3%, NVIDIA H200, 2026-11-27). */
template <typename E>
static long thin_balance(int m, int n, int k, long blocks, long most, long slots)
{
    double bytes = ((double)m * k + (double)k * n) * sizeof(typename E::elem);
    double slab = 2.0 * m * n * sizeof(typename E::acc);
    long best = 1;
    double best_cost = 1e300;
    long top = most < (long)THIN_BALANCE_MOST ? most : (long)THIN_BALANCE_MOST;
    for (long s = 1; s <= top || s == 1; s++) {
        double waves = (double)((blocks * s + slots - 1) / slots) / s;
        double extra = s > 1 ? (s * slab + THIN_LAUNCH_BYTES) * blocks / (bytes * slots) : 0;
        if (waves + extra < best_cost * 0.97) {
            best = s;
            best_cost = waves + extra;
        }
    }
    return best;
}

/* `slots`: the blocks the GPU holds at once (SMs x blocks per SM); the
 * slices of K are as many as fill them once, never a wave and a part (a
 * grid of 2.2 waves runs 3); a grid that fills them more than half, as
 * thin_balance says. */
template <typename E>
static struct thin_plan thin_plan_for(int m, int n, int k, int batch, int sm_count, long slots)
{
    struct thin_plan pl;
    int min_k, grain;
    pl.by_rows = m > THIN_MOST;
    pl.bound = thin_bound(pl.by_rows ? n : m);
    const int Q = thin_cols<E>(pl.bound);
    if (pl.by_rows) {
        pl.tx = 0;
        pl.blocks = ceil_div(m, THIN_ROWS);
        min_k = THIN_MIN_K;
        grain = thin_n_kc<E>(pl.bound);
    } else {
        int groups = ceil_div(n, Q);
        pl.tx = 1;
        while (pl.tx < groups && pl.tx < THIN_THREADS)
            pl.tx *= 2;
        /* Fewer columns a block, more k-lanes, while the blocks along N
         * are too few to give every SM one and K too short for slices
         * to make up for it: each thread's chain of dependent loads along
         * K is what a small grid waits on.  Where slices can fill the GPU
         * they are better: the k-lanes of a block read A at different k,
         * so its broadcasts no longer hit in L1 (f64, 16 x 8192 x 32768
         * on 8 k-lanes: 28% of cuBLAS, DRAM 24% busy). */
        long most_slices = k / THIN_MIN_K;
        while (pl.tx > 32 && (long)ceil_div(groups, pl.tx) * batch < sm_count &&
               (long)ceil_div(groups, pl.tx) * batch * most_slices < 2L * sm_count)
            pl.tx /= 2;
        pl.blocks = ceil_div(groups, pl.tx);
        int lane_k = THIN_LANE_K * (THIN_THREADS / pl.tx);
        min_k = lane_k > THIN_MIN_K ? lane_k : THIN_MIN_K;
        grain = Q;
    }
    long blocks = (long)pl.blocks * batch;
    long want = slots / blocks;
    long most = k / min_k;
    /* N path, a grid that slices of THIN_MIN_K values would leave short
     * of the GPU: slices down to one chunk.  Such a grid waits on each
     * thread's row, K x N multiply-adds in a row, and its workspace is
     * small (188 x 32 x 2971 float, one block of rows: 31 slices of 96
     * values took 22 us, NVIDIA H100, 2026-11-26, ncu).  Not below
     * THIN_MIN_K: a K that short is over before the reduction's launch
     * would pay (14135 x 12 x 39 float in 2 slices: 66% of cuBLAS where
     * one slice ran 86%, NVIDIA H200, 2026-11-26). */
    if (pl.by_rows && blocks * most < slots && k >= THIN_MIN_K)
        most = (k + grain - 1) / grain;
    /* M path, a grid that the slices above leave short of one block an
     * SM: slices down to one step of every k-lane (and THIN_MIN_K_SHORT
     * values), up to a block an SM.  Such a grid waits on each thread's
     * chain of steps along K, a step's loads at a time: float64 11 x 747
     * x 480 ran 3 slices of 5 steps a thread on 36 blocks in 12.6 us, and
     * 11 slices in 7.0, where cuBLAS took 8.3 with its reduction; float16
     * 24 x 2 x 22857 5 slices in 25.4 us, 22 in 11.8 (NVIDIA H200,
     * 2026-11-26, ncu).  Not below THIN_SHORT_GRID_K: there the chain is
     * short and the reduction's launch costs more than it saves (float
     * 3 x 114 x 79 went from 118% of cuBLAS to 92% in 2 slices, and
     * f64_thin's calibrated floor over its tiny shapes from 7.5 us to
     * 9.9; H200 and H100, sweeps and calibrations of 2026-11-26). */
    if (!pl.by_rows && blocks * most < sm_count && k >= THIN_SHORT_GRID_K) {
        long step = (long)Q * (THIN_THREADS / pl.tx);
        long short_k = step > (long)THIN_MIN_K_SHORT ? step : (long)THIN_MIN_K_SHORT;
        long fill = (sm_count + blocks - 1) / blocks;
        long finer = k / short_k < fill ? k / short_k : fill;
        if (finer > most)
            most = finer;
    }
    if (want > most)
        want = most;
    if (want > THIN_MOST_SLICES)
        want = THIN_MOST_SLICES;
    if (want < 1)
        want = 1;
    if (blocks * 2 > slots)
        want = thin_balance<E>(m, n, k, blocks, most, slots);
    long slice = (k + want - 1) / want;
    slice = (slice + grain - 1) / grain * grain;
    pl.slice = (int)(slice < 1 ? grain : slice);
    pl.slices = k > 0 ? (int)((k + pl.slice - 1) / pl.slice) : 1;
    return pl;
}

/* How a launch loads its operands: whole units (THIN_WHOLE: Q values for
 * the M path, U of A for the N path), pairs of values, or single ones. */
enum thin_width { THIN_SINGLE, THIN_PAIRS, THIN_WHOLE };

/* The kernel for a path, a bound and a width. */
template <typename E, int NB, bool JOIN>
static const void *thin_kernel_bound(bool by_rows, enum thin_width w)
{
    constexpr int Q = thin_cols<E>(NB), U = thin_shape<E>::U;
    if (by_rows)
        return w == THIN_WHOLE   ? (const void *)thin_n_kernel<E, NB, U, JOIN>
               : w == THIN_PAIRS ? (const void *)thin_n_kernel<E, NB, (U > 2 ? 2 : U), JOIN>
                                 : (const void *)thin_n_kernel<E, NB, 1, JOIN>;
    return w == THIN_WHOLE   ? (const void *)thin_m_kernel<E, NB, Q, JOIN>
           : w == THIN_PAIRS ? (const void *)thin_m_kernel<E, NB, (Q > 2 ? 2 : Q), JOIN>
                             : (const void *)thin_m_kernel<E, NB, 1, JOIN>;
}

/* The kernel for a bound and width; `join`: the one that adds its own
 * slices (join.cuh), built apart so that the kernels that do not keep
 * the code they were tuned as. */
template <typename E>
static const void *thin_kernel(bool by_rows, int bound, enum thin_width w, bool join = false)
{
    switch (bound) {
    case 4: return join ? thin_kernel_bound<E, 4, true>(by_rows, w)
                        : thin_kernel_bound<E, 4, false>(by_rows, w);
    case 8: return join ? thin_kernel_bound<E, 8, true>(by_rows, w)
                        : thin_kernel_bound<E, 8, false>(by_rows, w);
    case 16: return join ? thin_kernel_bound<E, 16, true>(by_rows, w)
                         : thin_kernel_bound<E, 16, false>(by_rows, w);
    case 24: return join ? thin_kernel_bound<E, 24, true>(by_rows, w)
                         : thin_kernel_bound<E, 24, false>(by_rows, w);
    default: return join ? thin_kernel_bound<E, 32, true>(by_rows, w)
                         : thin_kernel_bound<E, 32, false>(by_rows, w);
    }
}

/* The threads of a block of that kernel. */
template <typename E>
static int thin_threads(bool by_rows, int bound)
{
    return by_rows ? thin_n_threads<E>(bound) : THIN_THREADS;
}

/* The blocks of that kernel the device holds at once: its occupancy
 * (registers and shared memory decide it: 2 blocks an SM for the widest
 * bounds, more for the narrow ones) times the SMs. */
template <typename E>
static long thin_slots(bool by_rows, int bound, enum thin_width w, int sm_count)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, thin_kernel<E>(by_rows, bound, w),
                                                      thin_threads<E>(by_rows, bound),
                                                      0) != cudaSuccess ||
        per_sm < 1)
        per_sm = 2;
    return (long)per_sm * sm_count;
}

/* Products a type's kernels take: one side at most THIN_MOST, and for
 * double the rows' side (M, with N beyond THIN_MOST) at most
 * THIN_MOST_F64_M: beyond 24 rows a thread owns one column (thin_cols), so
 * each broadcast of A feeds one multiply-add, and 32 x 4096 x 100000 ran
 * at 19% of DGEMM where f64_dmma runs it at 66% (NVIDIA H100, 2026-11-26,
 * `gemmcli bench --sizes 32x4096x100000 --dtype f64`). */
template <typename E>
static inline int thin_check(const char *name, const struct gemm_problem *p, char *why,
                             size_t n)
{
    if (p->m > THIN_MOST && p->n > THIN_MOST) {
        snprintf(why, n, "%s computes products with M <= %d or N <= %d (the thin side's "
                 "sums are kept in registers); this product is %lld x %lld", name, THIN_MOST,
                 THIN_MOST, (long long)p->m, (long long)p->n);
        return 0;
    }
    if (sizeof(typename E::acc) == 8 && p->n > THIN_MOST && p->m > THIN_MOST_F64_M) {
        snprintf(why, n, "%s computes products with M <= %d or N <= %d (beyond %d rows a "
                 "thread holds one column's sums, and the wide side is compute-bound); this "
                 "product is %lld x %lld", name, THIN_MOST_F64_M, THIN_MOST, THIN_MOST_F64_M,
                 (long long)p->m, (long long)p->n);
        return 0;
    }
    return 1;
}

/* The workspace's upper bound: the slice count grows with the SM count,
 * so it is taken for 256 SMs, more than any GPU has. */
template <typename E>
static size_t thin_workspace(const struct gemm_problem *p)
{
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1 ||
        (p->m > THIN_MOST && p->n > THIN_MOST) || p->k > 0x7fffffff)
        return 0;
    int batch = p->batch < THIN_MOST_Z ? (int)p->batch : THIN_MOST_Z;
    /* 256 SMs holding 8 blocks each: more than any GPU has. */
    struct thin_plan pl = thin_plan_for<E>((int)p->m, (int)p->n, (int)p->k, batch, 256, 256 * 8);
    /* (or thin_balance's, on a GPU whose slots the blocks fill) */
    long slices = pl.slices;
    if (slices < THIN_BALANCE_MOST)
        slices = p->k < (long)THIN_BALANCE_MOST ? (long)p->k : (long)THIN_BALANCE_MOST;
    return slices > 1 ? (size_t)slices * batch * p->m * p->n * sizeof(typename E::acc) : 0;
}

/* How a launch of plan pl joins its slices (join.cuh): each block's
 * region of C a ticket, all M rows of its columns (M path) or its rows'
 * N columns (N path). */
template <typename E>
static struct join_plan thin_join_plan(const struct thin_plan &pl, long long m, long long n,
                                       int batch)
{
    long long items;
    if (pl.by_rows) {
        items = (m < (long long)THIN_ROWS ? m : (long long)THIN_ROWS) * n;
    } else {
        long long cols = (long long)thin_cols<E>(pl.bound) * pl.tx;
        items = m * (cols < n ? cols : n);
    }
    return join_plan_of((long long)pl.blocks * batch, pl.slices, items,
                        thin_threads<E>(pl.by_rows, pl.bound), SLAB_TICKETS);
}

/* The slices a launch on sm_count SMs cuts p into, and in *joined whether
 * that launch adds them itself (the first product of a stack's launch;
 * the blocks an SM holds taken as 2, the widest kernels' count: auto's
 * model asks, without a device at hand).  *busy: the share of the
 * launch's multiply-adds that are p's.  Every thread computes the thin
 * side's bound (rows past M repeat the last one; the N path's columns
 * past N are zeros), and the blocks cover 256 rows (N path) or Q x tx
 * columns (M path), their threads past the product idle: a block's time
 * is its threads' chain along K whatever their number.  float64 43 x 22 x
 * 26296 takes one block of 256 rows a slice, 43 of them the product's,
 * each thread 24 columns: it ran at 1.33 TFLOP/s (`f64_dmma_tiny` at 2.48)
 * where the N path's rate, fitted at 32768 x 32 x 1024, is 11.0 (NVIDIA
 * H100, 2026-11-27, `gemmcli bench`). */
template <typename E>
static int64_t thin_slices(const struct gemm_problem *p, int sm_count, int *joined,
                           double *busy)
{
    *joined = 0;
    *busy = 1;
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1 || sm_count < 1 ||
        (p->m > THIN_MOST && p->n > THIN_MOST) || p->k > 0x7fffffff)
        return 1;
    int batch = p->batch < THIN_MOST_Z ? (int)p->batch : THIN_MOST_Z;
    struct thin_plan pl =
        thin_plan_for<E>((int)p->m, (int)p->n, (int)p->k, batch, sm_count, 2L * sm_count);
    *joined = pl.slices > 1 && thin_join_plan<E>(pl, p->m, p->n, batch).group > 0;
    if (pl.by_rows)
        *busy = (double)p->m / ((double)pl.blocks * THIN_ROWS) * (double)p->n / pl.bound;
    else
        *busy = (double)p->m / pl.bound * (double)p->n /
                ((double)pl.blocks * thin_cols<E>(pl.bound) * pl.tx);
    return pl.slices;
}

static inline bool thin_aligned(const void *ptr, size_t bytes)
{
    return (uintptr_t)ptr % bytes == 0;
}

/* Launches a sliced memory-bound kernel (thin's, mma_thin's) over `grid`
 * (gridDim.y its slices of K) with `args`, whose out, tickets and group
 * it sets: with one slice the kernel writes C; with more, the slices'
 * slabs come from the stream's kept space (slab_space.h), with tickets
 * where jp joins them in the launch (kernel_of(true)), else from the
 * pool, and a second launch adds them (gemv_reduce) with alpha and beta.
 * C's products are `per` values each, stride_c apart. */
template <typename T, typename Args, typename KernelOf>
static cudaError_t thin_launch_sliced(Args &args, KernelOf kernel_of, dim3 grid, int threads,
                                      const struct join_plan &jp, T *c, long long per,
                                      long long stride_c, T alpha, T beta,
                                      const struct launch_env *env)
{
    const int slices = (int)grid.y, batch = (int)grid.z;
    cudaError_t err;
    T *partial = NULL;
    bool pooled = false;
    args.tickets = NULL;
    args.group = 0;
    if (slices > 1) {
        const size_t bytes = (size_t)slices * batch * per * sizeof(T);
        struct slab_space space = { NULL, NULL };
        if (jp.group) {
            err = slab_space_get(env->stream, bytes, (size_t)jp.tickets, &space);
            if (err != cudaSuccess)
                return err;
        }
        if (space.tickets) {
            args.tickets = space.tickets;
            args.group = jp.group;
        }
        partial = (T *)space.slabs;
        pooled = !partial;
        if (pooled) {
            err = cudaMallocAsync((void **)&partial, bytes, env->stream);
            if (err != cudaSuccess)
                return err;
        }
        args.out = partial;
    } else {
        args.out = c;
    }
    void *params[] = { &args };
    err = cudaLaunchKernel(kernel_of(args.group > 0), grid, threads, params, 0, env->stream);
    cudaError_t last = launch_result();   /* and clears it */
    if (err == cudaSuccess)
        err = last;
    if (err == cudaSuccess && partial && !args.group)
        err = gemv_reduce<T>(c, partial, per * batch, slices, per, stride_c, alpha, beta,
                             env->stream);
    if (pooled) {
        cudaError_t free_err = cudaFreeAsync(partial, env->stream);
        if (err == cudaSuccess)
            err = free_err;
    }
    return err;
}

/* Runs a family's problem struct (sgemm_problem, dgemm_problem,
 * hgemm_problem: the same fields, dense rows). */
template <typename E, typename P>
static cudaError_t thin_run_problem(const P *p, const struct launch_env *env)
{
    typedef typename E::acc T;
    constexpr int U = thin_shape<E>::U;
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return cudaSuccess;
    int sm_count = env->sm_count > 0 ? env->sm_count : 132;
    long long per = (long long)p->m * p->n;
    for (int b0 = 0; b0 < p->batch; b0 += THIN_MOST_Z) {
        int batch = p->batch - b0 < THIN_MOST_Z ? p->batch - b0 : THIN_MOST_Z;
        long long stride_c = batch > 1 ? p->stride_c : per;
        T *c = p->c + (long long)b0 * p->stride_c;
        T alpha = (T)p->alpha, beta = (T)p->beta;
        cudaError_t err;
        if (p->k == 0) {   /* C = beta C: an empty sum, 0 whatever alpha is */
            err = gemv_reduce<T>(c, NULL, per * batch, 0, per, stride_c, T(0), beta,
                                 env->stream);
            if (err != cudaSuccess)
                return err;
            continue;
        }
        bool by_rows = p->m > THIN_MOST;
        int bound = thin_bound(by_rows ? p->n : p->m);
        const int Q = thin_cols<E>(bound);
        /* Wide loads: rows of whole units from aligned starts in every
         * product (Q values for the M path, U of A for the N path), else
         * pairs of values where every row holds whole pairs (16-bit rows
         * of an even length: 4-byte loads, not 2-byte ones), else single
         * values. */
        size_t es = sizeof(typename E::elem);
        bool stack = batch > 1;
        const typename E::elem *a = p->a + (long long)b0 * p->stride_a;
        const typename E::elem *b = p->b + (long long)b0 * p->stride_b;
        auto fits = [&](int w) {
            bool ok = p->k % w == 0 && thin_aligned(a, w * es) && (!stack || p->stride_a % w == 0);
            if (!by_rows)
                ok = ok && p->n % w == 0 && thin_aligned(b, w * es) &&
                     (!stack || p->stride_b % w == 0);
            return ok;
        };
        enum thin_width width = fits(by_rows ? U : Q) ? THIN_WHOLE
                                : fits(2)            ? THIN_PAIRS
                                                     : THIN_SINGLE;
        struct thin_plan pl = thin_plan_for<E>(p->m, p->n, p->k, batch, sm_count,
                                               thin_slots<E>(by_rows, bound, width, sm_count));
        thin_args<E> args;
        args.m = p->m;
        args.n = p->n;
        args.k = p->k;
        args.slice = pl.slice;
        args.tx = pl.tx;
        args.batch = batch;
        args.a = a;
        args.b = b;
        args.sa = p->stride_a;
        args.sb = p->stride_b;
        args.sc = p->stride_c;
        args.alpha = alpha;
        args.beta = beta;
        args.c = c;
        dim3 grid((unsigned)pl.blocks, (unsigned)pl.slices, (unsigned)batch);
        const int threads = thin_threads<E>(pl.by_rows, pl.bound);
        err = thin_launch_sliced<T>(
            args, [&](bool join) { return thin_kernel<E>(pl.by_rows, pl.bound, width, join); },
            grid, threads, thin_join_plan<E>(pl, p->m, p->n, batch), c, per, stride_c, alpha,
            beta, env);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

/* The resources of the widest M-path kernel. */
template <typename E>
static cudaError_t thin_attr(struct kernel_attr *out)
{
    return kernel_attr_of(thin_m_kernel<E, 32, thin_cols<E>(32), false>, THIN_THREADS, 0, out);
}

#endif
