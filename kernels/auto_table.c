/* auto's choices, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-22.
 * For each benchmarked type and shape, the fastest kernel auto may pick. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { "mul", "f32", 1, 1024, 1024, 1024, "stream_k", 32.74 },   /* TFLOP/s */
    { "mul", "f32", 1, 2048, 2048, 2048, "thread_8x16", 45.63 },   /* TFLOP/s */
    { "mul", "f32", 1, 4096, 4096, 4096, "edge_peel", 47.97 },   /* TFLOP/s */
    { "mul", "f32", 1, 8192, 8192, 8192, "edge_peel", 48.46 },   /* TFLOP/s */
    { "mul", "f32", 1, 4097, 4097, 4097, "edge_peel", 43.97 },   /* TFLOP/s */
    { "mul", "f32", 1, 127, 129, 255, "swizzle_64x128", 0.33 },   /* TFLOP/s */
    { "mul", "f32", 1, 1000, 3000, 500, "swizzle_64x128", 36.08 },   /* TFLOP/s */
    { "mul", "f32", 1, 256, 256, 65536, "stream_k", 43.62 },   /* TFLOP/s */
    { "mul", "f32", 1, 65536, 64, 1024, "narrow_256x64", 36.08 },   /* TFLOP/s */
    { "mul", "f32", 1024, 128, 128, 128, "swizzle_64x128", 36.82 },   /* TFLOP/s */
    { "mul", "f32", 16, 1024, 1024, 1024, "thread_8x16", 45.23 },   /* TFLOP/s */
    { "mul", "f16", 1, 1024, 1024, 1024, "wgmma", 116.91 },   /* TFLOP/s */
    { "mul", "f16", 1, 4096, 4096, 4096, "wgmma_pipeline", 650.31 },   /* TFLOP/s */
    { "mul", "f16", 1, 8192, 8192, 8192, "cluster_multicast", 631.77 },   /* TFLOP/s */
    { "mul", "f16", 1, 4097, 4097, 4097, "cluster_multicast", 322.25 },   /* TFLOP/s */
    { "mul", "f16", 1, 1000, 3000, 500, "mma_sync", 128.95 },   /* TFLOP/s */
    { "mul", "f16", 1, 256, 256, 65536, "wgmma_pipeline", 235.06 },   /* TFLOP/s */
    { "mul", "f16", 16, 1024, 1024, 1024, "cluster_multicast", 527.64 },   /* TFLOP/s */
    { "mul", "bf16", 1, 1024, 1024, 1024, "wgmma_pipeline", 112.60 },   /* TFLOP/s */
    { "mul", "bf16", 1, 4096, 4096, 4096, "wgmma_pipeline", 701.05 },   /* TFLOP/s */
    { "mul", "bf16", 1, 8192, 8192, 8192, "warp_specialized", 671.75 },   /* TFLOP/s */
    { "mul", "bf16", 1, 4097, 4097, 4097, "cluster_multicast", 322.45 },   /* TFLOP/s */
    { "mul", "bf16", 1, 1000, 3000, 500, "mma_sync", 131.30 },   /* TFLOP/s */
    { "mul", "bf16", 1, 256, 256, 65536, "wgmma_pipeline", 221.48 },   /* TFLOP/s */
    { "mul", "bf16", 16, 1024, 1024, 1024, "cluster_multicast", 515.11 },   /* TFLOP/s */
    { "mul", "f64", 1, 1024, 1024, 1024, "f64_pipeline", 10.60 },   /* TFLOP/s */
    { "mul", "f64", 1, 4096, 4096, 4096, "f64_pipeline", 22.03 },   /* TFLOP/s */
    { "mul", "f64", 1, 8192, 8192, 8192, "f64_pipeline", 23.24 },   /* TFLOP/s */
    { "mul", "f64", 1, 4097, 4097, 4097, "f64_pipeline", 19.13 },   /* TFLOP/s */
    { "mul", "f64", 1, 1000, 3000, 500, "f64_pipeline", 14.41 },   /* TFLOP/s */
    { "transpose", "any", 1, 4096, 4096, 1, "vec", 3311.73 },   /* GB/s */
    { "transpose", "any", 1, 8192, 8192, 1, "vec", 3903.49 },   /* GB/s */
    { "transpose", "any", 1, 16384, 16384, 1, "vec", 4030.56 },   /* GB/s */
    { "transpose", "any", 1, 7001, 3000, 1, "vec", 3022.88 },   /* GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
