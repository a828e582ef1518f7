/* What the Hopper stages of the half ladder share (hgemm_02_wgmma.cu,
 * hgemm_03_wgmma_tma.cu, hgemm_04_wgmma_pipeline.cu): the tensor-core
 * instruction wgmma.mma_async (sm_90a) and its fences, the 128-byte swizzled
 * shared-memory layout it reads and the descriptors that name it, mbarriers,
 * the Tensor Memory Accelerator's tiled loads and, on the host, the tensor
 * maps that drive them; plus the check, tile order and epilogue the three
 * stages have in common.
 *
 * The layout.  Every operand tile lives in shared memory as rows of 128
 * bytes (64 halves), 1024-byte aligned, with the 16-byte unit u of row r
 * stored at unit u ^ (r % 8): the 128-byte swizzle, which the copy engine
 * writes (CU_TENSOR_MAP_SWIZZLE_128B) and wgmma reads (descriptor mode 1).
 * Both apply it to address bits (bits 4..6 ^= bits 7..9), so a tile whose
 * base is 1024-aligned means the same thing to both, and to a thread that
 * computes the addresses itself (hopper_sw128).
 *   A (m x k, K contiguous, the K-major operand): a tile of BM rows x 64
 *   values of k is BM such rows; wgmma's 64 x 16 slice at k = 16 kk starts
 *   32 kk bytes into the tile (the swizzle is on absolute address bits, so
 *   the start moves inside the atom), 8-row groups 1024 bytes apart (SBO);
 *   LBO is unused for swizzled K-major layouts.
 *   B (k x n, N contiguous, MN-major: tnspB = 1): a tile of 64 values of k x
 *   BN columns is BN / 64 blocks of 64 rows (one per k) of 128 bytes (64
 *   columns), 8192 bytes apart, as a TMA box of 64 x 64 lands.  The 16 x BN
 *   slice at k = 16 kk starts 2048 kk bytes in; the descriptor's LBO is the
 *   step between 64-column blocks (8192), SBO the step between groups of 8
 *   rows of k (1024), as PTX ISA 9.7.15.5.1.2 defines them for MN-major
 *   swizzled layouts (CUTLASS's canonical form ((8,n),(8,k)):((1,LBO),(8,SBO))
 *   in 16-byte units).
 *
 * The accumulator of wgmma m64nNk16 with an f32 D: warp w of the warpgroup
 * holds rows 16 w .. 16 w + 15; lane l holds, for each 8-column block j,
 * d[4j + 0..1] at row 16 w + l / 4, columns 8 j + 2 (l % 4) + 0..1, and
 * d[4j + 2..3] the same columns 8 rows further down (hopper_acc_row/col).
 *
 * Only the sm_90a target has wgmma and setmaxnreg: for any other target the
 * device helpers compile to a trap, so that the files still build in a
 * plain sm_90 pass (or as PTX); hopper_check refuses every device but
 * compute capability 9.0, as the rows' KERNEL_ARCH_EXACT says.
 *
 * The layout and descriptors are the PTX ISA's; the steps follow Pranjal
 * Shankhdhar, "Outperforming cuBLAS on H100: a Worklog".  Run through its
 * stages, e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel wgmma_tma --verify --repeat 20 */
#ifndef GC_KERNELS_HGEMM_HOPPER_CUH
#define GC_KERNELS_HGEMM_HOPPER_CUH

#include <stdint.h>
#include <stdio.h>
/* Types only: CUtensorMap, its enums and the entry point's signature.  The
 * driver function itself is looked up at run time (hopper_encode_fn), so
 * the build links the static runtime and never libcuda. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/gemm.h"
#include "kernels/common.cuh"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ != 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL))
#define HOPPER_TRAP_ONLY 1
#endif

/* ---- the swizzled layout and its descriptors ---- */

enum {
    HOPPER_ROW_BYTES = 128,      /* one swizzled row: 64 16-bit values */
    HOPPER_ATOM_BYTES = 1024,    /* 8 rows: the swizzle's repeating pattern */
    HOPPER_BK = 64,              /* values of k per tile: one row of A */
    HOPPER_B_BLOCK = HOPPER_BK * HOPPER_ROW_BYTES   /* 64 columns of B x 64 of k */
};

/* Byte offset of 16-byte unit `unit` (0..7) of row `row` in a 1024-aligned
 * swizzled tile. */
static __host__ __device__ __forceinline__ uint32_t hopper_sw128(uint32_t row, uint32_t unit)
{
    return row * HOPPER_ROW_BYTES + ((unit ^ (row & 7)) << 4);
}

/* matrix-descriptor-encode: bits 4..17 of a shared address or a stride. */
static __host__ __device__ __forceinline__ uint64_t hopper_desc_field(uint32_t bytes)
{
    return (uint64_t)((bytes & 0x3FFFF) >> 4);
}

/* Descriptor of a K-major operand (A) at shared address `addr`: 8-row
 * groups one atom apart; LBO unused (1 by convention); 128B swizzle. */
static __host__ __device__ __forceinline__ uint64_t hopper_desc_k(uint32_t addr)
{
    return hopper_desc_field(addr) | hopper_desc_field(16) << 16 |
           hopper_desc_field(HOPPER_ATOM_BYTES) << 32 | 1ull << 62;
}

/* Descriptor of an MN-major operand (B) at shared address `addr`: 64-column
 * blocks `block_bytes` apart (LBO), 8-row groups of k one atom apart (SBO);
 * 128B swizzle. */
static __host__ __device__ __forceinline__ uint64_t hopper_desc_mn(uint32_t addr,
                                                                   uint32_t block_bytes)
{
    return hopper_desc_field(addr) | hopper_desc_field(block_bytes) << 16 |
           hopper_desc_field(HOPPER_ATOM_BYTES) << 32 | 1ull << 62;
}

/* Row and column, in the warpgroup's 64 x N tile, of accumulator i of the
 * thread `tid` (0..127) of the warpgroup. */
static __host__ __device__ __forceinline__ int hopper_acc_row(int i, int tid)
{
    return 16 * (tid / 32) + (tid % 32) / 4 + 8 * ((i / 2) % 2);
}

static __host__ __device__ __forceinline__ int hopper_acc_col(int i, int tid)
{
    return 8 * (i / 4) + 2 * (tid % 4) + i % 2;
}

/* ---- wgmma ---- */

/* Orders this warpgroup's register accesses before the wgmma that follow. */
static __device__ __forceinline__ void hopper_wgmma_fence(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
    __trap();
#endif
}

static __device__ __forceinline__ void hopper_wgmma_commit(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#else
    __trap();
#endif
}

/* Waits until at most N of this warpgroup's committed groups are pending. */
template <int N>
static __device__ __forceinline__ void hopper_wgmma_wait(void)
{
    static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
#ifndef HOPPER_TRAP_ONLY
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#else
    __trap();
#endif
}

/* Keeps the compiler from moving accesses to the accumulators across this
 * point: wgmma reads and writes them asynchronously, which it cannot see. */
template <int R>
static __device__ __forceinline__ void hopper_fence_regs(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

#define HOPPER_D8(o)                                                                          \
    "+f"(d[(o) + 0]), "+f"(d[(o) + 1]), "+f"(d[(o) + 2]), "+f"(d[(o) + 3]), "+f"(d[(o) + 4]), \
        "+f"(d[(o) + 5]), "+f"(d[(o) + 6]), "+f"(d[(o) + 7])
#define HOPPER_D64(o)                                                                         \
    HOPPER_D8((o) + 0), HOPPER_D8((o) + 8), HOPPER_D8((o) + 16), HOPPER_D8((o) + 24),         \
        HOPPER_D8((o) + 32), HOPPER_D8((o) + 40), HOPPER_D8((o) + 48), HOPPER_D8((o) + 56)

#define HOPPER_REGS64                                                                         \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                 \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "        \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "        \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define HOPPER_REGS128                                                                        \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                 \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "        \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "        \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "        \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "        \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "        \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "  \
    "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "    \
    "%125, %126, %127}"

/* D (64 x N, f32) = A (64 x 16) * B (16 x N) + (scale_d ? D : 0), A and B
 * of type TY from the shared memory the descriptors name; TA / TB: 0 for
 * K-major, 1 for MN-major (transposed). */
#define HOPPER_WGMMA_128(TY)                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                 \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " " HOPPER_REGS64  \
                 ", %64, %65, p, 1, 1, %67, %68;\n}\n"                                        \
                 : HOPPER_D64(0)                                                              \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TA), "n"(TB))
#define HOPPER_WGMMA_256(TY)                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." TY "." TY " " HOPPER_REGS128 \
                 ", %128, %129, p, 1, 1, %131, %132;\n}\n"                                    \
                 : HOPPER_D64(0), HOPPER_D64(64)                                              \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TA), "n"(TB))

template <class T> struct hopper_elem;
template <> struct hopper_elem<__half> {
    static constexpr bool bf16 = false;
    static constexpr CUtensorMapDataType tma_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
};
template <> struct hopper_elem<__nv_bfloat16> {
    static constexpr bool bf16 = true;
    static constexpr CUtensorMapDataType tma_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};

template <int N> struct hopper_mma;

template <> struct hopper_mma<128> {
    template <class T, int TA, int TB>
    static __device__ __forceinline__ void run(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                               int scale_d)
    {
#ifndef HOPPER_TRAP_ONLY
        if constexpr (hopper_elem<T>::bf16)
            HOPPER_WGMMA_128("bf16");
        else
            HOPPER_WGMMA_128("f16");
#else
        __trap();
#endif
    }
};

template <> struct hopper_mma<256> {
    template <class T, int TA, int TB>
    static __device__ __forceinline__ void run(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                               int scale_d)
    {
#ifndef HOPPER_TRAP_ONLY
        if constexpr (hopper_elem<T>::bf16)
            HOPPER_WGMMA_256("bf16");
        else
            HOPPER_WGMMA_256("f16");
#else
        __trap();
#endif
    }
};

/* The product the stages issue: A K-major, B MN-major (row-major k x n). */
template <int N, class T>
static __device__ __forceinline__ void hopper_mma_kn(float (&d)[N / 2], uint64_t desc_a,
                                                     uint64_t desc_b, int scale_d)
{
    hopper_mma<N>::template run<T, 0, 1>(d, desc_a, desc_b, scale_d);
}

/* D (64 x N, f32) = A (64 x 8) * B (8 x N) + (scale_d ? D : 0), both TF32
 * (floats whose low 13 bits are ignored) and K-major in shared memory:
 * wgmma has no transposed layouts for TF32 (kernels/sgemm/sgemm_tf32.cuh). */
static __device__ __forceinline__ void hopper_mma_tf32_256(float (&d)[128], uint64_t desc_a,
                                                           uint64_t desc_b, int scale_d)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " HOPPER_REGS128
                 ", %128, %129, p, 1, 1;\n}\n"
                 : HOPPER_D64(0), HOPPER_D64(64)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#else
    __trap();
#endif
}

static __device__ __forceinline__ void hopper_mma_tf32_128(float (&d)[64], uint64_t desc_a,
                                                           uint64_t desc_b, int scale_d)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " HOPPER_REGS64
                 ", %64, %65, p, 1, 1;\n}\n"
                 : HOPPER_D64(0)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#else
    __trap();
#endif
}

#undef HOPPER_WGMMA_256
#undef HOPPER_WGMMA_128
#undef HOPPER_D64
#undef HOPPER_D8

/* setmaxnreg: a warpgroup gives registers back (dec) or takes them (inc). */
template <int R>
static __device__ __forceinline__ void hopper_regs_dec(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}

template <int R>
static __device__ __forceinline__ void hopper_regs_inc(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}

/* ---- proxies, mbarriers ---- */

/* Makes this thread's earlier generic-proxy shared-memory writes (stores,
 * cp.async) visible to the async proxy (wgmma, the copy engine). */
static __device__ __forceinline__ void hopper_fence_async_shared(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#else
    __trap();
#endif
}

static __device__ __forceinline__ void hopper_bar_init(uint32_t bar, uint32_t count)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#else
    __trap();
#endif
}

/* After the inits: they become visible to the copy engine's complete_tx
 * (the barrier that follows makes them visible to the other threads). */
static __device__ __forceinline__ void hopper_bar_init_fence(void)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#else
    __trap();
#endif
}

/* A ring of `Stages` slots, set up by one thread: slot s's full barrier
 * at full + 8 s (one arrival: the producer's, with the bytes it expects)
 * and its empty barrier at empty + 8 s (`releases` arrivals: the warps
 * that free it), then the fence above. */
template <int Stages>
static __device__ __forceinline__ void hopper_ring_init(uint32_t full, uint32_t empty,
                                                        uint32_t releases)
{
#pragma unroll
    for (int s = 0; s < Stages; s++) {
        hopper_bar_init(full + 8 * s, 1);
        hopper_bar_init(empty + 8 * s, releases);
    }
    hopper_bar_init_fence();
}

static __device__ __forceinline__ void hopper_bar_arrive(uint32_t bar)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#else
    __trap();
#endif
}

/* Arrives and announces `bytes` that copies will complete on the barrier. */
static __device__ __forceinline__ void hopper_bar_expect(uint32_t bar, uint32_t bytes)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
#else
    __trap();
#endif
}

/* Waits for the completion of the barrier's phase of parity `parity`
 * (phase 0 first: parity 0, then 1, 0, ...). */
static __device__ __forceinline__ void hopper_bar_wait(uint32_t bar, uint32_t parity)
{
#ifndef HOPPER_TRAP_ONLY
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
#else
    __trap();
#endif
}

/* ---- the Tensor Memory Accelerator ---- */

static __device__ __forceinline__ void hopper_tma_prefetch(const CUtensorMap *map)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
#else
    __trap();
#endif
}

/* Copies the box of `map` at coordinates (c0 innermost, c1[, c2]) to shared
 * address `dst` (1024-aligned for the 128B swizzle) and completes its bytes
 * on the barrier at `bar`.  Elements outside the tensor arrive as zeros and
 * still count.  The destination is named in the cluster window, the form
 * that .multicast::cluster (with a CTA mask) extends. */
static __device__ __forceinline__ void hopper_tma_2d(uint32_t dst, const CUtensorMap *map,
                                                     uint32_t bar, int c0, int c1)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(c0), "r"(c1)
                 : "memory");
#else
    __trap();
#endif
}

static __device__ __forceinline__ void hopper_tma_3d(uint32_t dst, const CUtensorMap *map,
                                                     uint32_t bar, int c0, int c1, int c2)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#else
    __trap();
#endif
}

/* A tile of an operand: through the 3-D map (batch slowest) when the
 * operand has a matrix per product, else through the 2-D map at the same
 * coordinates. */
static __device__ __forceinline__ void hopper_tma_tile(uint32_t dst, const CUtensorMap *map,
                                                       uint32_t bar, int c0, int c1, int product,
                                                       bool batched)
{
    if (batched)
        hopper_tma_3d(dst, map, bar, c0, c1, product);
    else
        hopper_tma_2d(dst, map, bar, c0, c1);
}

/* ---- cp.async ---- */

/* 16 bytes from global `src` to shared `dst`; zeros (nothing read) when
 * !ok. */
static __device__ __forceinline__ void hopper_cp16(uint32_t dst, const void *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 16 : 0)
                 : "memory");
}

static __device__ __forceinline__ void hopper_cp_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N>
static __device__ __forceinline__ void hopper_cp_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* 8 bytes to shared memory; 4 bytes from it. */
static __device__ __forceinline__ void hopper_st_shared2(uint32_t addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

static __device__ __forceinline__ float hopper_ld_shared(uint32_t addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

/* ---- what the three stages share ---- */

/* The stage's arguments beyond the problem. */
struct hopper_args {
    struct hgemm_problem p;
    int batch0;               /* product of blockIdx.y == 0 */
    int tiles_m, tiles_n;
    int c_vec;                /* C may be written as float2 */
    int a_batched, b_batched; /* TMA: the operand's 3-D map (a matrix per product) */
};

/* Where block `id` works: down a band of `group` tile rows, then right, so
 * that the blocks resident together share rows of A and columns of B in
 * L2. */
static __host__ __device__ __forceinline__ void hopper_tile_of(int id, int tiles_m, int tiles_n,
                                                               int group, int *tm, int *tn)
{
    int band = id / (group * tiles_n);
    int first = band * group;
    int rows = tiles_m - first < group ? tiles_m - first : group;
    int in_band = id - band * group * tiles_n;
    *tm = first + in_band % rows;
    *tn = in_band / rows;
}

/* Writes the 64 x N accumulators of thread `tid` (0..127) of a warpgroup
 * to C at `c` (the warpgroup's first element, rows ldc apart): alpha * acc
 * + beta * C, rows below `rows` and columns below `cols` only.  C is read
 * only when beta != 0.  float2 stores (vec) need cols even. */
template <int N>
static __host__ __device__ __forceinline__ void hopper_store(const float (&d)[N / 2], int tid,
                                                             float *c, int ldc, int rows,
                                                             int cols, float alpha, float beta,
                                                             bool vec)
{
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int i = 0; i < N / 2; i += 2) {
        int row = hopper_acc_row(i, tid), col = hopper_acc_col(i, tid);
        if (row >= rows || col >= cols)
            continue;
        float *p = c + (size_t)row * ldc + col;
        float v0 = alpha * d[i], v1 = alpha * d[i + 1];
        if (vec) {
            if (beta != 0.0f) {
                float2 old = *reinterpret_cast<const float2 *>(p);
                v0 += beta * old.x;
                v1 += beta * old.y;
            }
            *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
        } else {
            p[0] = beta != 0.0f ? v0 + beta * p[0] : v0;
            if (col + 1 < cols)
                p[1] = beta != 0.0f ? v1 + beta * p[1] : v1;
        }
    }
}

/* ---- host ---- */

/* The stages' conditions beyond the device (the registry's: their rows are
 * KERNEL_ARCH_EXACT): 16-byte rows, bases and batch strides for 16-byte copies
 * (cp.async or TMA); `tma` adds the tensor map's: K >= 1 (no dimension of
 * 0) and strides below 2^39 values. */
static inline int hopper_check(const struct gemm_problem *p, char *why, size_t n, bool tma)
{
    if (p->lda % 8 != 0 || p->ldb % 8 != 0) {
        snprintf(why, n, "rows of A and B must be multiples of 8 values (16 bytes); this "
                 "product's are %lld and %lld", (long long)p->lda, (long long)p->ldb);
        return 0;
    }
    if ((uintptr_t)p->a % 16 != 0 || (uintptr_t)p->b % 16 != 0) {
        snprintf(why, n, "A and B must start on 16-byte boundaries");
        return 0;
    }
    if (p->batch > 1 && (p->stride_a % 8 != 0 || p->stride_b % 8 != 0)) {
        snprintf(why, n, "the stack's strides of A and B must be multiples of 8 elements");
        return 0;
    }
    if (tma && p->k < 1) {
        snprintf(why, n, "K = 0: a tensor map has no dimension of 0");
        return 0;
    }
    if (tma && (p->lda >= (1ll << 39) || p->ldb >= (1ll << 39) ||
                (p->batch > 1 && (p->stride_a >= (1ll << 39) || p->stride_b >= (1ll << 39))))) {
        snprintf(why, n, "rows and the stack's matrices of A and B must lie less than 2^39 "
                 "values apart (tensor-map strides)");
        return 0;
    }
    return 1;
}

/* cuTensorMapEncodeTiled, from the driver that the runtime has loaded
 * (looked up once per process: the lookup is not free, the answer never
 * changes); NULL if the driver has none. */
static inline PFN_cuTensorMapEncodeTiled_v12000 hopper_encode_fn(void)
{
    static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void *f = NULL;
        cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                             cudaEnableDefault, &found) != cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            f = NULL;
        return (PFN_cuTensorMapEncodeTiled_v12000)f;
    }();
    return fn;
}

/* A tensor map over `count` row-major matrices of rows x cols values of
 * `es` bytes (16-bit unless said) at `base`, rows `ld` values apart,
 * matrices `stride` values apart (3-D, the matrix index slowest; 2-D when
 * count == 1 or stride == 0), read in boxes of box_rows x box_cols
 * (box_cols * es <= 128) into the 128-byte swizzle.  The matrices may overlap: the slices of K that
 * gemm_run_hgemm hands over as a stack are `stride` = K/S apart on rows
 * of ld = K. */
static inline cudaError_t hopper_tensor_map(CUtensorMap *map, CUtensorMapDataType type,
                                            const void *base, uint64_t rows, uint64_t cols,
                                            uint64_t ld, uint64_t count, long long stride,
                                            uint32_t box_rows, uint32_t box_cols,
                                            uint64_t es = 2)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = hopper_encode_fn();
    if (!encode)
        return cudaErrorNotSupported;
    bool batched = count > 1 && stride != 0;
    cuuint64_t dims[3] = { cols, rows, batched ? count : 1 };
    cuuint64_t strides[2] = { ld * es, (cuuint64_t)(batched ? stride : 0) * es };
    cuuint32_t box[3] = { box_cols, box_rows, 1 };
    cuuint32_t steps[3] = { 1, 1, 1 };
    CUresult r = encode(map, type, batched ? 3 : 2, const_cast<void *>(base), dims, strides, box,
                        steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

/* The launch-invariant arguments of a problem whose tiles are bm x bn, or
 * an error when the grid cannot hold its tiles. */
static inline cudaError_t hopper_args_of(const struct hgemm_problem *p, int bm, int bn,
                                  struct hopper_args *args)
{
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return cudaErrorInvalidValue;
    int batch = p->batch > 1 ? p->batch : 1;
    long long tiles_m = ((long long)p->m + bm - 1) / bm;
    long long tiles_n = ((long long)p->n + bn - 1) / bn;
    if (tiles_m * tiles_n > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    args->p = *p;
    args->p.batch = batch;
    args->p.stride_a = batch > 1 ? p->stride_a : 0;
    args->p.stride_b = batch > 1 ? p->stride_b : 0;
    args->p.stride_c = batch > 1 ? p->stride_c : 0;
    args->batch0 = 0;
    args->tiles_m = (int)tiles_m;
    args->tiles_n = (int)tiles_n;
    args->c_vec = p->n % 2 == 0 && args->p.stride_c % 2 == 0 && (uintptr_t)p->c % 8 == 0;
    args->a_batched = args->p.stride_a != 0;
    args->b_batched = args->p.stride_b != 0;
    return cudaSuccess;
}

enum { HOPPER_MAX_GRID_Y = 65535 };   /* products per launch */

#endif
