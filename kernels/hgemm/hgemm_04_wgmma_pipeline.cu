/* wgmma_pipeline: the copies of wgmma_tma kept up to four tiles ahead in a
 * ring whose slots are handed back by mbarriers, products kept in flight
 * across tiles, and two warpgroups of 64 x 256 each on 128 x 256 tiles;
 * the threads that multiply still issue the copies.
 *
 * Against wgmma_tma (hgemm_03_wgmma_tma.cu), where each tile's wgmma are
 * waited for to the last (wait_group 0) and the block meets at a barrier
 * before thread 0 refills the slot, the tensor cores are never left
 * without queued work and the loop has no block-wide barrier.  Each slot
 * has two mbarriers: FULL, on which thread 0 announces the tile's 49152
 * bytes and the copy engine completes them, and EMPTY, on which each of
 * the 8 warps arrives once (lane 0) when its warpgroup has finished
 * reading the slot.  Each warpgroup waits for tile t's FULL barrier,
 * issues its 4 wgmma m64n256k16 (rows 64 g .. 64 g + 63 of A's box, all
 * of B's), commits them and waits only for the group before (wait_group
 * 1): tile t's products are queued while tile t - 1's finish, and then
 * tile t - 1's slot is released.  Four slots: while tile t is multiplied,
 * tiles t + 1 .. t + 3 are landing.  A slot's k-th use waits for parity
 * k % 2 of its FULL barrier; its refill waits for the parity of the use
 * before on EMPTY.
 *
 * The order that keeps thread 0 from waiting on itself.  Thread 0 is the
 * producer and also lane 0 of warp 0, a consumer.  At step t it refills
 * slot (t - 1) % 4, tile t - 1's, with tile t + 3; that slot is empty only
 * once every warp has committed tile t's products and seen tile t - 1's
 * complete, its own warp included.  So thread 0 waits for EMPTY only at
 * the end of step t, after its own warp's arrival; refilling before
 * issuing tile t's wgmma would wait for an arrival only it could make.
 * What it then waits for, the other warps' release of tile t - 1, needs
 * nothing more from it: they wait only on FULL barriers of tiles already
 * issued (t and earlier).  At worst warpgroup 0 idles while the other
 * warpgroup catches up, its own tile t still queued on the tensor cores.
 *
 * 128 x 256 tiles halve the reads of A per product against 128 x 128;
 * each thread holds one m64n256 accumulator, 128 floats, which
 * __launch_bounds__(256, 1) (up to 255 registers a thread) leaves room
 * for without setmaxnreg.  The 4 slots of 48 KB are 192 KB of the
 * 227 KB: one block per SM.  warp_specialized (hgemm_05) keeps tile, ring
 * and consumers and moves the copies to a warpgroup of their own.
 *
 * A stack takes blockIdx.y as in wgmma_tma: 3-D maps for an operand with a
 * matrix per product, 2-D ones for a broadcast operand.  Ragged M, N and K
 * are the copy engine's zeros and the epilogue's bounds.
 *
 * Needs what wgmma_tma needs: rows of A and B multiples of 8 values and
 * K >= 1, A and B on 16-byte boundaries, batch strides multiples of 8.
 *
 * Follows Pranjal Shankhdhar, "Outperforming cuBLAS on H100: a Worklog":
 * 128 x 256 tiles, full and empty barriers, products kept in flight; the
 * PTX ISA (mbarrier, wgmma.wait_group).
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel wgmma_pipeline --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"

struct hpipe_cfg {
    static constexpr int bm = 128, bn = 256, bk = HOPPER_BK, stages = 4, group = 8;
    static constexpr int warpgroups = 2, threads = 128 * warpgroups, warps = 4 * warpgroups;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES;
    static constexpr int b_bytes = bn / 64 * HOPPER_B_BLOCK;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr size_t smem = (size_t)stages * stage_bytes + HOPPER_ATOM_BYTES;

    static_assert(bm == 64 * warpgroups, "each warpgroup owns 64 rows");
    static_assert(bn == 256, "one wgmma m64n256 per warpgroup and step of k");
    static_assert(bm <= 256 && bk * 2 == HOPPER_ROW_BYTES, "A's tile is one box");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(smem <= 227 * 1024, "the ring fits an SM's shared memory");
    static_assert(stages >= 2, "tile t - 1's slot is refilled while tile t is read");
};

/* Thread 0: the copies of tile `tile` into slot `slot`, completing on the
 * slot's FULL barrier.  The whole box counts, zeros included. */
template <class C>
static __device__ __forceinline__ void hpipe_issue(const CUtensorMap *map_a,
                                                   const CUtensorMap *map_b,
                                                   const struct hopper_args &args, uint32_t ring,
                                                   uint32_t full, int tile, int slot, int bm0,
                                                   int bn0, int product)
{
    uint32_t sa = ring + slot * C::stage_bytes, sb = sa + C::a_bytes;
    uint32_t bar = full + 8 * slot;
    int k0 = tile * C::bk;
    hopper_bar_expect(bar, C::stage_bytes);
    hopper_tma_tile(sa, map_a, bar, k0, bm0, product, args.a_batched);
#pragma unroll
    for (int h = 0; h < C::bn / 64; h++)
        hopper_tma_tile(sb + h * HOPPER_B_BLOCK, map_b, bar, bn0 + 64 * h, k0, product,
                        args.b_batched);
}

template <class T>
static __global__ void __launch_bounds__(hpipe_cfg::threads, 1)
hgemm_wgmma_pipeline_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b,
                            const struct hopper_args args)
{
    typedef hpipe_cfg C;
    extern __shared__ __align__(16) unsigned char hpipe_smem[];
    __shared__ __align__(8) uint64_t hpipe_bars[2 * C::stages];
    const uint32_t ring =
        ((uint32_t)__cvta_generic_to_shared(hpipe_smem) + HOPPER_ATOM_BYTES - 1) &
        ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t full = (uint32_t)__cvta_generic_to_shared(hpipe_bars);
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
        hopper_ring_init<C::stages>(full, empty, C::warps);
    }
    __syncthreads();
    /* Every slot starts empty: no wait before its first use. */
    if (threadIdx.x == 0)
        for (int s = 0; s < C::stages && s < tiles; s++)
            hpipe_issue<C>(&map_a, &map_b, args, ring, full, s, s, bm0, bn0, product);

    int rows0 = 64 * (threadIdx.x / 128);
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
        /* Tile t - 1's products are complete: this warp is done with its
         * slot. */
        hopper_wgmma_wait<1>();
        hopper_fence_regs(acc);
        if (t > 0) {
            int done = (t - 1) % C::stages, next = t - 1 + C::stages;
            if (threadIdx.x % 32 == 0)
                hopper_bar_arrive(empty + 8 * done);
            /* Only now, after its own warp's arrival (see the header): the
             * slot's use (t - 1) / stages completes once all 8 warps have
             * arrived. */
            if (threadIdx.x == 0 && next < tiles) {
                hopper_bar_wait(empty + 8 * done, (uint32_t)((t - 1) / C::stages) & 1);
                hpipe_issue<C>(&map_a, &map_b, args, ring, full, next, done, bm0, bn0,
                               product);
            }
            /* Warp 0 whole again before the next tile's wgmma, which its
             * 32 lanes must issue together. */
            __syncwarp();
        }
    }
    hopper_wgmma_wait<0>();
    hopper_fence_regs(acc);

    float *c = p.c + (long long)product * p.stride_c + (size_t)(bm0 + rows0) * p.n + bn0;
    hopper_store<C::bn>(acc, threadIdx.x % 128, c, p.n, p.m - bm0 - rows0, p.n - bn0, p.alpha,
                        p.beta, args.c_vec);
}

template <class T>
static cudaError_t hpipe_run(struct hopper_args args, cudaStream_t stream)
{
    typedef hpipe_cfg C;
    const struct hgemm_problem &p = args.p;
    CUtensorMap map_a, map_b;
    CUtensorMapDataType type = hopper_elem<T>::tma_type;
    cudaError_t err = hopper_tensor_map(&map_a, type, p.a, p.m, p.k, p.lda, p.batch,
                                        p.stride_a, C::bm, C::bk);
    if (err == cudaSuccess)
        err = hopper_tensor_map(&map_b, type, p.b, p.k, p.n, p.ldb, p.batch, p.stride_b,
                                C::bk, 64);
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute(hgemm_wgmma_pipeline_kernel<T>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
    if (err != cudaSuccess)
        return err;
    for (long long b0 = 0; b0 < p.batch; b0 += HOPPER_MAX_GRID_Y) {
        args.batch0 = (int)b0;
        dim3 grid((unsigned)(args.tiles_m * args.tiles_n),
                  (unsigned)min((long long)p.batch - b0, (long long)HOPPER_MAX_GRID_Y));
        hgemm_wgmma_pipeline_kernel<T><<<grid, C::threads, C::smem, stream>>>(map_a, map_b,
                                                                             args);
        err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" cudaError_t hgemm_wgmma_pipeline_launch(const struct hgemm_problem *p,
                                                   const struct launch_env *env)
{
    struct hopper_args args;
    cudaError_t err = hopper_args_of(p, hpipe_cfg::bm, hpipe_cfg::bn, &args);
    if (err != cudaSuccess || p->m == 0 || p->n == 0)
        return err;
    if (p->k == 0)
        return cudaErrorInvalidValue;
    return p->bf16 ? hpipe_run<__nv_bfloat16>(args, env->stream)
                   : hpipe_run<__half>(args, env->stream);
}

extern "C" cudaError_t hgemm_wgmma_pipeline_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_wgmma_pipeline_kernel<__half>, hpipe_cfg::threads,
                          hpipe_cfg::smem, out);
}

extern "C" int hgemm_wgmma_pipeline_check(const struct gemm_problem *p, char *why, size_t n)
{
    return hopper_check(p, why, n, true);
}
