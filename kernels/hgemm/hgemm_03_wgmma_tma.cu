/* wgmma_tma: wgmma's block, its tiles brought by the Tensor Memory
 * Accelerator (the copy engine) instead of by the threads.
 *
 * Against wgmma (hgemm_02_wgmma.cu), where every thread issues 16
 * cp.async per tile and computes each unit's source, swizzled destination
 * and bounds, one thread here issues three copies per tile: A's 128 x 64
 * box and B's two 64 x 64 boxes, each described once on the host by a
 * tensor map (dimensions, strides, box, the 128-byte swizzle) and passed
 * to the kernel as a __grid_constant__ parameter.  The engine writes the
 * swizzled layout wgmma reads (kernels/hgemm/hgemm_hopper.cuh) and fills what
 * lies outside the matrix with zeros, so ragged M, N and K cost nothing.
 * The loop holds none of the threads' address arithmetic and copy
 * instructions, nor their registers.
 *
 * Completion is counted in bytes on an mbarrier: the issuing thread
 * arrives on the slot's barrier announcing the tile's 32768 bytes
 * (arrive.expect_tx), the engine completes them as they land, and the
 * warpgroup waits for the barrier's phase (try_wait.parity; a slot's k-th
 * use waits for parity k % 2).  Two slots: tile t + 1 is in flight while
 * the tensor cores multiply tile t; after tile t's wgmma have completed
 * (wait_group 0) and a barrier, thread 0 refills its slot with tile t + 2.
 * Copy engine and wgmma both work in the async proxy: no proxy fence.
 *
 * A stack: an operand with a matrix per product has a 3-D map (the
 * product slowest, so a box past the last row reads zeros rather than the
 * next matrix); a broadcast operand (stride 0) has a 2-D map read at the
 * same coordinates for every product.
 *
 * Needs rows of A and B whose lengths (lda, ldb) are multiples of 8 values
 * and K >= 1, A and B on 16-byte boundaries, batch strides multiples of 8
 * (tensor-map strides are multiples of 16 bytes).
 *
 * Follows Pranjal Shankhdhar, "Outperforming cuBLAS on H100: a Worklog":
 * its TMA step; the PTX ISA (cp.async.bulk.tensor, mbarrier) and the CUDA
 * driver API (cuTensorMapEncodeTiled).
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel wgmma_tma --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"

struct htma_cfg {
    static constexpr int bm = 128, bn = 128, bk = HOPPER_BK, stages = 2, group = 8;
    static constexpr int threads = 128;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES;
    static constexpr int b_bytes = bn / 64 * HOPPER_B_BLOCK;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr size_t smem = (size_t)stages * stage_bytes + HOPPER_ATOM_BYTES;

    static_assert(bm == 2 * 64 && threads == 128, "one warpgroup, two m64 halves");
    static_assert(bm <= 256 && bk * 2 == HOPPER_ROW_BYTES, "A's tile is one box");
    static_assert(bn % 64 == 0, "B's tile is whole 64-column boxes");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(stages >= 2, "a ring needs two slots");
};

/* Thread 0: the copies of tile `tile` into slot `slot`. */
template <class C>
static __device__ __forceinline__ void htma_issue(const CUtensorMap *map_a,
                                                  const CUtensorMap *map_b,
                                                  const struct hopper_args &args, uint32_t ring,
                                                  uint32_t bars, int tile, int slot, int bm0,
                                                  int bn0, int product)
{
    uint32_t sa = ring + slot * C::stage_bytes, sb = sa + C::a_bytes;
    uint32_t bar = bars + 8 * slot;
    int k0 = tile * C::bk;
    hopper_bar_expect(bar, C::stage_bytes);
    hopper_tma_tile(sa, map_a, bar, k0, bm0, product, args.a_batched);
#pragma unroll
    for (int h = 0; h < C::bn / 64; h++)
        hopper_tma_tile(sb + h * HOPPER_B_BLOCK, map_b, bar, bn0 + 64 * h, k0, product,
                        args.b_batched);
}

template <class T>
static __global__ void __launch_bounds__(htma_cfg::threads)
hgemm_wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a,
                       const __grid_constant__ CUtensorMap map_b, const struct hopper_args args)
{
    typedef htma_cfg C;
    extern __shared__ __align__(16) unsigned char htma_smem[];
    __shared__ __align__(8) uint64_t htma_full[C::stages];
    const uint32_t ring =
        ((uint32_t)__cvta_generic_to_shared(htma_smem) + HOPPER_ATOM_BYTES - 1) &
        ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t bars = (uint32_t)__cvta_generic_to_shared(htma_full);
    const struct hgemm_problem &p = args.p;
    int product = args.batch0 + (int)blockIdx.y;
    int tm, tn;
    hopper_tile_of(blockIdx.x, args.tiles_m, args.tiles_n, C::group, &tm, &tn);
    int bm0 = tm * C::bm, bn0 = tn * C::bn;
    int tiles = (p.k + C::bk - 1) / C::bk;

    if (threadIdx.x == 0) {
        hopper_tma_prefetch(&map_a);
        hopper_tma_prefetch(&map_b);
#pragma unroll
        for (int s = 0; s < C::stages; s++)
            hopper_bar_init(bars + 8 * s, 1);
        hopper_bar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int s = 0; s < C::stages && s < tiles; s++)
            htma_issue<C>(&map_a, &map_b, args, ring, bars, s, s, bm0, bn0, product);

    float acc[2][64];
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc[h][i] = 0.0f;

    for (int t = 0; t < tiles; t++) {
        int slot = t % C::stages;
        hopper_bar_wait(bars + 8 * slot, (uint32_t)(t / C::stages) & 1);
        uint32_t sa = ring + slot * C::stage_bytes, sb = sa + C::a_bytes;
        hopper_fence_regs(acc[0]);
        hopper_fence_regs(acc[1]);
        hopper_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < C::bk / 16; kk++) {
            uint64_t db = hopper_desc_mn(sb + kk * 16 * HOPPER_ROW_BYTES, HOPPER_B_BLOCK);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                uint64_t da = hopper_desc_k(sa + h * 64 * HOPPER_ROW_BYTES + kk * 32);
                hopper_mma_kn<C::bn, T>(acc[h], da, db, 1);
            }
        }
        hopper_wgmma_commit();
        hopper_wgmma_wait<0>();
        hopper_fence_regs(acc[0]);
        hopper_fence_regs(acc[1]);
        /* Every warp is done reading the slot: it may be filled again. */
        __syncthreads();
        if (threadIdx.x == 0 && t + C::stages < tiles)
            htma_issue<C>(&map_a, &map_b, args, ring, bars, t + C::stages, slot, bm0, bn0,
                          product);
    }

    float *c = p.c + (long long)product * p.stride_c + (size_t)bm0 * p.n + bn0;
#pragma unroll
    for (int h = 0; h < 2; h++)
        hopper_store<C::bn>(acc[h], threadIdx.x, c + (size_t)64 * h * p.n, p.n,
                            p.m - bm0 - 64 * h, p.n - bn0, p.alpha, p.beta, args.c_vec);
}

template <class T>
static cudaError_t htma_run(struct hopper_args args, cudaStream_t stream)
{
    typedef htma_cfg C;
    const struct hgemm_problem &p = args.p;
    CUtensorMap map_a, map_b;
    CUtensorMapDataType type = hopper_elem<T>::tma_type;
    cudaError_t err = hopper_tensor_map(&map_a, type, p.a, p.m, p.k, p.lda, p.batch,
                                        p.stride_a, C::bm, C::bk);
    if (err == cudaSuccess)
        err = hopper_tensor_map(&map_b, type, p.b, p.k, p.n, p.ldb, p.batch, p.stride_b,
                                C::bk, 64);
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute(hgemm_wgmma_tma_kernel<T>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
    if (err != cudaSuccess)
        return err;
    for (long long b0 = 0; b0 < p.batch; b0 += HOPPER_MAX_GRID_Y) {
        args.batch0 = (int)b0;
        dim3 grid((unsigned)(args.tiles_m * args.tiles_n),
                  (unsigned)min((long long)p.batch - b0, (long long)HOPPER_MAX_GRID_Y));
        hgemm_wgmma_tma_kernel<T><<<grid, C::threads, C::smem, stream>>>(map_a, map_b, args);
        err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" cudaError_t hgemm_wgmma_tma_launch(const struct hgemm_problem *p,
                                              const struct launch_env *env)
{
    struct hopper_args args;
    cudaError_t err = hopper_args_of(p, htma_cfg::bm, htma_cfg::bn, &args);
    if (err != cudaSuccess || p->m == 0 || p->n == 0)
        return err;
    if (p->k == 0)
        return cudaErrorInvalidValue;
    return p->bf16 ? htma_run<__nv_bfloat16>(args, env->stream)
                   : htma_run<__half>(args, env->stream);
}

extern "C" cudaError_t hgemm_wgmma_tma_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_wgmma_tma_kernel<__half>, htma_cfg::threads, htma_cfg::smem, out);
}

extern "C" int hgemm_wgmma_tma_check(const struct gemm_problem *p, char *why, size_t n)
{
    return hopper_check(p, why, n, true);
}
