/* auto's choices, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-22.
 * For each benchmarked type and shape, the fastest kernel auto may pick. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { "mul", "f32", 1, 1024, 1024, 1024, "swizzle_64x128", 31.90 },   /* TFLOP/s */
    { "mul", "f32", 1, 2048, 2048, 2048, "thread_8x16", 45.54 },   /* TFLOP/s */
    { "mul", "f32", 1, 4096, 4096, 4096, "stream_k", 48.08 },   /* TFLOP/s */
    { "mul", "f32", 1, 8192, 8192, 8192, "stream_k", 48.44 },   /* TFLOP/s */
    { "mul", "f32", 1, 4097, 4097, 4097, "edge_peel", 44.02 },   /* TFLOP/s */
    { "mul", "f32", 1, 127, 129, 255, "swizzle_64x128", 0.33 },   /* TFLOP/s */
    { "mul", "f32", 1, 1000, 3000, 500, "swizzle_64x128", 36.37 },   /* TFLOP/s */
    { "mul", "f32", 1, 256, 256, 65536, "stream_k", 44.39 },   /* TFLOP/s */
    { "mul", "f32", 1, 65536, 64, 1024, "narrow_256x64", 35.98 },   /* TFLOP/s */
    { "mul", "f32", 1024, 128, 128, 128, "swizzle_64x128", 37.52 },   /* TFLOP/s */
    { "mul", "f32", 16, 1024, 1024, 1024, "thread_8x16", 45.39 },   /* TFLOP/s */
    { "mul", "f16", 1, 1024, 1024, 1024, "f16_simt", 13.46 },   /* TFLOP/s */
    { "mul", "f16", 1, 4096, 4096, 4096, "f16_simt", 47.55 },   /* TFLOP/s */
    { "mul", "f16", 1, 8192, 8192, 8192, "f16_simt", 47.46 },   /* TFLOP/s */
    { "mul", "f16", 1, 4097, 4097, 4097, "f16_simt", 30.68 },   /* TFLOP/s */
    { "mul", "f16", 1, 1000, 3000, 500, "f16_simt", 28.89 },   /* TFLOP/s */
    { "mul", "f64", 1, 1024, 1024, 1024, "f64_pipeline", 10.59 },   /* TFLOP/s */
    { "mul", "f64", 1, 4096, 4096, 4096, "f64_pipeline", 22.11 },   /* TFLOP/s */
    { "mul", "f64", 1, 8192, 8192, 8192, "f64_pipeline", 23.23 },   /* TFLOP/s */
    { "mul", "f64", 1, 4097, 4097, 4097, "f64_pipeline", 19.09 },   /* TFLOP/s */
    { "mul", "f64", 1, 1000, 3000, 500, "f64_pipeline", 14.39 },   /* TFLOP/s */
    { "transpose", "any", 1, 4096, 4096, 1, "vec", 3313.04 },   /* GB/s */
    { "transpose", "any", 1, 8192, 8192, 1, "vec", 3883.17 },   /* GB/s */
    { "transpose", "any", 1, 16384, 16384, 1, "vec", 4019.10 },   /* GB/s */
    { "transpose", "any", 1, 7001, 3000, 1, "vec", 3003.00 },   /* GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
