/* auto's choices, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-21.
 * For each benchmarked shape, the fastest kernel auto may pick. */
#include "registry.h"

const struct auto_choice auto_choices[] = {
    { "mul", 1024, 1024, 1024, "swizzle_64x128" },   /* 33.41 TFLOP/s */
    { "mul", 2048, 2048, 2048, "swizzle" },   /* 44.30 TFLOP/s */
    { "mul", 4096, 4096, 4096, "stream_k" },   /* 45.69 TFLOP/s */
    { "mul", 8192, 8192, 8192, "swizzle_64x128" },   /* 46.77 TFLOP/s */
    { "mul", 4097, 4097, 4097, "stream_k" },   /* 40.52 TFLOP/s */
    { "mul", 127, 129, 255, "swizzle_64x128" },   /* 0.35 TFLOP/s */
    { "mul", 1000, 3000, 500, "swizzle_64x128" },   /* 36.98 TFLOP/s */
    { "mul", 256, 256, 65536, "stream_k" },   /* 42.94 TFLOP/s */
    { "mul", 65536, 64, 1024, "narrow_256x64" },   /* 34.56 TFLOP/s */
    { "transpose", 4096, 4096, 1, "vec" },   /* 3352.76 GB/s */
    { "transpose", 8192, 8192, 1, "vec" },   /* 3944.80 GB/s */
    { "transpose", 16384, 16384, 1, "vec" },   /* 4045.26 GB/s */
    { "transpose", 7001, 3000, 1, "vec" },   /* 3087.77 GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
