/* i8_imma: int8 operands on the tensor cores, int32 C = A * B (or C += A
 * * B), the sums exact modulo 2^32: mma.sync.m16n8k32 with signed 8-bit
 * operands and int32 accumulators (IMMA), 128x128 block tiles of 8 warps,
 * 64 values of k a step, the next step's bytes loaded into registers
 * while the tensor cores work on this one; a stack of products in one
 * launch.
 *
 * The integer ladder's first tensor-core rung, mma.sync as the 16-bit
 * ladder's mma_sync is (hgemm_01_mma_sync.cu), on bytes.  The instruction
 * wants A's rows and B's columns with k contiguous, four values of k to a
 * register: A's rows are so as they lie; B, row-major (n contiguous), is
 * turned k-major as it is stored.  A thread reads four rows of B at four
 * adjacent columns (a word each, a warp's eight lanes of one row 32
 * adjacent bytes), and PRMT turns that 4 x 4 block of bytes into four
 * words, one a column, each four values of k.  Both tiles keep 64 bytes
 * of k a row, rows 80 bytes apart: the fragments' words (row g of a group
 * of eight, word t of four) then fall in 32 banks.
 *
 * Warps as 2 x 4: each computes 64 x 32 of C, 4 x 4 tiles of m16n8, 16
 * IMMA a step of 32 values of k, 64 int32 accumulators a lane.  Loads:
 * A's 32 bytes a thread a step as two 16-byte loads where the rows allow
 * (K and the base a multiple of 16 bytes, the rows inside the matrix),
 * else byte by byte with zeros past the edges; B's 4 x 8 bytes as words
 * where N allows (a multiple of 4), else bytes.
 *
 * Blocks: x is the tile, y + 65535 z the product.
 *
 * gemmcli's own; the PTX ISA gives the fragment layouts of
 * mma.sync.aligned.m16n8k32 on .s8, and the tiles and warp layout are the
 * 16-bit ladder's mma_sync's.
 *
 * Run and checked by (a.npy and b.npy int8):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel i8_imma --verify --repeat 20 */
#include <stdint.h>
#include "kernels/gemm.h"
#include "kernels/common.cuh"
#include "kernels/igemm/igemm_grid.cuh"

enum {
    I8M_BM = 128, I8M_BN = 128, I8M_BK = 64,   /* BK in bytes (values of k) */
    I8M_PITCH = I8M_BK + 16,                   /* bytes between tile rows */
    I8M_THREADS = 256,
    I8M_WARPS_M = 2, I8M_WARPS_N = 4,
    I8M_WM = I8M_BM / I8M_WARPS_M, I8M_WN = I8M_BN / I8M_WARPS_N,   /* 64 x 32 */
    I8M_MT = I8M_WM / 16, I8M_NT = I8M_WN / 8,                       /* 4 x 4 mma tiles */
};
static_assert(I8M_WARPS_M * I8M_WARPS_N * 32 == I8M_THREADS, "8 warps");
static_assert(I8M_BM * I8M_BK == 32 * I8M_THREADS, "32 bytes of A a thread");
static_assert(I8M_BN * I8M_BK == 32 * I8M_THREADS, "32 bytes of B a thread");

/* One step's bytes of this thread, between the loads and the stores. */
struct i8m_stage {
    uint4 a[2];          /* A: row tid / 2, bytes 32 (tid % 2) on */
    uint32_t b[2][4];    /* B: per half h, columns 4 q .. 4 q + 3 as words of 4 k */
};

static __device__ __forceinline__ void i8m_mma(int32_t (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* Bytes at p[0 .. n) (n <= 16), zeros after. */
static __device__ __forceinline__ uint4 i8m_bytes16(const int8_t *p, int n)
{
    uint32_t w[4] = { 0, 0, 0, 0 };
#pragma unroll
    for (int i = 0; i < 16; i++)
        if (i < n)
            w[i / 4] |= (uint32_t)(uint8_t)p[i] << (8 * (i % 4));
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/* Rows r (< rows) of four at p, p + ld, ...: the 4 bytes at each from
 * column 0 (of which `cols` exist), as words; zeros outside. */
static __device__ __forceinline__ uint32_t i8m_word(const int8_t *p, int cols, bool whole)
{
    if (whole)
        return *(const uint32_t *)p;
    uint32_t w = 0;
#pragma unroll
    for (int i = 0; i < 4; i++)
        if (i < cols)
            w |= (uint32_t)(uint8_t)p[i] << (8 * i);
    return w;
}

/* The 4 x 4 bytes w[i] = row i, byte j = column j, as column words:
 * out[j] byte i = w[i] byte j. */
static __device__ __forceinline__ void i8m_turn(const uint32_t (&w)[4], uint32_t (&out)[4])
{
    uint32_t lo01 = __byte_perm(w[0], w[1], 0x5140), hi01 = __byte_perm(w[0], w[1], 0x7362);
    uint32_t lo23 = __byte_perm(w[2], w[3], 0x5140), hi23 = __byte_perm(w[2], w[3], 0x7362);
    out[0] = __byte_perm(lo01, lo23, 0x5410);
    out[1] = __byte_perm(lo01, lo23, 0x7632);
    out[2] = __byte_perm(hi01, hi23, 0x5410);
    out[3] = __byte_perm(hi01, hi23, 0x7632);
}

static __global__ void __launch_bounds__(I8M_THREADS, 2)
i8gemm_imma_kernel(const struct i8gemm_problem p, int tiles_n, int a_vec, int b_vec)
{
    __shared__ __align__(16) uint8_t as[I8M_BM * I8M_PITCH];
    __shared__ __align__(16) uint8_t bs[I8M_BN * I8M_PITCH];
    long long z = (long long)blockIdx.z * gridDim.y + blockIdx.y;
    if (z >= (p.batch > 1 ? p.batch : 1))
        return;
    int bm0 = (int)(blockIdx.x / tiles_n) * I8M_BM;
    int bn0 = (int)(blockIdx.x % tiles_n) * I8M_BN;
    int rows_left = p.m - bm0, cols_left = p.n - bn0;
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int g = lane / 4, t = lane % 4;
    int wm0 = (warp / I8M_WARPS_N) * I8M_WM, wn0 = (warp % I8M_WARPS_N) * I8M_WN;
    const int8_t *a = p.a + z * p.stride_a + (size_t)bm0 * p.k;
    const int8_t *b = p.b + z * p.stride_b + bn0;

    /* Loads: A's row ar, bytes ak .. ak + 31; B's rows 4 (kq + 8 h) .. + 3
     * of columns 4 q .. 4 q + 3 (q: lane % 8 and the warp; kq: lane / 8). */
    int ar = tid / 2, ak = 32 * (tid % 2);
    int q = (lane % 8) + 8 * (warp % 4), kq = lane / 8 + 4 * (warp / 4);
    bool a_row = ar < rows_left;
    int b_cols = cols_left - 4 * q;
    bool b_cols_whole = b_vec && b_cols >= 4;

    auto load = [&](int k0, struct i8m_stage &s) {
        int k_left = p.k - k0;
        const int8_t *pa = a + (size_t)ar * p.k + k0 + ak;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int n = a_row ? min(16, k_left - ak - 16 * h) : 0;
            s.a[h] = a_vec && n == 16 ? *(const uint4 *)(pa + 16 * h) : i8m_bytes16(pa + 16 * h, n);
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            uint32_t w[4];
            int kr = 4 * (kq + 8 * h);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                bool row = kr + i < k_left && b_cols > 0;
                w[i] = row ? i8m_word(b + (size_t)(k0 + kr + i) * p.n + 4 * q, b_cols,
                                      b_cols_whole)
                           : 0u;
            }
            i8m_turn(w, s.b[h]);
        }
    };
    auto store = [&](const struct i8m_stage &s) {
#pragma unroll
        for (int h = 0; h < 2; h++)
            *(uint4 *)(as + ar * I8M_PITCH + ak + 16 * h) = s.a[h];
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                *(uint32_t *)(bs + (4 * q + j) * I8M_PITCH + 4 * (kq + 8 * h)) = s.b[h][j];
    };

    int32_t acc[I8M_MT][I8M_NT][4] = {};
    struct i8m_stage next;
    if (p.k > 0)
        load(0, next);
    for (int k0 = 0; k0 < p.k; k0 += I8M_BK) {
        store(next);
        __syncthreads();
        if (k0 + I8M_BK < p.k)
            load(k0 + I8M_BK, next);
#pragma unroll
        for (int ks = 0; ks < I8M_BK; ks += 32) {
            uint32_t fa[I8M_MT][4], fb[I8M_NT][2];
#pragma unroll
            for (int i = 0; i < I8M_MT; i++) {
                const uint8_t *r0 = as + (wm0 + 16 * i + g) * I8M_PITCH + ks + 4 * t;
                const uint8_t *r8 = r0 + 8 * I8M_PITCH;
                fa[i][0] = *(const uint32_t *)r0;
                fa[i][1] = *(const uint32_t *)r8;
                fa[i][2] = *(const uint32_t *)(r0 + 16);
                fa[i][3] = *(const uint32_t *)(r8 + 16);
            }
#pragma unroll
            for (int j = 0; j < I8M_NT; j++) {
                const uint8_t *c0 = bs + (wn0 + 8 * j + g) * I8M_PITCH + ks + 4 * t;
                fb[j][0] = *(const uint32_t *)c0;
                fb[j][1] = *(const uint32_t *)(c0 + 16);
            }
#pragma unroll
            for (int i = 0; i < I8M_MT; i++)
#pragma unroll
                for (int j = 0; j < I8M_NT; j++)
                    i8m_mma(acc[i][j], fa[i], fb[j]);
        }
        __syncthreads();
    }

    /* Lane (g, t) holds rows g and g + 8 of each m16 tile, columns 2 t and
     * 2 t + 1 of each n8 tile. */
    int32_t *c = p.c + z * p.stride_c;
#pragma unroll
    for (int i = 0; i < I8M_MT; i++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            int r = wm0 + 16 * i + g + 8 * half;
            if (r >= rows_left)
                continue;
#pragma unroll
            for (int j = 0; j < I8M_NT; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    int col = wn0 + 8 * j + 2 * t + e;
                    if (col >= cols_left)
                        continue;
                    int32_t *at = c + (size_t)(bm0 + r) * p.n + bn0 + col;
                    *at = (int32_t)((p.accumulate ? (uint32_t)*at : 0u) +
                                    (uint32_t)acc[i][j][2 * half + e]);
                }
        }
}

extern "C" cudaError_t i8gemm_imma_launch(const struct i8gemm_problem *p,
                                          const struct launch_env *env)
{
    if (p->m <= 0 || p->n <= 0)
        return cudaSuccess;
    long long batch = p->batch > 1 ? p->batch : 1;
    dim3 grid;
    int tiles_n;
    cudaError_t err = igemm_grid(p->m, p->n, I8M_BM, I8M_BN, p->batch, &grid, &tiles_n);
    if (err != cudaSuccess)
        return err;
    /* 16-byte loads of A where every row and matrix starts on 16 bytes;
     * word loads of B where every row and matrix starts on 4. */
    int a_vec = p->k % 16 == 0 && (uintptr_t)p->a % 16 == 0 &&
                (batch == 1 || p->stride_a % 16 == 0);
    int b_vec = p->n % 4 == 0 && (uintptr_t)p->b % 4 == 0 && (batch == 1 || p->stride_b % 4 == 0);
    i8gemm_imma_kernel<<<grid, I8M_THREADS, 0, env->stream>>>(*p, tiles_n, a_vec, b_vec);
    return launch_result();
}

extern "C" cudaError_t i8gemm_imma_attr(struct kernel_attr *out)
{
    return kernel_attr_of(i8gemm_imma_kernel, I8M_THREADS, 0, out);
}
