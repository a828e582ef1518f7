/* naive: one thread per element, straight from `in` to `out`.
 *
 * Idea: a warp reads 32 neighbours of one input row (one coalesced access)
 * and writes them down one output column: 32 accesses, each to its own
 * output row, so every 32-byte sector written carries only one element.
 * The baseline of the ladder.
 *
 * Follows "Matrix transpose (RTX 3060 Laptop write-up)", matrixTranspos_1
 * (the section "矩阵转置", "Matrix transpose", of a Chinese write-up of
 * transpose and matmul experiments on an RTX 3060 Laptop GPU); Mark
 * Harris, "An Efficient Matrix Transpose in CUDA C/C++", the naive
 * transpose.
 *
 * Run and checked by:
 *   gemmcli transpose x.npy -o y.npy --kernel naive --verify --repeat 20 */
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int tile = 32;
static constexpr int tile_rows = 8;   /* threads per block: tile x tile_rows */
static constexpr int max_grid_y = 65535;

template <typename T>
__global__ void __launch_bounds__(tile * tile_rows)
naive_kernel(const T *__restrict__ in, T *__restrict__ out, int rows, int cols, int tiles_y)
{
    const int c = blockIdx.x * tile + threadIdx.x;
    /* Tall matrices have more tile rows than grid.y allows: loop over them. */
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        for (int i = 0; i < tile; i += tile_rows) {
            int r = by * tile + threadIdx.y + i;
            if (r < rows && c < cols)
                out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
        }
    }
}

template <typename T>
static cudaError_t naive_run(const struct transpose_problem *p, const struct launch_env *env)
{
    int tiles_x = ceil_div(p->cols, tile), tiles_y = ceil_div(p->rows, tile);
    dim3 grid(tiles_x, tiles_y < max_grid_y ? tiles_y : max_grid_y);
    naive_kernel<T><<<grid, dim3(tile, tile_rows), 0, env->stream>>>(
        (const T *)p->in, (T *)p->out, p->rows, p->cols, tiles_y);
    return launch_result();
}

extern "C" cudaError_t transpose_naive_launch(const struct transpose_problem *p,
                                              const struct launch_env *env)
{
    switch (p->elem_size) {
    case 1: return naive_run<unsigned char>(p, env);
    case 2: return naive_run<unsigned short>(p, env);
    case 4: return naive_run<unsigned int>(p, env);
    case 8: return naive_run<unsigned long long>(p, env);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t transpose_naive_attr(struct kernel_attr *out)
{
    return kernel_attr_of(naive_kernel<unsigned int>, tile * tile_rows, 0, out);
}
