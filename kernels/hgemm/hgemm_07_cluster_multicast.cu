/* cluster_multicast: persistent with blocks in clusters of two that share
 * B's tile: each block reads half of it from memory and the copy engine
 * writes that half into both blocks' shared memory.  C leaves through
 * shared memory and the copy engine too.
 *
 * Against persistent (hgemm_06_persistent.cu), a unit of work is a pair of
 * 128 x 256 tiles stacked along M, computed by a cluster of two blocks
 * (rank 0 the upper tile, rank 1 the lower): the two tiles need the same
 * columns of B, so B's 64 x 256 slice of each step is read from L2 once
 * per pair instead of twice.  Block r loads its own A box (128 x 64) and
 * B's boxes 2r and 2r + 1 (64 x 64 each), the latter with .multicast
 * and CTA mask 0b11: the engine writes them at the same offset into both
 * blocks' slots and completes their bytes on the same-offset full barrier
 * of each.  So each block's full barrier still waits for a whole stage,
 * 49152 bytes (its A, its two B boxes, its peer's two), announced by its
 * own producer alone (1 arrival); bytes from the peer may land before the
 * announcement, which the barrier's count allows, and never for a later
 * use than the current one (below).  A pair whose lower tile lies past M
 * (an odd number of tile rows) still loads its B half for its peer, but
 * no A, and announces 16384 bytes fewer.
 *
 * A slot is refilled by two producers here, so it may be refilled only
 * when the consumers of both blocks are done with it: each consumer warp
 * releases a slot on its own block's empty barrier and, through the
 * cluster's shared window (mapa, mbarrier.arrive.release.cluster on
 * shared::cluster), on its peer's, and each empty barrier counts 16
 * arrivals (4 warps x 2 consumers x 2 blocks).  Neither block can run a
 * use ahead: a block's u-th refill of a slot waits for both blocks'
 * releases of use u - 1, which come after both full barriers completed
 * use u - 1.  The barriers are initialised before any block multicasts
 * or arrives remotely (a cluster barrier after the init), and no block
 * exits while its peer may still write into its shared memory or arrive
 * on its barriers (a cluster barrier at the end, where every thread of
 * both blocks meets).
 *
 * The epilogue: when beta = 0 and C's rows are 16-byte multiples on a
 * 16-byte aligned base (stack stride too), each consumer writes its 64 x
 * 256 result as 8 chunks of 64 x 32 floats into two staging buffers of
 * 8 KB (the 128-byte swizzle, so that a warp's float2 stores spread over
 * all banks), fences them to the async proxy, meets its warpgroup at a
 * named barrier, and one thread stores the chunk with a tensor map (the
 * engine drops what lies past M and N) and, before either buffer is
 * written again, waits until the store before has read its buffer
 * (cp.async.bulk.wait_group.read 1).  The stores run while the next
 * tile's wgmma do.  Otherwise (beta != 0, unaligned C) the same staging
 * buffers carry persistent's rows of C (persist_store_rows: a warp's 16
 * rows, 4 at a time, 1 KB contiguous a row).  The ring takes 192 KB and the staging 32 KB of the
 * 227 KB.
 *
 * The grid: as many clusters as fit at once (cudaOccupancyMaxActiveClusters),
 * at most one per pair, launched with cudaLaunchKernelEx and a cluster
 * dimension of 2.  Same tile walk, same every-shape cover, same workspace
 * as persistent (kernels/hgemm/hgemm_persistent.cuh).  A single row of tiles
 * (M <= 128) leaves half of every cluster idle.
 *
 * Follows Pranjal Shankhdhar, "Outperforming cuBLAS on H100: a Worklog":
 * clusters and TMA multicast; CUTLASS's Hopper TMA warp-specialised
 * collectives; the PTX ISA (cp.async.bulk.tensor .multicast::cluster, mapa,
 * mbarrier on shared::cluster, barrier.cluster, bulk_group stores) and the
 * CUDA runtime API (cudaLaunchKernelEx, cluster dimensions,
 * cudaOccupancyMaxActiveClusters).
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel cluster_multicast --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/hgemm/hgemm_persistent.cuh"

struct hcm_cfg : persist_cfg {
    static constexpr int cluster = 2;
    static constexpr int b_boxes = bn / 64 / cluster;        /* B boxes each block loads */
    static constexpr size_t smem = (size_t)ring_bytes + c_bytes + HOPPER_ATOM_BYTES;

    static_assert(bn / 64 % cluster == 0, "B's boxes split evenly over the cluster");
    static_assert(smem <= 227 * 1024, "ring and staging fit an SM's shared memory");
};

/* ---- the cluster ---- */

static __device__ __forceinline__ uint32_t hcm_rank(void)
{
    uint32_t r = 0;
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#else
    __trap();
#endif
    return r;
}

static __device__ __forceinline__ int hcm_cluster_id(void)
{
    uint32_t r = 0;
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
#else
    __trap();
#endif
    return (int)r;
}

static __device__ __forceinline__ int hcm_cluster_count(void)
{
    uint32_t r = 0;
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
#else
    __trap();
#endif
    return (int)r;
}

/* Every thread of both blocks meets here; what each wrote before is seen
 * by all after. */
static __device__ __forceinline__ void hcm_cluster_sync(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#else
    __trap();
#endif
}

/* The address, in the cluster's shared window, of shared address `addr`
 * of block `rank`. */
static __device__ __forceinline__ uint32_t hcm_map(uint32_t addr, uint32_t rank)
{
    uint32_t out = 0;
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(addr), "r"(rank));
#else
    __trap();
#endif
    return out;
}

/* Arrives on a barrier named in the cluster window (the peer's). */
static __device__ __forceinline__ void hcm_arrive_cluster(uint32_t bar)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(bar)
                 : "memory");
#else
    __trap();
#endif
}

/* hopper_bar_wait at cluster scope: the arrivals it waits for include the
 * peer's. */
static __device__ __forceinline__ void hcm_bar_wait_cluster(uint32_t bar, uint32_t parity)
{
#ifndef HOPPER_TRAP_ONLY
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
#else
    __trap();
#endif
}

/* hopper_tma_tile, written into the slots of every block of `mask` (at
 * `dst` in each) and completed on each one's barrier at `bar`. */
static __device__ __forceinline__ void hcm_tma_multicast(uint32_t dst, const CUtensorMap *map,
                                                         uint32_t bar, int c0, int c1,
                                                         int product, bool batched,
                                                         uint16_t mask)
{
#ifndef HOPPER_TRAP_ONLY
    if (batched)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
                     "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(product), "h"(mask)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
                     "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
                     : "memory");
#else
    __trap();
#endif
}

/* ---- the epilogue's copies out ---- */

/* The box of `map` at (c0, c1[, product]) from shared address `src`, as
 * one bulk group. */
static __device__ __forceinline__ void hcm_tma_store(const CUtensorMap *map, uint32_t src, int c0,
                                                     int c1, int product, bool batched)
{
#ifndef HOPPER_TRAP_ONLY
    if (batched)
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"
                     " [%0, {%2, %3, %4}], [%1];\n" ::"l"(map),
                     "r"(src), "r"(c0), "r"(c1), "r"(product)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
                     " [%0, {%2, %3}], [%1];\n" ::"l"(map),
                     "r"(src), "r"(c0), "r"(c1)
                     : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#else
    __trap();
#endif
}

/* Waits until at most N of this thread's bulk groups still read shared
 * memory. */
template <int N>
static __device__ __forceinline__ void hcm_store_wait_read(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#else
    __trap();
#endif
}

/* Waits until all of this thread's bulk groups are complete. */
static __device__ __forceinline__ void hcm_store_wait_all(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#else
    __trap();
#endif
}

/* The 128 threads of consumer warpgroup `cw` meet (named barrier 1 + cw;
 * 0 is __syncthreads'). */
static __device__ __forceinline__ void hcm_consumer_sync(int cw)
{
    if (cw == 0)
        asm volatile("bar.sync 1, 128;\n" ::: "memory");
    else
        asm volatile("bar.sync 2, 128;\n" ::: "memory");
}

/* A consumer's 64 x 256 result, alpha * acc, to C at column c0, row r0 of
 * `product` through its two staging buffers at `stage`, 8 chunks of 64 x
 * 32.  Thread 0 of the warpgroup issues the stores; the buffers' use runs
 * on from tile to tile (8 chunks, an even number, per tile). */
template <class C>
static __device__ __forceinline__ void hcm_store_tma(const float (&acc)[128],
                                                     const CUtensorMap *map_c, uint32_t stage,
                                                     int tid, int cw, float alpha, int c0,
                                                     int r0, int product, bool batched)
{
#pragma unroll
    for (int ch = 0; ch < C::bn / C::c_cols; ch++) {
        const uint32_t buf = stage + (ch % 2) * C::c_buf_bytes;
#pragma unroll
        for (int i = 16 * ch; i < 16 * ch + 16; i += 2) {
            int row = hopper_acc_row(i, tid), col = hopper_acc_col(i, tid) - C::c_cols * ch;
            hopper_st_shared2(buf + hopper_sw128(row, col / 4) + (col % 4) * 4, alpha * acc[i],
                           alpha * acc[i + 1]);
        }
        hopper_fence_async_shared();
        hcm_consumer_sync(cw);
        if (tid == 0) {
            hcm_tma_store(map_c, buf, c0 + C::c_cols * ch, r0, product, batched);
            /* The chunk before has been read: its buffer is the next one's. */
            hcm_store_wait_read<1>();
        }
        hcm_consumer_sync(cw);
    }
}

/* ---- producer and consumers ---- */

/* The producer's thread: every step of every pair of tiles of the
 * cluster; its own A box, and its half of B for both blocks. */
template <class C>
static __device__ __forceinline__ void hcm_produce(const CUtensorMap *map_a,
                                                   const CUtensorMap *map_b,
                                                   const struct persist_args &args,
                                                   uint32_t ring, uint32_t full, uint32_t empty,
                                                   uint32_t rank)
{
    const uint16_t all = (1u << C::cluster) - 1;
    struct persist_ring r = { 0, 0, false };
    for (int id = hcm_cluster_id(); id < args.units; id += hcm_cluster_count()) {
        int product, pm, tn;
        persist_unit_of(args, id, C::group / C::cluster, &product, &pm, &tn);
        int tm = C::cluster * pm + (int)rank;
        bool has_a = tm < args.h.tiles_m;
        int bm0 = has_a ? tm * C::bm : 0, bn0 = tn * C::bn;
        uint32_t bytes = has_a ? C::stage_bytes : C::stage_bytes - C::a_bytes;
        for (int t = 0; t < args.k_tiles; t++) {
            if (r.lapped)
                hcm_bar_wait_cluster(empty + 8 * r.slot, r.phase ^ 1);
            uint32_t sa = ring + r.slot * C::stage_bytes, sb = sa + C::a_bytes;
            uint32_t bar = full + 8 * r.slot;
            int k0 = t * C::bk;
            hopper_bar_expect(bar, bytes);
            if (has_a)
                hopper_tma_tile(sa, map_a, bar, k0, bm0, product, args.h.a_batched);
#pragma unroll
            for (int h = 0; h < C::b_boxes; h++) {
                int box = C::b_boxes * (int)rank + h;
                hcm_tma_multicast(sb + box * HOPPER_B_BLOCK, map_b, bar, bn0 + 64 * box, k0,
                                  product, args.h.b_batched, all);
            }
            persist_next(r);
        }
    }
}

/* Consumer warpgroup `cw`: its 64 rows of the block's tile of every pair,
 * stored by the copy engine (C_TMA) or from the staging buffers a row at a
 * time. */
template <class C, class T, bool C_TMA>
static __device__ __forceinline__ void hcm_consume(const CUtensorMap *map_c,
                                                   const struct persist_args &args,
                                                   uint32_t ring, uint32_t full, uint32_t empty,
                                                   uint32_t stage, uint32_t rank, int cw)
{
    const struct hgemm_problem &p = args.h.p;
    const int tid = threadIdx.x % 128, rows0 = 64 * cw;
    const uint32_t peer = rank ^ 1;
    struct persist_ring r = { 0, 0, false };
    float acc[128];
    for (int id = hcm_cluster_id(); id < args.units; id += hcm_cluster_count()) {
        int product, pm, tn;
        persist_unit_of(args, id, C::group / C::cluster, &product, &pm, &tn);
        int tm = C::cluster * pm + (int)rank;
        persist_mma_tile<T>(acc, ring, full, r, args.k_tiles, rows0, [&](int slot) {
            if (threadIdx.x % 32 == 0) {
                hopper_bar_arrive(empty + 8 * slot);
                hcm_arrive_cluster(hcm_map(empty + 8 * slot, peer));
            }
        });
        if (tm >= args.h.tiles_m || (long long)tm * C::bm + rows0 >= p.m)
            continue;
        int bm0 = tm * C::bm, bn0 = tn * C::bn;
        if constexpr (C_TMA) {
            hcm_store_tma<C>(acc, map_c, stage + cw * 2 * C::c_buf_bytes, tid, cw, p.alpha, bn0,
                             bm0 + rows0, product, p.batch > 1);
        } else {
            float *c = p.c + (long long)product * p.stride_c + ((size_t)bm0 + rows0) * p.n + bn0;
            persist_store_rows<C>(acc, stage + cw * 2 * C::c_buf_bytes, tid, c, p.n,
                                  p.m - bm0 - rows0, p.n - bn0, p.alpha, p.beta);
        }
    }
    if (C_TMA && tid == 0)
        hcm_store_wait_all();
}

template <class T, bool C_TMA>
static __global__ void __launch_bounds__(hcm_cfg::threads, 1)
hgemm_cluster_multicast_kernel(const __grid_constant__ CUtensorMap map_a,
                               const __grid_constant__ CUtensorMap map_b,
                               const __grid_constant__ CUtensorMap map_c,
                               const struct persist_args args)
{
    typedef hcm_cfg C;
    extern __shared__ __align__(16) unsigned char hcm_smem[];
    __shared__ __align__(8) uint64_t hcm_bars[2 * C::stages];
    /* The same offsets in both blocks: multicast and remote arrivals name
     * the peer's slots and barriers by this block's addresses. */
    const uint32_t ring =
        ((uint32_t)__cvta_generic_to_shared(hcm_smem) + HOPPER_ATOM_BYTES - 1) &
        ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t stage = ring + C::ring_bytes;
    const uint32_t full = (uint32_t)__cvta_generic_to_shared(hcm_bars);
    const uint32_t empty = full + 8 * C::stages;
    const uint32_t rank = hcm_rank();

    if (threadIdx.x == 0) {
        if (args.k_tiles > 0) {
            hopper_tma_prefetch(&map_a);
            hopper_tma_prefetch(&map_b);
        }
        if (C_TMA)
            hopper_tma_prefetch(&map_c);
        hopper_ring_init<C::stages>(full, empty, 4 * C::consumers * C::cluster);
    }
    hcm_cluster_sync();

    int wg = threadIdx.x / 128;
    if (wg == 0) {
        hopper_regs_dec<C::producer_regs>();
        if (threadIdx.x == 0)
            hcm_produce<C>(&map_a, &map_b, args, ring, full, empty, rank);
        hcm_cluster_sync();
    } else {
        hopper_regs_inc<C::consumer_regs>();
        hcm_consume<C, T, C_TMA>(&map_c, args, ring, full, empty, stage, rank, wg - 1);
        hcm_cluster_sync();
    }
}

/* A tensor map over C for the stores (64 x 32 float boxes, 128-byte
 * swizzle), when C can take them: beta = 0 (C is not read), rows of
 * 16-byte multiples, a 16-byte aligned base and stack stride.  0 if not. */
static int hcm_c_map(CUtensorMap *map, const struct hgemm_problem *p)
{
    typedef hcm_cfg C;
    bool batched = p->batch > 1;
    if (p->beta != 0.0f || p->n % 4 != 0 || (uintptr_t)p->c % 16 != 0 ||
        (batched && (p->stride_c % 4 != 0 || p->stride_c >= (1ll << 38))))
        return 0;
    PFN_cuTensorMapEncodeTiled_v12000 encode = hopper_encode_fn();
    if (!encode)
        return 0;
    cuuint64_t dims[3] = { (cuuint64_t)p->n, (cuuint64_t)p->m,
                           (cuuint64_t)(batched ? p->batch : 1) };
    cuuint64_t strides[2] = { (cuuint64_t)p->n * 4,
                              (cuuint64_t)(batched ? p->stride_c : 0) * 4 };
    cuuint32_t box[3] = { C::c_cols, 64, 1 };
    cuuint32_t steps[3] = { 1, 1, 1 };
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, batched ? 3 : 2, p->c, dims, strides,
                  box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <class T>
static cudaError_t hcm_run(const struct hgemm_problem *p, const struct launch_env *env)
{
    typedef hcm_cfg C;
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    CUtensorMap map_c;
    memset(&map_c, 0, sizeof map_c);
    auto kernel = hcm_c_map(&map_c, p) ? hgemm_cluster_multicast_kernel<T, true>
                                       : hgemm_cluster_multicast_kernel<T, false>;
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
    if (err != cudaSuccess)
        return err;

    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = C::cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(C::cluster);
    cfg.blockDim = dim3(C::threads);
    cfg.dynamicSmemBytes = C::smem;
    cfg.stream = env->stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess || clusters < 1) {
        (void)cudaGetLastError();   /* not this launch's error: fall back to the SMs' count */
        clusters = env->sm_count / C::cluster;
    }
    clusters = clusters < 1 ? 1 : min(clusters, PERSIST_MAX_BLOCKS / C::cluster);

    return persist_run<T>(p, C::cluster, env->stream,
                          [&](const CUtensorMap &map_a, const CUtensorMap &map_b,
                              const struct persist_args &args) {
                              int n = args.units < clusters ? args.units : clusters;
                              cfg.gridDim = dim3((unsigned)(C::cluster * n));
                              return cudaLaunchKernelEx(&cfg, kernel, map_a, map_b, map_c,
                                                        args);
                          });
}

extern "C" cudaError_t hgemm_cluster_multicast_launch(const struct hgemm_problem *p,
                                                      const struct launch_env *env)
{
    return p->bf16 ? hcm_run<__nv_bfloat16>(p, env) : hcm_run<__half>(p, env);
}

extern "C" cudaError_t hgemm_cluster_multicast_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_cluster_multicast_kernel<__half, true>, hcm_cfg::threads,
                          hcm_cfg::smem, out);
}

extern "C" int hgemm_cluster_multicast_check(const struct gemm_problem *p, char *why, size_t n)
{
    return persist_check(p, why, n);
}

extern "C" size_t hgemm_cluster_multicast_workspace(const struct gemm_problem *p)
{
    return persist_workspace(p);
}
