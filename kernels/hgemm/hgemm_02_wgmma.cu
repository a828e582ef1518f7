/* wgmma: float16 or bfloat16 operands, FP32 accumulation on Hopper's
 * warpgroup tensor-core instruction wgmma.mma_async, float C; the first
 * sm_90a stage of the half ladder.
 *
 * Against mma_sync (hgemm_01_mma_sync.cu), where every warp loads its own
 * fragments of A and B from shared memory into registers (ldmatrix) and
 * issues 16x8x16 products on them, the four warps of a warpgroup here issue
 * one instruction together, wgmma m64n128k16, and the tensor cores read
 * both operands from shared memory themselves, through 64-bit descriptors:
 * no ldmatrix, no operand registers, and the product runs asynchronously
 * while the warps go on issuing.  One warpgroup (128 threads) computes a
 * 128 x 128 tile of C as two m64n128 halves, 128 accumulators per thread;
 * per 64 values of k it issues 4 steps of k x 2 halves = 8 wgmma.
 *
 * The operands must sit in shared memory as wgmma reads them: rows of 128
 * bytes with the 128-byte swizzle (kernels/hgemm/hgemm_hopper.cuh has the layout
 * and the descriptors).  Here they are brought by cp.async, each
 * thread computing the swizzled address of its 16-byte units: a tile of A
 * (128 rows x 64 of k) is 1024 units, 8 per thread, each warp copying 4
 * whole rows of 128 bytes; a tile of B (64 of k x 128 columns) is two
 * blocks of 64 columns, 8 units per thread, each warp 2 whole rows of 256
 * bytes.  Units outside A or B (rows past M, columns past N, k past K)
 * are zeros (src-size 0); K and N multiples of 8 make each unit all inside
 * or all outside.
 *
 * A ring of STAGES tiles, as in the cp.async stages of the float ladder:
 * tile t + STAGES - 1 is copied while the tensor cores multiply tile t.
 * The copies write through the generic proxy and wgmma reads through the
 * async proxy, so each thread fences (fence.proxy.async) after its copies
 * land and before the barrier that publishes them.  Each tile's wgmma are
 * waited for (wait_group 0) before the barrier that lets its slot be
 * copied over; hgemm_04_wgmma_pipeline.cu keeps them in flight instead.
 *
 * The epilogue writes C straight from the accumulators: lane l of warp w
 * holds rows 16 w + l / 4 (+ 8) and column pairs 8 j + 2 (l % 4), stored
 * as float2.  Blocks walk bands of 8 tile rows (L2 reuse); a stack takes
 * blockIdx.y, in launches of at most 65535 products.
 *
 * Needs K and N multiples of 8, A and B on 16-byte boundaries, batch
 * strides multiples of 8 (16-byte copies); any M, N, K otherwise.
 *
 * Follows Pranjal Shankhdhar, "Outperforming cuBLAS on H100: a Worklog"
 * (the fast.cu kernels), for the order of the steps: its first wgmma
 * kernel; the PTX ISA for wgmma.mma_async, its shared-memory matrix layouts
 * and descriptors, and the accumulator fragment of m64nNk16.
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel wgmma --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"

struct hwg_cfg {
    static constexpr int bm = 128, bn = 128, bk = HOPPER_BK, stages = 3, group = 8;
    static constexpr int threads = 128;
    static constexpr int a_bytes = bm * HOPPER_ROW_BYTES;
    static constexpr int b_bytes = bn / 64 * HOPPER_B_BLOCK;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    /* One atom of slack: the ring starts at the first 1024-byte boundary. */
    static constexpr size_t smem = (size_t)stages * stage_bytes + HOPPER_ATOM_BYTES;
    /* 16-byte units per thread and tile. */
    static constexpr int a_units = bm * (bk / 8) / threads, b_units = bk * (bn / 8) / threads;

    static_assert(bm == 2 * 64 && threads == 128, "one warpgroup, two m64 halves");
    static_assert(bk * 2 == HOPPER_ROW_BYTES, "a row of A's tile is one swizzled row");
    static_assert(bn % 64 == 0, "B's tile is whole 64-column blocks");
    static_assert(a_units == 8 && threads / 8 * a_units == bm,
                  "A: 8 units per row, a thread's rows 16 apart");
    static_assert(b_units == 8 && threads / 16 * b_units == bk,
                  "B: 16 units per row, a thread's rows 8 apart");
    static_assert(stage_bytes % HOPPER_ATOM_BYTES == 0, "every tile 1024-aligned");
    static_assert(stages >= 2, "a ring needs two slots");
};

/* One thread's copies: units u = tid % 8 of A's rows tid / 8 + 16 i, and
 * units v = tid % 16 of B's rows of k tid / 16 + 8 i (i < 8). */
template <class C>
struct hwg_loader {
    const uint16_t *a, *b;    /* unit 0 of this thread in the next tile */
    size_t a_step, b_step;    /* between its units: 16 rows of A, 8 of B */
    uint32_t a_dst, b_dst;    /* byte offsets of unit 0 in a slot */
    unsigned a_rows_ok;       /* bit i: the row of A unit i exists */
    int a_k, b_k;             /* k of the A units, of B unit 0, in the next tile */
    int k;
    size_t b_tile;            /* between B's tiles: bk rows */
    bool b_cols_ok;

    __device__ __forceinline__ hwg_loader(const uint16_t *a0, const uint16_t *b0, int m, int n,
                                          int k_, int lda, int ldb, int bm0, int bn0)
    {
        int tid = threadIdx.x;
        int row = tid / 8, u = tid % 8, krow = tid / 16, v = tid % 16;
        k = k_;
        a_rows_ok = 0;
#pragma unroll
        for (int i = 0; i < C::a_units; i++)
            a_rows_ok |= (unsigned)(bm0 + row + 16 * i < m) << i;
        /* A row past M is never read (src-size 0); its unit points into
         * the tile's first row. */
        a = a0 + (size_t)(bm0 + (row < m - bm0 ? row : 0)) * lda + 8 * u;
        a_step = (size_t)16 * lda;
        a_dst = hopper_sw128(row, u);
        a_k = 8 * u;
        b = b0 + (size_t)krow * ldb + bn0 + 8 * v;
        b_step = (size_t)8 * ldb;
        b_tile = (size_t)C::bk * ldb;
        b_dst = v / 8 * HOPPER_B_BLOCK + hopper_sw128(krow, v % 8);
        b_k = krow;
        b_cols_ok = bn0 + 8 * v < n;
    }

    /* Starts the copies of the next tile into the slot at `slot`. */
    __device__ __forceinline__ void load(uint32_t slot)
    {
        bool a_k_ok = a_k < k;
#pragma unroll
        for (int i = 0; i < C::a_units; i++) {
            bool ok = a_k_ok && (a_rows_ok >> i & 1);
            /* Row 16 i shares row 0's swizzle (16 i % 8 == 0). */
            hopper_cp16(slot + a_dst + i * 16 * HOPPER_ROW_BYTES, ok ? a + i * a_step : a, ok);
        }
#pragma unroll
        for (int i = 0; i < C::b_units; i++) {
            bool ok = b_cols_ok && b_k + 8 * i < k;
            hopper_cp16(slot + C::a_bytes + b_dst + i * 8 * HOPPER_ROW_BYTES, b + i * b_step, ok);
        }
        a += C::bk;
        a_k += C::bk;
        b += b_tile;
        b_k += C::bk;
    }
};

template <class T>
static __global__ void __launch_bounds__(hwg_cfg::threads)
hgemm_wgmma_kernel(const struct hopper_args args)
{
    typedef hwg_cfg C;
    extern __shared__ __align__(16) unsigned char hwg_smem[];
    const uint32_t ring =
        ((uint32_t)__cvta_generic_to_shared(hwg_smem) + HOPPER_ATOM_BYTES - 1) &
        ~(uint32_t)(HOPPER_ATOM_BYTES - 1);
    const struct hgemm_problem &p = args.p;
    long long product = (long long)args.batch0 + blockIdx.y;
    int tm, tn;
    hopper_tile_of(blockIdx.x, args.tiles_m, args.tiles_n, C::group, &tm, &tn);
    int bm0 = tm * C::bm, bn0 = tn * C::bn;
    int tiles = (p.k + C::bk - 1) / C::bk;

    hwg_loader<C> loader(p.a + product * p.stride_a, p.b + product * p.stride_b, p.m, p.n, p.k,
                         p.lda, p.ldb, bm0, bn0);
#pragma unroll
    for (int s = 0; s < C::stages - 1; s++) {
        if (s < tiles)
            loader.load(ring + s * C::stage_bytes);
        hopper_cp_commit();
    }

    float acc[2][64];
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc[h][i] = 0.0f;

    for (int t = 0; t < tiles; t++) {
        /* Tile t has landed (this thread's copies); fenced for the async
         * proxy, then published to the warpgroup.  Everyone's wgmma of tile
         * t - 1 are complete, so its slot may be copied over. */
        hopper_cp_wait<C::stages - 2>();
        hopper_fence_async_shared();
        __syncthreads();
        int next = t + C::stages - 1;
        if (next < tiles)
            loader.load(ring + next % C::stages * C::stage_bytes);
        hopper_cp_commit();

        uint32_t sa = ring + t % C::stages * C::stage_bytes, sb = sa + C::a_bytes;
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
    }
    hopper_cp_wait<0>();

    float *c = p.c + product * p.stride_c + (size_t)bm0 * p.n + bn0;
#pragma unroll
    for (int h = 0; h < 2; h++)
        hopper_store<C::bn>(acc[h], threadIdx.x, c + (size_t)64 * h * p.n, p.n,
                            p.m - bm0 - 64 * h, p.n - bn0, p.alpha, p.beta, args.c_vec);
}

template <class T>
static cudaError_t hwg_run(struct hopper_args args, cudaStream_t stream)
{
    typedef hwg_cfg C;
    cudaError_t err = cudaFuncSetAttribute(hgemm_wgmma_kernel<T>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)C::smem);
    if (err != cudaSuccess)
        return err;
    for (long long b0 = 0; b0 < args.p.batch; b0 += HOPPER_MAX_GRID_Y) {
        args.batch0 = (int)b0;
        dim3 grid((unsigned)(args.tiles_m * args.tiles_n),
                  (unsigned)min((long long)args.p.batch - b0, (long long)HOPPER_MAX_GRID_Y));
        hgemm_wgmma_kernel<T><<<grid, C::threads, C::smem, stream>>>(args);
        err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" cudaError_t hgemm_wgmma_launch(const struct hgemm_problem *p,
                                          const struct launch_env *env)
{
    struct hopper_args args;
    cudaError_t err = hopper_args_of(p, hwg_cfg::bm, hwg_cfg::bn, &args);
    if (err != cudaSuccess || p->m == 0 || p->n == 0)
        return err;
    return p->bf16 ? hwg_run<__nv_bfloat16>(args, env->stream)
                   : hwg_run<__half>(args, env->stream);
}

extern "C" cudaError_t hgemm_wgmma_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_wgmma_kernel<__half>, hwg_cfg::threads, hwg_cfg::smem, out);
}

extern "C" int hgemm_wgmma_check(const struct gemm_problem *p, char *why, size_t n)
{
    return hopper_check(p, why, n, false);
}
