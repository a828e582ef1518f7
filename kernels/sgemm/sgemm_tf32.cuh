/* tf32x3's machinery (sgemm_21_tf32x3.cu), whose split of K (tc32_split_of)
 * and checks tf32 (sgemm_20_tf32.cu) takes too: float operands on
 * Hopper's tensor cores, through packed TF32 copies
 * (kernels/sgemm/tf32_split.cu), on persistent's machinery
 * (kernels/hgemm/hgemm_persistent.cuh): a producer warpgroup filling a TMA ring,
 * two consumer warpgroups of 64 rows each on 128 x 256 tiles, the walk of
 * a persistent block over the tiles of the stack in L2 bands.
 *
 * The layout.  TF32 wgmma (m64nNk8) reads both operands K-major, so A's
 * copy keeps its rows and B's copy is B transposed (n x k).  A row of 32
 * floats is 128 bytes, one swizzled row of hgemm_hopper.cuh: a step of 32
 * values of k is, in bytes, what a step of 64 halves is to the 16-bit
 * stages: A's tile is 128 rows of 128 bytes (one 32 x 128 box), B's 256
 * rows (one 32 x 256 box), and wgmma's k = 8 slice starts 32 bytes further
 * along, for both, with 8-row groups 1024 bytes apart.
 *
 * The copies.  Each operand's copy is `count` matrices (the stack's, or 1
 * when broadcast) of `parts` planes (1: x rounded to TF32; 2: its high
 * and low parts), read through one 3-D tensor map {ld, rows, count x
 * parts}: the plane is the third coordinate, so each box stays inside its
 * plane and the copy engine fills zeros past its edges.  A slot of the
 * ring holds one tile of every plane of A, then of B.
 *
 * Run through its stage:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel tf32x3 --compute tf32x3 --verify --repeat 20 */
#ifndef GC_KERNELS_SGEMM_TF32_CUH
#define GC_KERNELS_SGEMM_TF32_CUH

#include <limits.h>
#include <string.h>

#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/sgemm/tf32_split.h"

template <int PARTS>
struct tc32_cfg {
    static constexpr int parts = PARTS;
    static constexpr int bm = 128, bn = 256, bk = HOPPER_ROW_BYTES / 4, group = 8;
    static constexpr int stages = PARTS == 1 ? 4 : 2;
    static constexpr int consumers = 2, threads = 128 * (consumers + 1);
    static constexpr int producer_regs = 40, consumer_regs = 232;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES, b_bytes = bn * HOPPER_ROW_BYTES;
    static constexpr int stage_bytes = parts * (a_bytes + b_bytes);
    static constexpr int ring_bytes = stages * stage_bytes;
    static constexpr size_t smem = (size_t)ring_bytes + HOPPER_ATOM_BYTES;

    static_assert(PARTS == 1 || PARTS == 2, "one plane (TF32) or two (high and low)");
    static_assert(bm == 64 * consumers, "each consumer warpgroup owns 64 rows");
    static_assert(bm <= 256 && bn <= 256, "a tile is one box of the tensor map");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(smem <= 227 * 1024, "the ring fits an SM's shared memory");
    static_assert(128 * producer_regs + 128 * consumers * consumer_regs <= 65536,
                  "setmaxnreg: within the register file");
};

/* The kernels' arguments. */
struct tc32_args {
    float *c;
    int m, n;
    long long stride_c;
    float alpha, beta;
    int c_vec;                /* C may be written as float2 */
    int tiles_m, tiles_n;
    int batch0;               /* the launch's first product */
    int units;                /* tiles of this launch */
    int k_tiles;              /* steps of 32 along K; 0 when K = 0 */
    int a_batched, b_batched; /* the copy has a matrix per product */
    int split;                /* 1: the "products" are slices of one product's K, k_tiles
                                 steps each, into slabs stride_c apart */
    const unsigned char *rows_a, *cols_b;   /* rows and columns with an infinity */
    const int *any;           /* NULL when K = 0 */
};

/* ---- device ---- */


/* Unit `id` of the launch: its product and tile. */
template <class C>
static __device__ __forceinline__ void tc32_unit_of(const struct tc32_args &args, int id,
                                                    int *product, int *tm, int *tn)
{
    int per = args.tiles_m * args.tiles_n;
    int in_launch = id / per;
    hopper_tile_of(id - in_launch * per, args.tiles_m, args.tiles_n, C::group, tm, tn);
    *product = args.batch0 + in_launch;
}

/* Shared addresses of plane `part` of A's and B's tiles in slot `slot`. */
template <class C>
static __device__ __forceinline__ uint32_t tc32_a_tile(uint32_t ring, int slot, int part)
{
    return ring + slot * C::stage_bytes + part * C::a_bytes;
}

template <class C>
static __device__ __forceinline__ uint32_t tc32_b_tile(uint32_t ring, int slot, int part)
{
    return ring + slot * C::stage_bytes + C::parts * C::a_bytes + part * C::b_bytes;
}

/* A position in the ring, as persistent keeps it (hgemm_persistent.cuh). */
struct tc32_ring {
    int slot;
    uint32_t phase;
    bool lapped;
};

template <class C>
static __device__ __forceinline__ void tc32_next(struct tc32_ring &r)
{
    if (++r.slot == C::stages) {
        r.slot = 0;
        r.phase ^= 1;
        r.lapped = true;
    }
}

/* The producer's thread: every plane of every step of every tile of the
 * block, one box each. */
template <class C>
static __device__ __forceinline__ void tc32_produce(const CUtensorMap *map_a,
                                                    const CUtensorMap *map_b,
                                                    const struct tc32_args &args, uint32_t ring,
                                                    uint32_t full, uint32_t empty)
{
    struct tc32_ring r = { 0, 0, false };
    for (int id = blockIdx.x; id < args.units; id += gridDim.x) {
        int product, tm, tn;
        tc32_unit_of<C>(args, id, &product, &tm, &tn);
        int za = (args.a_batched ? product : 0) * C::parts;
        int zb = (args.b_batched ? product : 0) * C::parts;
        for (int t = 0; t < args.k_tiles; t++) {
            if (r.lapped)
                hopper_bar_wait(empty + 8 * r.slot, r.phase ^ 1);
            uint32_t bar = full + 8 * r.slot;
            int k0 = ((args.split ? product * args.k_tiles : 0) + t) * C::bk;
            hopper_bar_expect(bar, C::stage_bytes);
#pragma unroll
            for (int part = 0; part < C::parts; part++) {
                hopper_tma_3d(tc32_a_tile<C>(ring, r.slot, part), map_a, bar, k0, tm * C::bm,
                              za + part);
                hopper_tma_3d(tc32_b_tile<C>(ring, r.slot, part), map_b, bar, k0, tn * C::bn,
                              zb + part);
            }
            tc32_next<C>(r);
        }
    }
}

/* Writes the 64 x 256 accumulators of thread `tid` of a consumer warpgroup
 * whose rows start at row0 of tile (tm, tn) of `product`: alpha * acc +
 * beta * C, inside C only, and, when an infinity was seen, not where the
 * fix-up will write. */
template <class C>
static __device__ __forceinline__ void tc32_store(const float (&d)[128], int tid,
                                                  const struct tc32_args &args, int product,
                                                  int tm, int tn, int row0)
{
    const int bm0 = tm * C::bm + row0, bn0 = tn * C::bn;
    float *c = args.c + (long long)product * args.stride_c + (size_t)bm0 * args.n + bn0;
    const int rows = args.m - bm0, cols = args.n - bn0;
    const bool inf = args.any && *args.any;
    const unsigned char *fa =
        args.rows_a + (long long)(args.a_batched ? product : 0) * args.m + bm0;
    const unsigned char *fb =
        args.cols_b + (long long)(args.b_batched ? product : 0) * args.n + bn0;
    const float alpha = args.alpha, beta = args.beta;
#pragma unroll
    for (int i = 0; i < 128; i += 2) {
        int row = hopper_acc_row(i, tid), col = hopper_acc_col(i, tid);
        if (row >= rows || col >= cols)
            continue;
        float *p = c + (size_t)row * args.n + col;
        float v0 = alpha * d[i], v1 = alpha * d[i + 1];
        bool two = col + 1 < cols;
        if (inf) {
            bool skip0 = fa[row] || fb[col], skip1 = !two || fa[row] || fb[col + 1];
            if (!skip0)
                p[0] = beta != 0.0f ? v0 + beta * p[0] : v0;
            if (!skip1)
                p[1] = beta != 0.0f ? v1 + beta * p[1] : v1;
        } else if (args.c_vec) {
            if (beta != 0.0f) {
                float2 old = *reinterpret_cast<const float2 *>(p);
                v0 += beta * old.x;
                v1 += beta * old.y;
            }
            *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
        } else {
            p[0] = beta != 0.0f ? v0 + beta * p[0] : v0;
            if (two)
                p[1] = beta != 0.0f ? v1 + beta * p[1] : v1;
        }
    }
}

/* The kernel body both stages share: barriers, roles, register budgets;
 * `consume(ring, full, empty, cw)` is the stage's consumer warpgroup. */
template <class C, class Consume>
static __device__ __forceinline__ void tc32_body(const CUtensorMap *map_a,
                                                 const CUtensorMap *map_b,
                                                 const struct tc32_args &args,
                                                 unsigned char *smem, uint64_t *bars,
                                                 Consume consume)
{
    const uint32_t ring = ((uint32_t)__cvta_generic_to_shared(smem) + HOPPER_ATOM_BYTES - 1) &
                          ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t full = (uint32_t)__cvta_generic_to_shared(bars);
    const uint32_t empty = full + 8 * C::stages;
    if (threadIdx.x == 0) {
        if (args.k_tiles > 0) {
            hopper_tma_prefetch(map_a);
            hopper_tma_prefetch(map_b);
        }
        hopper_ring_init<C::stages>(full, empty, 4 * C::consumers);
    }
    __syncthreads();
    int wg = threadIdx.x / 128;
    if (wg == 0) {
        hopper_regs_dec<C::producer_regs>();
        if (threadIdx.x == 0)
            tc32_produce<C>(map_a, map_b, args, ring, full, empty);
    } else {
        hopper_regs_inc<C::consumer_regs>();
        consume(ring, full, empty, wg - 1);
    }
}

/* ---- host ---- */

/* How the copies of a problem lie in the workspace. */
struct tc32_plan {
    int count_a, count_b;     /* matrices in each copy */
    int ld;                   /* floats per row of a copy: K rounded up to 4 */
    int slices, slice_tiles;  /* K split into slices of slice_tiles steps (1: none) */
    size_t a_bytes, b_bytes, flag_bytes, slab_bytes, total;
};

enum {
    TC32_ALIGN = 256, TC32_MAX_BLOCKS = 1 << 16,
    TC32_SPLIT_MIN_TILES = 8,  /* steps of 32 per slice at least */
    TC32_SPLIT_MOST = 128      /* slices at most */
};

static inline size_t tc32_round_up(size_t x) { return (x + TC32_ALIGN - 1) / TC32_ALIGN * TC32_ALIGN; }

/* The split of K: a single product whose bm x bn tiles are fewer than the
 * SMs is cut into S slices of K, each a unit of work of its own into its
 * own FP32 slab, summed afterwards (gemm_split_reduce) in a fixed order,
 * as the 16-bit stages' split does (kernels/gemm_dispatch.c).  S is the
 * one that makes the fewest waves of slices, ceil(tiles S / SMs) / S of
 * the unsplit time, by at least 5% per added slice count, with slices of
 * 8 steps of 32 or more.  A stack, or tiles enough for the SMs, is not
 * split. */
static inline void tc32_split_of(long long m, long long n, long long k, long long batch, int bm,
                                 int bn, int sms, struct tc32_plan *pl)
{
    long long tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
    long long steps = (k + 31) / 32;
    pl->slices = 1;
    pl->slice_tiles = (int)steps;
    if (batch != 1 || tiles < 1 || tiles >= sms)
        return;
    long long most = steps / TC32_SPLIT_MIN_TILES;
    if (most > TC32_SPLIT_MOST)
        most = TC32_SPLIT_MOST;
    long long best = 1;
    double best_cost = 1.0;
    for (long long s = 2; s <= most; s++) {
        double cost = (double)((tiles * s + sms - 1) / sms) / (double)s;
        if (cost < 0.95 * best_cost) {
            best = s;
            best_cost = cost;
        }
    }
    if (best < 2)
        return;
    pl->slice_tiles = (int)((steps + best - 1) / best);
    pl->slices = (int)((steps + pl->slice_tiles - 1) / pl->slice_tiles);
}

static inline void tc32_plan_of(long long m, long long n, long long k, long long batch,
                                long long stride_a, long long stride_b, int parts, int bm,
                                int bn, int sms, struct tc32_plan *pl)
{
    pl->count_a = batch > 1 && stride_a != 0 ? (int)batch : 1;
    pl->count_b = batch > 1 && stride_b != 0 ? (int)batch : 1;
    pl->ld = (int)((k + 3) / 4 * 4);
    tc32_split_of(m, n, k, batch, bm, bn, sms, pl);
    pl->a_bytes = tc32_round_up((size_t)pl->count_a * parts * m * pl->ld * sizeof(float));
    pl->b_bytes = tc32_round_up((size_t)pl->count_b * parts * n * pl->ld * sizeof(float));
    pl->flag_bytes = tc32_round_up((size_t)pl->count_a * m + (size_t)pl->count_b * n);
    pl->slab_bytes = pl->slices > 1 ? tc32_round_up((size_t)pl->slices * m * n * sizeof(float))
                                    : 0;
    pl->total = k > 0 && m > 0 && n > 0 ? pl->a_bytes + pl->b_bytes + pl->flag_bytes +
                                              TC32_ALIGN + pl->slab_bytes
                                        : 0;
}

/* The registry's questions for a stage of `parts` planes (the workspace
 * an upper bound: the split taken for 256 SMs). */
template <class C>
static inline size_t tc32_workspace(const struct gemm_problem *p)
{
    struct tc32_plan pl;
    tc32_plan_of(p->m, p->n, p->k, p->batch, p->stride_a, p->stride_b, C::parts, C::bm, C::bn,
                 256, &pl);
    return pl.total;
}

static inline int tc32_check(const struct gemm_problem *p, char *why, size_t n)
{
    /* A plane of a copy must lie less than 2^40 bytes from the next. */
    long long ld = (p->k + 3) / 4 * 4;
    if ((p->m > 0 && ld > (1ll << 38) / p->m) || (p->n > 0 && ld > (1ll << 38) / p->n)) {
        snprintf(why, n, "a matrix of the TF32 copies must be under 2^38 floats");
        return 0;
    }
    return 1;
}

/* A 3-D map over `planes` matrices of rows x cols floats, ld apart a row
 * and stride a matrix (a packed copy: cols = ld, stride = rows x ld), in
 * boxes of box_rows x 32 into the 128-byte swizzle. */
static inline cudaError_t tc32_map(CUtensorMap *map, const float *base, long long cols,
                                   long long rows, long long ld, long long stride, int planes,
                                   int box_rows)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = hopper_encode_fn();
    if (!encode)
        return cudaErrorNotSupported;
    if (planes < 2)
        stride = rows * ld;
    cuuint64_t dims[3] = { (cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)planes };
    cuuint64_t strides[2] = { (cuuint64_t)ld * 4, (cuuint64_t)(stride > 0 ? stride : ld) * 4 };
    cuuint32_t box[3] = { HOPPER_ROW_BYTES / 4, (cuuint32_t)box_rows, 1 };
    cuuint32_t steps[3] = { 1, 1, 1 };
    CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float *>(base), dims,
                        strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

/* A stage's launcher: the copies, the maps, launch(map_a, map_b, args)
 * once per chunk of the stack whose tiles an int can count, the fix-up,
 * and the workspace's release, all on the stream. */
template <class C, class Launch>
static inline cudaError_t tc32_run(const struct sgemm_problem *p, cudaStream_t stream, int sms,
                                   Launch launch)
{
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return cudaErrorInvalidValue;
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    long long batch = p->batch > 1 ? p->batch : 1;
    long long sa = batch > 1 ? p->stride_a : 0, sb = batch > 1 ? p->stride_b : 0;
    struct tc32_plan pl;
    tc32_plan_of(p->m, p->n, p->k, batch, sa, sb, C::parts, C::bm, C::bn, sms, &pl);

    struct tc32_args args;
    memset(&args, 0, sizeof args);
    args.c = p->c;
    args.m = p->m;
    args.n = p->n;
    args.stride_c = batch > 1 ? p->stride_c : 0;
    args.alpha = p->k > 0 ? p->alpha : 0.0f;
    args.beta = p->beta;
    args.c_vec = p->n % 2 == 0 && args.stride_c % 2 == 0 && (uintptr_t)p->c % 8 == 0;
    long long tiles_m = ((long long)p->m + C::bm - 1) / C::bm;
    long long tiles_n = ((long long)p->n + C::bn - 1) / C::bn;
    if (tiles_m * tiles_n > INT_MAX - TC32_MAX_BLOCKS)
        return cudaErrorInvalidConfiguration;
    args.tiles_m = (int)tiles_m;
    args.tiles_n = (int)tiles_n;
    args.k_tiles = pl.slice_tiles;
    args.a_batched = pl.count_a > 1;
    args.b_batched = pl.count_b > 1;
    float *slabs = NULL;

    CUtensorMap map_a, map_b;
    memset(&map_a, 0, sizeof map_a);
    memset(&map_b, 0, sizeof map_b);
    char *buf = NULL;
    cudaError_t err = cudaSuccess;
    struct tf32_fixup fix;
    memset(&fix, 0, sizeof fix);
    if (pl.total > 0) {
        err = cudaMallocAsync((void **)&buf, pl.total, stream);
        if (err != cudaSuccess)
            return err;
        float *copy_a = (float *)buf, *copy_b = (float *)(buf + pl.a_bytes);
        unsigned char *flags = (unsigned char *)(buf + pl.a_bytes + pl.b_bytes);
        int *any = (int *)(buf + pl.a_bytes + pl.b_bytes + pl.flag_bytes);
        args.rows_a = flags;
        args.cols_b = flags + (size_t)pl.count_a * p->m;
        args.any = any;
        struct tf32_pack pa = { p->a, p->k, sa, pl.count_a, p->m, p->k, pl.ld, C::parts, 0,
                                copy_a, flags, any };
        struct tf32_pack pb = { p->b, p->n, sb, pl.count_b, p->n, p->k, pl.ld, C::parts, 1,
                                copy_b, (unsigned char *)args.cols_b, any };
        err = cudaMemsetAsync(flags, 0, pl.flag_bytes + TC32_ALIGN, stream);
        if (err == cudaSuccess)
            err = tf32_pack_launch(&pa, stream);
        if (err == cudaSuccess)
            err = tf32_pack_launch(&pb, stream);
        if (err == cudaSuccess)
            err = tc32_map(&map_a, copy_a, pl.ld, p->m, pl.ld, (long long)p->m * pl.ld,
                           pl.count_a * C::parts, C::bm);
        if (err == cudaSuccess)
            err = tc32_map(&map_b, copy_b, pl.ld, p->n, pl.ld, (long long)p->n * pl.ld,
                           pl.count_b * C::parts, C::bn);
        fix = { p->m, p->n, p->k, (int)batch, p->alpha, p->beta, p->a, p->b, p->c,
                sa, sb, args.stride_c, args.rows_a, args.cols_b, any, 1, 0 };
        if (pl.slices > 1) {
            /* The slices are the launch's "products", into the slabs. */
            slabs = (float *)(buf + pl.a_bytes + pl.b_bytes + pl.flag_bytes + TC32_ALIGN);
            args.split = 1;
            args.c = slabs;
            args.stride_c = (long long)p->m * p->n;
            args.alpha = 1.0f;
            args.beta = 0.0f;
            args.c_vec = p->n % 2 == 0;
            batch = pl.slices;
            fix.c = slabs;
            fix.alpha = 1.0f;
            fix.beta = 0.0f;
            fix.slabs = pl.slices;
            fix.slab_stride = args.stride_c;
        }
    }

    /* Headroom: a block's next unit number, id + blocks, must not wrap. */
    int per = args.tiles_m * args.tiles_n;
    long long chunk = (INT_MAX - TC32_MAX_BLOCKS) / per;
    if (chunk < 1)
        chunk = 1;
    for (long long b0 = 0; err == cudaSuccess && b0 < batch; b0 += chunk) {
        args.batch0 = (int)b0;
        args.units = (int)(per * (batch - b0 < chunk ? batch - b0 : chunk));
        err = launch(map_a, map_b, args);
    }
    if (err == cudaSuccess && pl.total > 0)
        err = tf32_fixup_launch(&fix, stream);
    if (err == cudaSuccess && slabs)
        err = gemm_split_reduce(p->c, 0, slabs, (size_t)p->m * p->n, 1, pl.slices, p->alpha,
                                p->beta, stream);
    cudaError_t free_err = buf ? cudaFreeAsync(buf, stream) : cudaSuccess;
    return err != cudaSuccess ? err : free_err;
}

/* The launch both stages make: a block per SM, at most one per unit. */
template <class C, class Kernel>
static inline cudaError_t tc32_launch(Kernel kernel, const struct sgemm_problem *p,
                                      const struct launch_env *env)
{
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)C::smem);
    if (err != cudaSuccess)
        return err;
    int sms = env->sm_count < 1 ? 1 : min(env->sm_count, (int)TC32_MAX_BLOCKS);
    return tc32_run<C>(p, env->stream, sms,
                       [&](const CUtensorMap &map_a, const CUtensorMap &map_b,
                           const struct tc32_args &args) {
                           unsigned grid = (unsigned)(args.units < sms ? args.units : sms);
                           kernel<<<grid, C::threads, C::smem, env->stream>>>(map_a, map_b,
                                                                              args);
                           return launch_result();
                       });
}

#endif
