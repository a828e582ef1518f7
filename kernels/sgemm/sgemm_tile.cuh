/* Device helpers shared by the SGEMM stages: predicated loads of A and B
 * (zeros outside the matrix, so edge tiles need no special case in the
 * inner loop) and the epilogue C = alpha * acc + beta * C, which never reads
 * C when beta == 0.
 *
 * VEC selects 16-byte accesses.  A launcher may pick it only when every row
 * it touches starts on a 16-byte boundary (see sgemm_rows_vec4); a float4 at
 * a column that is a multiple of 4 then lies wholly inside or wholly
 * outside the matrix.
 *
 * Run through the stages that include it, e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel vec4 --verify --repeat 20 */
#ifndef GC_SGEMM_TILE_CUH
#define GC_SGEMM_TILE_CUH

#include <stdint.h>
#include "kernels/common.cuh"
#include "kernels/sgemm/sgemm.h"

/* Rows of A (k floats) and of B and C (n floats) all start 16-byte aligned. */
static inline bool sgemm_rows_vec4(const struct sgemm_problem *p)
{
    uintptr_t bases = (uintptr_t)p->a | (uintptr_t)p->b | (uintptr_t)p->c;
    return p->k % 4 == 0 && p->n % 4 == 0 && bases % 16 == 0;
}

/* Element (row, col) of a rows x cols row-major matrix, 0 outside it. */
static __device__ __forceinline__ float sgemm_load1(const float *m, int rows, int cols,
                                                    int row, int col)
{
    return row < rows && col < cols ? m[(size_t)row * cols + col] : 0.0f;
}

/* Elements (row, col..col+3), 0 where outside; col is a multiple of 4. */
template <bool VEC>
static __device__ __forceinline__ float4 sgemm_load4(const float *m, int rows, int cols,
                                                     int row, int col)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= rows)
        return v;
    const float *src = m + (size_t)row * cols + col;
    if (VEC) {
        if (col < cols)
            v = *reinterpret_cast<const float4 *>(src);
    } else {
        if (col < cols) v.x = src[0];
        if (col + 1 < cols) v.y = src[1];
        if (col + 2 < cols) v.z = src[2];
        if (col + 3 < cols) v.w = src[3];
    }
    return v;
}

static __device__ __forceinline__ float sgemm_out(const struct sgemm_problem &p, float acc,
                                                  const float *c)
{
    return p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

/* C(row, col) from the accumulated dot product. */
static __device__ __forceinline__ void sgemm_store1(const struct sgemm_problem &p, int row,
                                                    int col, float acc)
{
    if (row < p.m && col < p.n) {
        float *c = p.c + (size_t)row * p.n + col;
        *c = sgemm_out(p, acc, c);
    }
}

/* C(row, col..col+3); col is a multiple of 4. */
template <bool VEC>
static __device__ __forceinline__ void sgemm_store4(const struct sgemm_problem &p, int row,
                                                    int col, float4 acc)
{
    if (row >= p.m || col >= p.n)
        return;
    float *c = p.c + (size_t)row * p.n + col;
    if (VEC) {
        float4 out = make_float4(p.alpha * acc.x, p.alpha * acc.y, p.alpha * acc.z,
                                 p.alpha * acc.w);
        if (p.beta != 0.0f) {
            float4 old = *reinterpret_cast<const float4 *>(c);
            out.x += p.beta * old.x;
            out.y += p.beta * old.y;
            out.z += p.beta * old.z;
            out.w += p.beta * old.w;
        }
        *reinterpret_cast<float4 *>(c) = out;
    } else {
        c[0] = sgemm_out(p, acc.x, c);
        if (col + 1 < p.n) c[1] = sgemm_out(p, acc.y, c + 1);
        if (col + 2 < p.n) c[2] = sgemm_out(p, acc.z, c + 2);
        if (col + 3 < p.n) c[3] = sgemm_out(p, acc.w, c + 3);
    }
}

/* Launches kernel<true> when rows allow float4 access, else kernel<false>. */
#define SGEMM_LAUNCH_VEC(kernel, grid, block, smem, p, env)                   \
    do {                                                                      \
        if (sgemm_rows_vec4(p))                                               \
            kernel<true><<<(grid), (block), (smem), (env)->stream>>>(*(p));   \
        else                                                                  \
            kernel<false><<<(grid), (block), (smem), (env)->stream>>>(*(p));  \
    } while (0)

#endif
