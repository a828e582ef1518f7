/* auto's choices, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-21.
 * For each benchmarked shape, the fastest kernel auto may pick. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { "mul", 1024, 1024, 1024, "stream_k" },   /* 33.94 TFLOP/s */
    { "mul", 2048, 2048, 2048, "thread_8x16" },   /* 45.89 TFLOP/s */
    { "mul", 4096, 4096, 4096, "edge_peel" },   /* 48.02 TFLOP/s */
    { "mul", 8192, 8192, 8192, "edge_peel" },   /* 48.50 TFLOP/s */
    { "mul", 4097, 4097, 4097, "edge_peel" },   /* 44.12 TFLOP/s */
    { "mul", 127, 129, 255, "swizzle_64x128" },   /* 0.34 TFLOP/s */
    { "mul", 1000, 3000, 500, "swizzle_64x128" },   /* 36.82 TFLOP/s */
    { "mul", 256, 256, 65536, "stream_k" },   /* 44.74 TFLOP/s */
    { "mul", 65536, 64, 1024, "narrow_256x64" },   /* 36.23 TFLOP/s */
    { "transpose", 4096, 4096, 1, "vec" },   /* 3412.78 GB/s */
    { "transpose", 8192, 8192, 1, "vec" },   /* 3944.33 GB/s */
    { "transpose", 16384, 16384, 1, "vec" },   /* 4041.73 GB/s */
    { "transpose", 7001, 3000, 1, "vec" },   /* 3078.72 GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
