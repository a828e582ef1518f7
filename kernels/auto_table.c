/* auto's choices, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-21.
 * For each benchmarked shape, the fastest kernel auto may pick. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { "mul", 1024, 1024, 1024, "swizzle_64x128" },   /* 33.64 TFLOP/s */
    { "mul", 2048, 2048, 2048, "swizzle" },   /* 44.37 TFLOP/s */
    { "mul", 4096, 4096, 4096, "swizzle_64x128" },   /* 45.29 TFLOP/s */
    { "mul", 8192, 8192, 8192, "swizzle_64x128" },   /* 46.79 TFLOP/s */
    { "mul", 4097, 4097, 4097, "swizzle_64x128" },   /* 39.95 TFLOP/s */
    { "mul", 127, 129, 255, "swizzle_64x128" },   /* 0.35 TFLOP/s */
    { "mul", 1000, 3000, 500, "swizzle_64x128" },   /* 37.06 TFLOP/s */
    { "mul", 256, 256, 65536, "splitk" },   /* 35.41 TFLOP/s */
    { "mul", 65536, 64, 1024, "cp_async" },   /* 22.48 TFLOP/s */
    { "transpose", 4096, 4096, 1, "vec" },   /* 3412.78 GB/s */
    { "transpose", 8192, 8192, 1, "vec" },   /* 3946.19 GB/s */
    { "transpose", 16384, 16384, 1, "vec" },   /* 4046.85 GB/s */
    { "transpose", 7001, 3000, 1, "vec" },   /* 2856.77 GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
