/* warp_specialized: the ring of wgmma_pipeline, run by a producer
 * warpgroup and two consumer warpgroups of 64 x 256 each, on 128 x 256
 * tiles.
 *
 * Against wgmma_pipeline (hgemm_04_wgmma_pipeline.cu), where the threads
 * that multiply also issue the copies, the roles are split.  Warpgroup 0
 * is the producer: one of its threads walks the tiles, waits until slot
 * t % 4 is empty, announces the tile's 49152 bytes on the slot's full
 * barrier and issues four copies (A's 128 x 64 box, B's four 64 x 64
 * boxes).  Warpgroups 1 and 2 are the consumers: each waits for the slot's
 * full barrier, issues its 4 wgmma m64n256k16 (rows 64 c .. 64 c + 63 of
 * A's box, all of B's), commits them, and waits only for the group before
 * (wait_group 1): so the products of tile t are queued on the tensor cores
 * while tile t - 1's finish, and only then is tile t - 1's slot released,
 * one arrival per consumer warp on its empty barrier (8 in all).  Up to 4
 * tiles are in flight.  The consumers never meet at a barrier; the k-th
 * use of a slot waits for parity k % 2 of its full barrier, the producer's
 * k-th refill for parity (k - 1) % 2 of its empty one.
 *
 * 128 x 256 tiles halve the reads of A per product against 128 x 128 and
 * give each consumer 128 accumulators per thread; the producer needs few
 * registers, so setmaxnreg moves them: 40 for the producer, 232 for the
 * consumers (128 x 40 + 256 x 232 = 64512 of 65536), under
 * __launch_bounds__(384, 1), which caps every thread at 168 at entry.
 * One block per SM: 4 slots of 48 KB are 192 KB of the 227 KB.
 *
 * Needs what wgmma_tma needs: rows of A and B multiples of 8 values and
 * K >= 1, A and B on 16-byte boundaries, batch strides multiples of 8.
 *
 * Follows Pranjal Shankhdhar, "Outperforming cuBLAS on H100: a Worklog":
 * producer and consumer warpgroups on 128 x 256 tiles, registers moved by
 * setmaxnreg; the PTX ISA (wgmma.wait_group, mbarrier, setmaxnreg).
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel warp_specialized --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"

struct hws_cfg {
    static constexpr int bm = 128, bn = 256, bk = HOPPER_BK, stages = 4, group = 8;
    static constexpr int consumers = 2, threads = 128 * (consumers + 1);
    static constexpr int producer_regs = 40, consumer_regs = 232;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES;
    static constexpr int b_bytes = bn / 64 * HOPPER_B_BLOCK;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr size_t smem = (size_t)stages * stage_bytes + HOPPER_ATOM_BYTES;

    static_assert(bm == 64 * consumers, "each consumer warpgroup owns 64 rows");
    static_assert(bn == 256, "one wgmma m64n256 per consumer and step of k");
    static_assert(bm <= 256 && bk * 2 == HOPPER_ROW_BYTES, "A's tile is one box");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(smem <= 227 * 1024, "the ring fits an SM's shared memory");
    static_assert(128 * producer_regs + 128 * consumers * consumer_regs <= 65536 &&
                      producer_regs % 8 == 0 && consumer_regs % 8 == 0,
                  "setmaxnreg: multiples of 8 within the register file");
    static_assert(stages >= 2, "a ring needs two slots");
};

/* The producer's thread: the copies of every tile of the block. */
template <class C>
static __device__ __forceinline__ void hws_produce(const CUtensorMap *map_a,
                                                     const CUtensorMap *map_b,
                                                     const struct hopper_args &args,
                                                     uint32_t ring, uint32_t full,
                                                     uint32_t empty, int tiles, int bm0, int bn0,
                                                     int product)
{
    for (int t = 0; t < tiles; t++) {
        int slot = t % C::stages;
        uint32_t sa = ring + slot * C::stage_bytes, sb = sa + C::a_bytes;
        uint32_t bar = full + 8 * slot;
        if (t >= C::stages)
            hopper_bar_wait(empty + 8 * slot, (uint32_t)(t / C::stages - 1) & 1);
        int k0 = t * C::bk;
        hopper_bar_expect(bar, C::stage_bytes);
        hopper_tma_tile(sa, map_a, bar, k0, bm0, product, args.a_batched);
#pragma unroll
        for (int h = 0; h < C::bn / 64; h++)
            hopper_tma_tile(sb + h * HOPPER_B_BLOCK, map_b, bar, bn0 + 64 * h, k0, product,
                            args.b_batched);
    }
}

template <class T>
static __global__ void __launch_bounds__(hws_cfg::threads, 1)
hgemm_warp_specialized_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b,
                            const struct hopper_args args)
{
    typedef hws_cfg C;
    extern __shared__ __align__(16) unsigned char hws_smem[];
    __shared__ __align__(8) uint64_t hws_bars[2 * C::stages];
    const uint32_t ring =
        ((uint32_t)__cvta_generic_to_shared(hws_smem) + HOPPER_ATOM_BYTES - 1) &
        ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t full = (uint32_t)__cvta_generic_to_shared(hws_bars);
    const uint32_t empty = full + 8 * C::stages;
    const struct hgemm_problem &p = args.p;
    int product = args.batch0 + (int)blockIdx.y;
    int tm, tn;
    hopper_tile_of(blockIdx.x, args.tiles_m, args.tiles_n, C::group, &tm, &tn);
    int bm0 = tm * C::bm, bn0 = tn * C::bn;
    int tiles = (p.k + C::bk - 1) / C::bk;

    if (threadIdx.x == 0) {
        hopper_tma_prefetch(&map_a);
        hopper_tma_prefetch(&map_b);
        hopper_ring_init<C::stages>(full, empty, 4 * C::consumers);
    }
    __syncthreads();

    int wg = threadIdx.x / 128;
    if (wg == 0) {
        hopper_regs_dec<C::producer_regs>();
        if (threadIdx.x == 0)
            hws_produce<C>(&map_a, &map_b, args, ring, full, empty, tiles, bm0, bn0, product);
    } else {
        hopper_regs_inc<C::consumer_regs>();
        int rows0 = 64 * (wg - 1);
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; i++)
            acc[i] = 0.0f;
        for (int t = 0; t < tiles; t++) {
            int slot = t % C::stages;
            hopper_bar_wait(full + 8 * slot, (uint32_t)(t / C::stages) & 1);
            uint32_t sa = ring + slot * C::stage_bytes + rows0 * HOPPER_ROW_BYTES;
            uint32_t sb = ring + slot * C::stage_bytes + C::a_bytes;
            hopper_fence_regs(acc);
            hopper_wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < C::bk / 16; kk++)
                hopper_mma_kn<C::bn, T>(acc, hopper_desc_k(sa + kk * 32),
                                        hopper_desc_mn(sb + kk * 16 * HOPPER_ROW_BYTES,
                                                       HOPPER_B_BLOCK),
                                        1);
            hopper_wgmma_commit();
            /* Tile t - 1's products are complete: its slot may be refilled. */
            hopper_wgmma_wait<1>();
            hopper_fence_regs(acc);
            if (t > 0 && threadIdx.x % 32 == 0)
                hopper_bar_arrive(empty + 8 * ((t - 1) % C::stages));
        }
        hopper_wgmma_wait<0>();
        hopper_fence_regs(acc);

        float *c = p.c + (long long)product * p.stride_c + (size_t)(bm0 + rows0) * p.n + bn0;
        hopper_store<C::bn>(acc, threadIdx.x % 128, c, p.n, p.m - bm0 - rows0, p.n - bn0,
                            p.alpha, p.beta, args.c_vec);
    }
}

template <class T>
static cudaError_t hws_run(struct hopper_args args, cudaStream_t stream)
{
    typedef hws_cfg C;
    const struct hgemm_problem &p = args.p;
    CUtensorMap map_a, map_b;
    CUtensorMapDataType type = hopper_elem<T>::tma_type;
    cudaError_t err = hopper_tensor_map(&map_a, type, p.a, p.m, p.k, p.lda, p.batch,
                                        p.stride_a, C::bm, C::bk);
    if (err == cudaSuccess)
        err = hopper_tensor_map(&map_b, type, p.b, p.k, p.n, p.ldb, p.batch, p.stride_b,
                                C::bk, 64);
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute(hgemm_warp_specialized_kernel<T>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
    if (err != cudaSuccess)
        return err;
    for (long long b0 = 0; b0 < p.batch; b0 += HOPPER_MAX_GRID_Y) {
        args.batch0 = (int)b0;
        dim3 grid((unsigned)(args.tiles_m * args.tiles_n),
                  (unsigned)min((long long)p.batch - b0, (long long)HOPPER_MAX_GRID_Y));
        hgemm_warp_specialized_kernel<T><<<grid, C::threads, C::smem, stream>>>(map_a, map_b, args);
        err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" cudaError_t hgemm_warp_specialized_launch(const struct hgemm_problem *p,
                                                   const struct launch_env *env)
{
    struct hopper_args args;
    cudaError_t err = hopper_args_of(p, hws_cfg::bm, hws_cfg::bn, &args);
    if (err != cudaSuccess || p->m == 0 || p->n == 0)
        return err;
    if (p->k == 0)
        return cudaErrorInvalidValue;
    return p->bf16 ? hws_run<__nv_bfloat16>(args, env->stream)
                   : hws_run<__half>(args, env->stream);
}

extern "C" cudaError_t hgemm_warp_specialized_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_warp_specialized_kernel<__half>, hws_cfg::threads, hws_cfg::smem,
                          out);
}

extern "C" int hgemm_warp_specialized_check(const struct gemm_problem *p, char *why, size_t n)
{
    return hopper_check(p, why, n, true);
}
