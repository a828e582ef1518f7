/* diagonal: smem_pad with the blocks walked along diagonals.
 *
 * Idea: on GPUs whose memory is split into a few partitions by address, the
 * blocks running at one time in row-major order all write output columns
 * that fall into the same partition ("partition camping").  Renumbering
 * blocks so that those running together take tiles along a diagonal spreads
 * their writes over all partitions.  Block (x, y) takes tile column (x + y)
 * mod tiles_x: the same tiles, visited in another order; the kernel body is
 * smem_pad's.  The write-up saw no gain on its GPU and suspected that newer
 * GPUs hash addresses over the partitions; on Hopper the diagonal order
 * only scatters the blocks in flight over more of the matrix, and it is a
 * little slower than smem_pad (the README's table).
 *
 * Follows "Matrix transpose (RTX 3060 Laptop write-up)", matrixTranspos_4;
 * Greg Ruetsch and Paulius Micikevicius, "Optimizing Matrix Transpose in
 * CUDA" (NVIDIA), diagonal block reordering.
 *
 * Run and checked by:
 *   gemmcli transpose x.npy -o y.npy --kernel diagonal --verify --repeat 20 */
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int tile = 32;
static constexpr int tile_rows = 8;   /* threads per block: tile x tile_rows */
static constexpr int max_grid_y = 65535;

template <typename T>
__global__ void __launch_bounds__(tile * tile_rows)
diagonal_kernel(const T *__restrict__ in, T *__restrict__ out, int rows, int cols,
                int tiles_y)
{
    __shared__ T buf[tile][tile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    /* Tall matrices have more tile rows than grid.y allows: loop over them. */
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int c0 = (int)(((long long)blockIdx.x + by) % gridDim.x) * tile;
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
static cudaError_t diagonal_run(const struct transpose_problem *p, const struct launch_env *env)
{
    int tiles_x = ceil_div(p->cols, tile), tiles_y = ceil_div(p->rows, tile);
    dim3 grid(tiles_x, tiles_y < max_grid_y ? tiles_y : max_grid_y);
    diagonal_kernel<T><<<grid, dim3(tile, tile_rows), 0, env->stream>>>(
        (const T *)p->in, (T *)p->out, p->rows, p->cols, tiles_y);
    return launch_result();
}

extern "C" cudaError_t transpose_diagonal_launch(const struct transpose_problem *p,
                                                 const struct launch_env *env)
{
    switch (p->elem_size) {
    case 1: return diagonal_run<unsigned char>(p, env);
    case 2: return diagonal_run<unsigned short>(p, env);
    case 4: return diagonal_run<unsigned int>(p, env);
    case 8: return diagonal_run<unsigned long long>(p, env);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t transpose_diagonal_attr(struct kernel_attr *out)
{
    return kernel_attr_of(diagonal_kernel<unsigned int>, tile * tile_rows, 0, out);
}
