/* auto's rates, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-22
 * (src/model.c turns them into estimates).  For each signature and kernel
 * auto may pick: TFLOP/s with every SM busy, or for the memory-bound
 * ones GB/s moved; and for transpose, the fastest kernel per shape. */
#include "registry.h"

const int auto_rate_sm_count = 132;
const double auto_rate_copy_gbps = 4154;

const struct auto_rate auto_rates[] = {
    { "f32", "smem", 8.56, 0.0 },
    { "f32", "cp_async", 47.73, 0.0 },
    { "f32", "swizzle", 47.97, 0.0 },
    { "f32", "swizzle_64x128", 48.25, 0.0 },
    { "f32", "splitk", 47.94, 0.0 },
    { "f32", "thread_8x16", 48.65, 0.0 },
    { "f32", "narrow_256x64", 42.68, 0.0 },
    { "f32", "stream_k", 48.91, 0.0 },
    { "f32", "edge_peel", 48.92, 0.0 },
    { "f32", "gemv", 0.00, 3789.0 },
    { "f32", "small", 0.00, 2470.4 },
    { "f32", "thin", 0.00, 3627.6 },
    { "f32", "small_k", 6.14, 3867.6 },
    { "f16", "f16_simt", 49.48, 0.0 },
    { "f16", "f16_small", 0.00, 1700.9 },
    { "f16", "mma_sync", 458.26, 0.0 },
    { "f16", "wgmma", 504.42, 0.0 },
    { "f16", "wgmma_tma", 620.68, 0.0 },
    { "f16", "wgmma_pipeline", 673.69, 0.0 },
    { "f16", "warp_specialized", 671.95, 0.0 },
    { "f16", "persistent", 670.49, 0.0 },
    { "f16", "cluster_multicast", 679.85, 0.0 },
    { "f64", "f64_naive", 2.12, 0.0 },
    { "f64", "f64_pipeline", 24.15, 0.0 },
    { "f64", "f64_small", 0.00, 2715.3 },
    { "f64", "f64_dmma", 58.15, 0.0 },
    { "bf16", "mma_sync", 456.39, 0.0 },
    { "bf16", "wgmma", 525.96, 0.0 },
    { "bf16", "wgmma_tma", 650.51, 0.0 },
    { "bf16", "wgmma_pipeline", 705.16, 0.0 },
    { "bf16", "warp_specialized", 711.24, 0.0 },
    { "bf16", "persistent", 694.90, 0.0 },
    { "bf16", "cluster_multicast", 706.22, 0.0 },
    { "tf32", "tf32", 350.69, 0.0 },
    { "tf32x3", "tf32x3", 131.35, 0.0 },
    { "i64", "i64_tiled", 1.00, 0.0 },
};
const size_t auto_rate_count = sizeof auto_rates / sizeof auto_rates[0];

const struct auto_choice auto_choices[] = {
    { "transpose", "any", 1, 4096, 4096, 1, "vec", 3342.07 },   /* GB/s */
    { "transpose", "any", 1, 8192, 8192, 1, "vec", 3918.54 },   /* GB/s */
    { "transpose", "any", 1, 16384, 16384, 1, "vec", 4033.71 },   /* GB/s */
    { "transpose", "any", 1, 7001, 3000, 1, "vec", 3020.28 },   /* GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
