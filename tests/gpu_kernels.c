/* GPU kernel test: every row of gemm_kernels[] in every signature it
 * declares, and every row of transpose_kernels[], at ragged shapes, on
 * stacks (with A or B broadcast: stride 0), on fresh random data.
 *
 * mul: A, B (and C0 when beta != 0) are drawn from N(0, 1) in the
 * signature's operand type (f32, f16, f64), or as integers (i64: small
 * ones, and ones near 2^62 whose products wrap); the reference is FP64 on
 * the device (kernels/reference/ref_dgemm.cu) from the same operands widened exactly
 * to double, or for i64 the exact product modulo 2^64 on the host.  Before
 * each run C is poisoned (NaN, or 0xff bytes), or holds C0, so an element
 * a kernel fails to write fails the test.  A float kernel passes when its
 * result is finite, its relative Frobenius error is at most twice cuBLAS's
 * in the same signature on the same inputs (1.5 times in f16 and bf16,
 * where cuBLAS runs on tensor cores too, and in tf32; tf32x3 against
 * cuBLAS SGEMM) plus a few roundings (TINY), and
 * below an absolute bound per signature.  A kernel that sums each
 * output along K in one FP32 chain has an error growing like sqrt(K)
 * 2^-24; where cuBLAS splits K (256x256x65536) that is several times
 * cuBLAS's error.  Such a result, within SEQ_SCALE * sqrt(K) * 2^-24 (times
 * the terms' spread, for few outputs: terms_spread; twice that below
 * SEQ_FEW outputs, whose error the norm does not average), is reported as
 * "ok-seq" and counted as passed, separately.  i64 must match
 * bit for bit.  transpose: every kernel that takes the element size (1,
 * 2, 4 and 8 bytes), on random bits, with `in` and `out` on 16-byte
 * boundaries and off them, compared bit for bit with the host's transpose
 * (the copy kernels with the input, and cuBLAS geam up to NaN payloads),
 * the device output poisoned first; a GPU kernel must refuse a size its
 * row does not list; and the in-place square transpose (--kernel inplace
 * runs it alone).
 *
 *   gpu_kernels [--small] [--kernel NAME]... [--shape [BATCHx]MxNxK]... [--op mul|transpose]
 *               [--type f32|f16|bf16|f64|i64|tf32|tf32x3|i8|i16|i32]
 *
 * --small keeps the shapes that compute-sanitizer can get through; --once
 * runs each kernel in each of its signatures (and each transpose kernel at
 * each element size) on the first small case it can implement, the
 * sanitizers' pass over every kernel.
 * Without a CUDA device it says so and exits 0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#include "kernels/convert.h"
#include "kernels/gemm.h"
#include "kernels/transpose.h"
#include "kernels/reference/ref_dgemm.h"

#define TINY 1e-7
#define SEQ_SCALE 0.5
#define SEQ_FEW 64      /* outputs below which SEQ_SCALE doubles */
#define TF32_FLOOR 2e-3
#define TF32X3_FLOOR 0x1p-20
/* Host kernels beyond this many FLOP are skipped (they would take seconds). */
#define HOST_FLOP_LIMIT 4e9
#define OZAKI_HOST_FLOP_LIMIT 1e8
#define MAX_PICK 32

struct mul_case {
    int batch, m, n, k;
    float alpha, beta;
    int bcast;      /* 0: none, 1: A broadcast (stride 0), 2: B broadcast */
    int small;      /* part of --small */
    const char *only;   /* non-NULL: run this kernel alone (and cuBLAS) */
    int refused;        /* with `only`: its can_implement must refuse the case */
};

static const struct mul_case mul_cases[] = {
    { 1, 1, 1, 1, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 1, 1, -0.5f, 2.0f, 0, 1 },
    { 1, 7, 13, 5, 1.0f, 0.0f, 0, 1 },
    { 1, 7, 13, 5, 1.5f, -0.75f, 0, 1 },
    { 1, 33, 65, 17, 1.0f, 0.0f, 0, 1 },
    { 1, 33, 65, 17, 0.5f, 1.0f, 0, 1 },
    { 1, 127, 129, 255, 1.0f, 0.0f, 0, 1 },
    { 1, 127, 129, 255, -1.0f, 0.5f, 0, 1 },
    { 1, 64, 64, 64, 1.0f, 0.0f, 0, 1 },
    /* Stacks, one with A and one with B shared by every product. */
    { 3, 33, 65, 17, 1.0f, 0.0f, 0, 1 },
    { 5, 19, 37, 29, 0.75f, -0.5f, 1, 1 },
    { 4, 40, 24, 130, 1.0f, 0.0f, 2, 1 },
    { 1000, 8, 8, 8, 1.0f, 0.0f, 0, 0 },
    { 64, 128, 128, 128, 1.0f, 0.0f, 0, 0 },
    { 6, 300, 257, 129, 1.0f, -1.0f, 2, 0 },
    { 1, 1000, 3000, 500, 1.0f, 0.0f, 0, 0 },
    { 1, 1000, 3000, 500, 0.75f, -1.25f, 0, 0 },
    { 1, 1024, 1024, 1024, 1.0f, 0.0f, 0, 0 },
    { 1, 4097, 4097, 4097, 1.0f, 0.0f, 0, 0 },
    { 1, 4097, 4097, 4097, 1.0f, 1.0f, 0, 0 },
    { 1, 256, 256, 65536, 1.0f, 0.0f, 0, 0 },
    { 1, 65536, 64, 1024, 1.0f, 0.0f, 0, 0 },
    { 1, 65536, 64, 1024, 2.0f, -1.0f, 0, 0 },
    /* A few rows and columns past whole 128x128 tiles, with a full wave of
     * them: edge_peel computes those edges apart. */
    { 1, 2183, 2056, 77, 1.5f, -0.5f, 0, 0 },
    { 1, 2049, 4104, 1000, 1.0f, 0.0f, 0, 0 },
    /* Rows of 16 bytes (K, N multiples of 8) for the TMA stages, ragged in
     * M and against their tiles, on stacks with A or B shared. */
    { 1, 8, 8, 8, 1.0f, 0.0f, 0, 1 },
    { 1, 127, 136, 200, 1.0f, 0.0f, 0, 1 },
    { 3, 65, 200, 136, 1.0f, 0.0f, 1, 1 },
    { 2, 129, 264, 72, 0.5f, -1.0f, 2, 1 },
    /* Long K on few tiles: the tensor-core stages' split of K, with a
     * shorter last slice (gemm_dispatch.c), aligned and not. */
    { 1, 200, 136, 10000, 0.5f, -1.0f, 0, 0 },
    { 1, 100, 37, 9001, 1.0f, 0.0f, 0, 0 },
    { 1, 256, 256, 65537, 1.0f, 0.0f, 0, 0 },
    /* The persistent stages: many tiles per block, steps of k not a
     * multiple of the ring; padded copies of unaligned operands; pairs of
     * tile rows with one half past M; the TMA-store epilogue on a matrix
     * and a stack, and the direct one (N % 4 != 0). */
    { 40, 512, 512, 72, 1.0f, 0.0f, 0, 0 },
    { 1, 4096, 4096, 320, 1.0f, 0.0f, 0, 0 },
    { 3, 100, 70, 33, 1.0f, 0.0f, 0, 1 },
    { 4, 57, 90, 31, 1.0f, 0.5f, 1, 1 },
    { 1, 257, 263, 131, 0.5f, 1.0f, 0, 1 },
    { 1, 300, 520, 200, 1.0f, 0.0f, 0, 1 },
    { 5, 200, 260, 72, 1.0f, 0.0f, 0, 1 },
    { 1, 300, 522, 200, 1.0f, 0.0f, 0, 1 },
    /* A short K (small_k): outer products and short sums, N unaligned,
     * with C0, on a stack with B shared; an odd K over 16 and an odd
     * number of rows (rows two at a time, the last pass one short);
     * bands of several chunks of A's rows, the last one part full, at
     * each register size of B (K <= 4, 8, 16, 32). */
    { 1, 1952, 1255, 1, 1.0f, 0.0f, 0, 1 },
    { 1, 4001, 777, 7, 1.0f, 0.0f, 0, 1 },
    { 2, 999, 333, 13, 0.5f, 0.5f, 1, 1 },
    { 1, 9001, 130, 3, 1.0f, 0.0f, 0, 1 },
    { 1, 301, 539, 24, 0.5f, -1.0f, 0, 1 },
    { 1, 777, 1000, 29, 1.0f, 0.5f, 0, 1 },
    { 3, 100, 301, 32, 1.0f, 0.5f, 2, 1 },
    { 1, 3010, 5389, 32, 1.0f, 0.0f, 0, 0 },
};

/* Vectors: a row times a matrix, a matrix times a column (gemv), aligned
 * and not, and a dot product.  Run on every row for f32 and f64; for f16
 * and bf16 on the vector rows (KERNEL_VECTOR) only: the tensor-core
 * stages sum a vector's K in one chain whose accumulator does not round
 * to nearest (10-430 times cuBLAS's error at K = 1001-5000, measured on
 * an H200, 2026-11-22), a known deviation; f16_gemv is those types'
 * vector row. */
static const struct mul_case vector_cases[] = {
    { 1, 1, 777, 1001, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 1024, 4096, 0.5f, -1.0f, 0, 1 },
    { 1, 999, 1, 1001, 1.0f, 0.0f, 0, 1 },
    { 1, 1024, 1, 4096, 2.0f, 0.5f, 0, 1 },
    { 1, 1, 1, 5000, 1.0f, 0.0f, 0, 1 },
    { 3, 1, 100, 50, 1.0f, 0.0f, 2, 1 },
    { 1, 1, 8192, 8192, 1.0f, 0.0f, 0, 0 },
    { 1, 8192, 1, 8192, 1.0f, 0.0f, 0, 0 },
};

/* A thin side (the thin stage): the shapes cuBLAS led on, scaled down
 * (31945x18x7638, 23260x15x9240, 44312x30x864, 16x8558x16516,
 * 8x2392x32328, 32x4096x100000, 8x8x4000000, 5x7x598, 14x147x49623);
 * ragged N and K (odd, and even but no multiple of 4: loads of pairs),
 * a few rows with a short K (slices of one chunk), a grid of one wave
 * and a part (slices that shorten the last wave), and a tall A over a
 * short K with beta (C through shared memory, the last block's rows
 * part full), 24 rows over 2 columns with beta (256 k-lanes of one
 * column pair each) and 6 rows over a long K on a wide N,
 * M or N of 2, 17 and 32, beta, K = 0, stacks with an
 * operand shared, and 33 x 33, which the thin stages must refuse (and K =
 * 33, which the small_k stages must; f64_thin also 25 rows over a wide
 * N, and takes 24; mma_thin 17 rows), 9 rows over an N of 4 mod 8 (8-byte
 * loads of B), 16 rows over whole 16-byte ones, 12 over an N of 2 mod 4
 * and an odd K (4-byte loads of B, A's values one by one) and a stack of
 * 7 rows; tall A's over 9 and 16 columns with 16- and 8-byte loads of A
 * and K past a staged chunk of B, a stack of 4-byte loads, and 63 rows
 * over 8 columns, which mma_thin must refuse.  Run on every row for f32 and f64;
 * for f16 and bf16 on the memory-bound rows (KERNEL_MEMORY) only, for the
 * tensor-core stages' long chains (see vector_cases). */
static const struct mul_case thin_cases[] = {
    { 1, 5, 7, 598, 1.0f, 0.0f, 0, 1 },
    { 1, 17, 1001, 999, 1.0f, 0.0f, 0, 1 },
    { 1, 17, 1001, 999, 0.5f, -1.0f, 0, 1 },
    { 1, 999, 17, 1001, 2.0f, 0.5f, 0, 1 },
    { 1, 2, 4099, 3001, 1.0f, 0.0f, 0, 1 },
    { 1, 3001, 2, 2999, 1.0f, 0.0f, 0, 1 },
    { 1, 32, 333, 777, 1.0f, 0.0f, 0, 1 },
    { 1, 777, 32, 332, -1.0f, 1.0f, 0, 1 },
    { 1, 33, 32, 300, 1.0f, 0.0f, 0, 1 },
    { 1, 17, 1002, 998, 1.0f, 0.0f, 0, 1 },
    { 1, 999, 18, 1002, 0.5f, 0.0f, 0, 1 },
    { 1, 8, 8, 40000, 1.0f, 0.0f, 0, 1 },
    { 1, 257, 15, 103, 1.0f, 0.0f, 0, 1 },
    { 1, 33918, 24, 274, 1.0f, 0.5f, 0, 1 },
    { 1, 5001, 27, 14, 0.5f, 1.0f, 0, 1 },
    { 1, 24, 2, 5000, 1.0f, 0.5f, 0, 1 },
    { 1, 6, 4001, 3001, 1.0f, 0.0f, 0, 1 },
    { 1, 17, 33, 0, 1.0f, 0.5f, 0, 1, "thin", 0 },
    { 1, 40, 9, 0, 1.0f, 0.0f, 0, 1, "thin", 0 },
    { 3, 17, 130, 257, 1.0f, 0.0f, 1, 1 },
    { 4, 130, 17, 258, 1.0f, 0.5f, 2, 1 },
    { 5, 8, 8, 4001, 0.75f, -0.5f, 0, 1 },
    { 1, 33, 33, 64, 1.0f, 0.0f, 0, 1, "thin", 1 },
    { 1, 17, 33, 0, 1.0f, 0.5f, 0, 1, "f16_thin", 0 },
    { 1, 40, 9, 0, 1.0f, 0.0f, 0, 1, "f64_thin", 0 },
    { 1, 33, 33, 64, 1.0f, 0.0f, 0, 1, "f16_thin", 1 },
    { 1, 33, 33, 64, 1.0f, 0.0f, 0, 1, "f64_thin", 1 },
    { 1, 9, 1252, 1449, 1.0f, 0.0f, 0, 1 },
    { 1, 16, 2048, 4096, 1.0f, 0.5f, 0, 1 },
    { 1, 12, 1002, 997, 1.0f, 0.0f, 0, 1 },
    { 3, 7, 200, 301, 1.0f, 0.5f, 0, 1 },
    { 1, 2000, 9, 2048, 1.0f, 0.0f, 0, 1 },
    { 1, 1000, 16, 4100, 1.0f, 0.5f, 0, 1 },
    { 2, 300, 8, 1030, 0.5f, 1.0f, 0, 1 },
    { 1, 63, 8, 100, 1.0f, 0.0f, 0, 1, "mma_thin", 1 },
    { 1, 17, 33, 64, 1.0f, 0.0f, 0, 1, "mma_thin", 1 },
    { 1, 24, 301, 300, 1.0f, 0.0f, 0, 1, "f64_thin", 0 },
    { 1, 25, 301, 300, 1.0f, 0.0f, 0, 1, "f64_thin", 1 },
    { 1, 100, 301, 33, 1.0f, 0.0f, 0, 1, "small_k", 1 },
    { 1, 100, 301, 33, 1.0f, 0.0f, 0, 1, "f16_small_k", 1 },
    { 1, 100, 301, 33, 1.0f, 0.0f, 0, 1, "f64_small_k", 1 },
    { 2, 100, 301, 0, 1.0f, 0.5f, 0, 1, "f64_small_k", 0 },
    { 1, 4000, 18, 1000, 1.0f, 0.0f, 0, 0 },
    { 1, 2908, 15, 1155, 1.0f, 0.0f, 0, 0 },
    { 1, 11078, 30, 864, 1.0f, 0.0f, 0, 0 },
    { 1, 16, 2140, 4129, 1.0f, 0.0f, 0, 0 },
    { 1, 8, 598, 8082, 1.0f, 0.0f, 0, 0 },
    { 1, 32, 1024, 25000, 1.0f, 0.0f, 0, 0 },
    { 1, 8, 8, 1000000, 1.0f, 0.0f, 0, 0 },
    { 1, 14, 147, 49623, 1.0f, -1.0f, 0, 0 },
    { 2000, 8, 9, 67, 1.0f, 0.0f, 2, 0 },
};

/* Stacks of small products (the small stages, kernels/memory_bound/small.cuh), run by
 * every kernel: many tiny products, a stack sharing one B (NumPy's
 * (4096, 32, 32) @ (32, 32)), ragged shapes whose rows are not whole
 * 16-byte units (2-, 4- and 8-byte copies), the largest products the small
 * stages take, single products, C0; then each small stage alone at K = 0
 * (C = beta C0, or zeros) and at 65 in M or K, which it must refuse. */
static const struct mul_case stack_cases[] = {
    { 100000, 8, 8, 8, 1.0f, 0.0f, 0, 0 },
    { 4096, 32, 32, 32, 1.0f, 0.0f, 2, 0 },
    { 4096, 32, 32, 32, 0.5f, -1.0f, 0, 0 },
    { 7, 3, 5, 7, 1.0f, 0.0f, 0, 1 },
    { 9, 3, 5, 7, 1.5f, -0.75f, 2, 1 },
    { 300, 1, 1, 1, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 1, 1, 2.0f, 0.5f, 0, 1 },
    { 6, 64, 64, 64, 1.0f, 0.0f, 0, 1 },
    { 5, 64, 64, 64, 1.0f, 1.0f, 1, 1 },
    { 50, 17, 33, 9, 1.0f, 0.0f, 0, 1 },
    { 40, 17, 33, 9, 0.5f, 1.0f, 1, 1 },
    { 1, 17, 33, 9, 1.0f, 0.0f, 0, 1 },
    { 33, 6, 10, 6, 1.0f, 0.0f, 0, 1 },
    { 20, 32, 32, 64, 1.0f, -0.5f, 2, 1 },
    { 12, 40, 64, 20, 1.0f, 0.0f, 0, 1 },
    { 1000, 16, 16, 16, 1.0f, 0.0f, 1, 0 },
    { 3, 5, 7, 0, 2.0f, 0.5f, 0, 1, "small", 0 },
    { 3, 5, 7, 0, 2.0f, 0.0f, 0, 1, "small", 0 },
    { 2, 65, 64, 64, 1.0f, 0.0f, 0, 1, "small", 1 },
    { 2, 64, 64, 65, 1.0f, 0.0f, 0, 1, "small", 1 },
    { 3, 5, 7, 0, 2.0f, 0.5f, 0, 1, "f64_small", 0 },
    { 3, 5, 7, 0, 2.0f, 0.0f, 0, 1, "f64_small", 0 },
    { 2, 65, 64, 64, 1.0f, 0.0f, 0, 1, "f64_small", 1 },
    { 2, 64, 64, 65, 1.0f, 0.0f, 0, 1, "f64_small", 1 },
    { 3, 5, 7, 0, 2.0f, 0.5f, 0, 1, "f16_small", 0 },
    { 3, 5, 7, 0, 2.0f, 0.0f, 0, 1, "f16_small", 0 },
    { 2, 65, 64, 64, 1.0f, 0.0f, 0, 1, "f16_small", 1 },
    { 2, 64, 64, 65, 1.0f, 0.0f, 0, 1, "f16_small", 1 },
};
/* What the vector rows add, run on them alone in f32, f16, bf16 and f64:
 * few rows or a dot product with a long K (split into slices), ragged K
 * and N (narrower loads), stacks in one launch with A or B shared, beta,
 * and K = 0 (C = beta C0).  The slices are joined by the launch itself
 * in one level, in two (a few columns over a long K, 35 x 60370; a dot
 * product of 4000003), or by a second launch (1 x 8192 x 8192 in
 * vector_cases): kernels/memory_bound/join.cuh. */
static const struct mul_case gemv_cases[] = {
    { 1, 1, 1, 100003, 1.0f, 0.0f, 0, 1 },
    { 8, 1, 1, 1000001, 1.0f, 0.0f, 0, 0 },
    { 1, 16, 1, 2000000, 1.0f, 0.0f, 0, 0 },
    { 1, 64, 1, 1000000, 0.5f, -1.0f, 0, 0 },
    { 1, 300, 1, 4097, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 1000, 4097, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 1001, 5000, 1.0f, 0.5f, 0, 1 },
    { 1, 7, 1, 9, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 3, 1001, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 35, 60370, 1.0f, 0.5f, 0, 1 },
    /* B of a few columns: a warp's lanes split the rows too (8 columns
     * over 35101, every lane along K in float16, in slices; 12 columns, 4
     * or 8 lanes a column, on a stack with beta; 4 columns in one slice,
     * a step and a ragged rest) */
    { 1, 1, 8, 35101, 1.0f, 0.0f, 0, 1 },
    { 3, 1, 12, 5003, 0.5f, 0.5f, 1, 1 },
    { 1, 1, 4, 1000, 1.0f, 0.0f, 0, 1 },
    { 1, 1, 1, 4000003, 1.0f, 0.0f, 0, 0 },
    { 100, 1, 512, 512, 1.0f, 0.0f, 0, 0 },
    { 1000, 1, 512, 512, 1.0f, 0.0f, 2, 0 },
    { 200, 128, 1, 256, 1.0f, 0.0f, 1, 1 },
    { 64, 1, 1, 4096, 0.75f, -0.5f, 2, 1 },
    { 5, 1, 300, 10000, 1.0f, 0.0f, 1, 1 },
    { 1, 1, 100, 0, 1.0f, 0.0f, 0, 1 },
    { 3, 50, 1, 0, 1.0f, 0.5f, 0, 1 },
    { 1, 1, 1, 0, 2.0f, -1.0f, 0, 1 },
};


/* --once: the shape each kernel runs first, ragged against every tile:
 * a kernel meets the first of these it can implement (in each of its
 * signatures), and only kernels none of them suits go on to the other
 * tables' small cases.  Stacks with an operand shared, C0, rows of 16
 * bytes for the TMA stages, a thin side, a vector, a short K. */
static const struct mul_case once_cases[] = {
    { 3, 127, 129, 255, -1.0f, 0.5f, 1, 1 },
    { 2, 129, 264, 72, 0.5f, -1.0f, 2, 1 },
    { 1, 127, 136, 200, 1.0f, 0.0f, 0, 1 },
    { 3, 17, 130, 257, 1.0f, 0.0f, 1, 1 },
    { 1, 999, 17, 1001, 2.0f, 0.5f, 0, 1 },
    { 3, 1, 100, 50, 1.0f, 0.0f, 2, 1 },
    { 1, 1024, 1, 4096, 2.0f, 0.5f, 0, 1 },
    { 40, 17, 33, 9, 0.5f, 1.0f, 1, 1 },
    { 1, 301, 539, 24, 0.5f, -1.0f, 0, 1 },
};

/* Transposes, each run for every element size (1, 2, 4 and 8 bytes).
 * in_shift and out_shift (elements) move `in` and `out` off their 16-byte
 * boundaries.  Rows and columns multiples of 16 take the vector stage's
 * 16-byte paths for every element size, on whole tiles (256 x 384) and
 * with partial ones (272 x 400); then one side vectorised and the other
 * not, the same shapes shifted, and tiles ragged both ways. */
struct xpose_case {
    int rows, cols;
    int small;
    int in_shift, out_shift;
};

static const struct xpose_case xpose_cases[] = {
    { 1, 1, 1 }, { 1, 1000, 1 }, { 1000, 1, 1 }, { 33, 65, 1 },
    { 256, 384, 1 }, { 272, 400, 1 }, { 1000, 48, 1 }, { 48, 1000, 1 },
    { 272, 400, 1, 1, 0 }, { 272, 400, 1, 0, 3 }, { 256, 384, 1, 3, 1 },
    { 129, 127, 1 }, { 3, 16, 1 }, { 16, 3, 1 },
    { 7001, 3000, 0 }, { 3000, 7001, 0 }, { 4096, 4096, 0 }, { 4112, 2064, 0 },
    { 4112, 2064, 0, 1, 1 },
};

/* Square matrices transposed in place (transpose_inplace_square_launch):
 * one tile, ragged tiles, and (full run) many. */
static const struct { int n, small; } inplace_cases[] = {
    { 1, 1 }, { 32, 1 }, { 33, 1 }, { 100, 1 }, { 1000, 0 }, { 4097, 0 },
};

struct options {
    int small, once, do_mul, do_xpose;
    unsigned sigs;
    const char *kernels[MAX_PICK];
    int nkernels;
    int shapes[MAX_PICK][4];
    int nshapes;
};

struct ctx {
    cudaStream_t stream;
    cublasHandle_t cublas;
    struct launch_env env;
    int passed, failed, seq_only;
    uint64_t rng;
    /* --once: ran[kernel * GEMM_SIG_COUNT + sig] once a kernel has run in a
     * signature; xran[kernel * 4 + log2(element size)] for transposes. */
    unsigned char *ran, *xran;
};

static int picked(const struct options *o, const char *name)
{
    if (o->nkernels == 0)
        return 1;
    for (int i = 0; i < o->nkernels; i++)
        if (strcmp(o->kernels[i], name) == 0)
            return 1;
    return 0;
}

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill_normal(double *x, size_t count, uint64_t *s)
{
    for (size_t i = 0; i < count; i += 2) {
        double u1 = ((rng_next(s) >> 11) + 1.0) * 0x1.0p-53;
        double u2 = (rng_next(s) >> 11) * 0x1.0p-53;
        double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586 * u2;
        x[i] = r * cos(t);
        if (i + 1 < count)
            x[i + 1] = r * sin(t);
    }
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            fprintf(stderr, "gpu_kernels: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                       \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "gpu_kernels: out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

static void *dev_alloc(size_t bytes)
{
    void *p;
    CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

/* Relative Frobenius error of C (float or double) against ref; -1 if C holds
 * a non-finite value. */
static double rel_error(const void *c, int is_double, const double *ref, size_t count)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < count; i++) {
        double v = is_double ? ((const double *)c)[i] : ((const float *)c)[i];
        if (!isfinite(v))
            return -1.0;
        double d = v - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* ok: 1 pass, 2 pass within the sequential-sum bound only, 0 fail. */
static void report(struct ctx *x, int ok, const char *name, const char *shape, const char *detail)
{
    printf("%-16s %-34s %-6s %s\n", name, shape, ok == 2 ? "ok-seq" : ok ? "ok" : "FAIL", detail);
    if (ok == 2)
        x->seq_only++;
    fflush(stdout);
    if (ok)
        x->passed++;
    else
        x->failed++;
}

/* One case's operands in one signature: device operands in the kernel's
 * type, double copies for the reference, and the reference itself. */
struct operands {
    enum gemm_sig sig;
    size_t na, nb, nc;
    long long sa, sb;
    void *a, *b, *c0, *c;           /* device: operand type; C0 and C in C's type */
    double *ref;                    /* host reference */
    int64_t *iref;                  /* host exact reference (i64; i8: the int32 sums) */
    double spread;                  /* ||S||_F / ||ref||_F, at least 1 (see terms_spread) */
};

/* A sum of k terms of random sign is about sqrt(sum of their squares):
 * S = sqrt((A.A) @ (B.B)) elementwise.  Its FP32 rounding error grows
 * with S, not with the sum itself, which cancellation can make much
 * smaller: one dot product of 5000 normal terms can come out a few times
 * below S.  The sequential-sum bound is relative to ||ref||, so it is
 * scaled by ||S|| / ||ref|| where that exceeds 1.  Computed for small
 * results only (few elements, where cancellation can dominate); for many
 * elements the ratio is 1 to within a few percent. */
static double terms_spread(struct ctx *x, const struct mul_case *mc, const struct operands *ops,
                           double *da, double *db, const double *dc0, double *dout, double *h)
{
    if (ops->nc > 4096)
        return 1.0;
    /* beta * C0 is one more term of each sum: its square joins them. */
    double *c0 = NULL;
    if (mc->beta != 0.0f) {
        c0 = host_alloc(ops->nc * 8);
        CHECK(cudaMemcpy(c0, dc0, ops->nc * 8, cudaMemcpyDeviceToHost));
    }
    struct { double *d; size_t n; } parts[2] = { { da, ops->na }, { db, ops->nb } };
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMemcpy(h, parts[i].d, parts[i].n * 8, cudaMemcpyDeviceToHost));
        for (size_t e = 0; e < parts[i].n; e++)
            h[e] *= h[e];
        CHECK(cudaMemcpy(parts[i].d, h, parts[i].n * 8, cudaMemcpyHostToDevice));
    }
    CHECK(ref_dgemm(mc->m, mc->n, mc->k, mc->batch, ops->sa, ops->sb,
                    (double)mc->alpha * mc->alpha, da, db, 0.0, NULL, dout, x->stream));
    CHECK(cudaStreamSynchronize(x->stream));
    CHECK(cudaMemcpy(h, dout, ops->nc * 8, cudaMemcpyDeviceToHost));
    double s2 = 0, r2 = 0;
    for (size_t e = 0; e < ops->nc; e++) {
        s2 += h[e] + (c0 ? (double)mc->beta * mc->beta * c0[e] * c0[e] : 0.0);
        r2 += ops->ref[e] * ops->ref[e];
    }
    free(c0);
    return r2 > 0 && s2 > r2 ? sqrt(s2 / r2) : 1.0;
}

/* Element i of a signed integer array of `es` bytes, widened. */
static int64_t int_elem(const void *base, size_t es, size_t i)
{
    switch (es) {
    case 1: return ((const int8_t *)base)[i];
    case 2: return ((const int16_t *)base)[i];
    default: return ((const int32_t *)base)[i];
    }
}

static void make_operands(struct ctx *x, const struct mul_case *mc, enum gemm_sig sig,
                          struct operands *ops)
{
    const struct gemm_sig_info *si = &gemm_sigs[sig];
    memset(ops, 0, sizeof *ops);
    ops->sig = sig;
    int nba = mc->bcast == 1 ? 1 : mc->batch, nbb = mc->bcast == 2 ? 1 : mc->batch;
    ops->na = (size_t)nba * mc->m * mc->k;
    ops->nb = (size_t)nbb * mc->k * mc->n;
    ops->nc = (size_t)mc->batch * mc->m * mc->n;
    ops->sa = nba == 1 ? 0 : (long long)mc->m * mc->k;
    ops->sb = nbb == 1 ? 0 : (long long)mc->k * mc->n;
    size_t es_in = gc_dtypes[si->in].size, es_out = gc_dtypes[si->out].size;
    ops->a = dev_alloc(ops->na * es_in);
    ops->b = dev_alloc(ops->nb * es_in);
    ops->c0 = dev_alloc(ops->nc * es_out);
    ops->c = dev_alloc(ops->nc * es_out);
    ops->ref = host_alloc(ops->nc * sizeof(double));
    if (sig == GEMM_I64) {
        /* Half the cases small integers, half near 2^62, whose products
         * wrap modulo 2^64. */
        int64_t *ha = host_alloc(ops->na * 8), *hb = host_alloc(ops->nb * 8);
        int big = rng_next(&x->rng) & 1;
        for (size_t i = 0; i < ops->na; i++)
            ha[i] = big ? (int64_t)rng_next(&x->rng) >> 1 : (int64_t)(rng_next(&x->rng) % 201) - 100;
        for (size_t i = 0; i < ops->nb; i++)
            hb[i] = big ? (int64_t)rng_next(&x->rng) >> 1 : (int64_t)(rng_next(&x->rng) % 201) - 100;
        CHECK(cudaMemcpy(ops->a, ha, ops->na * 8, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(ops->b, hb, ops->nb * 8, cudaMemcpyHostToDevice));
        ops->iref = host_alloc(ops->nc * 8);
        for (int p = 0; p < mc->batch; p++)
            for (int i = 0; i < mc->m; i++)
                for (int j = 0; j < mc->n; j++) {
                    uint64_t s = 0;
                    for (int q = 0; q < mc->k; q++)
                        s += (uint64_t)ha[p * ops->sa + (size_t)i * mc->k + q] *
                             (uint64_t)hb[p * ops->sb + (size_t)q * mc->n + j];
                    ops->iref[((size_t)p * mc->m + i) * mc->n + j] = (int64_t)s;
                }
        /* With beta, int64 kernels sum into C (the exact path applies its
         * scalars after, so beta's value does not matter): C0 + A B. */
        if (mc->beta != 0.0f) {
            int64_t *hc0 = host_alloc(ops->nc * 8);
            for (size_t e = 0; e < ops->nc; e++) {
                hc0[e] = big ? (int64_t)rng_next(&x->rng) : (int64_t)(rng_next(&x->rng) % 201) - 100;
                ops->iref[e] = (int64_t)((uint64_t)ops->iref[e] + (uint64_t)hc0[e]);
            }
            CHECK(cudaMemcpy(ops->c0, hc0, ops->nc * 8, cudaMemcpyHostToDevice));
            free(hc0);
        }
        free(ha);
        free(hb);
        return;
    }
    if (sig == GEMM_I8 || sig == GEMM_I16 || sig == GEMM_I32) {
        /* Values over the type's whole range (the limbs stage's top digit
         * 128 among them): int8 sums past 2^31 (K > 2^17) wrap modulo
         * 2^32, as the int32 accumulators must; the reference is the sum
         * modulo 2^32, of which the kernels keep the signature's bits. */
        void *ha = host_alloc(ops->na * es_in), *hb = host_alloc(ops->nb * es_in);
        for (size_t i = 0; i < ops->na; i++) {
            uint32_t v = (uint32_t)rng_next(&x->rng);
            memcpy((char *)ha + i * es_in, &v, es_in);
        }
        for (size_t i = 0; i < ops->nb; i++) {
            uint32_t v = (uint32_t)rng_next(&x->rng);
            memcpy((char *)hb + i * es_in, &v, es_in);
        }
        CHECK(cudaMemcpy(ops->a, ha, ops->na * es_in, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(ops->b, hb, ops->nb * es_in, cudaMemcpyHostToDevice));
        ops->iref = host_alloc(ops->nc * 8);
        for (int p = 0; p < mc->batch; p++)
            for (int i = 0; i < mc->m; i++)
                for (int j = 0; j < mc->n; j++) {
                    uint32_t s = 0;
                    for (int q = 0; q < mc->k; q++)
                        s += (uint32_t)int_elem(ha, es_in, p * ops->sa + (size_t)i * mc->k + q) *
                             (uint32_t)int_elem(hb, es_in, p * ops->sb + (size_t)q * mc->n + j);
                    ops->iref[((size_t)p * mc->m + i) * mc->n + j] = (int32_t)s;
                }
        /* With beta, the integer stages sum into C, as the int64 one does. */
        if (mc->beta != 0.0f) {
            int32_t *hc0 = host_alloc(ops->nc * 4);
            for (size_t e = 0; e < ops->nc; e++) {
                hc0[e] = (int32_t)rng_next(&x->rng);
                ops->iref[e] = (int32_t)((uint32_t)ops->iref[e] + (uint32_t)hc0[e]);
            }
            CHECK(cudaMemcpy(ops->c0, hc0, ops->nc * 4, cudaMemcpyHostToDevice));
            free(hc0);
        }
        free(ha);
        free(hb);
        return;
    }
    /* Floats: normal values, rounded once to the operand type on the
     * device, then widened back exactly for the reference. */
    double *h = host_alloc((ops->na > ops->nb ? (ops->na > ops->nc ? ops->na : ops->nc)
                            : (ops->nb > ops->nc ? ops->nb : ops->nc)) * 8);
    double *da = dev_alloc(ops->na * 8), *db = dev_alloc(ops->nb * 8), *dc0 = dev_alloc(ops->nc * 8);
    double *dref = dev_alloc(ops->nc * 8);
    size_t most = ops->na > ops->nb ? ops->na : ops->nb;
    void *tmp = dev_alloc((most > ops->nc ? most : ops->nc) * 8);
    struct { void *dst; double *wide; size_t n; enum gc_dtype t; } parts[3] = {
        { ops->a, da, ops->na, si->in }, { ops->b, db, ops->nb, si->in },
        { ops->c0, dc0, ops->nc, si->out },
    };
    for (int i = 0; i < 3; i++) {
        if (i == 2 && mc->beta == 0.0f)
            break;
        fill_normal(h, parts[i].n, &x->rng);
        CHECK(cudaMemcpy(tmp, h, parts[i].n * 8, cudaMemcpyHostToDevice));
        CHECK(convert_operand_launch(tmp, GC_F64, 0, 0, 0, parts[i].n, parts[i].dst, parts[i].t,
                                     x->stream));
        CHECK(convert_operand_launch(parts[i].dst, parts[i].t, 0, 0, 0, parts[i].n, parts[i].wide,
                                     GC_F64, x->stream));
    }
    CHECK(ref_dgemm(mc->m, mc->n, mc->k, mc->batch, ops->sa, ops->sb, mc->alpha, da, db,
                    mc->beta, dc0, dref, x->stream));
    CHECK(cudaStreamSynchronize(x->stream));
    CHECK(cudaMemcpy(ops->ref, dref, ops->nc * 8, cudaMemcpyDeviceToHost));
    ops->spread = terms_spread(x, mc, ops, da, db, dc0, dref, h);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc0);
    cudaFree(dref);
    cudaFree(tmp);
    free(h);
}

static void free_operands(struct operands *ops)
{
    cudaFree(ops->a);
    cudaFree(ops->b);
    cudaFree(ops->c0);
    cudaFree(ops->c);
    free(ops->ref);
    free(ops->iref);
}

/* The problem a case poses in `sig`, without operands: what
 * can_implement looks at. */
static struct gemm_problem case_problem(const struct mul_case *mc, enum gemm_sig sig, int cc)
{
    struct gemm_problem p;
    memset(&p, 0, sizeof p);
    p.sig = sig;
    p.m = mc->m;
    p.n = mc->n;
    p.k = mc->k;
    p.batch = mc->batch;
    gemm_problem_dense(&p);
    p.stride_a = mc->bcast == 1 || mc->batch == 1 ? 0 : (long long)mc->m * mc->k;
    p.stride_b = mc->bcast == 2 || mc->batch == 1 ? 0 : (long long)mc->k * mc->n;
    p.alpha = mc->alpha;
    p.beta = mc->beta;
    p.cc = cc;
    return p;
}

/* --once: whether some kernel that has not yet run in `sig` would run on
 * this case, so that a case nothing needs costs no operands and no cuBLAS
 * run. */
static int case_needed(const struct ctx *x, const struct options *o, const struct mul_case *mc,
                       enum gemm_sig sig, unsigned need_flags)
{
    struct gemm_problem p = case_problem(mc, sig, x->env.cc);
    char why[256];
    for (size_t i = 0; i < gemm_kernel_count; i++) {
        const struct gemm_kernel *kern = &gemm_kernels[i];
        if ((kern->flags & KERNEL_REFERENCE) || !picked(o, kern->name) ||
            !(kern->sigs & (1u << sig)) || x->ran[i * GEMM_SIG_COUNT + sig] ||
            (mc->only && strcmp(kern->name, mc->only) != 0) || mc->refused)
            continue;
        if (!(kern->flags & KERNEL_HOST) && (kern->flags & need_flags) != need_flags)
            continue;
        if ((kern->flags & KERNEL_HOST) && 2.0 * mc->batch * mc->m * mc->n * mc->k > HOST_FLOP_LIMIT)
            continue;
        if (gemm_can_implement(kern, &p, why, sizeof why))
            return 1;
    }
    return 0;
}

/* `need_flags`: flags a device row must have to run (0: every row);
 * cuBLAS and the host kernel always run. */
static void test_mul_case(struct ctx *x, const struct options *o, const struct mul_case *mc,
                          enum gemm_sig sig, unsigned need_flags)
{
    const struct gemm_sig_info *si = &gemm_sigs[sig];
    int integer = sig == GEMM_I64 || sig == GEMM_I8 || sig == GEMM_I16 || sig == GEMM_I32;
    if (integer && 2.0 * mc->batch * mc->m * mc->n * mc->k > HOST_FLOP_LIMIT) {
        char tag[16];
        snprintf(tag, sizeof tag, "(%s)", si->name);
        printf("%-16s %-34s skip   the exact reference is computed on the host\n", tag,
               "larger than the host's limit");
        return;
    }
    if (o->once && !case_needed(x, o, mc, sig, need_flags))
        return;
    struct operands ops;
    make_operands(x, mc, sig, &ops);
    size_t es_out = gc_dtypes[si->out].size;
    void *hc = host_alloc(ops.nc * es_out), *hc0 = host_alloc(ops.nc * es_out);
    void *ha = NULL, *hb = NULL;
    double flop = 2.0 * mc->batch * mc->m * mc->n * mc->k;
    char shape[96];
    snprintf(shape, sizeof shape, "%s %s%dx%dx%dx%d%s", si->name,
             mc->bcast == 1 ? "A*" : mc->bcast == 2 ? "B*" : "", mc->batch, mc->m, mc->n, mc->k,
             mc->beta != 0.0f ? " beta" : "");
    CHECK(cudaMemcpy(hc0, ops.c0, ops.nc * es_out, cudaMemcpyDeviceToHost));
    struct gemm_problem p = case_problem(mc, sig, x->env.cc);
    double cublas_err = -1.0;
    /* cuBLAS first: its error sets the bar for the others. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < gemm_kernel_count; i++) {
            const struct gemm_kernel *kern = &gemm_kernels[i];
            int is_ref = (kern->flags & KERNEL_REFERENCE) != 0;
            char why[256], detail[200];
            enum gemm_sig run_sig = is_ref ? gemm_sigs[sig].reference : sig;
            if (is_ref != (pass == 0) || (pass == 1 && !picked(o, kern->name)) ||
                !(kern->sigs & (1u << run_sig)) ||
                (pass == 1 && mc->only && strcmp(kern->name, mc->only) != 0))
                continue;
            if (!is_ref && !(kern->flags & KERNEL_HOST) &&
                (kern->flags & need_flags) != need_flags)
                continue;
            if (pass == 1 && o->once && x->ran[i * GEMM_SIG_COUNT + run_sig])
                continue;
            p.sig = run_sig;
            if (pass == 1 && mc->refused) {
                int took = gemm_can_implement(kern, &p, why, sizeof why);
                report(x, !took, kern->name, shape, took ? "accepted a shape it must refuse"
                                                          : "refused, as it must");
                continue;
            }
            if (!gemm_can_implement(kern, &p, why, sizeof why)) {
                if (!o->once)
                    printf("%-16s %-34s skip   %s\n", kern->name, shape, why);
                continue;
            }
            if (pass == 1 && o->once)
                x->ran[i * GEMM_SIG_COUNT + run_sig] = 1;
            if (kern->flags & KERNEL_HOST) {
                /* (ozaki on the host: some 20 int8 products and the residues'
                 * reconstruction each, so smaller ones only) */
                if (flop > (sig == GEMM_OZAKI || sig == GEMM_OZAKI32 ? OZAKI_HOST_FLOP_LIMIT
                                                                  : HOST_FLOP_LIMIT))
                    continue;
                size_t es_in = gc_dtypes[si->in].size;
                if (!ha) {
                    ha = host_alloc(ops.na * es_in);
                    hb = host_alloc(ops.nb * es_in);
                    CHECK(cudaMemcpy(ha, ops.a, ops.na * es_in, cudaMemcpyDeviceToHost));
                    CHECK(cudaMemcpy(hb, ops.b, ops.nb * es_in, cudaMemcpyDeviceToHost));
                }
                memcpy(hc, hc0, ops.nc * es_out);
                if (mc->beta == 0.0f)
                    memset(hc, 0xff, ops.nc * es_out);
                struct gemm_problem hp = p;
                hp.a = ha;
                hp.b = hb;
                hp.c = hc;
                gemm_run(kern, &hp, &x->env, 16);
            } else {
                if (mc->beta != 0.0f)
                    CHECK(cudaMemcpy(ops.c, ops.c0, ops.nc * es_out, cudaMemcpyDeviceToDevice));
                else
                    CHECK(cudaMemset(ops.c, 0xff, ops.nc * es_out));
                struct gemm_problem dp = p;
                dp.a = ops.a;
                dp.b = ops.b;
                dp.c = ops.c;
                cudaError_t err = gemm_run(kern, &dp, &x->env, 0);
                if (err == cudaSuccess)
                    err = cudaStreamSynchronize(x->stream);
                if (err != cudaSuccess) {
                    snprintf(detail, sizeof detail, "launch failed: %s", cudaGetErrorString(err));
                    report(x, 0, kern->name, shape, detail);
                    if (err != cudaErrorInvalidConfiguration && err != cudaErrorInvalidValue) {
                        fprintf(stderr, "gpu_kernels: device error, stopping\n");
                        exit(1);
                    }
                    continue;
                }
                CHECK(cudaMemcpy(hc, ops.c, ops.nc * es_out, cudaMemcpyDeviceToHost));
            }
            if (integer) {
                /* (int16's limbs keep the low 16 bits of the sums) */
                uint32_t keep = sig == GEMM_I16 ? 0xffffu : 0xffffffffu;
                size_t bad = 0;
                for (size_t e = 0; e < ops.nc; e++)
                    bad += sig == GEMM_I64
                               ? ((int64_t *)hc)[e] != ops.iref[e]
                               : (((uint32_t)((int32_t *)hc)[e] ^ (uint32_t)ops.iref[e]) & keep) != 0;
                snprintf(detail, sizeof detail, bad ? "%zu elements differ" : "exact", bad);
                report(x, bad == 0, kern->name, shape, detail);
                continue;
            }
            double e = rel_error(hc, si->out == GC_F64, ops.ref, ops.nc);
            int ok;
            double tiny = si->out == GC_F64 ? 1e-15 : TINY;
            if (pass == 0) {
                cublas_err = e;
                /* (relative to the terms, as every kernel's bound below: a
                 * dot product of 100003 bfloat16 values cancelled to 8.1e-4
                 * of cuBLAS's result in one draw) */
                ok = e >= 0.0 && e <= gemm_sigs[sig].test_bound * ops.spread;
                snprintf(detail, sizeof detail, "rel err %.2e (reference)", e);
            } else {
                double bar = cublas_err > 0.0 ? cublas_err : 0.0;
                /* The 16-bit types' sums on the tensor cores track cuBLAS's
                 * closely; a vector stage's few sums (a single dot product,
                 * say) follow the summation order as FP32 sums do. */
                double factor = (sig == GEMM_F16 || sig == GEMM_BF16 || sig == GEMM_TF32) &&
                                        !(kern->flags & KERNEL_VECTOR) ? 1.5 : 2.0;
                double bound = factor * bar + tiny;
                /* 3xTF32 holds each operand to 2^-22 and leaves out the low
                 * parts' product: up to about 2^-21 of a single product
                 * (of the terms, which C0 may cancel), where FP32's one
                 * rounding sets cuBLAS's bar near zero. */
                if (sig == GEMM_TF32X3 && bound < TF32X3_FLOOR * ops.spread)
                    bound = TF32X3_FLOOR * ops.spread;
                /* TF32's own rounding of the operands: up to 1e-3 for one
                 * product, about 3e-4 over many on normal data, relative to
                 * the terms, which a few outputs' sums (with C0) may cancel
                 * far below; cuBLAS runs small TF32 products in FP32, far
                 * below either. */
                if (sig == GEMM_TF32 && bound < TF32_FLOOR * ops.spread)
                    bound = TF32_FLOOR * ops.spread;
                /* (a few outputs' error is a few draws of the chain's
                 * random walk, which the Frobenius norm does not average:
                 * twice the bound there; one dot product of 5000 floats
                 * came out at 2.36e-6 in every FP32-chain stage, above
                 * SEQ_SCALE's 2.1e-6 times a spread near 1, on an NVIDIA
                 * H200, 2026-11-28) */
                double seq_bound = SEQ_SCALE * (ops.nc < SEQ_FEW ? 2.0 : 1.0) *
                                   sqrt((double)mc->k) * ops.spread *
                                   (si->out == GC_F64 ? 0x1p-53 : 0x1p-24);
                double most = gemm_sigs[sig].test_bound * ops.spread;
                ok = e >= 0.0 && e <= bound && e <= most;
                if (!ok && e >= 0.0 && e <= seq_bound && e <= most)
                    ok = 2;
                if (e < 0.0)
                    snprintf(detail, sizeof detail, "non-finite output (unwritten element?)");
                else
                    snprintf(detail, sizeof detail, "rel err %.2e  (%.2fx cuBLAS, bound %.2e)", e,
                             bar > 0.0 ? e / bar : 0.0, bound);
            }
            report(x, ok, kern->name, shape, detail);
        }
    }
    free(ha);
    free(hb);
    free(hc);
    free(hc0);
    free_operands(&ops);
}

/* Bitwise equality; with nan_any, two NaNs of the element's float type
 * also match whatever their payloads. */
static int same_element(const unsigned char *a, const unsigned char *b, size_t es, int nan_any)
{
    if (memcmp(a, b, es) == 0)
        return 1;
    if (nan_any && es == 4) {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return isnan(x) && isnan(y);
    }
    if (nan_any && es == 8) {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return isnan(x) && isnan(y);
    }
    return 0;
}

/* A GPU launcher asked for an element size its row does not list must
 * refuse it (cudaErrorInvalidValue) without running. */
static void test_xpose_refusal(struct ctx *x, const struct transpose_kernel *kern,
                               const struct transpose_problem *p, const char *shape)
{
    cudaError_t err = kern->launch(p, &x->env);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(x->stream);
    char detail[160];
    snprintf(detail, sizeof detail, "element size not in its row: %s",
             err == cudaErrorInvalidValue ? "refused" : cudaGetErrorString(err));
    report(x, err == cudaErrorInvalidValue, kern->name, shape, detail);
    cudaGetLastError();
}

static void test_xpose_case(struct ctx *x, const struct options *o, const struct xpose_case *tc,
                            size_t es)
{
    size_t count = (size_t)tc->rows * tc->cols, bytes = count * es;
    unsigned char *hin = host_alloc(bytes), *hout = host_alloc(bytes), *want = host_alloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        hin[i] = (unsigned char)rng_next(&x->rng);
    for (size_t r = 0; r < (size_t)tc->rows; r++)
        for (size_t c = 0; c < (size_t)tc->cols; c++)
            memcpy(want + (c * tc->rows + r) * es, hin + (r * tc->cols + c) * es, es);
    /* cudaMalloc's 256-byte alignment, then the case's shifts. */
    char *din_base = dev_alloc(bytes + 4 * es), *dout_base = dev_alloc(bytes + 4 * es);
    void *din = din_base + (size_t)tc->in_shift * es, *dout = dout_base + (size_t)tc->out_shift * es;
    CHECK(cudaMemcpy(din, hin, bytes, cudaMemcpyHostToDevice));
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%d e%zu%s", tc->rows, tc->cols, es,
             tc->in_shift || tc->out_shift ? " shifted" : "");
    int log_es = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3;
    for (size_t i = 0; i < transpose_kernel_count; i++) {
        const struct transpose_kernel *kern = &transpose_kernels[i];
        if (!picked(o, kern->name) || (o->once && x->xran[i * 4 + log_es]))
            continue;
        if (o->once && (kern->elem_sizes & (1u << es)))
            x->xran[i * 4 + log_es] = 1;
        if (!(kern->elem_sizes & (1u << es))) {
            if (!(kern->flags & KERNEL_HOST)) {
                struct transpose_problem p = { tc->rows, tc->cols, es, din, dout };
                test_xpose_refusal(x, kern, &p, shape);
            }
            continue;
        }
        /* The bandwidth references copy; they are checked as copies. */
        const unsigned char *expect = (kern->flags & KERNEL_BENCH_ONLY) ? hin : want;
        /* cuBLAS's geam computes 1*x + 0, which may rewrite a NaN's payload:
         * for it (only) every NaN matches every NaN. */
        int nan_any = (kern->flags & KERNEL_REFERENCE) != 0;
        memset(hout, 0xff, bytes);
        if (kern->flags & KERNEL_HOST) {
            struct transpose_problem hp = { tc->rows, tc->cols, es, hin, hout };
            kern->host(&hp);
        } else {
            struct transpose_problem p = { tc->rows, tc->cols, es, din, dout };
            CHECK(cudaMemset(dout, 0xff, bytes));
            cudaError_t err = kern->launch(&p, &x->env);
            if (err == cudaSuccess)
                err = cudaStreamSynchronize(x->stream);
            if (err != cudaSuccess) {
                char detail[160];
                snprintf(detail, sizeof detail, "launch failed: %s", cudaGetErrorString(err));
                report(x, 0, kern->name, shape, detail);
                continue;
            }
            CHECK(cudaMemcpy(hout, dout, bytes, cudaMemcpyDeviceToHost));
        }
        size_t bad = 0;
        for (size_t e = 0; e < count; e++)
            bad += !same_element(hout + e * es, expect + e * es, es, nan_any);
        char detail[160];
        snprintf(detail, sizeof detail, bad ? "%zu elements differ"
                 : nan_any ? "bit-exact but NaN payloads" : "bit-exact", bad);
        report(x, bad == 0, kern->name, shape, detail);
    }
    cudaFree(din_base);
    cudaFree(dout_base);
    free(hin);
    free(hout);
    free(want);
}

/* The in-place square transpose on random bits against the host's
 * transpose, bit for bit: an element it fails to move keeps its own bits,
 * which differ from those it should hold. */
static void test_inplace_case(struct ctx *x, const struct options *o, int n, size_t es)
{
    if (!picked(o, "inplace"))
        return;
    size_t count = (size_t)n * n, bytes = count * es;
    unsigned char *hin = host_alloc(bytes), *hout = host_alloc(bytes), *want = host_alloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        hin[i] = (unsigned char)rng_next(&x->rng);
    for (size_t r = 0; r < (size_t)n; r++)
        for (size_t c = 0; c < (size_t)n; c++)
            memcpy(want + (c * n + r) * es, hin + (r * n + c) * es, es);
    void *d = dev_alloc(bytes);
    CHECK(cudaMemcpy(d, hin, bytes, cudaMemcpyHostToDevice));
    char shape[64], detail[160];
    snprintf(shape, sizeof shape, "%dx%d e%zu in place", n, n, es);
    cudaError_t err = transpose_inplace_square_launch(d, n, es, &x->env);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(x->stream);
    if (err != cudaSuccess) {
        snprintf(detail, sizeof detail, "launch failed: %s", cudaGetErrorString(err));
        report(x, 0, "inplace", shape, detail);
    } else {
        CHECK(cudaMemcpy(hout, d, bytes, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t e = 0; e < count; e++)
            bad += memcmp(hout + e * es, want + e * es, es) != 0;
        snprintf(detail, sizeof detail, bad ? "%zu elements differ" : "bit-exact", bad);
        report(x, bad == 0, "inplace", shape, detail);
    }
    cudaFree(d);
    free(hin);
    free(hout);
    free(want);
}

/* --once promises every kernel in every signature it declares: one that
 * no small case suited is a gap in the tables above, reported as such. */
static void report_unrun(struct ctx *x, const struct options *o)
{
    for (size_t i = 0; i < gemm_kernel_count; i++) {
        const struct gemm_kernel *kern = &gemm_kernels[i];
        if ((kern->flags & (KERNEL_REFERENCE | KERNEL_HOST)) || !picked(o, kern->name))
            continue;
        for (int s = 0; s < GEMM_SIG_COUNT; s++)
            if ((o->sigs & (1u << s)) && (kern->sigs & (1u << s)) &&
                !x->ran[i * GEMM_SIG_COUNT + s] && o->do_mul && !o->nshapes)
                report(x, 0, kern->name, gemm_sigs[s].name, "no small case it can implement");
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: gpu_kernels [--small | --once] [--op mul|transpose] "
                    "[--type f32|f16|bf16|f64|i64|tf32|tf32x3|i8|i16|i32] "
                    "[--kernel NAME]... [--shape [BATCHx]MxNxK]...\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct options o;
    memset(&o, 0, sizeof o);
    o.do_mul = o.do_xpose = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--small") == 0) {
            o.small = 1;
        } else if (strcmp(argv[i], "--once") == 0) {
            o.small = o.once = 1;
        } else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            i++;
            o.do_mul = strcmp(argv[i], "mul") == 0;
            o.do_xpose = strcmp(argv[i], "transpose") == 0;
            if (!o.do_mul && !o.do_xpose)
                return usage();
        } else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc) {
            i++;
            int found = 0;
            for (int s = 0; s < GEMM_SIG_COUNT; s++)
                if (strcmp(argv[i], gemm_sigs[s].name) == 0) {
                    o.sigs |= 1u << s;
                    found = 1;
                }
            if (!found)
                return usage();
        } else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc && o.nkernels < MAX_PICK) {
            o.kernels[o.nkernels++] = argv[++i];
        } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc && o.nshapes < MAX_PICK) {
            int *s = o.shapes[o.nshapes++];
            const char *arg = argv[++i];
            if (sscanf(arg, "%dx%dx%dx%d", &s[0], &s[1], &s[2], &s[3]) != 4) {
                s[0] = 1;
                if (sscanf(arg, "%dx%dx%d", &s[1], &s[2], &s[3]) != 3)
                    return usage();
            }
            if (s[0] < 1 || s[1] < 1 || s[2] < 1 || s[3] < 1)
                return usage();
        } else {
            return usage();
        }
    }
    if (!o.sigs)
        o.sigs = (1u << GEMM_SIG_COUNT) - 1;

    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("gpu_kernels: skipped: no CUDA device (%s)\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "none found");
        return 0;
    }
    struct ctx x;
    memset(&x, 0, sizeof x);
    x.rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(kernels_prepare_device());
    CHECK(cudaStreamCreate(&x.stream));
    if (cublasCreate(&x.cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "gpu_kernels: cublasCreate failed\n");
        return 2;
    }
    x.env.stream = x.stream;
    x.env.cublas = x.cublas;
    x.env.sm_count = prop.multiProcessorCount;
    x.env.cc = prop.major * 10 + prop.minor;
    x.ran = calloc(gemm_kernel_count * GEMM_SIG_COUNT, 1);
    x.xran = calloc(transpose_kernel_count * 4, 1);
    if (!x.ran || !x.xran) {
        fprintf(stderr, "gpu_kernels: out of host memory\n");
        return 2;
    }
    printf("gpu_kernels on %s (%d SMs, compute capability %d.%d), seed %llu\n", prop.name,
           prop.multiProcessorCount, prop.major, prop.minor, (unsigned long long)x.rng);

    if (o.do_mul) {
        for (int s = 0; s < GEMM_SIG_COUNT; s++) {
            if (!(o.sigs & (1u << s)))
                continue;
            if (o.nshapes) {
                for (int i = 0; i < o.nshapes; i++) {
                    struct mul_case mc = { o.shapes[i][0], o.shapes[i][1], o.shapes[i][2],
                                           o.shapes[i][3], 1.0f, 0.0f, 0, 1 };
                    test_mul_case(&x, &o, &mc, (enum gemm_sig)s, 0);
                    mc.alpha = 0.5f;
                    mc.beta = -1.0f;
                    test_mul_case(&x, &o, &mc, (enum gemm_sig)s, 0);
                }
            } else {
                for (size_t i = 0; o.once && i < sizeof once_cases / sizeof once_cases[0]; i++)
                    test_mul_case(&x, &o, &once_cases[i], (enum gemm_sig)s, 0);
                for (size_t i = 0; i < sizeof mul_cases / sizeof mul_cases[0]; i++)
                    if (!o.small || mul_cases[i].small)
                        test_mul_case(&x, &o, &mul_cases[i], (enum gemm_sig)s, 0);
                int vec = s == GEMM_F32 || s == GEMM_F64 || s == GEMM_F16 || s == GEMM_BF16;
                unsigned vec_only = s == GEMM_F16 || s == GEMM_BF16 ? KERNEL_VECTOR : 0;
                for (size_t i = 0; vec && i < sizeof vector_cases / sizeof vector_cases[0]; i++)
                    if (!o.small || vector_cases[i].small)
                        test_mul_case(&x, &o, &vector_cases[i], (enum gemm_sig)s, vec_only);
                for (size_t i = 0; vec && i < sizeof gemv_cases / sizeof gemv_cases[0]; i++)
                    if (!o.small || gemv_cases[i].small)
                        test_mul_case(&x, &o, &gemv_cases[i], (enum gemm_sig)s, KERNEL_VECTOR);
                for (size_t i = 0; vec && i < sizeof thin_cases / sizeof thin_cases[0]; i++)
                    if (!o.small || thin_cases[i].small)
                        test_mul_case(&x, &o, &thin_cases[i], (enum gemm_sig)s,
                                      vec_only ? KERNEL_MEMORY : 0);
                for (size_t i = 0; i < sizeof stack_cases / sizeof stack_cases[0]; i++)
                    if (!o.small || stack_cases[i].small)
                        test_mul_case(&x, &o, &stack_cases[i], (enum gemm_sig)s, 0);
            }
        }
    }
    if (o.do_xpose && !o.nshapes) {
        for (size_t i = 0; i < sizeof xpose_cases / sizeof xpose_cases[0]; i++)
            for (size_t es = 1; es <= 8; es *= 2)
                if (!o.small || xpose_cases[i].small)
                    test_xpose_case(&x, &o, &xpose_cases[i], es);
        for (size_t i = 0; i < sizeof inplace_cases / sizeof inplace_cases[0]; i++)
            for (size_t es = 1; es <= 8; es *= 2)
                if (!o.small || inplace_cases[i].small)
                    test_inplace_case(&x, &o, inplace_cases[i].n, es);
    }
    if (o.once)
        report_unrun(&x, &o);
    free(x.ran);
    free(x.xran);
    cublasDestroy(x.cublas);
    cudaStreamDestroy(x.stream);
    if (x.seq_only)
        printf("gpu_kernels: %d passed (%d within the sequential-sum bound only), %d failed\n",
               x.passed, x.seq_only, x.failed);
    else
        printf("gpu_kernels: %d passed, %d failed\n", x.passed, x.failed);
    return x.failed ? 1 : 0;
}
