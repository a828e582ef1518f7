/* What the persistent Hopper stages share (hgemm_06_persistent.cu,
 * hgemm_07_cluster_multicast.cu): their tile and ring, the walk of a
 * persistent block over the tiles of a stack, the consumers' main loop,
 * the epilogue that writes C through shared memory a row at a time, and
 * on the host the padded copies that let them take every shape, the
 * tensor maps and the launch over chunks of the stack.
 *
 * Every shape.  A tensor map needs 16-byte rows (lda and ldb multiples of
 * 8 values), a 16-byte aligned base and matrices a multiple of 16 bytes
 * apart.  An operand that misses any of these is copied first, stream
 * ordered, by one launch of hpad_kernel for the stack
 * (kernels/hgemm/hgemm_pad.cuh).  The pad columns hold zeros and are never
 * read: the map still says `cols`, so the copy engine fills zeros past
 * them as it does past any edge.  The buffer goes
 * back to the pool after the launch, on the same stream.  K = 0 makes no
 * map at all (a map has no dimension of 0): the blocks skip the ring and
 * write C = beta * C0 from accumulators that stay zero (alpha is set to 0
 * so that an infinite alpha cannot make 0 * inf).
 *
 * The walk.  A launch has `units` units of work, the products of the
 * stack one after the other, each product's in bands of `group` rows of
 * units (hopper_tile_of); a unit is one 128 x 256 tile (persistent) or a
 * pair of them stacked along M (cluster_multicast).  Persistent block
 * (or cluster) b of G takes units b, b + G, b + 2G, ...: the units in
 * flight at one time are G consecutive ones, the rows of A of one band
 * (two where the window straddles bands) and the columns of B the window
 * spans, which L2 holds.
 *
 * Persistent blocks as in Pranjal Shankhdhar, "Outperforming cuBLAS on
 * H100: a Worklog" and CUTLASS's Hopper tile schedulers.  Run through its
 * stages (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel persistent --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel cluster_multicast --verify --repeat 20 */
#ifndef GC_KERNELS_HGEMM_PERSISTENT_CUH
#define GC_KERNELS_HGEMM_PERSISTENT_CUH

#include <limits.h>
#include <string.h>

#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/hgemm/hgemm_pad.cuh"

/* The tile, the ring and the roles, as warp_specialized has them. */
struct persist_cfg {
    static constexpr int bm = 128, bn = 256, bk = HOPPER_BK, stages = 4, group = 8;
    static constexpr int consumers = 2, threads = 128 * (consumers + 1);
    static constexpr int producer_regs = 40, consumer_regs = 232;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES;
    static constexpr int b_bytes = bn / 64 * HOPPER_B_BLOCK;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr int ring_bytes = stages * stage_bytes;
    /* C's staging: two buffers of 64 x 32 floats per consumer, each row
     * one swizzled row of 128 bytes. */
    static constexpr int c_cols = 32;
    static constexpr int c_buf_bytes = 64 * c_cols * 4;
    static constexpr int c_bytes = consumers * 2 * c_buf_bytes;

    static_assert(bm == 64 * consumers, "each consumer warpgroup owns 64 rows");
    static_assert(bn == 256, "one wgmma m64n256 per consumer and step of k");
    static_assert(bm <= 256 && bk * 2 == HOPPER_ROW_BYTES, "A's tile is one box");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(128 * producer_regs + 128 * consumers * consumer_regs <= 65536 &&
                      producer_regs % 8 == 0 && consumer_regs % 8 == 0,
                  "setmaxnreg: multiples of 8 within the register file");
    static_assert(stages >= 2, "a ring needs two slots");
    static_assert(c_cols * 4 == HOPPER_ROW_BYTES, "a chunk's row is one swizzled row");
    static_assert(bn % (2 * c_cols) == 0, "an even number of chunks per tile");
    static_assert(c_buf_bytes % HOPPER_ATOM_BYTES == 0, "staging buffers 1024-aligned");
};

/* The kernels' arguments. */
struct persist_args {
    struct hopper_args h;     /* the problem (C, alpha, beta, strides), tiles_m, tiles_n,
                                 batch0 (the launch's first product), which
                                 operands have a matrix per product */
    int unit_rows;            /* rows of units per product: tiles_m, or its pairs */
    int units;                /* units of this launch: unit_rows x tiles_n per product */
    int k_tiles;              /* steps of 64 along K; 0 when K = 0 */
};

/* ---- device ---- */

/* Unit `id` of the launch: its product and its row and column of units. */
static __device__ __forceinline__ void persist_unit_of(const struct persist_args &args, int id,
                                                       int group, int *product, int *um,
                                                       int *tn)
{
    int per = args.unit_rows * args.h.tiles_n;
    int in_launch = id / per;
    hopper_tile_of(id - in_launch * per, args.unit_rows, args.h.tiles_n, group, um, tn);
    *product = args.h.batch0 + in_launch;
}

/* A position in the ring, kept by the producer and by each consumer over
 * all the steps of all their tiles: the slot, the parity of its current
 * use (the u-th fill of a slot is phase u of its full barrier and is
 * released as phase u of its empty one), and whether every slot has been
 * filled once (a refill waits for the previous use's release). */
struct persist_ring {
    int slot;
    uint32_t phase;
    bool lapped;
};

static __device__ __forceinline__ void persist_next(struct persist_ring &r)
{
    if (++r.slot == persist_cfg::stages) {
        r.slot = 0;
        r.phase ^= 1;
        r.lapped = true;
    }
}

/* A consumer warpgroup's product of one tile: its 64 rows (rows0..) of A's
 * slots times all of B's, over the k_tiles steps, into `acc` (zeroed
 * first: k_tiles may be 0).  Each step's slot is handed to `release`
 * (called by every thread of the warpgroup) once this warpgroup's wgmma
 * have finished reading it: a step's products are queued while the
 * step before finishes (wait_group 1), the last step's are waited for in
 * full, so no wgmma is pending between tiles. */
template <class T, class Release>
static __device__ __forceinline__ void persist_mma_tile(float (&acc)[128], uint32_t ring,
                                                        uint32_t full, struct persist_ring &r,
                                                        int k_tiles, int rows0, Release release)
{
    typedef persist_cfg C;
#pragma unroll
    for (int i = 0; i < 128; i++)
        acc[i] = 0.0f;
    int prev = 0;
    for (int t = 0; t < k_tiles; t++) {
        hopper_bar_wait(full + 8 * r.slot, r.phase);
        uint32_t sa = ring + r.slot * C::stage_bytes + rows0 * HOPPER_ROW_BYTES;
        uint32_t sb = ring + r.slot * C::stage_bytes + C::a_bytes;
        hopper_fence_regs(acc);
        hopper_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < C::bk / 16; kk++)
            hopper_mma_kn<C::bn, T>(acc, hopper_desc_k(sa + kk * 32),
                                    hopper_desc_mn(sb + kk * 16 * HOPPER_ROW_BYTES,
                                                   HOPPER_B_BLOCK),
                                    1);
        hopper_wgmma_commit();
        hopper_wgmma_wait<1>();
        hopper_fence_regs(acc);
        if (t > 0)
            release(prev);
        prev = r.slot;
        persist_next(r);
    }
    hopper_wgmma_wait<0>();
    hopper_fence_regs(acc);
    if (k_tiles > 0)
        release(prev);
}

/* A consumer's 64 x 256 result to C at `c` (its first element, rows `ldc`
 * apart): alpha * acc + beta * C, C read only when beta != 0, rows below
 * `rows` and columns below `cols` only.
 *
 * The accumulators' own layout puts a lane's two values of a row 8 bytes
 * in 32: stored from there, a warp's store fills whole 32-byte sectors
 * only where C's rows start on 8 bytes; elsewhere (N odd) the halves of
 * each sector arrive in separate stores, and the write ran at a quarter of
 * the aligned one (float16 3321 x 29927 x 53 against x 29928, H100,
 * 2026-11-26: 12.5 and 58.4 TFLOP/s).  Through shared memory a row at a
 * time, 32 floats a store, it ran at 31.5; with 64 at 37.9: each store's
 * first and last sectors are partial when rows are not aligned, and the
 * fewer the seams the faster.  So here each warp writes whole 256-column
 * rows of its 16: four passes of 4 rows, each staged by the 16 lanes that
 * hold them (rows g and g + 8 of the fragment: lanes 4r..4r+3 hold row r)
 * into the warp's 4 KB of the consumer's staging (4 rows of 1 KB, the
 * 32-byte groups of row r XORed by r, so that the 4 rows' stores and the
 * row reads below each spread over all banks), then written by all 32
 * lanes a row at a time, lane l at columns l, l + 32, ..., 1 KB
 * contiguous a row.  Only the tile's edges leave partial sectors.  The
 * rows a warp reads are the rows it wrote: a warp's barrier after the
 * writes and one after the reads are all a pass needs. */
template <class C>
static __device__ __forceinline__ void persist_store_rows(const float (&acc)[128], uint32_t stage,
                                                          int tid, float *c, long long ldc,
                                                          int rows, int cols, float alpha,
                                                          float beta)
{
    constexpr int row_bytes = C::bn * 4, groups = C::bn / 8, per_lane = C::bn / 32;
    static_assert(4 * 4 * row_bytes == 2 * C::c_buf_bytes,
                  "4 rows a warp fill the consumer's two staging buffers");
    const int lane = tid % 32, warp = tid / 32, g = lane / 4, t4 = lane % 4;
    const uint32_t buf = stage + warp * 4 * row_bytes;
#pragma unroll
    for (int pass = 0; pass < 4; pass++) {
        const int h = pass / 2;   /* fragment rows g (0) or g + 8 (1) */
        if (g / 4 == pass % 2) {
            const int r = g % 4;
#pragma unroll
            for (int j = 0; j < groups; j++) {
                int i = 4 * j + 2 * h;
                hopper_st_shared2(buf + r * row_bytes + ((j ^ r) * 8 + 2 * t4) * 4,
                                  alpha * acc[i], alpha * acc[i + 1]);
            }
        }
        __syncwarp();
        float v[4][per_lane];
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int q = 0; q < per_lane; q++)
                v[r][q] = hopper_ld_shared(buf + r * row_bytes +
                                           ((4 * q + lane / 8) ^ r) * 32 + (lane % 8) * 4);
        __syncwarp();
        const int row = 16 * warp + 4 * pass;
        float *p = c + (size_t)row * ldc + lane;
        /* The old values all in flight before the first store. */
        if (beta != 0.0f) {
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int q = 0; q < per_lane; q++)
                    if (row + r < rows && 32 * q + lane < cols)
                        v[r][q] += beta * p[(size_t)r * ldc + 32 * q];
        }
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int q = 0; q < per_lane; q++)
                if (row + r < rows && 32 * q + lane < cols)
                    p[(size_t)r * ldc + 32 * q] = v[r][q];
    }
}

/* ---- host ---- */

/* The plans of a product's A (m x k) and B (k x n). */
static inline void persist_plan_problem(struct hpad_operand *a, struct hpad_operand *b,
                                        const void *pa, const void *pb, long long m,
                                        long long n, long long k, long long lda,
                                        long long ldb, long long batch, long long stride_a,
                                        long long stride_b)
{
    hpad_plan(a, pa, m, k, lda, batch, stride_a, 8);
    hpad_plan(b, pb, k, n, ldb, batch, stride_b, 8);
}

/* The stages' only condition (the registry checks the device: their rows
 * are KERNEL_ARCH_EXACT): strides that a tensor map can hold (below 2^40
 * bytes), those of the copies where the operands are copied. */
static inline int persist_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->m < 1 || p->n < 1 || p->k < 1)
        return 1;
    struct hpad_operand a, b;
    persist_plan_problem(&a, &b, p->a, p->b, p->m, p->n, p->k, p->lda, p->ldb, p->batch,
                         p->stride_a, p->stride_b);
    const long long limit = 1ll << 39;
    if (a.ld >= limit || b.ld >= limit || a.stride >= limit || b.stride >= limit) {
        snprintf(why, n, "rows and the stack's matrices of A and B must lie less than 2^39 "
                 "values apart (tensor-map strides)");
        return 0;
    }
    return 1;
}

/* The padded copies' bytes for the registry (0 when both operands are read
 * in place).  gemm_run_hgemm's slices of a long K copy no more: slice by
 * slice, A's copies hold K's values once, B's stack of slices is packed. */
static inline size_t persist_workspace(const struct gemm_problem *p)
{
    if (p->m < 1 || p->n < 1 || p->k < 1)
        return 0;
    struct hpad_operand a, b;
    size_t b_offset;
    persist_plan_problem(&a, &b, p->a, p->b, p->m, p->n, p->k, p->lda, p->ldb, p->batch,
                         p->stride_a, p->stride_b);
    return hpad_buffer_bytes(&a, &b, &b_offset);
}

enum { PERSIST_MAX_BLOCKS = 1 << 16 };   /* more than any GPU's SMs */

/* The part of the two launchers that is the same: the arguments, the
 * copies, the maps of A (128 x 64 boxes) and B (64 x 64), then
 * launch(map_a, map_b, args) once per chunk of the stack whose units an
 * int can count, then the copies' release.  `pair`: units of 1 or 2 tile
 * rows. */
template <class T, class Launch>
static inline cudaError_t persist_run(const struct hgemm_problem *p, int pair,
                                      cudaStream_t stream, Launch launch)
{
    typedef persist_cfg C;
    struct persist_args args;
    cudaError_t err = hopper_args_of(p, C::bm, C::bn, &args.h);
    if (err != cudaSuccess || p->m == 0 || p->n == 0)
        return err;
    const struct hgemm_problem &q = args.h.p;
    args.k_tiles = (q.k + C::bk - 1) / C::bk;
    args.unit_rows = (args.h.tiles_m + pair - 1) / pair;
    if (q.k == 0)
        args.h.p.alpha = 0.0f;

    CUtensorMap map_a, map_b;
    memset(&map_a, 0, sizeof map_a);
    memset(&map_b, 0, sizeof map_b);
    void *buf = NULL;
    if (q.k > 0) {
        struct hpad_operand a, b;
        persist_plan_problem(&a, &b, q.a, q.b, q.m, q.n, q.k, q.lda, q.ldb, q.batch,
                             q.stride_a, q.stride_b);
        err = hpad_stage(&a, &b, &buf, stream);
        CUtensorMapDataType type = hopper_elem<T>::tma_type;
        if (err == cudaSuccess)
            err = hopper_tensor_map(&map_a, type, a.base, a.rows, a.cols, a.ld, a.count,
                                    a.stride, C::bm, C::bk);
        if (err == cudaSuccess)
            err = hopper_tensor_map(&map_b, type, b.base, b.rows, b.cols, b.ld, b.count,
                                    b.stride, C::bk, 64);
    }

    /* Headroom: a block's next unit number, id + blocks, must not wrap. */
    int per = args.unit_rows * args.h.tiles_n;
    long long chunk = (INT_MAX - PERSIST_MAX_BLOCKS) / per;
    if (chunk < 1)
        chunk = 1;
    for (long long b0 = 0; err == cudaSuccess && b0 < q.batch; b0 += chunk) {
        args.h.batch0 = (int)b0;
        args.units = (int)(per * (q.batch - b0 < chunk ? q.batch - b0 : chunk));
        err = launch(map_a, map_b, args);
    }

    cudaError_t free_err = buf ? cudaFreeAsync(buf, stream) : cudaSuccess;
    return err != cudaSuccess ? err : free_err;
}

#endif
