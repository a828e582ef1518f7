/* auto's choices, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-22.
 * For each benchmarked type and shape, the fastest kernel auto may pick. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { "mul", "f32", 1, 1024, 1024, 1024, "swizzle_64x128", 32.90 },   /* TFLOP/s */
    { "mul", "f32", 1, 2048, 2048, 2048, "thread_8x16", 45.28 },   /* TFLOP/s */
    { "mul", "f32", 1, 4096, 4096, 4096, "stream_k", 47.20 },   /* TFLOP/s */
    { "mul", "f32", 1, 8192, 8192, 8192, "stream_k", 47.92 },   /* TFLOP/s */
    { "mul", "f32", 1, 4097, 4097, 4097, "edge_peel", 43.48 },   /* TFLOP/s */
    { "mul", "f32", 1, 127, 129, 255, "swizzle_64x128", 0.33 },   /* TFLOP/s */
    { "mul", "f32", 1, 1000, 3000, 500, "swizzle_64x128", 36.66 },   /* TFLOP/s */
    { "mul", "f32", 1, 256, 256, 65536, "stream_k", 43.43 },   /* TFLOP/s */
    { "mul", "f32", 1, 65536, 64, 1024, "narrow_256x64", 36.28 },   /* TFLOP/s */
    { "mul", "f32", 1024, 128, 128, 128, "swizzle_64x128", 37.41 },   /* TFLOP/s */
    { "mul", "f32", 16, 1024, 1024, 1024, "thread_8x16", 45.43 },   /* TFLOP/s */
    { "mul", "f16", 1, 1024, 1024, 1024, "wgmma", 116.00 },   /* TFLOP/s */
    { "mul", "f16", 1, 4096, 4096, 4096, "wgmma_pipeline", 687.86 },   /* TFLOP/s */
    { "mul", "f16", 1, 8192, 8192, 8192, "cluster_multicast", 645.99 },   /* TFLOP/s */
    { "mul", "f16", 1, 4097, 4097, 4097, "cluster_multicast", 323.25 },   /* TFLOP/s */
    { "mul", "f16", 1, 1000, 3000, 500, "cluster_multicast", 132.42 },   /* TFLOP/s */
    { "mul", "f16", 1, 256, 256, 65536, "wgmma_pipeline", 232.41 },   /* TFLOP/s */
    { "mul", "f16", 16, 1024, 1024, 1024, "cluster_multicast", 521.23 },   /* TFLOP/s */
    { "mul", "bf16", 1, 1024, 1024, 1024, "wgmma", 113.65 },   /* TFLOP/s */
    { "mul", "bf16", 1, 4096, 4096, 4096, "wgmma_pipeline", 681.42 },   /* TFLOP/s */
    { "mul", "bf16", 1, 8192, 8192, 8192, "warp_specialized", 668.79 },   /* TFLOP/s */
    { "mul", "bf16", 1, 4097, 4097, 4097, "cluster_multicast", 323.92 },   /* TFLOP/s */
    { "mul", "bf16", 1, 1000, 3000, 500, "mma_sync", 131.95 },   /* TFLOP/s */
    { "mul", "bf16", 1, 256, 256, 65536, "wgmma_pipeline", 229.82 },   /* TFLOP/s */
    { "mul", "bf16", 16, 1024, 1024, 1024, "cluster_multicast", 530.90 },   /* TFLOP/s */
    { "mul", "tf32", 1, 1024, 1024, 1024, "tf32", 47.23 },   /* TFLOP/s */
    { "mul", "tf32", 1, 4096, 4096, 4096, "tf32", 308.80 },   /* TFLOP/s */
    { "mul", "tf32", 1, 8192, 8192, 8192, "tf32", 334.83 },   /* TFLOP/s */
    { "mul", "tf32", 1, 4097, 4097, 4097, "tf32", 171.17 },   /* TFLOP/s */
    { "mul", "tf32", 1, 1000, 3000, 500, "tf32", 60.78 },   /* TFLOP/s */
    { "mul", "tf32", 1, 256, 256, 65536, "tf32", 54.10 },   /* TFLOP/s */
    { "mul", "tf32", 16, 1024, 1024, 1024, "tf32", 158.57 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 1024, 1024, 1024, "tf32x3", 36.22 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 4096, 4096, 4096, "tf32x3", 127.41 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 8192, 8192, 8192, "tf32x3", 124.40 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 4097, 4097, 4097, "tf32x3", 91.41 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 1000, 3000, 500, "tf32x3", 42.50 },   /* TFLOP/s */
    { "mul", "tf32x3", 1, 256, 256, 65536, "tf32x3", 38.22 },   /* TFLOP/s */
    { "mul", "tf32x3", 16, 1024, 1024, 1024, "tf32x3", 87.23 },   /* TFLOP/s */
    { "mul", "f64", 1, 1024, 1024, 1024, "f64_dmma", 24.72 },   /* TFLOP/s */
    { "mul", "f64", 1, 4096, 4096, 4096, "f64_dmma", 57.26 },   /* TFLOP/s */
    { "mul", "f64", 1, 8192, 8192, 8192, "f64_dmma", 56.04 },   /* TFLOP/s */
    { "mul", "f64", 1, 4097, 4097, 4097, "f64_dmma", 41.37 },   /* TFLOP/s */
    { "mul", "f64", 1, 1000, 3000, 500, "f64_dmma", 30.13 },   /* TFLOP/s */
    { "transpose", "any", 1, 4096, 4096, 1, "vec", 3342.07 },   /* GB/s */
    { "transpose", "any", 1, 8192, 8192, 1, "vec", 3918.54 },   /* GB/s */
    { "transpose", "any", 1, 16384, 16384, 1, "vec", 4033.71 },   /* GB/s */
    { "transpose", "any", 1, 7001, 3000, 1, "vec", 3020.28 },   /* GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
