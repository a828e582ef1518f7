/* The multi-stage cp.async SGEMM that the top of the ladder is built from
 * (sgemm_14_cp_async.cu, sgemm_15_swizzle.cu, sgemm_16_splitk.cu).
 *
 * Block tile BM x BN = (WARPS_M * 32) x (WARPS_N * 64), BK deep, STAGES
 * tiles in flight.  Each warp owns a 32x64 piece of C, each lane (z-order
 * over 4x8) a 2x2 grid of 4x4 results, 16 rows and 32 columns apart: per
 * step of k, 4 LDS.128 feed 64 FFMA, and every LDS.128 of a warp touches at
 * most 8 adjacent float4s (one pass, no bank conflict).  The fragments are
 * double-buffered: step k + 1's loads go out before step k's FFMAs, and a
 * tile's first step is loaded before the next tile's copies are issued.
 *
 * Global to shared goes through cp.async, which needs no registers and
 * no thread waiting for it: tile t + STAGES - 1 is in flight while tile t
 * is multiplied.  B is copied in 16-byte pieces (4-byte pieces where its
 * rows are not 16-byte aligned).  A is copied element by element, which
 * lets it land transposed (as[k][m]) with no register round trip; rows of
 * as are padded to BM + 4 floats, so that the 32 four-byte copies of a
 * warp (4 rows x 8 values of k) hit 32 different banks.  Elements outside A
 * or B are zero-filled by the copy itself (src-size 0: nothing is read from
 * the address), so the inner loop has no bounds checks.
 *
 * A launch covers the K range [kbeg, kend) of blockIdx.z; with split-K the
 * raw sums go to a workspace and a second kernel applies alpha and beta.
 * A stack of products takes one launch (one per 65535 products): product
 * blockIdx.y, its matrices moved by the strides in the kernel.  That is a
 * separate instantiation (BATCHED), so a single product runs the same
 * instructions as it would without stacks; it fits the same 128
 * registers, no spills.
 *
 * The software pipelining of "Efficient GEMM in CUDA" (CUTLASS) on
 * cp.async.  Run through its stages, e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel cp_async --verify --repeat 20 */
#ifndef GC_SGEMM_PIPELINE_CUH
#define GC_SGEMM_PIPELINE_CUH

#include "kernels/sgemm/sgemm_tile.cuh"

struct pipe_args {
    struct sgemm_problem p;
    int k_per_split;          /* multiple of BK; p.k when not split */
    float *partial;           /* splits x batch slabs of m x n raw sums, or NULL */
};

/* The products of p's stack; a batch of 0 or less is one product. */
static inline int pipe_batch(const struct sgemm_problem *p)
{
    return p->batch > 1 ? p->batch : 1;
}

/* Product z of p's stack: p with its matrices moved by the strides. */
static __device__ __forceinline__ struct sgemm_problem pipe_product(const struct sgemm_problem &p,
                                                                    int z)
{
    struct sgemm_problem q = p;
    q.a += (long long)z * p.stride_a;
    q.b += (long long)z * p.stride_b;
    q.c += (long long)z * p.stride_c;
    return q;
}

static __device__ __forceinline__ unsigned pipe_smem_addr(const void *ptr)
{
    return (unsigned)__cvta_generic_to_shared(ptr);
}

static __device__ __forceinline__ void pipe_copy4(float *dst, const float *src, bool ok)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(pipe_smem_addr(dst)),
                 "l"(src), "r"(ok ? 4 : 0));
}

/* Two 4-byte copies in one statement, their addresses live at once.  Short
 * of registers, ptxas may run a tile's copies of A through one register
 * pair, each address computed over the one the copy before has yet to
 * read, and each waits for it (ncu: most of splitk_128x64's stalls on a
 * long scoreboard sat on those address updates, NVIDIA H100,
 * 2026-11-27).  A tile whose loader takes them (C::a_pairs) copies A two
 * rows at a time. */
static __device__ __forceinline__ void pipe_copy4x2(float *dst, int dst_step, const float *src,
                                                    size_t src_step, unsigned ok)
{
    asm volatile("cp.async.ca.shared.global [%0], [%2], 4, %4;\n"
                 "cp.async.ca.shared.global [%1], [%3], 4, %5;\n" ::"r"(pipe_smem_addr(dst)),
                 "r"(pipe_smem_addr(dst + dst_step)), "l"(src), "l"(src + src_step),
                 "r"(ok & 1 ? 4 : 0), "r"(ok & 2 ? 4 : 0));
}

static __device__ __forceinline__ void pipe_copy16(float *dst, const float *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(pipe_smem_addr(dst)),
                 "l"(src), "r"(ok ? 16 : 0));
}

static __device__ __forceinline__ void pipe_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void pipe_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

template <int WARPS_M, int WARPS_N, int BK, int STAGES>
struct pipe_cfg {
    static constexpr int bm = WARPS_M * 32, bn = WARPS_N * 64, bk = BK, stages = STAGES;
    static constexpr int threads = WARPS_M * WARPS_N * 32, warps = WARPS_M * WARPS_N;
    /* 512 threads per SM at up to 128 registers each. */
    static constexpr int min_blocks = 512 / threads;
    /* A's copies one at a time (pipe_copy4x2: two at a time). */
    static constexpr bool a_pairs = false;
    /* A is stored as[k][m] with rows of bm + 4 floats: the 32 four-byte
     * copies of a warp (4 rows x 8 values of k) then hit 32 banks. */
    static constexpr int a_ld = bm + 4;
    static constexpr int a_floats = BK * a_ld, b_floats = BK * bn;
    static constexpr size_t smem = (size_t)STAGES * (a_floats + b_floats) * sizeof(float);
    /* A: warp w copies k in [(w % (BK/8)) * 8, +8) of rows 4 apart, then
     * every a_row_step rows further. */
    static constexpr int a_copies = bm * BK / threads;
    static constexpr int a_row_step = 32 * warps / BK;
    /* B: a thread copies one column (group) every b_k_step rows of k, in
     * b_copies rows; with fewer threads than the tile has columns (the 64
     * threads of a 32 x 128 tile, 4-byte copies), b_cols4 columns a row,
     * `threads` apart. */
    static constexpr int b_copies16 = BK * bn / 4 / threads;
    static constexpr int b_k_step16 = threads / (bn / 4);
    static constexpr int b_cols4 = threads >= bn ? 1 : bn / threads;
    static constexpr int b_copies4 = BK * bn / threads / b_cols4;
    static constexpr int b_k_step4 = threads >= bn ? threads / bn : 1;
    static_assert(BK % 8 == 0 && warps % (BK / 8) == 0, "each warp copies one group of 8 values of k of A");
    static_assert(bm * BK % threads == 0, "A copies split evenly over threads");
    static_assert((threads % bn == 0 || bn % threads == 0) && threads % (bn / 4) == 0 &&
                      BK * bn % threads == 0 && b_cols4 <= 32,
                  "B copies split evenly over threads");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
};

/* One thread's share of the copies of each tile, walked tile by tile. */
template <class C, bool VEC>
struct pipe_loader {
    const float *a, *b;       /* this thread's first element of the next tile */
    size_t a_step, b_step;    /* between its successive copies */
    unsigned a_rows_ok;       /* bit l: the l-th row of A it copies exists */
    int a_dst, b_dst;         /* offsets in a stage buffer */
    int a_k, b_k;             /* k of its first element in the next tile */
    int kend;
    unsigned n_bcol_ok;       /* bit j: its j-th column of B (of b_cols4) exists */

    __device__ __forceinline__ pipe_loader(const struct sgemm_problem &p, int bm0, int bn0,
                                           int kbeg, int kend_)
    {
        int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
        int a_row = warp / (C::bk / 8) * 4 + lane / 8;
        int a_kk = warp % (C::bk / 8) * 8 + lane % 8;
        a = p.a + (size_t)(bm0 + a_row) * p.k + kbeg + a_kk;
        a_step = (size_t)C::a_row_step * p.k;
        a_rows_ok = 0;
#pragma unroll
        for (int l = 0; l < C::a_copies; l++)
            a_rows_ok |= (unsigned)(bm0 + a_row + l * C::a_row_step < p.m) << l;
        a_dst = a_kk * C::a_ld + a_row;
        a_k = kbeg + a_kk;
        int b_kk = VEC ? tid / (C::bn / 4) : tid / C::bn;
        int b_col = VEC ? tid % (C::bn / 4) * 4 : tid % C::bn;
        b = p.b + (size_t)(kbeg + b_kk) * p.n + bn0 + b_col;
        b_step = (size_t)(VEC ? C::b_k_step16 : C::b_k_step4) * p.n;
        b_dst = b_kk * C::bn + b_col;
        b_k = kbeg + b_kk;
        kend = kend_;
        n_bcol_ok = 0;
#pragma unroll
        for (int j = 0; j < (VEC ? 1 : C::b_cols4); j++)
            n_bcol_ok |= (unsigned)(bn0 + b_col + j * C::threads < p.n) << j;
    }

    /* Issues the copies of the next tile into stage buffers as, bs. */
    __device__ __forceinline__ void load(float *as, float *bs, size_t b_tile_step)
    {
        bool k_ok = a_k < kend;
        if constexpr (C::a_pairs) {
            static_assert(C::a_copies % 2 == 0, "A's copies go two at a time");
#pragma unroll
            for (int l = 0; l < C::a_copies; l += 2)
                pipe_copy4x2(as + a_dst + l * C::a_row_step, C::a_row_step, a + l * a_step, a_step,
                             k_ok ? a_rows_ok >> l & 3 : 0);
        } else {
#pragma unroll
            for (int l = 0; l < C::a_copies; l++)
                pipe_copy4(as + a_dst + l * C::a_row_step, a + l * a_step,
                           k_ok && (a_rows_ok >> l & 1));
        }
        if (VEC) {
#pragma unroll
            for (int l = 0; l < C::b_copies16; l++)
                pipe_copy16(bs + b_dst + l * C::b_k_step16 * C::bn, b + l * b_step,
                            (n_bcol_ok & 1) && b_k + l * C::b_k_step16 < kend);
        } else {
#pragma unroll
            for (int l = 0; l < C::b_copies4; l++)
#pragma unroll
                for (int j = 0; j < C::b_cols4; j++)
                    pipe_copy4(bs + b_dst + l * C::b_k_step4 * C::bn + j * C::threads,
                               b + l * b_step + j * C::threads,
                               (n_bcol_ok >> j & 1) && b_k + l * C::b_k_step4 < kend);
        }
        a += C::bk;
        a_k += C::bk;
        b += b_tile_step;
        b_k += C::bk;
    }
};

/* Where block `id` of a grid of tiles_m x tiles_n tiles works.  With group
 * > 0, consecutive blocks walk down a band of `group` tile rows before
 * moving right, so that the blocks resident at one time share the A rows
 * and B columns they read in L2. */
static __device__ __forceinline__ void pipe_tile_of(int id, int tiles_m, int tiles_n, int group,
                                                    int *tm, int *tn)
{
    if (group <= 0) {
        *tm = id / tiles_n;
        *tn = id % tiles_n;
        return;
    }
    int per_band = group * tiles_n;
    int first = id / per_band * group;
    int rows = min(tiles_m - first, group);
    int in_band = id % per_band;
    *tm = first + in_band % rows;
    *tn = in_band / rows;
}

/* The block's tile of C, staged in shared memory at `cs` (rows of C::bn
 * floats), to p.c at (bm0, bn0): alpha * acc + beta * C, inside C only,
 * a row at a time (tile_store_rows in kernels/common.cuh), where rows of C
 * cannot take float4 stores (N not a multiple of 4). */
template <class C>
static __device__ __forceinline__ void pipe_store_rows(const struct sgemm_problem &p,
                                                       const float *cs, int bm0, int bn0)
{
    static_assert((size_t)C::bm * C::bn * sizeof(float) <= C::smem,
                  "the ring holds the tile of C");
    tile_store_rows<float, C::bm, C::bn, C::warps>(cs, p.c + (size_t)bm0 * p.n + bn0, p.n,
                                                   p.m - bm0, p.n - bn0, p.alpha, p.beta);
}

/* A lane's 8 values of A and 8 of B for step k of a stage's tile. */
template <class C>
static __device__ __forceinline__ void pipe_fragments(const float *as, const float *bs, int k,
                                                      int m0, int n0, float *ra, float *rb)
{
    *reinterpret_cast<float4 *>(&ra[0]) = *reinterpret_cast<const float4 *>(&as[k * C::a_ld + m0]);
    *reinterpret_cast<float4 *>(&ra[4]) =
        *reinterpret_cast<const float4 *>(&as[k * C::a_ld + m0 + 16]);
    *reinterpret_cast<float4 *>(&rb[0]) = *reinterpret_cast<const float4 *>(&bs[k * C::bn + n0]);
    *reinterpret_cast<float4 *>(&rb[4]) =
        *reinterpret_cast<const float4 *>(&bs[k * C::bn + n0 + 32]);
}

template <class C, bool VEC, int GROUP, bool BATCHED>
static __global__ void __launch_bounds__(C::threads, C::min_blocks) sgemm_pipe_kernel(const struct pipe_args args)
{
    extern __shared__ __align__(16) float pipe_smem[];
    const struct sgemm_problem p = BATCHED ? pipe_product(args.p, blockIdx.y) : args.p;
    int tile_m, tile_n;
    pipe_tile_of(blockIdx.x, ceil_div(p.m, C::bm), ceil_div(p.n, C::bn), GROUP, &tile_m, &tile_n);
    int bm0 = tile_m * C::bm, bn0 = tile_n * C::bn;
    int kbeg = blockIdx.z * args.k_per_split;
    int kend = min(p.k, kbeg + args.k_per_split);
    int tiles = ceil_div(kend - kbeg, C::bk);

    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int tm = ((lane >> 1) & 1) | ((lane >> 2) & 2);
    int tn = (lane & 1) | ((lane >> 1) & 2) | ((lane >> 2) & 4);
    int m0 = warp / (C::bn / 64) * 32 + tm * 4;
    int n0 = (warp % (C::bn / 64)) * 64 + tn * 4;
    float *as0 = pipe_smem;
    float *bs0 = pipe_smem + C::stages * C::a_floats;
    float acc[8][8] = {};

    pipe_loader<C, VEC> loader(p, bm0, bn0, kbeg, kend);
    size_t b_tile_step = (size_t)C::bk * p.n;
#pragma unroll
    for (int s = 0; s < C::stages - 1; s++) {
        if (s < tiles)
            loader.load(as0 + s * C::a_floats, bs0 + s * C::b_floats, b_tile_step);
        pipe_commit();
    }
    for (int t = 0; t < tiles; t++) {
        pipe_wait<C::stages - 2>();
        __syncthreads();
        const float *as = as0 + (t % C::stages) * C::a_floats;
        const float *bs = bs0 + (t % C::stages) * C::b_floats;
        /* (the first step's fragments before the next tile's copies, so
         * that no warp starts a tile waiting on shared memory behind its
         * own copies: cp_async 4096^3 3.03 -> 2.93 ms, swizzle 4096^3 3.05
         * -> 2.88, `gemmcli mul --kernel K --repeat 20`, NVIDIA H100,
         * 2026-11-27) */
        float ra[2][8], rb[2][8];
        pipe_fragments<C>(as, bs, 0, m0, n0, ra[0], rb[0]);
        int next = t + C::stages - 1;
        if (next < tiles) {
            int s = next % C::stages;
            loader.load(as0 + s * C::a_floats, bs0 + s * C::b_floats, b_tile_step);
        }
        pipe_commit();
#pragma unroll
        for (int k = 0; k < C::bk; k++) {
            if (k + 1 < C::bk)
                pipe_fragments<C>(as, bs, k + 1, m0, n0, ra[(k + 1) & 1], rb[(k + 1) & 1]);
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] += ra[k & 1][i] * rb[k & 1][j];
        }
    }
    pipe_wait<0>();

    struct sgemm_problem out = p;
    if (args.partial) {
        /* Slab (split, product), splits outermost. */
        size_t slab = BATCHED ? (size_t)blockIdx.z * gridDim.y + blockIdx.y : blockIdx.z;
        out.c = args.partial + slab * p.m * p.n;
        out.alpha = 1.0f;
        out.beta = 0.0f;
    }
    if constexpr (!VEC) {
        /* Every warp's last tile is read and every copy has landed: the
         * ring holds the block's tile of C now. */
        __syncthreads();
        float *cs = pipe_smem;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            int row = m0 + (i / 4) * 16 + i % 4;
            *reinterpret_cast<float4 *>(&cs[row * C::bn + n0]) =
                make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
            *reinterpret_cast<float4 *>(&cs[row * C::bn + n0 + 32]) =
                make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
        }
        __syncthreads();
        pipe_store_rows<C>(out, cs, bm0, bn0);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            int row = bm0 + m0 + (i / 4) * 16 + i % 4;
            sgemm_store4<VEC>(out, row, bn0 + n0, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
            sgemm_store4<VEC>(out, row, bn0 + n0 + 32, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
        }
    }
}

/* B and C rows may move as float4 (A is copied element by element), in
 * every product of the stack. */
static inline bool pipe_vec_ok(const struct sgemm_problem *p)
{
    long long strides = p->batch > 1 ? p->stride_b | p->stride_c : 0;
    return p->n % 4 == 0 && ((uintptr_t)p->b | (uintptr_t)p->c) % 16 == 0 && strides % 4 == 0;
}

enum { PIPE_MAX_BATCH = 65535 };   /* products per launch: gridDim.y */

template <class C, int GROUP, bool VEC, bool BATCHED>
static cudaError_t pipe_launch_one(const struct pipe_args &args, dim3 grid, cudaStream_t stream)
{
    cudaError_t err = cudaFuncSetAttribute(sgemm_pipe_kernel<C, VEC, GROUP, BATCHED>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
    if (err != cudaSuccess)
        return err;
    sgemm_pipe_kernel<C, VEC, GROUP, BATCHED><<<grid, C::threads, C::smem, stream>>>(args);
    return launch_result();
}

/* Splits over blockIdx.z, K split into runs of k_per_split; partial, when
 * not NULL, holds splits x batch slabs of m x n (batch <= PIPE_MAX_BATCH,
 * one launch). */
template <class C, int GROUP>
static cudaError_t pipe_launch(const struct sgemm_problem *p, const struct launch_env *env,
                               int splits, int k_per_split, float *partial)
{
    long tiles = (long)ceil_div(p->m, C::bm) * ceil_div(p->n, C::bn);
    int batch = pipe_batch(p);
    if (tiles > 0x7fffffff || splits > 65535 || (partial && batch > PIPE_MAX_BATCH))
        return cudaErrorInvalidConfiguration;
    bool vec = pipe_vec_ok(p);
    if (batch == 1) {
        struct pipe_args args = { *p, k_per_split, partial };
        dim3 grid((unsigned)tiles, 1, splits);
        return vec ? pipe_launch_one<C, GROUP, true, false>(args, grid, env->stream)
                   : pipe_launch_one<C, GROUP, false, false>(args, grid, env->stream);
    }
    for (int first = 0, count; first < batch; first += count) {
        count = batch - first < (int)PIPE_MAX_BATCH ? batch - first : (int)PIPE_MAX_BATCH;
        struct pipe_args args = { *p, k_per_split, partial };
        args.p.a += (long long)first * p->stride_a;
        args.p.b += (long long)first * p->stride_b;
        args.p.c += (long long)first * p->stride_c;
        args.p.batch = count;
        dim3 grid((unsigned)tiles, count, splits);
        cudaError_t err = vec ? pipe_launch_one<C, GROUP, true, true>(args, grid, env->stream)
                              : pipe_launch_one<C, GROUP, false, true>(args, grid, env->stream);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

template <class C, int GROUP>
static cudaError_t pipe_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_pipe_kernel<C, true, GROUP, false>, C::threads, C::smem, out);
}

#endif
