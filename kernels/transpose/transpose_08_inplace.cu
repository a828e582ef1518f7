/* inplace: square transpose in place, for a matrix too large to hold twice.
 *
 * Idea: tiles (i, j) and (j, i) swap places transposed, so one block takes
 * the pair: it reads both 32 x 32 tiles into shared memory (smem_pad's
 * padded layout), waits at a barrier, and writes each, turned around,
 * where the other was.  A diagonal tile is turned around where it is.  No
 * two blocks touch the same tile, so there is no ordering between blocks
 * to worry about.  Each element is still read once and written once, so it
 * costs what smem_pad costs, with no second buffer.  Blocks below the
 * diagonal of the grid have no pair of their own and return at once.  Not
 * a table kernel (it takes one buffer, not two); the program calls
 * transpose_inplace_square_launch when `in` and `out` cannot both fit.
 *
 * Follows no published write-up: gemmcli's own.
 *
 * Run and checked by, on a square x.npy larger than half the device's free
 * memory:
 *   gemmcli transpose x.npy -o y.npy --verify --repeat 20 */
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int tile = 32;
static constexpr int tile_rows = 8;   /* threads per block: tile x tile_rows */
static constexpr int max_grid_y = 65535;

template <typename T>
__global__ void __launch_bounds__(tile * tile_rows)
inplace_kernel(T *a, int n, int tiles)
{
    __shared__ T upper[tile][tile + 1], lower[tile][tile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int bi = blockIdx.y; bi < tiles; bi += gridDim.y) {
        for (int bj = blockIdx.x; bj < tiles; bj += gridDim.x) {
            if (bj < bi)
                continue;   /* (bi, bj) is handled as the partner of (bj, bi) */
            const int r0 = bi * tile, c0 = bj * tile;
            const bool pair = bj != bi;
            for (int i = 0; i < tile; i += tile_rows) {
                int r = r0 + ty + i, c = c0 + tx;
                if (r < n && c < n)
                    upper[ty + i][tx] = a[(size_t)r * n + c];
                r = c0 + ty + i;
                c = r0 + tx;
                if (pair && r < n && c < n)
                    lower[ty + i][tx] = a[(size_t)r * n + c];
            }
            __syncthreads();
            for (int i = 0; i < tile; i += tile_rows) {
                int r = c0 + ty + i, c = r0 + tx;
                if (r < n && c < n)
                    a[(size_t)r * n + c] = upper[tx][ty + i];
                r = r0 + ty + i;
                c = c0 + tx;
                if (pair && r < n && c < n)
                    a[(size_t)r * n + c] = lower[tx][ty + i];
            }
            __syncthreads();
        }
    }
}

template <typename T>
static cudaError_t inplace_run(void *data, int n, const struct launch_env *env)
{
    int tiles = ceil_div(n, tile);
    dim3 grid(tiles, tiles < max_grid_y ? tiles : max_grid_y);
    inplace_kernel<T><<<grid, dim3(tile, tile_rows), 0, env->stream>>>((T *)data, n, tiles);
    return launch_result();
}

extern "C" cudaError_t transpose_inplace_square_launch(void *data, int n, size_t elem_size,
                                                       const struct launch_env *env)
{
    if (n < 1)
        return cudaErrorInvalidValue;
    switch (elem_size) {
    case 1: return inplace_run<unsigned char>(data, n, env);
    case 2: return inplace_run<unsigned short>(data, n, env);
    case 4: return inplace_run<unsigned int>(data, n, env);
    case 8: return inplace_run<unsigned long long>(data, n, env);
    }
    return cudaErrorInvalidValue;
}
