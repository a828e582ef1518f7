/* persistent: warp_specialized's block made persistent: one block per SM,
 * each walking many 128 x 256 tiles with one ring that never drains.
 *
 * Against warp_specialized (hgemm_05_warp_specialized.cu), which launches
 * a block per tile, the grid is min(tiles, SMs) blocks, one per SM, and
 * block b of G computes tiles b, b + G, b + 2G, ... of the whole stack
 * (the product is part of the tile's number; kernels/hgemm/hgemm_persistent.cuh
 * gives the order: products one after the other, each in bands of 8 tile
 * rows, so that the G tiles in flight share rows of A and columns of B in
 * L2).  A block's prologue (barrier init, tensor-map prefetch) is paid once
 * per SM rather than once per tile, and, the point of it, the ring runs on
 * across tiles: the producer's slot and phase carry over from one tile to
 * the next, so while the consumers write tile i's accumulators to C, the
 * producer is already filling the slots they released with tile i + 1's
 * first four steps, and the consumers start it on full slots.
 *
 * The phases.  The producer and each consumer count the same sequence of
 * steps (every step of every tile of the block), so they agree on slot
 * and phase without talking: the u-th fill of a slot completes phase u of
 * its full barrier (1 arrival, the producer's arrive.expect_tx, plus the
 * tile's 49152 bytes), consumers wait for parity u % 2; the u-th release
 * is phase u of its empty barrier (8 arrivals: lane 0 of the 4 warps of
 * each consumer), and the producer's next fill waits for parity u % 2.  A
 * consumer releases a step's slot when its wgmma have read it: after the
 * next step's are queued (wait_group 1), or, for a tile's last step, after
 * all have finished (wait_group 0), which is also what the epilogue needs.
 *
 * The two consumers keep warp_specialized's split, 64 rows each of the
 * same tile, rather than taking alternate tiles (CUTLASS's ping-pong):
 * a whole 128 x 256 tile per warpgroup would need 256 accumulators per
 * thread, and a smaller one (128 x 128) more bytes of A and B per product;
 * here the epilogue is the part left exposed, and the producer's run-ahead
 * keeps the first steps of the next tile from waiting on memory as well.
 * The epilogue writes C through 32 KB of shared memory beside the ring, a
 * warp's rows whole, 1 KB a row (persist_store_rows in
 * hgemm_persistent.cuh): stored straight from the accumulators, a C whose
 * rows do not start on 8 bytes is written in half sectors at a quarter of
 * the speed.
 *
 * Every shape.  This is auto's stage for f16 and bf16, so it refuses none
 * on a compute capability 9.0 device: operands whose rows, bases or stack
 * strides a tensor map cannot take are read through padded copies, and K
 * = 0 writes beta * C0 (kernels/hgemm/hgemm_persistent.cuh).  Its workspace is
 * those copies.  The last wave is ragged: 512 tiles of 4096^2 on 132 SMs
 * leave 116 blocks with a fourth tile and 16 idle; a stream-K split of the
 * last wave is not done here.
 *
 * Follows Pranjal Shankhdhar, "Outperforming cuBLAS on H100: a Worklog":
 * persistent blocks; CUTLASS's Hopper persistent tile schedulers; the PTX
 * ISA (mbarrier phases).
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel persistent --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/hgemm/hgemm_persistent.cuh"

struct hpe_cfg : persist_cfg {
    static constexpr size_t smem = (size_t)ring_bytes + c_bytes + HOPPER_ATOM_BYTES;
    static_assert(smem <= 227 * 1024, "the ring and C's staging fit an SM's shared memory");
};

/* The producer's thread: every step of every tile of the block. */
template <class C>
static __device__ __forceinline__ void hpe_produce(const CUtensorMap *map_a,
                                                   const CUtensorMap *map_b,
                                                   const struct persist_args &args,
                                                   uint32_t ring, uint32_t full, uint32_t empty)
{
    struct persist_ring r = { 0, 0, false };
    for (int id = blockIdx.x; id < args.units; id += gridDim.x) {
        int product, tm, tn;
        persist_unit_of(args, id, C::group, &product, &tm, &tn);
        int bm0 = tm * C::bm, bn0 = tn * C::bn;
        for (int t = 0; t < args.k_tiles; t++) {
            if (r.lapped)
                hopper_bar_wait(empty + 8 * r.slot, r.phase ^ 1);
            uint32_t sa = ring + r.slot * C::stage_bytes, sb = sa + C::a_bytes;
            uint32_t bar = full + 8 * r.slot;
            int k0 = t * C::bk;
            hopper_bar_expect(bar, C::stage_bytes);
            hopper_tma_tile(sa, map_a, bar, k0, bm0, product, args.h.a_batched);
#pragma unroll
            for (int h = 0; h < C::bn / 64; h++)
                hopper_tma_tile(sb + h * HOPPER_B_BLOCK, map_b, bar, bn0 + 64 * h, k0, product,
                                args.h.b_batched);
            persist_next(r);
        }
    }
}

/* Consumer warpgroup `cw`: its 64 rows of every tile of the block, each
 * written to C as soon as it is done. */
template <class C, class T>
static __device__ __forceinline__ void hpe_consume(const struct persist_args &args,
                                                   uint32_t ring, uint32_t full, uint32_t empty,
                                                   uint32_t stage, int cw)
{
    const struct hgemm_problem &p = args.h.p;
    const int tid = threadIdx.x % 128, rows0 = 64 * cw;
    struct persist_ring r = { 0, 0, false };
    float acc[128];
    for (int id = blockIdx.x; id < args.units; id += gridDim.x) {
        int product, tm, tn;
        persist_unit_of(args, id, C::group, &product, &tm, &tn);
        int bm0 = tm * C::bm, bn0 = tn * C::bn;
        persist_mma_tile<T>(acc, ring, full, r, args.k_tiles, rows0, [&](int slot) {
            if (threadIdx.x % 32 == 0)
                hopper_bar_arrive(empty + 8 * slot);
        });
        float *c = p.c + (long long)product * p.stride_c + ((size_t)bm0 + rows0) * p.n + bn0;
        persist_store_rows<C>(acc, stage + cw * 2 * C::c_buf_bytes, tid, c, p.n,
                              p.m - bm0 - rows0, p.n - bn0, p.alpha, p.beta);
    }
}

template <class T>
static __global__ void __launch_bounds__(hpe_cfg::threads, 1)
hgemm_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b,
                        const struct persist_args args)
{
    typedef hpe_cfg C;
    extern __shared__ __align__(16) unsigned char hpe_smem[];
    __shared__ __align__(8) uint64_t hpe_bars[2 * C::stages];
    const uint32_t ring =
        ((uint32_t)__cvta_generic_to_shared(hpe_smem) + HOPPER_ATOM_BYTES - 1) &
        ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t stage = ring + C::ring_bytes;
    const uint32_t full = (uint32_t)__cvta_generic_to_shared(hpe_bars);
    const uint32_t empty = full + 8 * C::stages;

    if (threadIdx.x == 0) {
        if (args.k_tiles > 0) {
            hopper_tma_prefetch(&map_a);
            hopper_tma_prefetch(&map_b);
        }
        hopper_ring_init<C::stages>(full, empty, 4 * C::consumers);
    }
    __syncthreads();

    int wg = threadIdx.x / 128;
    if (wg == 0) {
        hopper_regs_dec<C::producer_regs>();
        if (threadIdx.x == 0)
            hpe_produce<C>(&map_a, &map_b, args, ring, full, empty);
    } else {
        hopper_regs_inc<C::consumer_regs>();
        hpe_consume<C, T>(args, ring, full, empty, stage, wg - 1);
    }
}

template <class T>
static cudaError_t hpe_run(const struct hgemm_problem *p, const struct launch_env *env)
{
    typedef hpe_cfg C;
    cudaError_t err = cudaFuncSetAttribute(hgemm_persistent_kernel<T>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)C::smem);
    if (err != cudaSuccess)
        return err;
    int sms = env->sm_count < 1 ? 1 : min(env->sm_count, (int)PERSIST_MAX_BLOCKS);
    return persist_run<T>(p, 1, env->stream,
                          [&](const CUtensorMap &map_a, const CUtensorMap &map_b,
                              const struct persist_args &args) {
                              unsigned grid = (unsigned)(args.units < sms ? args.units : sms);
                              hgemm_persistent_kernel<T><<<grid, C::threads, C::smem,
                                                           env->stream>>>(map_a, map_b, args);
                              return launch_result();
                          });
}

extern "C" cudaError_t hgemm_persistent_launch(const struct hgemm_problem *p,
                                               const struct launch_env *env)
{
    return p->bf16 ? hpe_run<__nv_bfloat16>(p, env) : hpe_run<__half>(p, env);
}

extern "C" cudaError_t hgemm_persistent_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_persistent_kernel<__half>, hpe_cfg::threads, hpe_cfg::smem, out);
}

extern "C" int hgemm_persistent_check(const struct gemm_problem *p, char *why, size_t n)
{
    return persist_check(p, why, n);
}

extern "C" size_t hgemm_persistent_workspace(const struct gemm_problem *p)
{
    return persist_workspace(p);
}
