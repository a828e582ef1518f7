/* f16_simt: half (IEEE binary16) operands, FP32 accumulation by FFMA on the
 * CUDA cores, float C; the first stage of the half ladder, before the
 * tensor cores.
 *
 * Against thread_8x16, whose block it takes (128x128 tiles, 2x2 warps of
 * 64x64, 8x16 results per lane, the same lane layout and the same 6 LDS.128
 * per 128 FFMA): the operands are halves.  A product of two halves is exact
 * in float (11-bit significands), so the sums are the ones NumPy's float16
 * matmul forms in float before its final rounding.
 *
 * Where the conversion goes decides the speed.  Converted where the inner
 * loop reads its operands, every lane would convert its 8 values of A and
 * 16 of B at every step of k: 24 HADD2.F32 beside 128 FFMA (19% more issue
 * slots), each element of A converted by 8 lanes and each of B by 16.
 * Here each element is converted once per block instead: halves land by
 * cp.async in a ring of STAGES half tiles, and while the block multiplies
 * float tile t, every thread converts its share of half tile t + 1 (16 of
 * A, 16 of B: 8 LDS.64, 32 HADD2.F32, 8 STS.128 against 2048 FFMA) into
 * the other of two float tiles.  One barrier per tile covers both: the
 * ring slot of tile t + STAGES is the one tile t was converted from, so
 * STAGES - 1 tiles of copies are in flight, as in the float pipeline, and
 * the halves halve the bytes each tile moves.
 *
 * Copies: 16 bytes (8 halves) where an operand's rows and its batch stride
 * are multiples of 8 halves and its base 16-byte aligned, 4 bytes where
 * even, and otherwise (odd K or N) ordinary 2-byte loads through registers,
 * a chunk of 8 started every 4 steps of k and stored to the ring 3 steps
 * later, so that their latency hides behind FFMAs.  Elements outside A or
 * B are zeros, written by the copy (src-size 0) or the load's predicate;
 * tiles past the end of K are copied as zeros too, so the loop has no
 * branches.
 *
 * A lands in the ring as its rows are (32 bytes per row of a tile), with
 * the 16-byte units of each group of 8 XOR-swizzled by the row's bits 2..4:
 * the conversion reads 4 rows x 4 halves per lane and writes their
 * transpose as 4 STS.128 into fa[k][m] (rows of BM + 4 floats), and both
 * the copies and those reads and writes are free of bank conflicts.
 *
 * Blocks walk bands of 8 tile rows (swizzle's order, for L2 reuse); a
 * stack of products takes blockIdx.y, in launches of at most 65535.
 *
 * ptxas (sm_90, CUDA 13.0): 240 registers, no spills, 66,048 bytes of
 * shared memory, two blocks per SM; the SASS of the main loop holds 2048
 * FFMA in 2250 instructions per tile (91.0%; thread_8x16 90.9%): 96
 * LDS.128, 8 LDS.64, 32 HADD2.F32, 8 STS.128, 4 LDGSTS and 54 others (12 of
 * them the never-executed LDS that ptxas puts before LDGSTS).  With 2-byte
 * loads for both operands: 2374 (86.3%), 254 registers.
 *
 * Follows no published write-up: gemmcli's own.
 *
 * Run and checked by (a.npy and b.npy float16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f16_simt --verify --repeat 20 */
#include <stdint.h>
#include <cuda_fp16.h>

#include "kernels/gemm.h"
#include "kernels/common.cuh"

struct hsimt_cfg {
    static constexpr int bm = 128, bn = 128, bk = 16, stages = 4, group = 8;
    static constexpr int threads = 128, warps = threads / 32;
    /* 256 threads per SM at up to 255 registers each. */
    static constexpr int min_blocks = 2;
    /* One float tile: A as fa[k][m], rows of a_ld floats, then B as
     * fb[k][n].  a_ld / 4 odd: the transposed STS.128 of 8 lanes (2 values
     * of k x 4 row groups) hit 8 different 16-byte bank groups. */
    static constexpr int a_ld = bm + 4;
    static constexpr int fa_floats = bk * a_ld, fb_floats = bk * bn;
    static constexpr int f_floats = fa_floats + fb_floats;
    /* One ring slot: A as 16-byte units (2 per row, swizzled), then B's
     * rows of bn halves. */
    static constexpr int ha_bytes = bm * bk * 2, hb_bytes = bk * bn * 2;
    static constexpr int h_bytes = ha_bytes + hb_bytes;
    static constexpr size_t smem = 2 * f_floats * sizeof(float) + (size_t)stages * h_bytes;
    /* Copies: chunks of 8 halves, two of A and two of B per thread. */
    static constexpr int a_chunks = bm * bk / 8 / threads, b_chunks = bk * bn / 8 / threads;

    static_assert(bm == 2 * 64 && bn == 2 * 64 && warps == 4, "2x2 warps of 64x64");
    static_assert(bk == 16, "A rows of a tile are two 16-byte units; B converts in 4 parts");
    static_assert(a_ld % 8 == 4, "a_ld / 4 odd keeps the transposed stores conflict-free");
    static_assert(a_chunks == 2 && b_chunks == 2 && a_chunks + b_chunks == bk / 4,
                  "one chunk issued every 4 steps of k");
    static_assert(threads == (bm / 4) * (bk / 4), "one 4x4 block of A converted per thread");
    static_assert(bn == 32 * 4 && bk == warps * 4, "a warp converts one row of B per part");
    static_assert(threads / 2 * a_chunks == bm && threads / 16 * b_chunks == bk,
                  "copy layout of A and B");
    static_assert(stages >= 2, "tile t + STAGES lands in another slot than tile t + 1's");
};

struct hsimt_args {
    struct hgemm_problem p;
    int batch0;               /* product of blockIdx.y == 0 */
    int tiles_m, tiles_n;
    int c_vec;                /* rows of C may be stored as float4 */
};

static __device__ __forceinline__ void hsimt_cp16(unsigned dst, const void *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 16 : 0));
}

static __device__ __forceinline__ void hsimt_cp4(unsigned dst, const void *src, bool ok)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 4 : 0));
}

static __device__ __forceinline__ void hsimt_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void hsimt_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __device__ __forceinline__ float hsimt_lo(unsigned w)
{
    return __low2float(*reinterpret_cast<const __half2 *>(&w));
}

static __device__ __forceinline__ float hsimt_hi(unsigned w)
{
    return __high2float(*reinterpret_cast<const __half2 *>(&w));
}

/* Where block `id` works: down a band of `group` tile rows, then right. */
static __device__ __forceinline__ void hsimt_tile_of(int id, int tiles_m, int tiles_n, int group,
                                                     int *tm, int *tn)
{
    int band = id / (group * tiles_n);
    int first = band * group;
    int rows = min(tiles_m - first, group);
    int in_band = id - band * group * tiles_n;
    *tm = first + in_band % rows;
    *tn = in_band / rows;
}

/* One thread's copies: chunks 0, 1 of A (rows r and r + 64 of the tile, 8
 * halves at k 8 * (tid % 2)), chunks 2, 3 of B (rows kk and kk + 8, 8
 * halves at column 8 * (tid % 16)).  AMODE and BMODE are the operands'
 * copy sizes in bytes: 16, 4, or 2 (plain loads through registers). */
template <class C, int AMODE, int BMODE>
struct hsimt_loader {
    const uint16_t *src[4];
    unsigned dst[4];          /* byte offsets in a ring slot */
    int a_rows_ok;            /* bit i: the row of A chunk i exists */
    int a_left;               /* K - k of the A chunks' first half */
    int b_left;               /* K - k of B chunk 2's row */
    int b_cols;               /* halves of a B chunk inside N, 0..8 */
    size_t b_tile;            /* halves between B's tiles: bk * N */
    unsigned short held[8];   /* a 2-byte chunk between its load and store */

    __device__ __forceinline__ hsimt_loader(const uint16_t *a, const uint16_t *b, int m, int n,
                                            int k, int bm0, int bn0)
    {
        int tid = threadIdx.x;
        int c = tid % 2, kk = tid / 16, cc = tid % 16;
        a_rows_ok = 0;
#pragma unroll
        for (int i = 0; i < 2; i++) {
            int row = tid / 2 + 64 * i;
            bool ok = row < m - bm0;
            a_rows_ok |= (int)ok << i;
            /* A row past M is never read; its chunk points at the
             * tile's first row instead. */
            src[i] = a + (size_t)(bm0 + (ok ? row : 0)) * k + 8 * c;
            int u = 2 * row + c;
            dst[i] = (unsigned)(u ^ ((u >> 3) & 7)) * 16;
        }
        a_left = k - 8 * c;
        b_tile = (size_t)C::bk * n;
        b_left = k - kk;
        b_cols = min(max(n - bn0 - 8 * cc, 0), 8);
#pragma unroll
        for (int i = 0; i < 2; i++) {
            src[2 + i] = b + (size_t)(kk + 8 * i) * n + bn0 + 8 * cc;
            dst[2 + i] = C::ha_bytes + ((kk + 8 * i) * (C::bn / 8) + cc) * 16;
        }
    }

    /* Halves of chunk i inside the operand, 0..8. */
    __device__ __forceinline__ int valid(int i) const
    {
        if (i < 2)
            return (a_rows_ok >> i & 1) ? min(max(a_left, 0), 8) : 0;
        return b_left - 8 * (i - 2) > 0 ? b_cols : 0;
    }

    /* Starts chunk i of the next tile into the slot at shared address
     * `slot`: the copy itself, or the loads of a 2-byte chunk. */
    __device__ __forceinline__ void issue(int i, unsigned slot)
    {
        int mode = i < 2 ? AMODE : BMODE;
        int ok = valid(i);
        if (mode == 16) {
            hsimt_cp16(slot + dst[i], src[i], ok > 0);
        } else if (mode == 4) {
#pragma unroll
            for (int w = 0; w < 4; w++)
                hsimt_cp4(slot + dst[i] + 4 * w, src[i] + 2 * w, ok > 2 * w);
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++)
                held[e] = e < ok ? __ldg(reinterpret_cast<const unsigned short *>(src[i]) + e) : 0;
        }
    }

    /* Ends chunk i: a 2-byte chunk is stored to the slot at `slot`. */
    __device__ __forceinline__ void finish(int i, unsigned char *slot)
    {
        if ((i < 2 ? AMODE : BMODE) != 2)
            return;
        uint4 v;
        v.x = held[0] | (unsigned)held[1] << 16;
        v.y = held[2] | (unsigned)held[3] << 16;
        v.z = held[4] | (unsigned)held[5] << 16;
        v.w = held[6] | (unsigned)held[7] << 16;
        *reinterpret_cast<uint4 *>(slot + dst[i]) = v;
    }

    __device__ __forceinline__ void next_tile(void)
    {
        src[0] += C::bk;
        src[1] += C::bk;
        src[2] += b_tile;
        src[3] += b_tile;
        a_left -= C::bk;
        b_left -= C::bk;
    }
};

/* One thread's share of converting a half slot into a float tile: a 4x4
 * block of A (rows 4 * rg.., k 4 * kg..), transposed, and a quarter row of
 * B in each of 4 parts (row 4 * part + warp, columns 4 * lane..). */
template <class C>
struct hsimt_converter {
    unsigned a_src[4];        /* byte offsets in a slot, row r of the block */
    int a_dst;                /* float offsets in a float tile */
    int b_src, b_dst;

    __device__ __forceinline__ hsimt_converter()
    {
        int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        /* 16 lanes (8 row groups x 2 halves of a unit) read 128 distinct
         * bytes: the swizzle moves row group rg to unit (2r + c) ^ rg % 8. */
        int half = lane & 1, rgl = lane >> 1 & 7, c = lane >> 4;
        int rg = 8 * warp + rgl, kg = 2 * c + half;
#pragma unroll
        for (int r = 0; r < 4; r++)
            a_src[r] = 128 * rg + (((2 * r + c) ^ rgl) * 16) + 8 * half;
        a_dst = 4 * kg * C::a_ld + 4 * rg;
        b_src = C::ha_bytes + warp * C::bn * 2 + 8 * lane;
        b_dst = C::fa_floats + warp * C::bn + 4 * lane;
    }

    __device__ __forceinline__ void a(const unsigned char *slot, float *f) const
    {
        uint2 v[4];
#pragma unroll
        for (int r = 0; r < 4; r++)
            v[r] = *reinterpret_cast<const uint2 *>(slot + a_src[r]);
        float *out = f + a_dst;
        *reinterpret_cast<float4 *>(out) =
            make_float4(hsimt_lo(v[0].x), hsimt_lo(v[1].x), hsimt_lo(v[2].x), hsimt_lo(v[3].x));
        *reinterpret_cast<float4 *>(out + C::a_ld) =
            make_float4(hsimt_hi(v[0].x), hsimt_hi(v[1].x), hsimt_hi(v[2].x), hsimt_hi(v[3].x));
        *reinterpret_cast<float4 *>(out + 2 * C::a_ld) =
            make_float4(hsimt_lo(v[0].y), hsimt_lo(v[1].y), hsimt_lo(v[2].y), hsimt_lo(v[3].y));
        *reinterpret_cast<float4 *>(out + 3 * C::a_ld) =
            make_float4(hsimt_hi(v[0].y), hsimt_hi(v[1].y), hsimt_hi(v[2].y), hsimt_hi(v[3].y));
    }

    __device__ __forceinline__ void b(const unsigned char *slot, float *f, int part) const
    {
        uint2 v = *reinterpret_cast<const uint2 *>(slot + b_src + part * 4 * C::bn * 2);
        *reinterpret_cast<float4 *>(f + b_dst + part * 4 * C::bn) =
            make_float4(hsimt_lo(v.x), hsimt_hi(v.x), hsimt_lo(v.y), hsimt_hi(v.y));
    }
};

static __device__ __forceinline__ float hsimt_out(float alpha, float beta, float acc,
                                                  const float *c)
{
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

template <int AMODE, int BMODE>
static __global__ void __launch_bounds__(hsimt_cfg::threads, hsimt_cfg::min_blocks)
hgemm_simt_kernel(const struct hsimt_args args)
{
    typedef hsimt_cfg C;
    extern __shared__ __align__(16) unsigned char hsimt_smem[];
    const struct hgemm_problem &p = args.p;
    long long product = (long long)args.batch0 + blockIdx.y;
    int tm, tn;
    hsimt_tile_of(blockIdx.x, args.tiles_m, args.tiles_n, C::group, &tm, &tn);
    int bm0 = tm * C::bm, bn0 = tn * C::bn;
    int tiles = p.k > 0 ? (p.k - 1) / C::bk + 1 : 0;

    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int m0 = warp / 2 * 64 + lane / 4 * 4;
    int n0 = warp % 2 * 64 + lane % 4 * 4;
    float *f0 = reinterpret_cast<float *>(hsimt_smem);
    unsigned char *h0 = hsimt_smem + 2 * C::f_floats * sizeof(float);
    unsigned h0_addr = (unsigned)__cvta_generic_to_shared(h0);

    hsimt_loader<C, AMODE, BMODE> loader(p.a + product * p.stride_a, p.b + product * p.stride_b,
                                         p.m, p.n, p.k, bm0, bn0);
    hsimt_converter<C> conv;

    /* Tiles 0 .. STAGES-1 (zeros past K), one group each. */
#pragma unroll
    for (int s = 0; s < C::stages; s++) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            loader.issue(i, h0_addr + s * C::h_bytes);
            loader.finish(i, h0 + s * C::h_bytes);
        }
        hsimt_commit();
        loader.next_tile();
    }
    hsimt_wait<C::stages - 1>();
    __syncthreads();
    conv.a(h0, f0);
#pragma unroll
    for (int part = 0; part < 4; part++)
        conv.b(h0, f0, part);

    float acc[8][16];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 16; j++)
            acc[i][j] = 0.0f;

    for (int t = 0; t < tiles; t++) {
        /* Tile t + 1 has landed; float tile t is written; everyone is done
         * with float tile t - 1 and with slot t % STAGES. */
        hsimt_wait<C::stages - 2>();
        __syncthreads();
        int copy_slot = t % C::stages, conv_slot = (t + 1) % C::stages;
        unsigned copy_addr = h0_addr + copy_slot * C::h_bytes;
        unsigned char *copy_ptr = h0 + copy_slot * C::h_bytes;
        const unsigned char *conv_ptr = h0 + conv_slot * C::h_bytes;
        const float *f = f0 + (t & 1) * C::f_floats;
        float *f_next = f0 + ((t + 1) & 1) * C::f_floats;
        const float *fa = f, *fb = f + C::fa_floats;
#pragma unroll
        for (int k = 0; k < C::bk; k++) {
            if (k % 4 == 0)
                loader.issue(k / 4, copy_addr);
            if (k % 4 == 3)
                loader.finish(k / 4, copy_ptr);
            float ra[8], rb[16];
            *reinterpret_cast<float4 *>(&ra[0]) =
                *reinterpret_cast<const float4 *>(&fa[k * C::a_ld + m0]);
            *reinterpret_cast<float4 *>(&ra[4]) =
                *reinterpret_cast<const float4 *>(&fa[k * C::a_ld + m0 + 32]);
#pragma unroll
            for (int q = 0; q < 4; q++)
                *reinterpret_cast<float4 *>(&rb[4 * q]) =
                    *reinterpret_cast<const float4 *>(&fb[k * C::bn + n0 + 16 * q]);
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 16; j++)
                    acc[i][j] += ra[i] * rb[j];
        }
        /* After the last read of float tile t in program order, so that the
         * stores to the other float tile hold back none of those reads. */
        conv.a(conv_ptr, f_next);
#pragma unroll
        for (int part = 0; part < 4; part++)
            conv.b(conv_ptr, f_next, part);
        hsimt_commit();
        loader.next_tile();
    }
    hsimt_wait<0>();

    float *c = p.c + product * p.stride_c + (size_t)bm0 * p.n + bn0;
    int rem_m = p.m - bm0, rem_n = p.n - bn0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int row = m0 + (i / 4) * 32 + i % 4;
        if (row >= rem_m)
            continue;
        float *crow = c + (size_t)row * p.n;
#pragma unroll
        for (int q = 0; q < 4; q++) {
            int col = n0 + 16 * q;
            if (col >= rem_n)
                continue;
            float *cc = crow + col;
            if (args.c_vec) {
                float4 out = make_float4(p.alpha * acc[i][4 * q], p.alpha * acc[i][4 * q + 1],
                                         p.alpha * acc[i][4 * q + 2], p.alpha * acc[i][4 * q + 3]);
                if (p.beta != 0.0f) {
                    float4 old = *reinterpret_cast<const float4 *>(cc);
                    out.x += p.beta * old.x;
                    out.y += p.beta * old.y;
                    out.z += p.beta * old.z;
                    out.w += p.beta * old.w;
                }
                *reinterpret_cast<float4 *>(cc) = out;
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (col + e < rem_n)
                        cc[e] = hsimt_out(p.alpha, p.beta, acc[i][4 * q + e], cc + e);
            }
        }
    }
}

/* Copy size in bytes for an operand whose rows are `ld` halves long. */
static int hsimt_mode(const uint16_t *base, int ld, long long stride)
{
    uintptr_t addr = (uintptr_t)base;
    if (ld % 8 == 0 && stride % 8 == 0 && addr % 16 == 0)
        return 16;
    if (ld % 2 == 0 && stride % 2 == 0 && addr % 4 == 0)
        return 4;
    return 2;
}

template <int AMODE, int BMODE>
static cudaError_t hsimt_run(struct hsimt_args args, int batch, cudaStream_t stream)
{
    typedef hsimt_cfg C;
    cudaError_t err = cudaFuncSetAttribute(hgemm_simt_kernel<AMODE, BMODE>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
    if (err != cudaSuccess)
        return err;
    for (long long b0 = 0; b0 < batch; b0 += 65535) {
        args.batch0 = (int)b0;
        dim3 grid((unsigned)(args.tiles_m * args.tiles_n), (unsigned)min(batch - b0, 65535LL));
        hgemm_simt_kernel<AMODE, BMODE><<<grid, C::threads, C::smem, stream>>>(args);
        err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

template <int AMODE>
static cudaError_t hsimt_run_b(const struct hsimt_args &args, int bmode, int batch,
                               cudaStream_t stream)
{
    if (bmode == 16)
        return hsimt_run<AMODE, 16>(args, batch, stream);
    if (bmode == 4)
        return hsimt_run<AMODE, 4>(args, batch, stream);
    return hsimt_run<AMODE, 2>(args, batch, stream);
}

extern "C" cudaError_t hgemm_simt_launch(const struct hgemm_problem *p,
                                         const struct launch_env *env)
{
    typedef hsimt_cfg C;
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return cudaErrorInvalidValue;
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    int batch = p->batch > 1 ? p->batch : 1;
    long long sa = batch > 1 ? p->stride_a : 0, sb = batch > 1 ? p->stride_b : 0;
    long long sc = batch > 1 ? p->stride_c : 0;
    long long tiles_m = ((long long)p->m + C::bm - 1) / C::bm;
    long long tiles_n = ((long long)p->n + C::bn - 1) / C::bn;
    if (tiles_m * tiles_n > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    struct hsimt_args args;
    args.p = *p;
    args.p.batch = batch;
    args.p.stride_a = sa;
    args.p.stride_b = sb;
    args.p.stride_c = sc;
    args.batch0 = 0;
    args.tiles_m = (int)tiles_m;
    args.tiles_n = (int)tiles_n;
    args.c_vec = p->n % 4 == 0 && sc % 4 == 0 && (uintptr_t)p->c % 16 == 0;
    int amode = hsimt_mode(p->a, p->k, sa), bmode = hsimt_mode(p->b, p->n, sb);
    if (amode == 16)
        return hsimt_run_b<16>(args, bmode, batch, env->stream);
    if (amode == 4)
        return hsimt_run_b<4>(args, bmode, batch, env->stream);
    return hsimt_run_b<2>(args, bmode, batch, env->stream);
}

extern "C" cudaError_t hgemm_simt_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_simt_kernel<16, 16>, hsimt_cfg::threads, hsimt_cfg::smem, out);
}
