/* smem_pad: smem with one element of padding per tile row.
 *
 * Idea: with the tile declared [32][33], element (i, j) sits in bank
 * (33 i + j) mod 32, so the 32 lanes reading one column land in 32
 * different banks: the column read that is a 32-way conflict in smem is
 * conflict-free (for 8-byte elements each pair of banks is hit once per
 * half-warp; 1- and 2-byte elements share words, and a column read meets
 * at most two words in one bank).  Everything else is as in smem.
 *
 * Follows "Matrix transpose (RTX 3060 Laptop write-up)", matrixTranspos_3;
 * Mark Harris, "An Efficient Matrix Transpose in CUDA C/C++", shared
 * memory bank conflicts.
 *
 * Run and checked by:
 *   gemmcli transpose x.npy -o y.npy --kernel smem_pad --verify --repeat 20 */
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int tile = 32;
static constexpr int tile_rows = 8;   /* threads per block: tile x tile_rows */
static constexpr int max_grid_y = 65535;

template <typename T>
__global__ void __launch_bounds__(tile * tile_rows)
smem_pad_kernel(const T *__restrict__ in, T *__restrict__ out, int rows, int cols,
                int tiles_y)
{
    __shared__ T buf[tile][tile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c0 = blockIdx.x * tile;
    /* Tall matrices have more tile rows than grid.y allows: loop over them. */
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int r0 = by * tile;
        for (int i = 0; i < tile; i += tile_rows) {
            int r = r0 + ty + i, c = c0 + tx;
            if (r < rows && c < cols)
                buf[ty + i][tx] = in[(size_t)r * cols + c];
        }
        __syncthreads();
        for (int i = 0; i < tile; i += tile_rows) {
            int orow = c0 + ty + i, ocol = r0 + tx;
            if (orow < cols && ocol < rows)
                out[(size_t)orow * rows + ocol] = buf[tx][ty + i];
        }
        __syncthreads();
    }
}

template <typename T>
static cudaError_t smem_pad_run(const struct transpose_problem *p, const struct launch_env *env)
{
    int tiles_x = ceil_div(p->cols, tile), tiles_y = ceil_div(p->rows, tile);
    dim3 grid(tiles_x, tiles_y < max_grid_y ? tiles_y : max_grid_y);
    smem_pad_kernel<T><<<grid, dim3(tile, tile_rows), 0, env->stream>>>(
        (const T *)p->in, (T *)p->out, p->rows, p->cols, tiles_y);
    return launch_result();
}

extern "C" cudaError_t transpose_smem_pad_launch(const struct transpose_problem *p,
                                                 const struct launch_env *env)
{
    switch (p->elem_size) {
    case 1: return smem_pad_run<unsigned char>(p, env);
    case 2: return smem_pad_run<unsigned short>(p, env);
    case 4: return smem_pad_run<unsigned int>(p, env);
    case 8: return smem_pad_run<unsigned long long>(p, env);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t transpose_smem_pad_attr(struct kernel_attr *out)
{
    return kernel_attr_of(smem_pad_kernel<unsigned int>, tile * tile_rows, 0, out);
}
