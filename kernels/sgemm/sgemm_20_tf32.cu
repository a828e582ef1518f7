/* tf32: float operands on the tensor cores, one TF32 pass: each operand
 * rounded to TF32 (10 bits of mantissa, FP32's range; to nearest, ties
 * away from zero), products summed in FP32 by the tensor core.  Lossy:
 * relative errors near 3e-4 where FP32 gets 1e-6 (--compute tf32 asks for
 * it; auto never takes it).
 *
 * Against the FP32 ladder's top (edge_peel, CUDA cores), this is the
 * 16-bit chapter's persistent stage (hgemm_06_persistent.cu) fed with
 * floats: a producer thread filling a 4-slot TMA ring, two consumer
 * warpgroups, a persistent walk in L2 bands; the instruction is wgmma
 * m64n256k8 .tf32.  What floats change:
 *
 * Layout.  TF32 wgmma reads an operand from shared memory only K-major
 * (the transposed layouts are for 16-bit types), and B arrives k x n with
 * N contiguous.  So the stage computes C's transpose, C^T = B^T A^T: the
 * first operand, B^T, comes from registers, which can be loaded from any
 * layout, and the second, A^T, is A's tile as the copy engine lands it (k
 * contiguous: K-major).  B is read as it is, with no copy.  A block's
 * tile of C is 256 x 128: the wgmma's 256 columns are 256 rows of C, each
 * consumer warpgroup's 64 rows are 64 columns of C.  A slot holds A's
 * 256 x 32 box (32 KiB) and B's 32 x 128 as four 32 x 32 boxes (16 KiB),
 * all in the 128-byte swizzle.
 *
 * Rounding.  The tensor core reads the top 19 bits of a float and drops
 * the rest: it truncates, which on all-positive data biases every product
 * the same way.  B's values are rounded in registers as they are loaded
 * (two integer operations a value, tf32_rna).  A's tile is read by wgmma
 * straight from shared memory, so A is rounded before the product, in one
 * pass at the copy's rate into a packed copy (kernels/sgemm/tf32_split.cu).
 * Rounding A's tiles in shared memory instead, by the producer
 * warpgroup's idle warps or by the consumers a step ahead, adds a read and
 * a write of every slot to the wgmma's own reads of it: it ran slower
 * than the pass (README: Kernels and the ladder).
 *
 * Bank conflicts.  A thread's B^T fragment (wgmma's A registers, m64k8:
 * rows g and g + 8 of its warp's 16, columns t and t + 4; g = lane / 4,
 * t = lane % 4) is 4 floats of different rows and columns of B's box.
 * The wgmma's rows may be any permutation of the tile's columns, as long
 * as the epilogue maps them back; the stage takes the one under which a
 * warp's 32 loads of a register hit 32 different banks: row g of a warp's
 * 8-row half h is column 4 (2 (w % 2) + h + 4 (g / 4)) + g % 4 of box w /
 * 2 (w the warp), so the 16-byte units a load touches are ({0, 4} + c)
 * XOR t under the swizzle, 8 distinct ones (tf32_col).
 *
 * Accumulation.  The tensor core keeps FP32 sums without rounding to
 * nearest, so over a long K its sum drifts (kernels/gemm_dispatch.c); one
 * chain per element here, as in cuBLAS's TF32 mode, which tf32x3 does not
 * copy (sgemm_21_tf32x3.cu).
 *
 * The copy engine needs rows of 16-byte multiples on 16-byte aligned
 * bases: where K (or a stack's stride) breaks that, A's copy is the padded
 * pack, rounded too; where N does, B goes through such a copy as well.  A
 * single product with fewer tiles than SMs is split along K
 * (kernels/sgemm/sgemm_tf32.cuh).  An infinity meets a B value too small
 * for TF32 (a subnormal under 2^-136) as a zero: NaN where FP32 gives an
 * infinity, as in any TF32 product.
 *
 * Follows no write-up of its own: gemmcli's own, persistent's kernel on
 * TF32 wgmma with its first operand in registers (the PTX ISA's wgmma
 * .tf32, its register fragments, and cvt.rna.tf32.f32's rounding; TF32 as
 * NVIDIA's A100 whitepaper describes it).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel tf32 --compute tf32 --verify --repeat 20 */
#include <limits.h>
#include <string.h>

#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/sgemm/sgemm_tf32.cuh"

struct TF {
    static constexpr int bm = 256, bn = 128, bk = HOPPER_ROW_BYTES / 4, group = 8;
    static constexpr int stages = 4, consumers = 2, threads = 128 * (consumers + 1);
    static constexpr int producer_regs = 40, consumer_regs = 232;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES;
    static constexpr int box_bytes = bk * HOPPER_ROW_BYTES;  /* B's 32 x 32 box */
    static constexpr int b_bytes = (bn / 32) * box_bytes;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr size_t smem = (size_t)stages * stage_bytes + HOPPER_ATOM_BYTES;

    static_assert(bn == 64 * consumers, "each consumer warpgroup owns 64 columns of C");
    static_assert(bm <= 256, "A's tile is one box of the tensor map");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(smem <= 227 * 1024, "the ring fits an SM's shared memory");
    static_assert(128 * producer_regs + 128 * consumers * consumer_regs <= 65536,
                  "setmaxnreg: within the register file");
};

/* ---- device ---- */

/* x rounded to TF32, to nearest with ties away from zero (cvt.rna's
 * rounding, in two integer operations); infinities and NaNs as they are. */
static __device__ __forceinline__ uint32_t tf32_rna(uint32_t x)
{
    return (x & 0x7f800000u) == 0x7f800000u ? x : (x + 0x1000u) & 0xffffe000u;
}

/* Column of the 128 of C's tile that row r (0..63) of consumer warpgroup
 * cw's wgmma computes (the permutation above). */
static __host__ __device__ __forceinline__ int tf32_col(int cw, int r)
{
    int w = r / 16, h = (r / 8) % 2, g = r % 8;
    return 64 * cw + 32 * (w / 2) + 4 * (2 * (w % 2) + h + 4 * (g / 4)) + g % 4;
}

/* D (64 x 256) += A (64 x 8, TF32 in registers) * B (8 x 256, K-major in
 * shared memory). */
static __device__ __forceinline__ void tf32_mma_rs(float (&d)[128], const uint32_t (&a)[4],
                                                   uint64_t desc_b)
{
#ifndef HOPPER_TRAP_ONLY
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, "
                 "%31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
                 "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, "
                 "%61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, "
                 "%76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, "
                 "%91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, "
                 "%105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
                 "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
                 "{%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
                   "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]),
                   "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
                   "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                   "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]),
                   "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),
                   "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
                   "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),
                   "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]),
                   "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
                   "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]),
                   "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]),
                   "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),
                   "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
                   "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
                   "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]),
                   "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),
                   "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
                   "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
                   "+f"(d[127])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
#else
    __trap();
#endif
}

/* The producer's thread: A's box and B's four of every step of every tile
 * of the block. */
static __device__ __forceinline__ void tf32_produce(const CUtensorMap *map_a,
                                                    const CUtensorMap *map_b,
                                                    const struct tc32_args &args, uint32_t ring,
                                                    uint32_t full, uint32_t empty)
{
    struct tc32_ring r = { 0, 0, false };
    for (int id = blockIdx.x; id < args.units; id += gridDim.x) {
        int product, tm, tn;
        tc32_unit_of<TF>(args, id, &product, &tm, &tn);
        int za = args.a_batched ? product : 0, zb = args.b_batched ? product : 0;
        for (int t = 0; t < args.k_tiles; t++) {
            if (r.lapped)
                hopper_bar_wait(empty + 8 * r.slot, r.phase ^ 1);
            uint32_t bar = full + 8 * r.slot, sa = ring + r.slot * TF::stage_bytes;
            int k0 = ((args.split ? product * args.k_tiles : 0) + t) * TF::bk;
            hopper_bar_expect(bar, TF::stage_bytes);
            hopper_tma_3d(sa, map_a, bar, k0, tm * TF::bm, za);
#pragma unroll
            for (int j = 0; j < TF::bn / 32; j++)
                hopper_tma_3d(sa + TF::a_bytes + j * TF::box_bytes, map_b, bar,
                              tn * TF::bn + 32 * j, k0, zb);
            tc32_next<TF>(r);
        }
    }
}

/* Thread `tid` of consumer warpgroup cw: its B^T fragment of step kk (0..3)
 * of the slot whose B tile starts at sb, rounded (rows g and g + 8 of its
 * warp's 16, columns t and t + 4, as wgmma's A registers). */
static __device__ __forceinline__ void tf32_load_frag(uint32_t (&f)[4][4], uint32_t sb, int cw,
                                                      int tid)
{
    const int w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
    const uint32_t box = sb + (2 * cw + w / 2) * TF::box_bytes;
    const int unit0 = 2 * (w % 2) + 4 * (g / 4), word = g % 4;
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int k = 8 * kk + t + 4 * (j / 2), unit = unit0 + j % 2;
            uint32_t addr = box + k * HOPPER_ROW_BYTES + 16 * (unit ^ (k % 8)) + 4 * word;
            uint32_t v;
            asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
            f[kk][j] = tf32_rna(v);
        }
    }
}

/* Keeps the fragment's registers as they are up to this point: wgmma reads
 * them after it is issued, which the compiler cannot see. */
static __device__ __forceinline__ void tf32_keep(uint32_t (&f)[4][4])
{
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            asm volatile("" : "+r"(f[kk][j])::"memory");
}

/* Writes consumer warpgroup cw's 64 x 256 accumulators (of C^T) into C's
 * tile (tm, tn) of `product`: alpha * acc + beta * C, inside C only. */
static __device__ __forceinline__ void tf32_store(const float (&d)[128], int tid, int cw,
                                                  const struct tc32_args &args, int product,
                                                  int tm, int tn)
{
    const int r0 = tm * TF::bm, c0 = tn * TF::bn;
    float *c = args.c + (long long)product * args.stride_c + (size_t)r0 * args.n + c0;
    const int rows = args.m - r0, cols = args.n - c0;
    const float alpha = args.alpha, beta = args.beta;
#pragma unroll
    for (int i = 0; i < 128; i++) {
        int col = tf32_col(cw, hopper_acc_row(i, tid)), row = hopper_acc_col(i, tid);
        if (row >= rows || col >= cols)
            continue;
        float *p = c + (size_t)row * args.n + col;
        float v = alpha * d[i];
        *p = beta != 0.0f ? v + beta * *p : v;
    }
}

static __global__ void __launch_bounds__(TF::threads, 1)
sgemm_tf32_kernel(const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, const struct tc32_args args)
{
    extern __shared__ __align__(16) unsigned char tf_smem[];
    __shared__ __align__(8) uint64_t tf_bars[2 * TF::stages];
    const uint32_t ring = ((uint32_t)__cvta_generic_to_shared(tf_smem) + HOPPER_ATOM_BYTES - 1) &
                          ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const uint32_t full = (uint32_t)__cvta_generic_to_shared(tf_bars);
    const uint32_t empty = full + 8 * TF::stages;
    if (threadIdx.x == 0) {
        if (args.k_tiles > 0) {
            hopper_tma_prefetch(&map_a);
            hopper_tma_prefetch(&map_b);
        }
        hopper_ring_init<TF::stages>(full, empty, 4 * TF::consumers);
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        hopper_regs_dec<TF::producer_regs>();
        if (threadIdx.x == 0)
            tf32_produce(&map_a, &map_b, args, ring, full, empty);
        return;
    }
    hopper_regs_inc<TF::consumer_regs>();
    const int cw = wg - 1, tid = threadIdx.x % 128;
    struct tc32_ring r = { 0, 0, false };
    float acc[128];
    uint32_t fa[4][4], fb[4][4];
    for (int id = blockIdx.x; id < args.units; id += gridDim.x) {
        int product, tm, tn;
        tc32_unit_of<TF>(args, id, &product, &tm, &tn);
#pragma unroll
        for (int i = 0; i < 128; i++)
            acc[i] = 0.0f;
        int prev = 0;
        /* Step t with fragment f; h, the other one, was read by the step
         * before, which is done once this step's wait returns. */
        auto step = [&](uint32_t (&f)[4][4], uint32_t (&h)[4][4], int t) {
            hopper_bar_wait(full + 8 * r.slot, r.phase);
            uint32_t sa = ring + r.slot * TF::stage_bytes;
            tf32_load_frag(f, sa + TF::a_bytes, cw, tid);
            hopper_fence_regs(acc);
            hopper_wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
                tf32_mma_rs(acc, f[kk], hopper_desc_k(sa + kk * 32));
            hopper_wgmma_commit();
            hopper_wgmma_wait<1>();
            hopper_fence_regs(acc);
            tf32_keep(h);
            if (t > 0 && tid % 32 == 0)
                hopper_bar_arrive(empty + 8 * prev);
            prev = r.slot;
            tc32_next<TF>(r);
        };
        int t = 0;
        for (; t + 1 < args.k_tiles; t += 2) {
            step(fa, fb, t);
            step(fb, fa, t + 1);
        }
        if (t < args.k_tiles)
            step(fa, fb, t);
        hopper_wgmma_wait<0>();
        hopper_fence_regs(acc);
        tf32_keep(fa);
        tf32_keep(fb);
        if (args.k_tiles > 0 && tid % 32 == 0)
            hopper_bar_arrive(empty + 8 * prev);
        tf32_store(acc, tid, cw, args, product, tm, tn);
    }
}

/* ---- host ---- */

/* How a problem runs: A's rounded copy (packed, K floats a row, or K
 * rounded up to 4 where the copy engine needs it: rows of 16-byte
 * multiples), whether B needs a padded copy (the same rule, on its rows
 * of N and its base and stride), and K's split. */
struct tf32_plan {
    bool pack_a, pad_b;       /* A: the padding pack, else the plain rounding copy */
    int count_a, count_b;     /* matrices of each operand the kernel reads */
    long long ld_a, ld_b;     /* floats per row */
    long long stride_a, stride_b;
    struct tc32_plan split;   /* slices, slice_tiles */
    size_t a_bytes, b_bytes, flag_bytes, slab_bytes, total;
};

static inline bool tf32_aligned(const void *base, long long ld, long long stride, int count)
{
    return (uintptr_t)base % 16 == 0 && ld % 4 == 0 && (count < 2 || stride % 4 == 0);
}

static inline void tf32_plan_of(const struct gemm_problem *p, const void *a, const void *b,
                                int sms, struct tf32_plan *pl)
{
    long long batch = p->batch > 1 ? p->batch : 1;
    memset(pl, 0, sizeof *pl);
    pl->count_a = batch > 1 && p->stride_a != 0 ? (int)batch : 1;
    pl->count_b = batch > 1 && p->stride_b != 0 ? (int)batch : 1;
    pl->pack_a = !tf32_aligned(a, p->k, p->stride_a, pl->count_a) ||
                 (pl->count_a > 1 && p->stride_a != p->m * p->k);
    pl->pad_b = !tf32_aligned(b, p->n, p->stride_b, pl->count_b);
    pl->ld_a = (p->k + 3) / 4 * 4;
    pl->ld_b = pl->pad_b ? (p->n + 3) / 4 * 4 : p->n;
    pl->stride_a = (long long)p->m * pl->ld_a;
    pl->stride_b = pl->pad_b ? (long long)p->k * pl->ld_b : p->stride_b;
    tc32_split_of(p->m, p->n, p->k, batch, TF::bm, TF::bn, sms, &pl->split);
    pl->a_bytes = tc32_round_up((size_t)pl->count_a * p->m * pl->ld_a * 4);
    pl->b_bytes = pl->pad_b ? tc32_round_up((size_t)pl->count_b * p->k * pl->ld_b * 4) : 0;
    pl->flag_bytes = pl->pack_a || pl->pad_b
                         ? tc32_round_up((size_t)pl->count_a * p->m + (size_t)pl->count_b * p->k) +
                               TC32_ALIGN
                         : 0;
    pl->slab_bytes = pl->split.slices > 1
                         ? tc32_round_up((size_t)pl->split.slices * p->m * p->n * sizeof(float))
                         : 0;
    pl->total = p->k > 0 && p->m > 0 && p->n > 0
                    ? pl->a_bytes + pl->b_bytes + pl->flag_bytes + pl->slab_bytes
                    : 0;
}

static cudaError_t tf32_run(const struct sgemm_problem *p, const struct launch_env *env)
{
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return cudaErrorInvalidValue;
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    cudaError_t err = cudaFuncSetAttribute(sgemm_tf32_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)TF::smem);
    if (err != cudaSuccess)
        return err;
    cudaStream_t stream = env->stream;
    int sms = env->sm_count < 1 ? 1 : min(env->sm_count, (int)TC32_MAX_BLOCKS);
    long long batch = p->batch > 1 ? p->batch : 1;
    struct gemm_problem gp;
    memset(&gp, 0, sizeof gp);
    gp.m = p->m;
    gp.n = p->n;
    gp.k = p->k;
    gp.batch = (int)batch;
    gp.stride_a = batch > 1 ? p->stride_a : 0;
    gp.stride_b = batch > 1 ? p->stride_b : 0;
    struct tf32_plan pl;
    tf32_plan_of(&gp, p->a, p->b, sms, &pl);

    struct tc32_args args;
    memset(&args, 0, sizeof args);
    args.c = p->c;
    args.m = p->m;
    args.n = p->n;
    args.stride_c = batch > 1 ? p->stride_c : 0;
    args.alpha = p->k > 0 ? p->alpha : 0.0f;
    args.beta = p->beta;
    long long tiles_m = ((long long)p->m + TF::bm - 1) / TF::bm;
    long long tiles_n = ((long long)p->n + TF::bn - 1) / TF::bn;
    if (tiles_m * tiles_n > INT_MAX - TC32_MAX_BLOCKS)
        return cudaErrorInvalidConfiguration;
    args.tiles_m = (int)tiles_m;
    args.tiles_n = (int)tiles_n;
    args.k_tiles = pl.split.slice_tiles;
    args.a_batched = pl.count_a > 1;
    args.b_batched = pl.count_b > 1;

    CUtensorMap map_a, map_b;
    memset(&map_a, 0, sizeof map_a);
    memset(&map_b, 0, sizeof map_b);
    char *buf = NULL;
    float *slabs = NULL;
    const float *a = p->a, *b = p->b;
    if (pl.total > 0) {
        err = cudaMallocAsync((void **)&buf, pl.total, stream);
        if (err != cudaSuccess)
            return err;
        unsigned char *flags = (unsigned char *)(buf + pl.a_bytes + pl.b_bytes);
        int *any = (int *)(flags + pl.flag_bytes - TC32_ALIGN);
        if (pl.flag_bytes)
            err = cudaMemsetAsync(flags, 0, pl.flag_bytes, stream);
        if (err == cudaSuccess && pl.pack_a) {
            struct tf32_pack pa = { p->a, p->k, gp.stride_a, pl.count_a, p->m, p->k,
                                    (int)pl.ld_a, 1, 0, (float *)buf, flags, any };
            err = tf32_pack_launch(&pa, stream);
        } else if (err == cudaSuccess) {
            err = tf32_round_launch((float *)buf, p->a, (size_t)pl.count_a * p->m * p->k, stream);
        }
        a = (const float *)buf;
        if (err == cudaSuccess && pl.pad_b) {
            struct tf32_pack pb = { p->b, p->n, gp.stride_b, pl.count_b, p->k, p->n,
                                    (int)pl.ld_b, 1, 0, (float *)(buf + pl.a_bytes),
                                    flags + (size_t)pl.count_a * p->m, any };
            err = tf32_pack_launch(&pb, stream);
            b = (const float *)(buf + pl.a_bytes);
        }
        if (pl.split.slices > 1) {
            /* The slices are the launch's "products", into the slabs. */
            slabs = (float *)(buf + pl.a_bytes + pl.b_bytes + pl.flag_bytes);
            args.split = 1;
            args.c = slabs;
            args.stride_c = (long long)p->m * p->n;
            args.alpha = 1.0f;
            args.beta = 0.0f;
            batch = pl.split.slices;
        }
    }

    if (err == cudaSuccess && p->k > 0)
        err = tc32_map(&map_a, a, p->k, p->m, pl.ld_a, pl.stride_a, pl.count_a, TF::bm);
    if (err == cudaSuccess && p->k > 0)
        err = tc32_map(&map_b, b, p->n, p->k, pl.ld_b, pl.stride_b, pl.count_b, TF::bk);

    /* Headroom: a block's next unit number, id + blocks, must not wrap. */
    int per = args.tiles_m * args.tiles_n;
    long long chunk = (INT_MAX - TC32_MAX_BLOCKS) / per;
    if (chunk < 1)
        chunk = 1;
    for (long long b0 = 0; err == cudaSuccess && b0 < batch; b0 += chunk) {
        args.batch0 = (int)b0;
        args.units = (int)(per * (batch - b0 < chunk ? batch - b0 : chunk));
        unsigned grid = (unsigned)(args.units < sms ? args.units : sms);
        sgemm_tf32_kernel<<<grid, TF::threads, TF::smem, stream>>>(map_a, map_b, args);
        err = launch_result();
    }
    if (err == cudaSuccess && slabs)
        err = gemm_split_reduce(p->c, 0, slabs, (size_t)p->m * p->n, 1, pl.split.slices,
                                p->alpha, p->beta, stream);
    cudaError_t free_err = buf ? cudaFreeAsync(buf, stream) : cudaSuccess;
    return err != cudaSuccess ? err : free_err;
}

extern "C" cudaError_t sgemm_tf32_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    return tf32_run(p, env);
}

extern "C" cudaError_t sgemm_tf32_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_tf32_kernel, TF::threads, TF::smem, out);
}

extern "C" int sgemm_tf32_check(const struct gemm_problem *p, char *why, size_t n)
{
    return tc32_check(p, why, n);
}

/* An upper bound: the operands' bases are not known here, so both are
 * taken as padded, and the split for 256 SMs. */
extern "C" size_t sgemm_tf32_workspace(const struct gemm_problem *p)
{
    struct tf32_plan pl;
    tf32_plan_of(p, (const void *)1, (const void *)1, 256, &pl);
    return pl.total;
}
