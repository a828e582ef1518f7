/* splitk: swizzle, with K split over blockIdx.z when M x N alone makes too
 * few blocks to fill the GPU (256 x 256 x 65536 makes 4); splitk_64x128,
 * the same on swizzle_64x128's tile, for a few rows over a long K (22 x
 * 4518 x 18135: the 128-row tile computes 22 rows of 128);
 * splitk_32x128, on a tile of one warp's 32 rows by two warps' 128
 * columns (64 threads, seven blocks an SM, BK 8), for products of 32 rows
 * or fewer (31 x 2317 x 24178: the 64-row tile computes 31 rows of 64);
 * and splitk_128x64, four warps stacked on a 128 x 64 tile, for N just
 * past a multiple of 128 (1898 x 145 x 3557: the 128-column tiles compute
 * 145 columns of 256, the 64-column ones 145 of 192).
 *
 * Against swizzle: each of S splits multiplies a K/S slice into its own
 * M x N slab of a workspace (stream-ordered cudaMallocAsync, freed the same
 * way); a second kernel (kernels/gemm_split.cu) sums the slabs in a fixed
 * order and applies alpha and beta, so the result does not depend on
 * scheduling, unlike atomics.  S fills one wave of two blocks per SM
 * (four of the 64-row tile, seven of the 32-row one) and no more, with
 * at least 8 tiles of k per split, where the tiles are fewer than the
 * SMs; where they are as many or more, S is the count that lightens the
 * busiest SM by a tenth, or 1 and this is swizzle (splitk_count below).
 * A stack of products counts as one grid of tiles: S is chosen for all of them together, the workspace holds a
 * slab per split and product (split outermost), and one reduce launch sums
 * every product's slabs.
 *
 * The workspace comes back from the pool without being mapped again:
 * kernels_prepare_device() keeps freed pool memory (kernels/registry.h).
 *
 * Follows "Efficient GEMM in CUDA" (CUTLASS), section "Parallelized
 * Reductions" (split K across threadblocks); "How to optimize SGEMM on
 * NVIDIA GPUs" points at it in its extra notes, for K much larger than M
 * and N.
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel splitk --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel splitk_64x128 --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel splitk_32x128 --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel splitk_128x64 --verify --repeat 20 */
#include <stdio.h>

#include "kernels/sgemm/sgemm_pipeline.cuh"

typedef pipe_cfg<4, 2, 16, 4> splitk_cfg;
/* The 64- and 128-row tiles of 128 threads: three blocks an SM at up to
 * 168 registers (ptxas takes 125-153), where four at 128 registers ran
 * slower, and the 64-row tile copies A two rows at a time (pipe_copy4x2).
 * 128 x 64: 5076 x 38 x 32004 0.673 -> 0.582 ms, 6311 x 39 x 7864 0.229
 * -> 0.202, 20242 x 171 x 4369 1.081 -> 0.951; 64 x 128: 12082 x 114 x
 * 1491 0.157 -> 0.132, 129 x 34865 x 4111 1.52 -> 1.38, 1483 x 86 x 25840
 * 0.276 -> 0.251 (`gemmcli mul --kernel K --repeat 20`, NVIDIA H100,
 * 2026-11-27; the 64-row tile's A one row at a time at three blocks:
 * 0.154, 1.45, 0.281; the 128-row tile's two at a time: 0.749 at the
 * first shape). */
struct splitk_64x128_cfg : pipe_cfg<2, 2, 16, 4> {
    static constexpr int min_blocks = 3;
    static constexpr bool a_pairs = true;
};
struct splitk_128x64_cfg : pipe_cfg<4, 1, 16, 4> {
    static constexpr int min_blocks = 3;
};
/* BK 8: 21 KiB of stages, seven blocks of 64 threads an SM (ptxas held
 * to eight blocks' 128 registers spills; at six blocks' bound it takes
 * 141, which leaves room for seven), where BK 16 took 41 KiB and five.
 * With eight blocks at BK 8: 22 x 4518 x 18135 0.2095 -> 0.1820 ms, 31 x
 * 2317 x 24178 0.1584 -> 0.1361, 32 x 8192 x 4096 0.0804 -> 0.0739 (3
 * stages of BK 16, seven blocks: 0.2108, 0.1595, 0.0839; NVIDIA H100,
 * 2026-11-27, the variants in one run, `gemmcli mul --kernel
 * splitk_32x128 --repeat 20`). */
struct splitk_32x128_cfg : pipe_cfg<1, 2, 8, 4> {
    static constexpr int min_blocks = 6;
};
/* SPLITK_FILL_K: what a block's pipeline costs to fill and drain, in
 * values of k (the k_fill of their rows in kernels/gemm_table.c). */
enum { SPLITK_GROUP = 8, SPLITK_MIN_TILES = 8, SPLITK_FILL_K = 64 };

/* How many slices of K (gemm_fill_slices, kernels/registry.h): never more
 * blocks than one wave of PER_SM per SM holds (two of the 128 x 128 tile;
 * three of the 64 x 128 and 128 x 64 tiles, above; seven of the 32-row
 * tile's 64 threads), each slice at least SPLITK_MIN_TILES tiles deep.
 * The 64-row tile's slices once filled two blocks an SM: four ran 38 x 8846 x 4693
 * in 0.1673 ms where two took 0.1883, 148 x 3127 x 2329 in 0.0902 where
 * 0.1058, 2040 x 63 x 917 0.0296 where 0.0313, 49 x 1685 x 38486 the same
 * (0.253), but 438 x 401 x 4133 0.0704 where 0.0685 and 747 x 42 x 522
 * 0.0247 where 0.0232 (NVIDIA H100, 2026-11-27, one run).  Rounded up, the count started a second wave of a few blocks that
 * took most of the first one's time: float 49 x 1685 x 38486, 14 tiles of
 * 64 x 128 in 19 slices, 266 blocks on 264 slots; 22 x 4518 x 18135, 36
 * tiles of 32 x 128 in 19, 684 blocks on 660 (NVIDIA H200, 2026-11-26,
 * ncu: the SMs busy 75% of the kernel's time). */
template <class C, int PER_SM>
static int splitk_count(const struct sgemm_problem *p, int sm_count)
{
    long tiles = (long)ceil_div(p->m, C::bm) * ceil_div(p->n, C::bn) * pipe_batch(p);
    return (int)gemm_fill_slices(tiles, sm_count, PER_SM, p->k, SPLITK_MIN_TILES * C::bk,
                                 SPLITK_FILL_K);
}

template <class C, int PER_SM>
static cudaError_t splitk_run(const struct sgemm_problem *p, const struct launch_env *env)
{
    int splits = splitk_count<C, PER_SM>(p, env->sm_count > 0 ? env->sm_count : 132);
    if (splits == 1)
        return pipe_launch<C, SPLITK_GROUP>(p, env, 1, p->k, NULL);
    int k_per_split = ceil_div(ceil_div(p->k, splits), C::bk) * C::bk;
    splits = ceil_div(p->k, k_per_split);

    /* Fewer products than SMs here (splitk_count): one launch of each
     * kernel, the products on gridDim.y. */
    int batch = pipe_batch(p);
    size_t count = (size_t)p->m * p->n;
    float *partial;
    cudaError_t err = cudaMallocAsync((void **)&partial,
                                      (size_t)splits * batch * count * sizeof(float), env->stream);
    if (err != cudaSuccess)
        return err;
    err = pipe_launch<C, SPLITK_GROUP>(p, env, splits, k_per_split, partial);
    if (err == cudaSuccess)
        err = gemm_split_reduce(p->c, p->stride_c, partial, count, batch, splits, p->alpha,
                                p->beta, env->stream);
    cudaError_t free_err = cudaFreeAsync(partial, env->stream);
    return err != cudaSuccess ? err : free_err;
}

/* The workspace's upper bound for the registry: the most slices any count
 * of SMs up to 256, more than any GPU has, could take (one wave of them,
 * each SPLITK_MIN_TILES tiles deep). */
template <class C, int PER_SM>
static size_t splitk_workspace(const struct gemm_problem *g)
{
    struct sgemm_problem p = { (int)g->m, (int)g->n, (int)g->k, 1.0f, 0.0f, NULL, NULL, NULL,
                               (int)(g->batch < 0x7fffffff ? g->batch : 0x7fffffff),
                               g->stride_a, g->stride_b, g->stride_c };
    long tiles = (long)ceil_div(p.m, C::bm) * ceil_div(p.n, C::bn) * pipe_batch(&p);
    long most = tiles > 0 ? (long)PER_SM * 256 / tiles : 0;
    long deepest = p.k / (SPLITK_MIN_TILES * C::bk);
    long splits = most < deepest ? most : deepest;
    return splits < 2 ? 0 : (size_t)splits * pipe_batch(&p) * g->m * g->n * sizeof(float);
}

/* A splitk stage's entry points for the registry (kernels/gemm_table.c):
 * tile config C, PER_SM blocks an SM, one count for the launch and its
 * workspace's bound. */
#define SPLITK_STAGE(name, C, PER_SM)                                                              \
    extern "C" cudaError_t sgemm_##name##_launch(const struct sgemm_problem *p,                    \
                                                 const struct launch_env *env)                     \
    {                                                                                              \
        return splitk_run<C, PER_SM>(p, env);                                                      \
    }                                                                                              \
                                                                                                   \
    extern "C" cudaError_t sgemm_##name##_attr(struct kernel_attr *out)                            \
    {                                                                                              \
        return pipe_attr<C, SPLITK_GROUP>(out);                                                    \
    }                                                                                              \
                                                                                                   \
    extern "C" size_t sgemm_##name##_workspace(const struct gemm_problem *g)                       \
    {                                                                                              \
        return splitk_workspace<C, PER_SM>(g);                                                     \
    }

SPLITK_STAGE(splitk, splitk_cfg, 2)
SPLITK_STAGE(splitk_64x128, splitk_64x128_cfg, 3)
SPLITK_STAGE(splitk_128x64, splitk_128x64_cfg, 3)

/* The 32-row tile for 32 rows or fewer: beyond, two of its tiles compute
 * what one of splitk_64x128's does, reading B twice (38 x 8846 x 4693:
 * 39% of cuBLAS against 68%; 1000 x 3000 x 500: 85% against 110% on
 * swizzle_64x128; NVIDIA H200, 2026-11-26, bench and sweep). */
extern "C" int sgemm_splitk_32x128_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->m > splitk_32x128_cfg::bm) {
        snprintf(why, n, "splitk_32x128 computes products of at most %d rows (one tile's); "
                 "this one has %lld (splitk_64x128 and splitk take more)",
                 splitk_32x128_cfg::bm, (long long)p->m);
        return 0;
    }
    return 1;
}

SPLITK_STAGE(splitk_32x128, splitk_32x128_cfg, 7)
