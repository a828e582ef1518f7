/* smem: coalesced on both sides, turned around in shared memory.
 *
 * Idea: a block reads a 32 x 32 tile row by row (coalesced), and after a
 * barrier writes the tile's columns as rows of `out` (coalesced too).  What
 * it adds to naive: every global access of a warp is one contiguous run.
 * What it costs: reading a column of the unpadded tile puts all 32 lanes in
 * one shared-memory bank (a 32-way conflict for 4-byte elements).
 *
 * Follows "Matrix transpose (RTX 3060 Laptop write-up)", matrixTranspos_2;
 * Mark Harris, "An Efficient Matrix Transpose in CUDA C/C++", the
 * coalesced transpose.
 *
 * Run and checked by:
 *   gemmcli transpose x.npy -o y.npy --kernel smem --verify --repeat 20 */
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int tile = 32;
static constexpr int tile_rows = 8;   /* threads per block: tile x tile_rows */
static constexpr int max_grid_y = 65535;

template <typename T>
__global__ void __launch_bounds__(tile * tile_rows)
smem_kernel(const T *__restrict__ in, T *__restrict__ out, int rows, int cols, int tiles_y)
{
    __shared__ T buf[tile][tile];
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
static cudaError_t smem_run(const struct transpose_problem *p, const struct launch_env *env)
{
    int tiles_x = ceil_div(p->cols, tile), tiles_y = ceil_div(p->rows, tile);
    dim3 grid(tiles_x, tiles_y < max_grid_y ? tiles_y : max_grid_y);
    smem_kernel<T><<<grid, dim3(tile, tile_rows), 0, env->stream>>>(
        (const T *)p->in, (T *)p->out, p->rows, p->cols, tiles_y);
    return launch_result();
}

extern "C" cudaError_t transpose_smem_launch(const struct transpose_problem *p,
                                             const struct launch_env *env)
{
    switch (p->elem_size) {
    case 1: return smem_run<unsigned char>(p, env);
    case 2: return smem_run<unsigned short>(p, env);
    case 4: return smem_run<unsigned int>(p, env);
    case 8: return smem_run<unsigned long long>(p, env);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t transpose_smem_attr(struct kernel_attr *out)
{
    return kernel_attr_of(smem_kernel<unsigned int>, tile * tile_rows, 0, out);
}
