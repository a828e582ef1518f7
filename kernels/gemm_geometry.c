/* gemm_geometries[]: how each kernel auto may pick lays a product on the
 * GPU, for auto's model (src/plan/model.c): the tile of C a block computes,
 * the blocks an SM holds at once, the k a tile spends filling and
 * draining its pipeline, and how the work spreads when the tiles are few.
 * The figures are the stages' own (their cfg structs and launchers); the
 * rates that go with them are measured (kernels/auto_table.c). */
#include <string.h>

#include "kernels/registry.h"

const struct gemm_geometry gemm_geometries[] = {
    /* kernel             tile_m tile_n per_sm k_fill spread          slice_k block_us */
    { "smem",               32,   32,   2,     32,    SPREAD_WAVES,    0,   0 },
    { "cp_async",          128,  128,   2,     64,    SPREAD_WAVES,    0,   0 },
    { "swizzle",           128,  128,   2,     64,    SPREAD_WAVES,    0,   0 },
    { "swizzle_64x128",     64,  128,   2,     64,    SPREAD_WAVES,    0,   0 },
    { "splitk",            128,  128,   2,     64,    SPREAD_SLICES,   128,   0 },
    { "thread_8x16",       128,  128,   2,     64,    SPREAD_WAVES,    0,   0 },
    { "narrow_256x64",     256,   64,   2,     64,    SPREAD_WAVES,    0,   0 },
    { "stream_k",          128,  128,   2,     64,    SPREAD_STREAM_K, 0,   0 },
    { "edge_peel",         128,  128,   2,     64,    SPREAD_STREAM_K, 0,   0 },
    { "gemv",                1,    1,   1,     0,     SPREAD_MEMORY,   0,   0 },
    { "f16_gemv",            1,    1,   1,     0,     SPREAD_MEMORY,   0,   0 },
    { "f64_gemv",            1,    1,   1,     0,     SPREAD_MEMORY,   0,   0 },
    { "thin",                4,    4,   1,     0,     SPREAD_MEMORY,   0, 4.0 },
    { "f16_thin",            4,    4,   1,     0,     SPREAD_MEMORY,   0, 4.0 },
    { "f64_thin",            4,    4,   1,     0,     SPREAD_MEMORY,   0, 4.0 },
    { "small_k",             1,  128,   1,     0,     SPREAD_MEMORY,   0,   0 },
    { "f16_small_k",         1,  128,   1,     0,     SPREAD_MEMORY,   0,   0 },
    { "f64_small_k",         1,   64,   1,     0,     SPREAD_MEMORY,   0,   0 },
    { "small",               4,    4,   4,     0,     SPREAD_MEMORY,   0,   0 },
    { "f16_simt",          128,  128,   2,     64,    SPREAD_WAVES,    0,   0 },
    { "f16_small",           4,    8,   4,     0,     SPREAD_MEMORY,   0,   0 },
    { "mma_sync",          128,  256,   1,     128,   SPREAD_SLICES,   2048,   0 },
    { "wgmma",             128,  128,   1,     128,   SPREAD_SLICES,   2048,   0 },
    { "wgmma_tma",         128,  128,   1,     128,   SPREAD_SLICES,   2048,   0 },
    { "wgmma_pipeline",    128,  256,   1,     256,   SPREAD_SLICES,   2048,   0 },
    { "warp_specialized",  128,  256,   1,     256,   SPREAD_SLICES,   2048,   0 },
    { "persistent",        128,  256,   1,     256,   SPREAD_SLICES,   2048,   0 },
    { "cluster_multicast", 128,  256,   1,     256,   SPREAD_SLICES,   2048,   0 },
    { "tf32",              128,  256,   1,     128,   SPREAD_SLICES,   256,   0 },
    { "tf32x3",            128,  256,   1,     128,   SPREAD_SLICES,   256,   0 },
    { "f64_naive",          32,   32,   1,     0,     SPREAD_WAVES,    0,   0 },
    { "f64_pipeline",      128,  128,   1,     64,    SPREAD_WAVES,    0,   0 },
    { "f64_small",           4,    4,   4,     0,     SPREAD_MEMORY,   0,   0 },
    { "f64_dmma",          128,  128,   1,     80,    SPREAD_SLICES,   256,   0 },
    { "i64_tiled",          64,   64,   4,     32,    SPREAD_WAVES,    0,   0 },
};
const size_t gemm_geometry_count = sizeof gemm_geometries / sizeof gemm_geometries[0];

const struct gemm_geometry *gemm_geometry_find(const char *kernel)
{
    for (size_t i = 0; i < gemm_geometry_count; i++)
        if (strcmp(gemm_geometries[i].kernel, kernel) == 0)
            return &gemm_geometries[i];
    return NULL;
}
