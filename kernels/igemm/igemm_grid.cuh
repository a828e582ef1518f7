/* The integer stages' grid: x is the tile of C (tiles_m x tiles_n of
 * them, row by row), y + 65535 z the product of the stack, so any batch
 * fits.  The kernels find their product as z * gridDim.y + y and return
 * past the stack's end.
 *
 * Run and checked by (a stack of int8 products, a.npy and b.npy int8):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel i8_imma --verify --repeat 20 */
#ifndef GC_IGEMM_GRID_CUH
#define GC_IGEMM_GRID_CUH

enum { IGEMM_GRID_YZ = 65535 };

/* The grid for m x n in tiles of tile_m x tile_n, `batch` products;
 * *tiles_n: the tiles across.  cudaErrorInvalidConfiguration where the
 * tiles of one product pass 2^31 - 1. */
static inline cudaError_t igemm_grid(int m, int n, int tile_m, int tile_n, int batch, dim3 *grid,
                                     int *tiles_n)
{
    long long tm = (m - 1LL) / tile_m + 1, tn = (n - 1LL) / tile_n + 1;
    long long b = batch > 1 ? batch : 1;
    if (tm * tn > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    long long per_z = b < IGEMM_GRID_YZ ? b : (long long)IGEMM_GRID_YZ;
    *grid = dim3((unsigned)(tm * tn), (unsigned)per_z, (unsigned)((b - 1) / per_z + 1));
    *tiles_n = (int)tn;
    return cudaSuccess;
}

#endif
