/* i8_igmma: int8 operands on Hopper's integer tensor cores through wgmma
 * (IGMMA), int32 C = A * B (or C += A * B), the sums exact modulo 2^32:
 * warp_specialized's ring (hgemm_05_warp_specialized.cu) on bytes.
 *
 * wgmma reads 8-bit operands K-major only: A's rows are so as they lie,
 * B (row-major, n contiguous) is not.  A pass before the product writes
 * B^T (n x k, rows padded to a multiple of 16 bytes, as the copy engine
 * needs) into the stream's pool; A is copied there as well when its rows
 * or base are not 16-byte aligned.  Both then land through the copy
 * engine in the 128-byte swizzle, rows of 128 bytes = 128 values of k:
 * a tile is A's 128 x 128 box and B^T's 256 x 128 box, 48 KB, as the
 * 16-bit stage's, and each row of 128 bytes is four wgmma m64n256k32
 * s32.s8.s8, each consumer warpgroup 64 rows of the 128, 128 int32
 * accumulators a thread.  Producer warpgroup, 4-slot ring, setmaxnreg
 * (40 / 232) and the epilogue's bounds are warp_specialized's; the store
 * is int32, adding to C where the tiles sum K in steps.
 *
 * The pass over B costs a read and a write of its bytes, 2 K N against
 * the product's 2 M N K operations: a share that falls as M grows (not
 * yet measured).
 *
 * gemmcli's own: warp_specialized's ring on int8, as the 16-bit ladder's
 * Hopper stages build it; the PTX ISA gives wgmma's .s8 shapes
 * (m64nNk32, K-major only) and the accumulator layout, which is f32's.
 *
 * Run and checked by (a.npy and b.npy int8):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel i8_igmma --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/ozaki.h"

struct igm_cfg {
    static constexpr int bm = 128, bn = 256, bk = HOPPER_ROW_BYTES, stages = 4, group = 8;
    static constexpr int consumers = 2, threads = 128 * (consumers + 1);
    static constexpr int producer_regs = 40, consumer_regs = 232;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES, b_bytes = bn * HOPPER_ROW_BYTES;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr size_t smem = (size_t)stages * stage_bytes + HOPPER_ATOM_BYTES;
    /* The modular epilogue's staging, past the ring: each consumer warp's
     * 16 rows of 256 digits, rows 264 bytes apart (two-byte stores of a
     * row's eight lanes land in distinct banks; eight-byte reads stay
     * aligned). */
    static constexpr int st_pitch = bn + 8, st_warp = 16 * st_pitch;
    static constexpr size_t smem_mod = smem + (size_t)4 * consumers * st_warp;

    static_assert(bm == 64 * consumers, "each consumer warpgroup owns 64 rows");
    static_assert(bn == 256, "one wgmma m64n256 per consumer and step of 32 k");
    static_assert(bn <= 256 && bm <= 256, "each operand's tile is one box");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(smem <= 227 * 1024, "the ring fits an SM's shared memory");
    static_assert(smem_mod + 64 <= 227 * 1024, "and the modular staging beside it");
    static_assert(128 * producer_regs + 128 * consumers * consumer_regs <= 65536,
                  "setmaxnreg within the register file");
};

/* Rows of B^T (and of a copied A) are padded to this many bytes: the
 * copy engine's row pitch. */
enum { IGM_PITCH = 16, IGM_T = 64 };

struct igm_args {
    int m, n, k;
    int32_t *c;
    long long stride_c;
    int accumulate;
    int batch0;
    int tiles_m, tiles_n;
    int a_batched, b_batched;
    int c_vec;                 /* C may be written as int2 */
    /* The modular epilogue's (kernel<true>): C's sums times mod_w modulo
     * mod_p, as int8 in [-p/2, p/2), to `digits` (rows n apart), added to
     * the digits there when `fold` (K in pieces); C itself is not written. */
    int8_t *digits;
    int mod_p, mod_w, fold;
    int d_vec;                 /* digits' rows may be written 8 bytes at a time */
};

/* ---- B^T ---- */

/* B (k x n, rows n apart, products stride_b apart) to B^T (n x k, rows kp
 * apart, products n kp apart), a 64 x 64 block a block of 256 threads:
 * words of 4 columns in (bytes at the edges), words of 4 values of k out;
 * values of k past K come out as zeros. */
static __global__ void __launch_bounds__(256)
igm_transpose(const int8_t *b, long long stride_b, int k, int n, int8_t *bt, int kp, int first)
{
    __shared__ __align__(4) unsigned char st[IGM_T][IGM_T + 4];
    long long product = first + blockIdx.z;
    const int8_t *src = b + product * stride_b;
    int8_t *dst = bt + product * (long long)n * kp;
    int k0 = blockIdx.y * IGM_T, n0 = blockIdx.x * IGM_T;
    int w = threadIdx.x % 16;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int r = threadIdx.x / 16 + 16 * j, kg = k0 + r, ng = n0 + 4 * w;
        unsigned char v[4] = { 0, 0, 0, 0 };
        if (kg < k) {
            const int8_t *row = src + (long long)kg * n;
            if (ng + 3 < n && (uintptr_t)(row + ng) % 4 == 0) {
                uint32_t word = *reinterpret_cast<const uint32_t *>(row + ng);
#pragma unroll
                for (int i = 0; i < 4; i++)
                    v[i] = (unsigned char)(word >> (8 * i));
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++)
                    v[i] = ng + i < n ? (unsigned char)row[ng + i] : 0;
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
            st[4 * w + i][r] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int r = threadIdx.x / 16 + 16 * j, ng = n0 + r, kk = k0 + 4 * w;
        if (ng < n && kk < kp)
            *reinterpret_cast<uint32_t *>(dst + (long long)ng * kp + kk) =
                *reinterpret_cast<const uint32_t *>(&st[r][4 * w]);
    }
}

/* ---- the product ---- */

#define IGM_D8(o)                                                                             \
    "+r"(d[(o) + 0]), "+r"(d[(o) + 1]), "+r"(d[(o) + 2]), "+r"(d[(o) + 3]), "+r"(d[(o) + 4]), \
        "+r"(d[(o) + 5]), "+r"(d[(o) + 6]), "+r"(d[(o) + 7])
#define IGM_D64(o)                                                                            \
    IGM_D8((o) + 0), IGM_D8((o) + 8), IGM_D8((o) + 16), IGM_D8((o) + 24), IGM_D8((o) + 32),   \
        IGM_D8((o) + 40), IGM_D8((o) + 48), IGM_D8((o) + 56)

/* D (64 x 256, s32) = A (64 x 32) * B (32 x 256) + (scale_d ? D : 0), both
 * signed bytes, K-major, from the shared memory the descriptors name. */
static __device__ __forceinline__ void igm_mma(int32_t (&d)[128], uint64_t desc_a,
                                               uint64_t desc_b, int scale_d)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 " HOPPER_REGS128
                 ", %128, %129, p;\n}\n"
                 : IGM_D64(0), IGM_D64(64)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#else
    __trap();
#endif
}

#undef IGM_D64
#undef IGM_D8

static __device__ __forceinline__ void igm_fence_regs(int32_t (&d)[128])
{
#pragma unroll
    for (int i = 0; i < 128; i++)
        asm volatile("" : "+r"(d[i])::"memory");
}

static __device__ __forceinline__ int32_t igm_add(int32_t x, int32_t y)
{
    return (int32_t)((uint32_t)x + (uint32_t)y);
}

/* The 64 x 256 accumulators of thread `tid` of a warpgroup to C at `c`
 * (rows ldc apart), rows below `rows` and columns below `cols`, added to
 * C's values when `accumulate`. */
static __device__ __forceinline__ void igm_store(const int32_t (&d)[128], int tid, int32_t *c,
                                                 int ldc, int rows, int cols, int accumulate,
                                                 bool vec)
{
#pragma unroll
    for (int i = 0; i < 128; i += 2) {
        int row = hopper_acc_row(i, tid), col = hopper_acc_col(i, tid);
        if (row >= rows || col >= cols)
            continue;
        int32_t *q = c + (size_t)row * ldc + col;
        int32_t v0 = d[i], v1 = d[i + 1];
        if (vec) {
            if (accumulate) {
                int2 old = *reinterpret_cast<const int2 *>(q);
                v0 = igm_add(v0, old.x);
                v1 = igm_add(v1, old.y);
            }
            *reinterpret_cast<int2 *>(q) = make_int2(v0, v1);
        } else {
            q[0] = accumulate ? igm_add(v0, q[0]) : v0;
            if (col + 1 < cols)
                q[1] = accumulate ? igm_add(v1, q[1]) : v1;
        }
    }
}

/* The modular epilogue where a warp's 16 rows are whole and digits' rows
 * 8-byte aligned: lane `lane` of warp `warp` puts its accumulators times
 * w modulo p, two neighbouring digits a store, in the warp's rows of the staging
 * `st`; the warp then writes its rows 256 bytes a store (folding into the
 * digits there when `fold`). */
static __device__ __forceinline__ void igm_store_mod_rows(const int32_t (&d)[128], int lane,
                                                          unsigned char *st, int8_t *dg, int ldd,
                                                          int p, int w, int fold)
{
    typedef igm_cfg C;
    double inv_p = 1.0 / p, wd = w;
#pragma unroll
    for (int i = 0; i < 128; i += 2) {
        int row = hopper_acc_row(i, lane), col = hopper_acc_col(i, lane);
        uint32_t lo = (uint8_t)ozaki_sym_mod(d[i], wd, p, inv_p);
        uint32_t hi = (uint8_t)ozaki_sym_mod(d[i + 1], wd, p, inv_p);
        *reinterpret_cast<uint16_t *>(st + row * C::st_pitch + col) = (uint16_t)(lo | hi << 8);
    }
    __syncwarp();
#pragma unroll 4
    for (int row = 0; row < 16; row++) {
        uint2 v = *reinterpret_cast<const uint2 *>(st + row * C::st_pitch + 8 * lane);
        uint2 *q = reinterpret_cast<uint2 *>(dg + (size_t)row * ldd + 8 * lane);
        if (fold) {
            uint2 old = *q;
            uint32_t w[2] = { v.x, v.y }, o[2] = { old.x, old.y };
#pragma unroll
            for (int h = 0; h < 2; h++) {
                uint32_t out = 0;
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    int x = (int8_t)(w[h] >> 8 * b) + (int8_t)(o[h] >> 8 * b);
                    out |= (uint32_t)(uint8_t)ozaki_sym_mod(x, 1.0, p, inv_p) << 8 * b;
                }
                w[h] = out;
            }
            v = make_uint2(w[0], w[1]);
        }
        *q = v;
    }
}

/* The modular epilogue: thread `tid`'s accumulators times w modulo p, as
 * int8 digits at `dg` (rows ldd apart), folded into the digits there when
 * `fold`; rows below `rows`, columns below `cols`.  Whole warps' rows go
 * through the staging `st` (igm_store_mod_rows), a digit a store where
 * the tile meets C's edge. */
static __device__ __forceinline__ void igm_store_mod(const int32_t (&d)[128], int tid,
                                                     unsigned char *st, int8_t *dg, int ldd,
                                                     int rows, int cols, int p, int w,
                                                     int fold, int vec)
{
    int warp = tid / 32;
    if (vec && rows >= 16 * (warp + 1) && cols >= igm_cfg::bn) {
        igm_store_mod_rows(d, tid % 32, st + warp * igm_cfg::st_warp,
                           dg + (size_t)16 * warp * ldd, ldd, p, w, fold);
        return;
    }
    double inv_p = 1.0 / p, wd = w;
#pragma unroll
    for (int i = 0; i < 128; i++) {
        int row = hopper_acc_row(i, tid), col = hopper_acc_col(i, tid);
        if (row >= rows || col >= cols)
            continue;
        int8_t *q = dg + (size_t)row * ldd + col;
        int r = ozaki_sym_mod(d[i], wd, p, inv_p);
        if (fold)
            r = ozaki_sym_mod(r + *q, 1.0, p, inv_p);
        *q = (int8_t)r;
    }
}

template <bool MOD>
static __global__ void __launch_bounds__(igm_cfg::threads, 1)
i8gemm_igmma_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, const struct igm_args args)
{
    typedef igm_cfg C;
    extern __shared__ __align__(16) unsigned char igm_smem[];
    __shared__ __align__(8) uint64_t igm_bars[2 * C::stages];
    const uint32_t ring =
        ((uint32_t)__cvta_generic_to_shared(igm_smem) + HOPPER_ATOM_BYTES - 1) &
        ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t full = (uint32_t)__cvta_generic_to_shared(igm_bars);
    const uint32_t empty = full + 8 * C::stages;
    int product = args.batch0 + (int)blockIdx.y;
    int tm, tn;
    hopper_tile_of(blockIdx.x, args.tiles_m, args.tiles_n, C::group, &tm, &tn);
    int bm0 = tm * C::bm, bn0 = tn * C::bn;
    int tiles = (args.k + C::bk - 1) / C::bk;

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
            for (int t = 0; t < tiles; t++) {
                int slot = t % C::stages;
                uint32_t sa = ring + slot * C::stage_bytes, sb = sa + C::a_bytes;
                uint32_t bar = full + 8 * slot;
                if (t >= C::stages)
                    hopper_bar_wait(empty + 8 * slot, (uint32_t)(t / C::stages - 1) & 1);
                int k0 = t * C::bk;
                hopper_bar_expect(bar, C::stage_bytes);
                hopper_tma_tile(sa, &map_a, bar, k0, bm0, product, args.a_batched);
                hopper_tma_tile(sb, &map_b, bar, k0, bn0, product, args.b_batched);
            }
    } else {
        hopper_regs_inc<C::consumer_regs>();
        int rows0 = 64 * (wg - 1);
        int32_t acc[128];
#pragma unroll
        for (int i = 0; i < 128; i++)
            acc[i] = 0;
        for (int t = 0; t < tiles; t++) {
            int slot = t % C::stages;
            hopper_bar_wait(full + 8 * slot, (uint32_t)(t / C::stages) & 1);
            uint32_t sa = ring + slot * C::stage_bytes + rows0 * HOPPER_ROW_BYTES;
            uint32_t sb = ring + slot * C::stage_bytes + C::a_bytes;
            igm_fence_regs(acc);
            hopper_wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < C::bk / 32; kk++)
                igm_mma(acc, hopper_desc_k(sa + kk * 32), hopper_desc_k(sb + kk * 32), 1);
            hopper_wgmma_commit();
            /* Tile t - 1's products are complete: its slot may be refilled. */
            hopper_wgmma_wait<1>();
            igm_fence_regs(acc);
            if (t > 0 && threadIdx.x % 32 == 0)
                hopper_bar_arrive(empty + 8 * ((t - 1) % C::stages));
        }
        hopper_wgmma_wait<0>();
        igm_fence_regs(acc);
        if constexpr (MOD) {
            int8_t *dg = args.digits + (long long)product * args.stride_c +
                         (size_t)(bm0 + rows0) * args.n + bn0;
            unsigned char *st = igm_smem + C::smem + (size_t)(wg - 1) * 4 * C::st_warp;
            igm_store_mod(acc, threadIdx.x % 128, st, dg, args.n, args.m - bm0 - rows0,
                          args.n - bn0, args.mod_p, args.mod_w, args.fold, args.d_vec);
        } else {
            int32_t *c = args.c + (long long)product * args.stride_c +
                         (size_t)(bm0 + rows0) * args.n + bn0;
            igm_store(acc, threadIdx.x % 128, c, args.n, args.m - bm0 - rows0, args.n - bn0,
                      args.accumulate, args.c_vec);
        }
    }
}

/* ---- host ---- */

static long long igm_pitch(int k)
{
    return ((long long)k + IGM_PITCH - 1) / IGM_PITCH * IGM_PITCH;
}

/* A's rows as the copy engine takes them: in place, or copied to `at`
 * (rows kp apart, products m kp apart) when its rows, base or stack
 * stride are not 16-byte multiples. */
static bool igm_copy_a(const struct i8gemm_problem *p, bool batched)
{
    return p->k % IGM_PITCH || (uintptr_t)p->a % 16 || (batched && p->stride_a % 16);
}

static cudaError_t igm_prepare(const struct i8gemm_problem *p, int batch, bool a_b, bool b_b,
                               int8_t *bt, int8_t *at, cudaStream_t stream)
{
    long long kp = igm_pitch(p->k);
    int nb = b_b ? batch : 1;
    for (int b0 = 0; b0 < nb; b0 += HOPPER_MAX_GRID_Y) {
        int count = nb - b0 < HOPPER_MAX_GRID_Y ? nb - b0 : HOPPER_MAX_GRID_Y;
        dim3 grid((unsigned)((p->n + IGM_T - 1) / IGM_T), (unsigned)((p->k + IGM_T - 1) / IGM_T),
                  (unsigned)count);
        igm_transpose<<<grid, 256, 0, stream>>>(p->b, b_b ? p->stride_b : 0, p->k, p->n, bt,
                                                (int)kp, b0);
        cudaError_t err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    if (!at)
        return cudaSuccess;
    int na = a_b ? batch : 1;
    if (na == 1 || p->stride_a == (long long)p->m * p->k)
        return cudaMemcpy2DAsync(at, (size_t)kp, p->a, (size_t)p->k, (size_t)p->k,
                                 (size_t)na * (size_t)p->m, cudaMemcpyDeviceToDevice, stream);
    for (int b = 0; b < na; b++) {
        cudaError_t err = cudaMemcpy2DAsync(at + (long long)b * p->m * kp, (size_t)kp,
                                            p->a + (long long)b * p->stride_a, (size_t)p->k,
                                            (size_t)p->k, (size_t)p->m, cudaMemcpyDeviceToDevice,
                                            stream);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

/* The modular epilogue's output (i8gemm_igmma_launch_mod); NULL: C. */
struct igm_mod {
    int8_t *digits;
    int p, w, fold;
};

static cudaError_t igm_run(const struct i8gemm_problem *p, int batch, bool a_b, bool b_b,
                           const int8_t *a, long long lda, long long stride_a, const int8_t *bt,
                           cudaStream_t stream, const struct igm_mod *mod = NULL)
{
    typedef igm_cfg C;
    long long kp = igm_pitch(p->k);
    CUtensorMap map_a, map_b;
    const CUtensorMapDataType u8 = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    cudaError_t err = hopper_tensor_map(&map_a, u8, a, p->m, p->k, lda, a_b ? batch : 1,
                                        stride_a, C::bm, C::bk, 1);
    if (err == cudaSuccess)
        err = hopper_tensor_map(&map_b, u8, bt, p->n, p->k, kp, b_b ? batch : 1,
                                (long long)p->n * kp, C::bn, C::bk, 1);
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute(mod ? i8gemm_igmma_kernel<true> : i8gemm_igmma_kernel<false>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)(mod ? C::smem_mod : C::smem));
    if (err != cudaSuccess)
        return err;
    struct igm_args args;
    args.m = p->m;
    args.n = p->n;
    args.k = p->k;
    args.c = p->c;
    args.stride_c = batch > 1 ? p->stride_c : 0;
    args.accumulate = p->accumulate;
    args.tiles_m = (p->m + C::bm - 1) / C::bm;
    args.tiles_n = (p->n + C::bn - 1) / C::bn;
    args.a_batched = a_b;
    args.b_batched = b_b;
    args.c_vec = p->n % 2 == 0 && args.stride_c % 2 == 0 && (uintptr_t)p->c % 8 == 0;
    args.digits = mod ? mod->digits : NULL;
    args.mod_p = mod ? mod->p : 0;
    args.mod_w = mod ? mod->w : 0;
    args.fold = mod ? mod->fold : 0;
    args.d_vec = p->n % 8 == 0 && args.stride_c % 8 == 0 && (uintptr_t)args.digits % 8 == 0;
    for (int b0 = 0; b0 < batch; b0 += HOPPER_MAX_GRID_Y) {
        args.batch0 = b0;
        dim3 grid((unsigned)(args.tiles_m * args.tiles_n),
                  (unsigned)(batch - b0 < HOPPER_MAX_GRID_Y ? batch - b0 : HOPPER_MAX_GRID_Y));
        if (mod)
            i8gemm_igmma_kernel<true><<<grid, C::threads, C::smem_mod, stream>>>(map_a, map_b,
                                                                                 args);
        else
            i8gemm_igmma_kernel<false><<<grid, C::threads, C::smem, stream>>>(map_a, map_b, args);
        if ((err = launch_result()) != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

/* B^T and the copy of A, in bytes (an upper bound where A's base is not
 * known: A counted as copied). */
static size_t igm_workspace(long long m, long long n, long long k, long long batch,
                            bool copy_a)
{
    long long kp = igm_pitch((int)k), nb = batch > 1 ? batch : 1;
    return (size_t)(nb * n * kp + (copy_a ? nb * m * kp : 0));
}

/* What every entry checks first: negative sides or K = 0 are invalid
 * (an empty C is not, whatever K), tiles past the grid's count too many;
 * then the stack's facts.  *empty: M or N is 0, nothing to compute. */
static cudaError_t igm_shape(const struct i8gemm_problem *p, bool *empty, int *batch, bool *a_b,
                             bool *b_b)
{
    *empty = p->m == 0 || p->n == 0;
    if (p->m < 0 || p->n < 0 || p->k < 0 || (!*empty && p->k == 0))
        return cudaErrorInvalidValue;
    if (!*empty && ((long long)p->m + igm_cfg::bm - 1) / igm_cfg::bm *
                           (((long long)p->n + igm_cfg::bn - 1) / igm_cfg::bn) > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    *batch = p->batch > 1 ? p->batch : 1;
    *a_b = *batch > 1 && p->stride_a != 0;
    *b_b = *batch > 1 && p->stride_b != 0;
    return cudaSuccess;
}

extern "C" cudaError_t i8gemm_igmma_launch(const struct i8gemm_problem *p,
                                           const struct launch_env *env)
{
    bool empty, a_b, b_b;
    int batch;
    cudaError_t err = igm_shape(p, &empty, &batch, &a_b, &b_b);
    if (err != cudaSuccess || empty)
        return err;
    bool copy_a = igm_copy_a(p, a_b);
    long long kp = igm_pitch(p->k);
    size_t bt_bytes = (size_t)(b_b ? batch : 1) * (size_t)p->n * (size_t)kp;
    size_t bytes = igm_workspace(p->m, p->n, p->k, a_b || b_b ? batch : 1, copy_a);
    int8_t *ws = NULL;
    err = cudaMallocAsync((void **)&ws, bytes, env->stream);
    if (err != cudaSuccess)
        return err;
    int8_t *at = copy_a ? ws + bt_bytes : NULL;
    err = igm_prepare(p, batch, a_b, b_b, ws, at, env->stream);
    if (err == cudaSuccess)
        err = copy_a ? igm_run(p, batch, a_b, b_b, at, kp, (long long)p->m * kp, ws, env->stream)
                     : igm_run(p, batch, a_b, b_b, p->a, p->k, a_b ? p->stride_a : 0, ws,
                               env->stream);
    cudaError_t freed = cudaFreeAsync(ws, env->stream);
    return err != cudaSuccess ? err : freed;
}

/* The product alone, for the stages built on this one and for the
 * anchor that holds it to cuBLAS's TN int8 GEMM (tests/i8_anchor.c): B
 * given k-major already, `bt` n rows of K rounded up to 16 bytes (products
 * n such rows apart where B is a stack), and A's rows, base and stack
 * stride 16-byte multiples (else cudaErrorInvalidValue); p->b is not
 * read.  i8gemm_igmma_launch_mod writes, in place of C, its sums times w
 * modulo p as int8 digits in [-p/2, p/2) at `digits` (rows n apart; C's
 * stride between products), added to the digits there modulo p when
 * `fold`: the Ozaki stage's digits (kernels/igemm/igemm_05_ozaki.cu;
 * w = M^-1 modulo p, the Chinese remainder sum's own factor), with no
 * int32 C to write and read back. */
static cudaError_t igm_kmajor(const struct i8gemm_problem *p, const int8_t *bt,
                              const struct launch_env *env, const struct igm_mod *mod)
{
    if (p->k < 1 || (mod && (mod->p < 2 || mod->p > 256 || mod->w < 0 || mod->w >= mod->p)))
        return cudaErrorInvalidValue;
    bool empty, a_b, b_b;
    int batch;
    cudaError_t err = igm_shape(p, &empty, &batch, &a_b, &b_b);
    if (err != cudaSuccess || empty)
        return err;
    if (igm_copy_a(p, a_b) || (uintptr_t)bt % 16)
        return cudaErrorInvalidValue;
    return igm_run(p, batch, a_b, b_b, p->a, p->k, a_b ? p->stride_a : 0, bt, env->stream, mod);
}

extern "C" cudaError_t i8gemm_igmma_launch_kmajor(const struct i8gemm_problem *p,
                                                  const int8_t *bt,
                                                  const struct launch_env *env)
{
    return igm_kmajor(p, bt, env, NULL);
}

extern "C" cudaError_t i8gemm_igmma_launch_mod(const struct i8gemm_problem *p, const int8_t *bt,
                                               int8_t *digits, int mod_p, int mod_w,
                                               int fold, const struct launch_env *env)
{
    struct igm_mod mod = { digits, mod_p, mod_w, fold };
    return igm_kmajor(p, bt, env, &mod);
}

extern "C" cudaError_t i8gemm_igmma_attr(struct kernel_attr *out)
{
    return kernel_attr_of(i8gemm_igmma_kernel<false>, igm_cfg::threads, igm_cfg::smem, out);
}

extern "C" int i8gemm_igmma_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->k < 1) {
        snprintf(why, n, "K = 0: a tensor map has no dimension of 0");
        return 0;
    }
    if (p->k > 0x7ffffff0 || igm_pitch((int)p->k) * (long long)p->n >= (1ll << 39)) {
        snprintf(why, n, "B^T's rows and matrices must lie less than 2^39 bytes apart "
                 "(tensor-map strides)");
        return 0;
    }
    return 1;
}

extern "C" size_t i8gemm_igmma_workspace(const struct gemm_problem *p)
{
    return igm_workspace(p->m, p->n, p->k, p->batch, true);
}
