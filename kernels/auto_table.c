/* auto's choices, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-22.
 * For each benchmarked type and shape, the fastest kernel auto may pick. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { "mul", "f32", 1, 1024, 1024, 1024, "swizzle_64x128", 32.71 },   /* TFLOP/s */
    { "mul", "f32", 1, 2048, 2048, 2048, "swizzle", 44.14 },   /* TFLOP/s */
    { "mul", "f32", 1, 4096, 4096, 4096, "swizzle_64x128", 45.25 },   /* TFLOP/s */
    { "mul", "f32", 1, 8192, 8192, 8192, "swizzle", 46.15 },   /* TFLOP/s */
    { "mul", "f32", 1, 4097, 4097, 4097, "swizzle_64x128", 39.90 },   /* TFLOP/s */
    { "mul", "f32", 1, 127, 129, 255, "swizzle_64x128", 0.31 },   /* TFLOP/s */
    { "mul", "f32", 1, 1000, 3000, 500, "swizzle_64x128", 36.38 },   /* TFLOP/s */
    { "mul", "f32", 1, 256, 256, 65536, "splitk", 41.18 },   /* TFLOP/s */
    { "mul", "f32", 1, 65536, 64, 1024, "narrow_256x64", 34.48 },   /* TFLOP/s */
    { "mul", "f32", 1024, 128, 128, 128, "swizzle_64x128", 37.48 },   /* TFLOP/s */
    { "mul", "f32", 16, 1024, 1024, 1024, "cp_async", 44.34 },   /* TFLOP/s */
    { "mul", "f16", 1, 1024, 1024, 1024, "wgmma", 119.62 },   /* TFLOP/s */
    { "mul", "f16", 1, 4096, 4096, 4096, "wgmma_pipeline", 638.13 },   /* TFLOP/s */
    { "mul", "f16", 1, 8192, 8192, 8192, "cluster_multicast", 624.84 },   /* TFLOP/s */
    { "mul", "f16", 1, 4097, 4097, 4097, "cluster_multicast", 323.93 },   /* TFLOP/s */
    { "mul", "f16", 1, 1000, 3000, 500, "mma_sync", 132.88 },   /* TFLOP/s */
    { "mul", "f16", 1, 256, 256, 65536, "wgmma_pipeline", 233.73 },   /* TFLOP/s */
    { "mul", "f16", 16, 1024, 1024, 1024, "cluster_multicast", 524.03 },   /* TFLOP/s */
    { "mul", "bf16", 1, 1024, 1024, 1024, "wgmma", 120.05 },   /* TFLOP/s */
    { "mul", "bf16", 1, 4096, 4096, 4096, "wgmma_pipeline", 708.16 },   /* TFLOP/s */
    { "mul", "bf16", 1, 8192, 8192, 8192, "wgmma_pipeline", 643.54 },   /* TFLOP/s */
    { "mul", "bf16", 1, 4097, 4097, 4097, "cluster_multicast", 324.32 },   /* TFLOP/s */
    { "mul", "bf16", 1, 1000, 3000, 500, "mma_sync", 131.76 },   /* TFLOP/s */
    { "mul", "bf16", 1, 256, 256, 65536, "warp_specialized", 230.61 },   /* TFLOP/s */
    { "mul", "bf16", 16, 1024, 1024, 1024, "cluster_multicast", 534.33 },   /* TFLOP/s */
    { "mul", "tf32", 1, 1024, 1024, 1024, "tf32", 42.27 },   /* TFLOP/s */
    { "mul", "tf32", 1, 4096, 4096, 4096, "tf32", 301.99 },   /* TFLOP/s */
    { "mul", "tf32", 1, 8192, 8192, 8192, "tf32", 326.38 },   /* TFLOP/s */
    { "mul", "tf32", 1, 4097, 4097, 4097, "tf32", 170.87 },   /* TFLOP/s */
    { "mul", "tf32", 1, 1000, 3000, 500, "tf32", 60.64 },   /* TFLOP/s */
    { "mul", "tf32", 1, 256, 256, 65536, "tf32", 6.68 },   /* TFLOP/s */
    { "mul", "tf32", 16, 1024, 1024, 1024, "tf32", 156.59 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 1024, 1024, 1024, "tf32x3", 23.40 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 4096, 4096, 4096, "tf32x3", 119.71 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 8192, 8192, 8192, "tf32x3", 122.06 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 4097, 4097, 4097, "tf32x3", 89.61 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 1000, 3000, 500, "tf32x3", 41.14 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 256, 256, 65536, "tf32x3", 2.33 },   /* TFLOP/s */
    { "mul", "tf32x3", 16, 1024, 1024, 1024, "tf32x3", 86.90 },   /* TFLOP/s */
    { "mul", "f64", 1, 1024, 1024, 1024, "f64_dmma", 24.66 },   /* TFLOP/s */
    { "mul", "f64", 1, 4096, 4096, 4096, "f64_dmma", 57.30 },   /* TFLOP/s */
    { "mul", "f64", 1, 8192, 8192, 8192, "f64_dmma", 54.98 },   /* TFLOP/s */
    { "mul", "f64", 1, 4097, 4097, 4097, "f64_dmma", 41.19 },   /* TFLOP/s */
    { "mul", "f64", 1, 1000, 3000, 500, "f64_dmma", 29.85 },   /* TFLOP/s */
    { "transpose", "any", 1, 4096, 4096, 1, "vec", 3262.78 },   /* GB/s */
    { "transpose", "any", 1, 8192, 8192, 1, "vec", 3884.51 },   /* GB/s */
    { "transpose", "any", 1, 16384, 16384, 1, "vec", 4035.29 },   /* GB/s */
    { "transpose", "any", 1, 7001, 3000, 1, "vec", 3015.94 },   /* GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
