/* mma_sync: IEEE half or bfloat16 operands on the tensor cores, by the
 * warp-level mma.sync.m16n8k16 of Ampere (FP32 accumulation, float C); the
 * first stage of the tensor-core chapter.
 *
 * Against f16_simt (FFMA on the CUDA cores, each half widened to float once
 * per tile in shared memory): nothing is widened.  The halves go from
 * global to shared memory by cp.async, from shared memory to registers by
 * ldmatrix, already in the fragment layout that mma.sync takes, and one
 * HMMA.16816.F32 does the 2048 multiply-adds of a 16x8x16 product that
 * takes 64 FFMA per lane there.  The only change for bfloat16 is the mma's
 * type (`p->bf16` picks the instantiation); ldmatrix moves 16-bit words
 * either way.
 *
 * Block 128x256, BK 32, 4 stages of cp.async (24 KiB a stage, 96 KiB in
 * all, one block of 8 warps per SM); the warps form 2 x 4, each owning a
 * 64x64 piece of C: 4 x 8 tiles of m16n8, 128 float accumulators per lane.
 * Per k-step of 16 a warp loads its A as 4 ldmatrix.x4 (one m16k16 tile
 * each: matrices rows 0-7 / 8-15 x k 0-7 / 8-15, exactly the four
 * registers of mma's A fragment) and its B as 4 ldmatrix.x4.trans (one
 * k16n16 piece each: B is k x n with n contiguous, the transposing load
 * hands every lane the two consecutive k of one column that a B fragment
 * register holds), then issues 32 mma.sync.  8 ldmatrix feed 32 HMMA; the
 * fragments of the next k-step are loaded while this one multiplies.  One
 * barrier per tile: before the first fragments of tile t + 1 are read,
 * which also frees tile t - 1's slot for the copies of tile t + 3.
 *
 * Shared memory, one stage: A as 128 rows of 64 bytes (4 units of 16
 * bytes, 8 halves of k each), then B as 32 rows of 512 bytes (32 units of
 * 8 halves of n).  Unit c of row r is stored at unit
 *     A: c ^ ((r >> 1) & 3)          B: c ^ (r & 7)
 * of its row.  Banks repeat every 128 bytes, 8 units, and each access
 * below is served 8 lanes x 16 bytes at a time:
 *   - ldmatrix of A: 8 lanes give rows r..r+7 (r a multiple of 8) at one
 *     unit c; the pairs of rows (r, r + 1) share a 128-byte line, so the
 *     unit's place in the line is 4 * (r & 1) + (c ^ (r >> 1 & 3)): 8
 *     different places.  Unswizzled, rows 2 apart would collide (4-way).
 *   - ldmatrix.trans of B: 8 lanes give rows k..k+7 at one unit; c ^ (k &
 *     7) puts them in 8 different places.  Unswizzled, all 8 would hit the
 *     same 16 bytes of banks (rows 512 bytes apart): 8-way.
 *   - cp.async, 16 bytes a lane: 8 lanes of A copy rows (2j, 2j + 1), all
 *     4 units each, one whole 128-byte line; 8 lanes of B copy units
 *     8q..8q+7 of one row, and XOR by r & 7 only permutes those 8 within
 *     their line.  Every phase touches each bank once.
 * The XOR touches only the low bits of the unit, so the address a lane
 * gives moves by a constant for the other m16 tiles (16 rows: +1 KiB), the
 * next k-step of B (16 rows: +8 KiB) and the other copies of a thread (64
 * rows of A, 8 of B): the lanes' offsets are computed once, 6 registers.
 *
 * Copies: 16 bytes (8 elements) where an operand's rows and its batch
 * stride are multiples of 8 elements and its base 16-byte aligned, 4 bytes
 * where even (laid out over the lanes as whole stretches of rows:
 * hmma_words), and otherwise (odd K or N: rows of an odd number of values,
 * every other one starting mid-word) the 2-byte path: a thread copies the
 * 5 aligned 4-byte words that cover each of its 16-byte chunks into a raw
 * area of its own past the ring, by cp.async like the others, and once
 * they have landed (its own copies: cp.async.wait_group, no barrier) reads
 * them back, shifts each chunk into place (PRMT: the upper half of one
 * word and the lower half of the next) and stores it to the tile's slot as
 * one 16-byte word, a tile or two ahead of the barrier that publishes it.
 * Values past the end of a row of A are masked to zeros there; a word that
 * starts at an operand's last value is not copied (the word may end the
 * allocation): the thread that owns it read that value when it started.
 * Loads through registers, as this path was first, waited on their data:
 * ptxas packed each pair of halves right after the loads, a tile's issue
 * stalling on global memory.  The raw areas take shared memory: the ring
 * runs 5 stages where one operand takes the path and 4 where both do
 * (hmma_ring: as many as fit an SM's blocks).  Each operand picks its path
 * at launch.  Elements outside A or B land as zeros (src-size 0), so the
 * loop has no edge cases; C
 * is written under a bounds check, two floats at a time where its rows
 * allow, and otherwise through shared memory a whole row at a time
 * (hmma_store_rows).
 *
 * Blocks walk bands of 8 tile rows (f16_simt's order, for L2 reuse); a
 * stack of products takes blockIdx.y, in launches of at most 65535.
 *
 * ptxas (sm_90, CUDA 13.0): 234 registers, no spills (the other 17
 * instantiations, copy paths x f16/bf16, 234 to 255, none spill), 96 KiB of
 * dynamic shared memory (160 KiB with A on the 2-byte path, 186 with both),
 * one block of 256 threads per SM.  The SASS of the
 * main loop holds 64 HMMA.16816.F32 (.F32.BF16 for bfloat16) in 135
 * instructions per tile of 32 (47%): 8 LDSM.16.M88.4, 8 LDSM.16.MT88.4, 6
 * LDGSTS.128, one BAR.SYNC, the 3 never-executed LDS that ptxas puts before
 * LDGSTS and 45 others (addresses, predicates, cp.async groups, the
 * branch).  With 4-byte copies for both operands: 231 (24 LDGSTS.32, each
 * with its own shared address: a thread's copies are rows apart); with A
 * on the 2-byte path: 186 (14 LDGSTS, 10 of them A's words), and the
 * shift of a tile apart (10 LDS, 8 PRMT, 2 STS.128 a thread).
 *
 * mma_sync_128x128: the same warps' tiles, 2 x 2 of them on a block of
 * 128 x 128 (4 warps, 64 KiB of ring, two blocks an SM), for an N of 128
 * or less, or a little past a multiple of 128, where the 256-column tile
 * computes mostly padding (N = 122: 122 columns of 256), and for the
 * operands that the Hopper stages copy first (rows not whole 16-byte
 * units).  ptxas: 242 to 255 registers over its 18 instantiations (16-,
 * 4-byte copies and the 2-byte path x f16/bf16), none spill; two blocks of
 * 128 threads an SM, 64 KiB each (94 KiB with A on the 2-byte path, 4
 * stages; 88 with both, 3 stages).  The 2-byte path holds nothing in
 * registers across a tile; through registers, 64 halves a thread spilled,
 * and the tile took even K and N only.  The calibration measures it on an
 * odd K over whole units of B (src/job/calibrate.c) as well as on rows odd
 * on both sides: with neither, auto's model put it on large odd shapes it
 * ran at half the estimate (README, "Measurements behind the stages").
 * The mma_sync kernels are the same code on the other tile (their SASS
 * unchanged by the template).
 *
 * mma_sync_128x64: one column of the same warps' tiles, 2 of them on a
 * block of 128 x 64 (2 warps, 48 KiB of ring, four blocks an SM), for an N
 * of 64 or less over many rows: there the product is A read once, and the
 * 128-column tile computed half padding with half the blocks in flight.
 * A B whose rows are not 4-byte units (an odd N) is read from a padded
 * copy made first (kernels/hgemm/hgemm_pad.cuh: B is the narrow operand,
 * its copy small); A's rows must be 4-byte units or more (an even K): its
 * 2-byte loads, 64 halves a thread, spilled 260 bytes through registers,
 * and 4 to 24 bytes on the 2-byte path above (3 stages, to keep four
 * blocks an SM).  ptxas: 246 to
 * 255 registers over its 8 instantiations, none spill.  A tile of 32 takes
 * 168 instructions (12 LDGSTS.128) with 16-byte copies, 347 (48
 * LDGSTS.32) with 4-byte copies for both.  Where cuBLAS runs such shapes
 * and how they compare: README, "Measurements behind the stages".
 *
 * Follows "Efficient GEMM in CUDA" (CUTLASS): warp-level mma.sync tiles
 * fed by ldmatrix from a multi-stage cp.async ring in XOR-swizzled shared
 * memory; the PTX ISA's mma and ldmatrix.
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel mma_sync --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel mma_sync_128x128 --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel mma_sync_128x64 --verify --repeat 20 */
#include <stdint.h>
#include <stdio.h>

#include "kernels/gemm.h"
#include "kernels/common.cuh"
#include "kernels/hgemm/hgemm_pad.cuh"
#include "kernels/hgemm/hmma_mma.cuh"

template <int BN, int MIN_BLOCKS, int STAGES = 4>
struct hmma_tile {
    static constexpr int bm = 128, bn = BN, bk = 32, stages = STAGES, group = 8;
    static constexpr int warps_m = 2, warps_n = BN / 64;
    static constexpr int warps = warps_m * warps_n, threads = warps * 32;
    static constexpr int min_blocks = MIN_BLOCKS;
    /* Whether A (odd K) and B (odd N) may take the 2-byte path: not on
     * the 128 x 64 tile, which reads a B of odd rows from a padded copy
     * (hmma_launch; B is the narrow operand there, its copy small) and
     * takes an even K only (its check says why). */
    static constexpr bool a_byte_loads = BN >= 128, b_byte_loads = BN >= 128, pad_b = BN == 64;
    /* A warp's piece of C, in m16n8 tiles, and the k-steps of a tile. */
    static constexpr int wm = bm / warps_m, wn = bn / warps_n;
    static constexpr int mt = wm / 16, nt = wn / 8, ksteps = bk / 16;
    /* One stage: A (bm rows of bk halves), then B (bk rows of bn halves). */
    static constexpr int a_row = bk * 2, b_row = bn * 2;
    static constexpr int a_bytes = bm * a_row, b_bytes = bk * b_row;
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr size_t smem = (size_t)stages * stage_bytes;
    /* Copies of 8 halves per tile and thread; a thread's copies of A are
     * a_rows_apart rows apart, those of B b_rows_apart. */
    static constexpr int a_chunks = bm * bk / 8 / threads, b_chunks = bk * bn / 8 / threads;
    static constexpr int a_units = bk / 8, b_units = bn / 8;
    static constexpr int a_rows_apart = threads / a_units, b_rows_apart = threads / b_units;

    static_assert(wm == 64 && wn == 64, "64x64 warp tiles: 4 x 8 mma tiles per k-step");
    static_assert(bk == 32 && a_units == 4, "A rows of a tile are 4 units: the XOR takes r >> 1 & 3");
    static_assert(b_units % 8 == 0, "B rows are whole 128-byte lines: the XOR takes r & 7");
    static_assert(ksteps % 2 == 0, "fragments alternate between two buffers, step 0 in buffer 0");
    static_assert(a_chunks * threads * 8 == bm * bk && b_chunks * threads * 8 == bk * bn,
                  "copies split evenly over threads");
    static_assert(a_rows_apart % 8 == 0 && b_rows_apart % 8 == 0,
                  "a thread's copies keep its lane's swizzle");
    static_assert(stages >= 2, "a pipeline needs at least two stages");
};

/* mma_sync's tile, mma_sync_128x128's and mma_sync_128x64's. */
typedef hmma_tile<256, 1> hmma_cfg;
typedef hmma_tile<128, 2> hmma_128x128_cfg;
typedef hmma_tile<64, 4> hmma_128x64_cfg;

/* Byte offset in a stage of unit c (halves 8c..8c+7 of k) of row r of A's
 * tile, and of unit c (halves 8c..8c+7 of n) of row r (a k) of B's tile:
 * the swizzled layout of the header. */
template <class C>
static __host__ __device__ constexpr int hmma_a_unit(int r, int c)
{
    return r * C::a_row + 16 * (c ^ (r >> 1 & 3));
}

template <class C>
static __host__ __device__ constexpr int hmma_b_unit(int r, int c)
{
    return C::a_bytes + r * C::b_row + 16 * (c ^ (r & 7));
}

/* Where `lane` points ldmatrix.x4: for A, m16 tile 0 of warp row warp_m
 * at k-step s (lanes 0-15 give rows 0-15 at k 0-7, lanes 16-31 the same
 * rows at k 8-15); m16 tile i is i * a_tile_step further.  For B, the
 * k16n16 piece `pair` (n-tiles 2 pair, 2 pair + 1) of warp column warp_n
 * at k-step 0 (lanes 0-15 give rows k 0-15 at n 0-7, lanes 16-31 at n
 * 8-15); k-step s is s * b_step_step further. */
template <class C>
static __host__ __device__ constexpr int hmma_a_lane(int warp_m, int lane, int s)
{
    return hmma_a_unit<C>(warp_m * C::wm + lane % 16, 2 * s + lane / 16);
}

template <class C>
static __host__ __device__ constexpr int hmma_b_lane(int warp_n, int lane, int pair)
{
    return hmma_b_unit<C>(lane % 16, warp_n * (C::wn / 8) + 2 * pair + lane / 16);
}

template <class C>
struct hmma_steps {
    static constexpr int a_tile = 16 * C::a_row, b_step = 16 * C::b_row;
};

/* The constant steps above, and those between a thread's copies, hold for
 * every row and unit: the XOR only sees bits they leave alone. */
template <class C>
static constexpr bool hmma_steps_hold(void)
{
    constexpr int hmma_a_tile_step = hmma_steps<C>::a_tile, hmma_b_step_step = hmma_steps<C>::b_step;
    for (int r = 0; r < C::bm; r++)
        for (int c = 0; c < C::a_units; c++) {
            if (r + 16 < C::bm && hmma_a_unit<C>(r + 16, c) != hmma_a_unit<C>(r, c) + hmma_a_tile_step)
                return false;
            if (r + C::a_rows_apart < C::bm &&
                hmma_a_unit<C>(r + C::a_rows_apart, c) != hmma_a_unit<C>(r, c) + C::a_rows_apart * C::a_row)
                return false;
        }
    for (int r = 0; r < C::bk; r++)
        for (int c = 0; c < C::b_units; c++) {
            if (r + 16 < C::bk && hmma_b_unit<C>(r + 16, c) != hmma_b_unit<C>(r, c) + hmma_b_step_step)
                return false;
            if (r + C::b_rows_apart < C::bk &&
                hmma_b_unit<C>(r + C::b_rows_apart, c) != hmma_b_unit<C>(r, c) + C::b_rows_apart * C::b_row)
                return false;
        }
    return true;
}
static_assert(hmma_steps_hold<hmma_cfg>() && hmma_steps_hold<hmma_128x128_cfg>() &&
                  hmma_steps_hold<hmma_128x64_cfg>(),
              "swizzled offsets move by constant steps");

struct hmma_args {
    struct hgemm_problem p;
    int batch0;               /* product of blockIdx.y == 0 */
    int tiles_m, tiles_n;
    int c_vec;                /* rows of C may be stored as float2 */
};

static __device__ __forceinline__ void hmma_cp16(unsigned dst, const void *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 16 : 0));
}

static __device__ __forceinline__ void hmma_cp4(unsigned dst, const void *src, bool ok)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 4 : 0));
}

/* A 4-byte copy that reads `bytes` of it (0 or 4); zeros where it reads
 * none. */
static __device__ __forceinline__ void hmma_cp4n(unsigned dst, const void *src, int bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes));
}

static __device__ __forceinline__ uint32_t hmma_ldg16(const uint16_t *p)
{
    return __ldg(reinterpret_cast<const unsigned short *>(p));
}

static __device__ __forceinline__ uint32_t hmma_lds32(unsigned addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

static __device__ __forceinline__ void hmma_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void hmma_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __device__ __forceinline__ void hmma_st16(unsigned dst, uint4 v)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}

/* Four 8x8 matrices of 16-bit words; register q from the rows that lanes
 * 8q..8q+7 point at.  Without .trans lane l gets the words 2 (l % 4) and
 * 2 (l % 4) + 1 of row l / 4; with .trans, word l / 4 of rows 2 (l % 4)
 * and 2 (l % 4) + 1. */
static __device__ __forceinline__ void hmma_ldsm(uint32_t (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

static __device__ __forceinline__ void hmma_ldsm_trans(uint32_t (&lo)[2], uint32_t (&hi)[2],
                                                       unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(lo[0]), "=r"(lo[1]), "=r"(hi[0]), "=r"(hi[1])
                 : "r"(addr)
                 : "memory");
}

/* Where block `id` works: down a band of `group` tile rows, then right. */
static __device__ __forceinline__ void hmma_tile_of(int id, int tiles_m, int tiles_n, int group,
                                                    int *tm, int *tn)
{
    int band = id / (group * tiles_n);
    int first = band * group;
    int rows = min(tiles_m - first, group);
    int in_band = id - band * group * tiles_n;
    *tm = first + in_band % rows;
    *tn = in_band / rows;
}

/* Where a thread's 4-byte copies of a tile go: word w = tid % WORDS
 * (halves 2w, 2w + 1) of rows tid / WORDS + ROWS j, ROWS = threads /
 * WORDS, so that a warp's copy reads whole stretches of rows (A: two rows
 * of 64 bytes; B: 128 bytes of one row).  With the lanes 16 bytes apart,
 * as the 16-byte copies have them, a warp's copy of 4 bytes a lane touched
 * 16 sectors and used a quarter of each, and L1 was the limit (README,
 * "Measurements behind the stages").  The 2-byte loads keep the 16-byte
 * chunks: a word at a time they took four times the stores, and ran
 * slower.  The swizzle repeats every PERIOD of a thread's rows: its
 * offsets are PERIOD constants and steps. */
template <class C, int WORDS, int ROW_BYTES, int BASE, int SWZ_SHIFT, int SWZ_MASK>
struct hmma_words {
    static constexpr int rows_apart = C::threads / WORDS;
    static constexpr int period = 8 / (rows_apart % 8 == 0 ? 8 : rows_apart % 4 == 0 ? 4
                                                              : rows_apart % 2 == 0 ? 2 : 1);
    static_assert(C::threads % WORDS == 0 && WORDS % 4 == 0, "whole rows of whole units a copy");
    static_assert(period * rows_apart % 8 == 0, "the swizzle repeats every period");

    static __host__ __device__ constexpr int unit(int r, int w)
    {
        return BASE + r * ROW_BYTES + 16 * ((w / 4) ^ (r >> SWZ_SHIFT & SWZ_MASK)) + 4 * (w % 4);
    }

    /* Offset of copy j from the thread's offsets of copies 0 .. period - 1. */
    static __device__ __forceinline__ unsigned at(const unsigned (&first)[period], int j)
    {
        return first[j % period] + (unsigned)(j / period * period * rows_apart * ROW_BYTES);
    }
};

/* One thread's copies of a tile.  16-byte copies: A rows tid / 4 + 64 q
 * (q < 2), unit tid % 4; B rows tid / 32 + 8 q (q < 4), unit tid % 32; a
 * warp reads 8 rows x 64 bytes of A and one 512-byte row of B per copy.
 * 4-byte copies go as hmma_words lays them.  The 2-byte path (rows of an
 * odd number of values) keeps the 16-byte chunks but copies each as the 5
 * aligned words that cover it (4 where the chunk starts on a word) to a
 * raw area of the thread's own, and later shifts them into place
 * (fixup).  AMODE and BMODE are the operands' copy sizes in bytes: 16, 4,
 * or 2. */
template <class C, int AMODE, int BMODE>
struct hmma_loader {
    typedef hmma_words<C, C::bk / 2, C::a_row, 0, 1, 3> aw;
    typedef hmma_words<C, C::bn / 2, C::b_row, C::a_bytes, 0, 7> bw;
    static constexpr int a_copies = AMODE == 4 ? C::bm / aw::rows_apart : C::a_chunks;
    static constexpr int b_copies = BMODE == 4 ? C::bk / bw::rows_apart : C::b_chunks;
    static constexpr int a_period = AMODE == 4 ? aw::period : 1;
    static constexpr int b_period = BMODE == 4 ? bw::period : 1;
    /* The 2-byte path's raw area for one tile: word j of chunk q at word
     * (5 q + j) * threads + tid, A's chunks first (each bank a lane). */
    static constexpr int a_words = AMODE == 2 ? 5 * a_copies : 0;
    static constexpr int b_words = BMODE == 2 ? 5 * b_copies : 0;
    static constexpr int raw_bytes = (a_words + b_words) * C::threads * 4;

    const uint16_t *a_src, *b_src;   /* copy 0 of the next tile (2-byte path: the
                                        word that holds its first value) */
    size_t a_apart, b_apart;         /* elements between a thread's copies */
    size_t b_tile;                   /* elements between B's tiles: bk * N */
    unsigned a_dst[a_period], b_dst[b_period];   /* byte offsets in a stage */
    int a_rows;                      /* chunks: bit q, whether chunk q's row exists;
                                        words: rows of A from the thread's first */
    int a_left;                      /* K - k of the thread's first value of A */
    int b_left;                      /* K - k of the thread's first row of B */
    int b_cols;                      /* values of B's row from the thread's first, 0..8 */
    int a_odd, b_odd;                /* 2-byte path: a chunk starts mid-word */
    unsigned raw_lane;               /* 4 tid: the thread's column of the raw area */
    int a_last;                      /* 2-byte path: bit q, whether chunk q's row is A's last */
    bool b_edge;                     /* 2-byte path: the thread's unit holds B's last column */
    uint32_t a_end, b_end;           /* 2-byte path: A's and B's last values, where the
                                        thread may copy them */

    __host__ __device__ __forceinline__ hmma_loader(const uint16_t *a, const uint16_t *b, int m,
                                                    int n, int k, int lda, int ldb, int bm0,
                                                    int bn0, int tid)
    {
        a_odd = b_odd = 0;
        a_last = 0;
        b_edge = false;
        a_end = b_end = 0;
        raw_lane = 4u * (unsigned)tid;
        if constexpr (AMODE != 4) {
            int a_r = tid / C::a_units, a_c = tid % C::a_units;
            a_rows = 0;
            for (int q = 0; q < C::a_chunks; q++)
                a_rows |= (int)(a_r + q * C::a_rows_apart < m - bm0) << q;
            /* A row past M is never read; chunk 0 points at the tile's
             * first row then (the others are a_apart further, never read
             * either). */
            a_src = a + (size_t)(bm0 + (a_rows & 1 ? a_r : 0)) * lda + 8 * a_c;
            a_apart = (size_t)C::a_rows_apart * lda;
            a_dst[0] = hmma_a_unit<C>(a_r, a_c);
            a_left = k - 8 * a_c;
            if constexpr (AMODE == 2) {
                /* Rows 64 apart and tiles 32 values apart keep the parity. */
                a_odd = (int)((uintptr_t)a_src >> 1 & 1);
                a_src -= a_odd;
                for (int q = 0; q < C::a_chunks; q++)
                    a_last |= (int)(bm0 + a_r + q * C::a_rows_apart == m - 1) << q;
                if (a_last && k > 0)
                    a_end = hmma_ldg16(a + (size_t)(m - 1) * lda + k - 1);
            }
        } else {
            int r = tid / (C::bk / 2), w = tid % (C::bk / 2);
            a_rows = m - bm0 - r;
            a_src = a + (size_t)(bm0 + (a_rows > 0 ? r : 0)) * lda + 2 * w;
            a_apart = (size_t)aw::rows_apart * lda;
            for (int j = 0; j < a_period; j++)
                a_dst[j] = aw::unit(r + j * aw::rows_apart, w);
            a_left = k - 2 * w;
        }
        if constexpr (BMODE != 4) {
            int b_r = tid / C::b_units, b_c = tid % C::b_units;
            int cols = n - bn0 - 8 * b_c;
            b_cols = cols < 0 ? 0 : cols > 8 ? 8 : cols;
            b_src = b + (size_t)b_r * ldb + bn0 + (b_cols > 0 ? 8 * b_c : 0);
            b_apart = (size_t)C::b_rows_apart * ldb;
            b_dst[0] = hmma_b_unit<C>(b_r, b_c);
            b_left = k - b_r;
            if constexpr (BMODE == 2) {
                /* Rows 8 apart and tiles 32 rows apart keep the parity. */
                b_odd = (int)((uintptr_t)b_src >> 1 & 1);
                b_src -= b_odd;
                /* (rows b_r + 8 j: the thread copies row K - 1 where b_r
                 * is K - 1 modulo 8) */
                b_edge = cols >= 1 && cols <= 8;
                if (b_edge && k > 0 && b_r == (k - 1) % C::b_rows_apart)
                    b_end = hmma_ldg16(b + (size_t)(k - 1) * ldb + n - 1);
            }
        } else {
            int r = tid / (C::bn / 2), w = tid % (C::bn / 2);
            int cols = n - bn0 - 2 * w;
            b_cols = cols < 0 ? 0 : cols > 2 ? 2 : cols;
            b_src = b + (size_t)r * ldb + bn0 + (b_cols > 0 ? 2 * w : 0);
            b_apart = (size_t)bw::rows_apart * ldb;
            for (int j = 0; j < b_period; j++)
                b_dst[j] = bw::unit(r + j * bw::rows_apart, w);
            b_left = k - r;
        }
        b_tile = (size_t)C::bk * ldb;
    }

    /* Copy q of the next tile: where it is read from and stored to (byte
     * offset in a stage), and whether it reads memory. */
    __host__ __device__ __forceinline__ const uint16_t *a_from(int q) const
    {
        return a_src + q * a_apart;
    }

    __device__ __forceinline__ unsigned a_to(int q) const
    {
        if constexpr (AMODE != 4)
            return a_dst[0] + q * C::a_rows_apart * C::a_row;
        else
            return aw::at(a_dst, q);
    }

    __host__ __device__ __forceinline__ bool a_reads(int q) const
    {
        if constexpr (AMODE != 4)
            return (a_rows >> q & 1) && a_left > 0;
        else
            return q * aw::rows_apart < a_rows && a_left > 0;
    }

    __host__ __device__ __forceinline__ const uint16_t *b_from(int q) const
    {
        return b_src + q * b_apart;
    }

    __device__ __forceinline__ unsigned b_to(int q) const
    {
        if constexpr (BMODE != 4)
            return b_dst[0] + q * C::b_rows_apart * C::b_row;
        else
            return bw::at(b_dst, q);
    }

    __host__ __device__ __forceinline__ bool b_reads(int q) const
    {
        if constexpr (BMODE != 4)
            return b_left > q * C::b_rows_apart && b_cols > 0;
        else
            return b_left > q * bw::rows_apart && b_cols > 0;
    }

    /* Whether chunk q of the tile whose first values are a_left and b_left
     * from the end of K holds the operand's last value (A's: its last
     * row, the end of K; B's: row K - 1, the unit of column N - 1). */
    __device__ __forceinline__ bool a_ends(int q, int left) const
    {
        return (a_last >> q & 1) && left > 0 && left <= 8;
    }

    __device__ __forceinline__ bool b_ends(int q, int left) const
    {
        return b_edge && left == q * C::b_rows_apart + 1;
    }

    /* The 2-byte path's copies of a chunk that starts `odd` values into
     * the word at `from`, `valid` of its values inside the operand's row
     * (clamped to 8), to 5 words of the raw area from `dst`.  An odd
     * chunk's word 0 starts one value before the chunk, in the row before
     * or (an operand whose base is not word-aligned: a slice of a larger
     * buffer) before the base; a word that ends one value past the row's
     * last holds the next row's first: both inside the same allocation.
     * Not so a word that starts at the operand's last value (the chunk
     * holds it, `end`, and it is the first value of a word: valid + odd
     * is odd), which may end the allocation: it is not copied, and the
     * thread, which read that value at the start, puts it in place
     * (fixup). */
    static __device__ __forceinline__ void raw_chunk(unsigned dst, const uint16_t *from, int valid,
                                                     int odd, bool end)
    {
        int v = valid - (end && (valid + odd) % 2 ? 1 : 0);
#pragma unroll
        for (int j = 0; j < 5; j++)
            hmma_cp4n(dst + j * C::threads * 4, from + 2 * j, v > 0 && v + odd - 2 * j >= 1 ? 4 : 0);
    }

    /* Starts the copies of the next tile into the stage at shared address
     * `stage` (2-byte path: into the raw area at `raw`). */
    __device__ __forceinline__ void issue(unsigned stage, unsigned raw)
    {
#pragma unroll
        for (int q = 0; q < a_copies; q++) {
            if constexpr (AMODE == 16) {
                hmma_cp16(stage + a_to(q), a_from(q), a_reads(q));
            } else if constexpr (AMODE == 4) {
                hmma_cp4(stage + a_to(q), a_from(q), a_reads(q));
            } else {
                int valid = a_rows >> q & 1 ? min(max(a_left, 0), 8) : 0;
                raw_chunk(raw + 5 * q * C::threads * 4 + raw_lane, a_from(q), valid, a_odd,
                          a_ends(q, a_left));
            }
        }
#pragma unroll
        for (int q = 0; q < b_copies; q++) {
            if constexpr (BMODE == 16) {
                hmma_cp16(stage + b_to(q), b_from(q), b_reads(q));
            } else if constexpr (BMODE == 4) {
                hmma_cp4(stage + b_to(q), b_from(q), b_reads(q));
            } else {
                int valid = b_left > q * C::b_rows_apart ? b_cols : 0;
                raw_chunk(raw + (a_words + 5 * q) * C::threads * 4 + raw_lane, b_from(q), valid,
                          b_odd, b_ends(q, b_left));
            }
        }
    }

    /* The 16 bytes of a chunk from its raw words: each 4-byte word of the
     * chunk is the upper half of one raw word and the lower half of the
     * next where the chunk starts mid-word (PRMT 0x5432), else the word.
     * Where the chunk holds the operand's last value (`end`, `valid`
     * values) at the start of a raw word, that word is the value.  Values
     * from `keep` on are zeros: past the end of A's row a word holds the
     * next row's first value, which an infinity there would turn into NaN
     * against B's zero rows past K (B's past N land in columns of C that
     * are not stored). */
    static __device__ __forceinline__ void shift_chunk(unsigned dst, unsigned raw, int odd,
                                                       bool end, int valid, uint32_t end_v,
                                                       int keep)
    {
        uint32_t w[5];
#pragma unroll
        for (int j = 0; j < 5; j++) {
            w[j] = hmma_lds32(raw + j * C::threads * 4);
            if (end && 2 * j == valid + odd - 1)
                w[j] = end_v;
        }
        unsigned sel = odd ? 0x5432u : 0x3210u;
        uint32_t v[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            v[i] = __byte_perm(w[i], w[i + 1], sel);
            if (keep < 8)
                v[i] &= (2 * i < keep ? 0xffffu : 0u) | (2 * i + 1 < keep ? 0xffff0000u : 0u);
        }
        hmma_st16(dst, make_uint4(v[0], v[1], v[2], v[3]));
    }

    /* Ends a tile of the 2-byte path, BACK tiles before the next one to
     * issue, once its copies (this thread's own) have landed in `raw`:
     * its chunks into place in the stage at `stage`. */
    template <int BACK>
    __device__ __forceinline__ void fixup(unsigned stage, unsigned raw) const
    {
        if constexpr (AMODE == 2) {
            int left = a_left + BACK * C::bk, valid = min(max(left, 0), 8);
#pragma unroll
            for (int q = 0; q < a_copies; q++)
                shift_chunk(stage + a_to(q), raw + 5 * q * C::threads * 4 + raw_lane, a_odd,
                            a_ends(q, left), valid, a_end, valid);
        }
        if constexpr (BMODE == 2) {
            int left = b_left + BACK * C::bk;
#pragma unroll
            for (int q = 0; q < b_copies; q++)
                shift_chunk(stage + b_to(q), raw + (a_words + 5 * q) * C::threads * 4 + raw_lane,
                            b_odd, b_ends(q, left), b_cols, b_end, 8);
        }
    }

    __host__ __device__ __forceinline__ void next_tile(void)
    {
        a_src += C::bk;
        b_src += b_tile;
        a_left -= C::bk;
        b_left -= C::bk;
    }
};

/* The fragments of k-step s of the tile in the stage at `stage`: A for the
 * warp's 4 m16 tiles, B for its 8 n8 tiles. */
template <class C>
struct hmma_frags {
    uint32_t a[C::mt][4];
    uint32_t b[C::nt][2];

    __device__ __forceinline__ void load(unsigned stage, const unsigned (&a_lane)[C::ksteps],
                                         const unsigned (&b_lane)[C::nt / 2], int s)
    {
#pragma unroll
        for (int i = 0; i < C::mt; i++)
            hmma_ldsm(a[i], stage + a_lane[s] + i * hmma_steps<C>::a_tile);
#pragma unroll
        for (int j = 0; j < C::nt / 2; j++)
            hmma_ldsm_trans(b[2 * j], b[2 * j + 1], stage + b_lane[j] + s * hmma_steps<C>::b_step);
    }
};

template <class C, bool BF16>
static __device__ __forceinline__ void hmma_step(float (&acc)[C::mt][C::nt][4],
                                                 const hmma_frags<C> &f)
{
    /* A serpentine over n, so that consecutive mmas share an operand. */
#pragma unroll
    for (int i = 0; i < C::mt; i++)
#pragma unroll
        for (int jj = 0; jj < C::nt; jj++) {
            int j = i % 2 ? C::nt - 1 - jj : jj;
            hmma_mma<BF16>(acc[i][j], f.a[i], f.b[j]);
        }
}

/* The block's tile to C (product's C at `c`) where its rows cannot take
 * float2 stores (N odd, or an odd base or stack stride).  From the
 * fragments a lane would store one float at a time, 4 bytes in 32 across
 * the warp, the halves of each sector in two stores: 3.5 times slower than
 * aligned at float16 3321 x 29927 x 53 (H100, 2026-11-26).  So the tile
 * goes through the free ring in two halves of 64 x 256 floats (64 KB of
 * the 96), the warps of one row of warps staging theirs (a row's 8-float
 * groups XORed by row & 3: each float2 store of a warp, rows g of 4 lanes
 * apiece, spreads over all banks), then every warp writes 8 whole rows, a
 * row at a time, lane l at columns l, l + 32, ...: 1 KB contiguous a row,
 * whatever C's alignment. */
template <class C>
static __device__ __forceinline__ void hmma_store_rows(const float (&acc)[C::mt][C::nt][4],
                                                       float *cs, const struct hgemm_problem &p,
                                                       float *c, int bm0, int bn0, int warp_m,
                                                       int warp_n, int lane)
{
    constexpr int rows_per_warp = C::wm / C::warps, per_lane = C::bn / 32;
    static_assert((size_t)C::wm * C::bn * sizeof(float) <= C::smem, "half a tile fits the ring");
    static_assert(C::wm % C::warps == 0 && rows_per_warp % 2 == 0, "whole pairs of rows a warp");
    const int g = lane / 4, t4 = lane % 4, warp = threadIdx.x / 32;
    for (int half = 0; half < C::warps_m; half++) {
        /* Every warp is done with the ring, or with the half before. */
        __syncthreads();
        if (warp_m == half) {
#pragma unroll
            for (int i = 0; i < C::mt; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    int r = 16 * i + 8 * h + g;
#pragma unroll
                    for (int j = 0; j < C::nt; j++) {
                        int grp = warp_n * C::wn / 8 + j;
                        *reinterpret_cast<float2 *>(&cs[r * C::bn + (grp ^ (r & 3)) * 8 + 2 * t4]) =
                            make_float2(p.alpha * acc[i][j][2 * h], p.alpha * acc[i][j][2 * h + 1]);
                    }
                }
        }
        __syncthreads();
        const int rows = p.m - bm0 - half * C::wm, cols = p.n - bn0;
        float *cb = c + (size_t)(bm0 + half * C::wm) * p.n + bn0 + lane;
#pragma unroll 1
        for (int r0 = warp * rows_per_warp; r0 < (warp + 1) * rows_per_warp && r0 < rows;
             r0 += 2) {
            float v[2][per_lane];
#pragma unroll
            for (int r = 0; r < 2; r++)
#pragma unroll
                for (int q = 0; q < per_lane; q++)
                    v[r][q] = cs[(r0 + r) * C::bn + ((4 * q + lane / 8) ^ ((r0 + r) & 3)) * 8 +
                                 lane % 8];
            /* The old values all in flight before the first store. */
            if (p.beta != 0.0f) {
#pragma unroll
                for (int r = 0; r < 2; r++)
#pragma unroll
                    for (int q = 0; q < per_lane; q++)
                        if (r0 + r < rows && 32 * q + lane < cols)
                            v[r][q] += p.beta * cb[(size_t)(r0 + r) * p.n + 32 * q];
            }
#pragma unroll
            for (int r = 0; r < 2; r++)
#pragma unroll
                for (int q = 0; q < per_lane; q++)
                    if (r0 + r < rows && 32 * q + lane < cols)
                        cb[(size_t)(r0 + r) * p.n + 32 * q] = v[r][q];
        }
    }
}

template <class C, bool BF16, int AMODE, int BMODE>
static __global__ void __launch_bounds__(C::threads, C::min_blocks)
hgemm_mma_sync_kernel(const struct hmma_args args)
{
    extern __shared__ __align__(128) unsigned char hmma_smem[];
    const struct hgemm_problem &p = args.p;
    long long product = (long long)args.batch0 + blockIdx.y;
    int tm, tn;
    hmma_tile_of(blockIdx.x, args.tiles_m, args.tiles_n, C::group, &tm, &tn);
    int bm0 = tm * C::bm, bn0 = tn * C::bn;
    /* (a split's shorter last slice: kernels/gemm_dispatch.c) */
    const int k = p.k_last > 0 && product == p.batch - 1 ? p.k_last : p.k;
    int tiles = k > 0 ? (k - 1) / C::bk + 1 : 0;

    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int warp_m = warp / C::warps_n, warp_n = warp % C::warps_n;
    unsigned smem0 = (unsigned)__cvta_generic_to_shared(hmma_smem);
    unsigned a_lane[C::ksteps], b_lane[C::nt / 2];
#pragma unroll
    for (int s = 0; s < C::ksteps; s++)
        a_lane[s] = hmma_a_lane<C>(warp_m, lane, s);
#pragma unroll
    for (int j = 0; j < C::nt / 2; j++)
        b_lane[j] = hmma_b_lane<C>(warp_n, lane, j);

    typedef hmma_loader<C, AMODE, BMODE> loader_t;
    loader_t loader(p.a + product * p.stride_a, p.b + product * p.stride_b, p.m, p.n, k, p.lda,
                    p.ldb, bm0, bn0, threadIdx.x);
    /* The 2-byte path's raw areas, past the ring: tile j's in area j %
     * (STAGES - 1).  Such a tile is shifted into place at the end of tile
     * j - FIX (FIX = STAGES - 3, at least 1), before the barrier that
     * publishes it: its copies went out STAGES - 1 - FIX tiles before
     * that. */
    constexpr bool raw = loader_t::raw_bytes > 0;
    constexpr int fix = C::stages > 4 ? C::stages - 3 : 1, raw_areas = C::stages - 1;
    const unsigned raw0 = smem0 + (unsigned)C::smem;

    /* Tiles 0 .. STAGES-2, one group each (empty past K). */
#pragma unroll
    for (int s = 0; s < C::stages - 1; s++) {
        if (s < tiles)
            loader.issue(smem0 + s * C::stage_bytes, raw0 + s % raw_areas * loader_t::raw_bytes);
        hmma_commit();
        loader.next_tile();
    }

    float acc[C::mt][C::nt][4];
#pragma unroll
    for (int i = 0; i < C::mt; i++)
#pragma unroll
        for (int j = 0; j < C::nt; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;

    hmma_frags<C> f[2];
    if constexpr (raw) {
        /* Tiles 0 .. FIX - 1 shifted into place here, each once landed. */
        hmma_wait<C::stages - 2>();
        if (0 < tiles)
            loader.template fixup<C::stages - 1>(smem0, raw0);
        if constexpr (fix > 1) {
            static_assert(fix == 2, "the raw path shifts tiles 0 and 1 before the loop");
            hmma_wait<C::stages - 3>();
            if (1 < tiles)
                loader.template fixup<C::stages - 2>(smem0 + C::stage_bytes, raw0 + loader_t::raw_bytes);
        }
    } else {
        hmma_wait<C::stages - 2>();
    }
    __syncthreads();
    f[0].load(smem0, a_lane, b_lane, 0);

    /* Stages of tile t, of tile t + FIX and of tile t + STAGES - 1; raw
     * areas of tile t + FIX and of tile t + STAGES - 1. */
    int rd = 0, fx = fix, wr = C::stages - 1;
    int fx_raw = fix % raw_areas, wr_raw = (C::stages - 1) % raw_areas;
    for (int t = 0; t < tiles; t++) {
        unsigned rd_addr = smem0 + rd * C::stage_bytes, wr_addr = smem0 + wr * C::stage_bytes;
        bool more = t + C::stages - 1 < tiles;
#pragma unroll
        for (int s = 0; s < C::ksteps; s++) {
            if (s == C::ksteps - 1) {
                /* After this barrier tile t + 1 has landed (and been
                 * shifted into place), and every warp has read the last of
                 * tile t's slot, which tile t + STAGES fills next. */
                loader.next_tile();
                if constexpr (raw) {
                    /* Tiles up to t + FIX landed: all but the last
                     * STAGES - 1 - FIX groups. */
                    hmma_wait<C::stages - 1 - fix>();
                    if (t + fix < tiles)
                        loader.template fixup<C::stages - fix>(smem0 + fx * C::stage_bytes,
                                                               raw0 + fx_raw * loader_t::raw_bytes);
                    fx = fx + 1 == C::stages ? 0 : fx + 1;
                    fx_raw = fx_raw + 1 == raw_areas ? 0 : fx_raw + 1;
                } else {
                    hmma_wait<C::stages - 2>();
                }
                __syncthreads();
                rd = rd + 1 == C::stages ? 0 : rd + 1;
                wr = wr + 1 == C::stages ? 0 : wr + 1;
                f[(s + 1) % 2].load(smem0 + rd * C::stage_bytes, a_lane, b_lane, 0);
            } else {
                f[(s + 1) % 2].load(rd_addr, a_lane, b_lane, s + 1);
            }
            hmma_step<C, BF16>(acc, f[s % 2]);
            if (s == 0) {
                if (more)
                    loader.issue(wr_addr, raw0 + wr_raw * loader_t::raw_bytes);
                hmma_commit();
                wr_raw = wr_raw + 1 == raw_areas ? 0 : wr_raw + 1;
            }
        }
    }
    hmma_wait<0>();

    float *c = p.c + product * p.stride_c;
    int g = lane / 4, t4 = lane % 4;
    if (!args.c_vec) {
        hmma_store_rows<C>(acc, reinterpret_cast<float *>(hmma_smem), p, c, bm0, bn0, warp_m,
                        warp_n, lane);
        return;
    }
#pragma unroll
    for (int i = 0; i < C::mt; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int row = bm0 + warp_m * C::wm + 16 * i + 8 * h + g;
            if (row >= p.m)
                continue;
            float *crow = c + (size_t)row * p.n;
#pragma unroll
            for (int j = 0; j < C::nt; j++) {
                int col = bn0 + warp_n * C::wn + 8 * j + 2 * t4;
                if (col >= p.n)
                    continue;
                float2 out = make_float2(p.alpha * acc[i][j][2 * h], p.alpha * acc[i][j][2 * h + 1]);
                if (p.beta != 0.0f) {
                    float2 old = *reinterpret_cast<const float2 *>(crow + col);
                    out.x += p.beta * old.x;
                    out.y += p.beta * old.y;
                }
                *reinterpret_cast<float2 *>(crow + col) = out;
            }
        }
}

/* Copy size in bytes for an operand whose rows are `ld` elements long. */
static int hmma_mode(const uint16_t *base, int ld, long long stride)
{
    uintptr_t addr = (uintptr_t)base;
    if (ld % 8 == 0 && stride % 8 == 0 && addr % 16 == 0)
        return 16;
    if (ld % 2 == 0 && stride % 2 == 0 && addr % 4 == 0)
        return 4;
    return 2;
}

/* The ring and raw areas of a tile of S stages whose operands take the
 * given copies. */
template <class C, int AMODE, int BMODE, int S>
struct hmma_ring_of {
    typedef hmma_tile<C::bn, C::min_blocks, S> tile;
    static constexpr bool raw = AMODE == 2 || BMODE == 2;
    static constexpr size_t smem =
        tile::smem + (raw ? (size_t)(S - 1) * hmma_loader<tile, AMODE, BMODE>::raw_bytes : 0);
    /* Whether the tile's blocks an SM fit its shared memory (228 KiB, 1
     * KiB of it kept per block). */
    static constexpr bool fits = (smem + 1024) * C::min_blocks <= 228 * 1024;
};

/* The 2-byte path runs as many stages as fit beside their raw areas, 5 to
 * 3 (5: one operand's on the 256-column tile; 3: both operands' on the
 * 128 x 128 tile), the others the tile's 4. */
template <class C, int AMODE, int BMODE>
struct hmma_ring {
    static constexpr int stages = !(AMODE == 2 || BMODE == 2)           ? C::stages
                                  : hmma_ring_of<C, AMODE, BMODE, 5>::fits ? 5
                                  : hmma_ring_of<C, AMODE, BMODE, 4>::fits ? 4
                                                                           : 3;
    typedef hmma_ring_of<C, AMODE, BMODE, stages> of;
    typedef typename of::tile tile;
    static constexpr size_t smem = of::smem;
    static_assert(of::fits, "the tile's blocks an SM fit its shared memory");
};

template <class C, bool BF16, int AMODE, int BMODE>
static cudaError_t hmma_run(struct hmma_args args, int batch, cudaStream_t stream)
{
    typedef hmma_ring<C, AMODE, BMODE> ring;
    typedef typename ring::tile T;
    cudaError_t err = cudaFuncSetAttribute(hgemm_mma_sync_kernel<T, BF16, AMODE, BMODE>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)ring::smem);
    if (err != cudaSuccess)
        return err;
    for (long long b0 = 0; b0 < batch; b0 += 65535) {
        args.batch0 = (int)b0;
        dim3 grid((unsigned)(args.tiles_m * args.tiles_n), (unsigned)min(batch - b0, 65535LL));
        hgemm_mma_sync_kernel<T, BF16, AMODE, BMODE><<<grid, T::threads, ring::smem, stream>>>(args);
        err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

template <class C, bool BF16, int AMODE>
static cudaError_t hmma_run_b(const struct hmma_args &args, int bmode, int batch,
                              cudaStream_t stream)
{
    if (bmode == 16)
        return hmma_run<C, BF16, AMODE, 16>(args, batch, stream);
    if (bmode == 4)
        return hmma_run<C, BF16, AMODE, 4>(args, batch, stream);
    if constexpr (!C::b_byte_loads)
        return cudaErrorInvalidValue;
    else
        return hmma_run<C, BF16, AMODE, 2>(args, batch, stream);
}

template <class C, bool BF16>
static cudaError_t hmma_run_ab(const struct hmma_args &args, int amode, int bmode, int batch,
                               cudaStream_t stream)
{
    if (amode == 16)
        return hmma_run_b<C, BF16, 16>(args, bmode, batch, stream);
    if (amode == 4)
        return hmma_run_b<C, BF16, 4>(args, bmode, batch, stream);
    if constexpr (!C::a_byte_loads)
        return cudaErrorInvalidValue;
    else
        return hmma_run_b<C, BF16, 2>(args, bmode, batch, stream);
}

template <class C>
static cudaError_t hmma_launch(const struct hgemm_problem *p, const struct launch_env *env)
{
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
    struct hmma_args args;
    args.p = *p;
    args.p.batch = batch;
    args.p.stride_a = sa;
    args.p.stride_b = sb;
    args.p.stride_c = sc;
    args.batch0 = 0;
    args.tiles_m = (int)tiles_m;
    args.tiles_n = (int)tiles_n;
    args.c_vec = p->n % 2 == 0 && sc % 2 == 0 && (uintptr_t)p->c % 8 == 0;
    int amode = hmma_mode(p->a, p->lda, sa), bmode = hmma_mode(p->b, p->ldb, sb);
    void *buf = NULL;
    if (C::pad_b && bmode == 2 && p->k > 0) {
        struct hpad_operand a, b;
        hpad_plan(&a, p->a, p->m, p->k, p->lda, batch, sa, 1);   /* (never copied) */
        hpad_plan(&b, p->b, p->k, p->n, p->ldb, batch, sb, 2);
        cudaError_t err = hpad_stage(&a, &b, &buf, env->stream);
        if (err != cudaSuccess) {
            if (buf)
                cudaFreeAsync(buf, env->stream);
            return err;
        }
        args.p.b = b.base;
        args.p.ldb = (int)b.ld;
        args.p.stride_b = b.stride;
        bmode = hmma_mode(b.base, (int)b.ld, b.stride);
    }
    cudaError_t err = p->bf16 ? hmma_run_ab<C, true>(args, amode, bmode, batch, env->stream)
                              : hmma_run_ab<C, false>(args, amode, bmode, batch, env->stream);
    cudaError_t free_err = buf ? cudaFreeAsync(buf, env->stream) : cudaSuccess;
    return err != cudaSuccess ? err : free_err;
}

extern "C" cudaError_t hgemm_mma_sync_launch(const struct hgemm_problem *p,
                                             const struct launch_env *env)
{
    return hmma_launch<hmma_cfg>(p, env);
}

extern "C" cudaError_t hgemm_mma_sync_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_mma_sync_kernel<hmma_cfg, false, 16, 16>, hmma_cfg::threads,
                          hmma_cfg::smem, out);
}

extern "C" cudaError_t hgemm_mma_sync_128x128_launch(const struct hgemm_problem *p,
                                                     const struct launch_env *env)
{
    return hmma_launch<hmma_128x128_cfg>(p, env);
}

extern "C" cudaError_t hgemm_mma_sync_128x128_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_mma_sync_kernel<hmma_128x128_cfg, false, 16, 16>,
                          hmma_128x128_cfg::threads, hmma_128x128_cfg::smem, out);
}

extern "C" int hgemm_mma_sync_128x64_check(const struct gemm_problem *p, char *why, size_t n)
{
    long long sa = p->batch > 1 ? p->stride_a : 0;
    if (hmma_mode((const uint16_t *)p->a, (int)p->lda, sa) == 2) {
        snprintf(why, n, "mma_sync_128x64 needs rows of A in 4-byte units (an even K, and a "
                 "base to match); mma_sync and mma_sync_128x128 take the others");
        return 0;
    }
    return 1;
}

/* The padded copy of a B whose rows are not 4-byte units (hmma_launch). */
extern "C" size_t hgemm_mma_sync_128x64_workspace(const struct gemm_problem *p)
{
    if (p->m < 1 || p->n < 1 || p->k < 1)
        return 0;
    struct hpad_operand b;
    hpad_plan(&b, p->b, p->k, p->n, p->ldb, p->batch, p->stride_b, 2);
    return hpad_copy_bytes(&b);
}

extern "C" cudaError_t hgemm_mma_sync_128x64_launch(const struct hgemm_problem *p,
                                                    const struct launch_env *env)
{
    return hmma_launch<hmma_128x64_cfg>(p, env);
}

extern "C" cudaError_t hgemm_mma_sync_128x64_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_mma_sync_kernel<hmma_128x64_cfg, false, 16, 16>,
                          hmma_128x64_cfg::threads, hmma_128x64_cfg::smem, out);
}
