/* copy_smem: a copy through the transpose's shared-memory tiles.
 *
 * Idea: the same 32 x 32 tiles, 32 x 8 threads and barriers as the smem
 * transposes, but each tile goes back to where it came from.  The gap
 * between this and `copy` is the price of the tile structure itself
 * (scalar accesses, two barriers per tile); the gap between this and
 * smem_pad is the price of turning the tile around.  A copy, not a
 * transpose: registered for the bench only.
 *
 * Follows "Matrix transpose (RTX 3060 Laptop write-up)", matrixCopy_2 (the
 * section "矩阵转置", "Matrix transpose", of a Chinese write-up of
 * transpose and matmul experiments on an RTX 3060 Laptop GPU); Mark
 * Harris, "An Efficient Matrix Transpose in CUDA C/C++", copySharedMem.
 *
 * A bandwidth reference that only the bench runs:
 *   gemmcli bench --op transpose --sizes 8192 */
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int tile = 32;
static constexpr int tile_rows = 8;   /* threads per block: tile x tile_rows */
static constexpr int max_grid_y = 65535;

template <typename T>
__global__ void __launch_bounds__(tile * tile_rows)
copy_smem_kernel(const T *__restrict__ in, T *__restrict__ out, int rows, int cols,
                 int tiles_y)
{
    __shared__ T buf[tile][tile];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * tile + tx;
    /* Tall matrices have more tile rows than grid.y allows: loop over them. */
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int r0 = by * tile;
        for (int i = 0; i < tile; i += tile_rows) {
            int r = r0 + ty + i;
            if (r < rows && c < cols)
                buf[ty + i][tx] = in[(size_t)r * cols + c];
        }
        __syncthreads();
        for (int i = 0; i < tile; i += tile_rows) {
            int r = r0 + ty + i;
            if (r < rows && c < cols)
                out[(size_t)r * cols + c] = buf[ty + i][tx];
        }
        __syncthreads();
    }
}

template <typename T>
static cudaError_t copy_smem_run(const struct transpose_problem *p, const struct launch_env *env)
{
    int tiles_x = ceil_div(p->cols, tile), tiles_y = ceil_div(p->rows, tile);
    dim3 grid(tiles_x, tiles_y < max_grid_y ? tiles_y : max_grid_y);
    copy_smem_kernel<T><<<grid, dim3(tile, tile_rows), 0, env->stream>>>(
        (const T *)p->in, (T *)p->out, p->rows, p->cols, tiles_y);
    return launch_result();
}

extern "C" cudaError_t transpose_copy_smem_launch(const struct transpose_problem *p,
                                                  const struct launch_env *env)
{
    switch (p->elem_size) {
    case 1: return copy_smem_run<unsigned char>(p, env);
    case 2: return copy_smem_run<unsigned short>(p, env);
    case 4: return copy_smem_run<unsigned int>(p, env);
    case 8: return copy_smem_run<unsigned long long>(p, env);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t transpose_copy_smem_attr(struct kernel_attr *out)
{
    return kernel_attr_of(copy_smem_kernel<unsigned int>, tile * tile_rows, 0, out);
}
