/* auto's rates, measured by `gemmcli bench --auto-table` on NVIDIA H200, 2026-11-22
 * (src/plan/model.c turns them into estimates).  For each signature and kernel
 * auto may pick: TFLOP/s with every SM busy, or for the memory-bound
 * ones GB/s moved; and for transpose, the fastest kernel per shape. */
#include "kernels/registry.h"

const char auto_rate_device[] = "NVIDIA H200";
const char auto_rate_date[] = "2026-11-22";
const int auto_rate_sm_count = 132;
const int auto_rate_clock_mhz = 1980;
const double auto_rate_mem_gbps = 4915;
const double auto_rate_copy_gbps = 4162;

const struct auto_rate auto_rates[] = {
    { "f32", "smem", 8.50, 0.0, 1.00, 1.00 },
    { "f32", "cp_async", 47.66, 0.0, 1.00, 1.00 },
    { "f32", "swizzle", 47.90, 0.0, 1.00, 1.00 },
    { "f32", "swizzle_64x128", 47.66, 0.0, 1.00, 1.00 },
    { "f32", "splitk", 47.56, 0.0, 1.00, 1.00 },
    /* (added after that run: swizzle_64x128's tile kernel, its figure) */
    { "f32", "splitk_64x128", 47.66, 0.0, 1.00, 1.00 },
    { "f32", "splitk_32x128", 47.66, 0.0, 1.00, 1.00 },
    { "f32", "splitk_128x64", 47.66, 0.0, 1.00, 1.00 },
    { "f32", "thread_8x16", 48.70, 0.0, 1.00, 1.00 },
    { "f32", "narrow_256x64", 42.65, 0.0, 1.00, 1.00 },
    { "f32", "stream_k", 48.95, 0.0, 1.00, 1.00 },
    { "f32", "edge_peel", 48.93, 0.0, 1.00, 1.00 },
    { "f32", "gemv", 0.00, 4249.5, 1.00, 1.00 },
    { "f32", "small", 0.00, 2466.6, 1.00, 1.00 },
    { "f32", "thin", 0.00, 3644.2, 1.00, 1.00 },
    { "f32", "small_k", 6.41, 3856.0, 1.00, 1.00 },
    /* (tiny: measured by `gemmcli tune --calibrate` on an NVIDIA H100,
     * 2026-11-28, where smem fitted 9.21; its ragged factor there 1.01) */
    { "f32", "tiny", 28.58, 0.0, 1.00, 1.00 },
    { "f16", "f16_simt", 49.56, 0.0, 1.00, 1.00 },
    { "f16", "f16_small", 0.00, 1669.7, 1.00, 1.00 },
    { "f16", "mma_sync", 448.51, 0.0, 1.00, 1.00 },
    { "f16", "wgmma", 492.82, 0.0, 1.00, 1.00 },
    { "f16", "wgmma_tma", 633.38, 0.0, 1.00, 1.00 },
    { "f16", "wgmma_pipeline", 676.29, 0.0, 1.00, 1.00 },
    { "f16", "warp_specialized", 674.61, 0.0, 1.00, 1.00 },
    { "f16", "persistent", 671.51, 0.0, 1.00, 1.00 },
    { "f16", "cluster_multicast", 678.85, 0.0, 1.00, 1.00 },
    { "f16", "f16_gemv", 0.00, 3768.2, 1.00, 1.00 },
    { "f16", "f16_thin", 19.47, 2475.4, 1.00, 1.00 },
    { "f16", "f16_small_k", 8.92, 3438.5, 1.00, 1.00 },
    /* (mma_thin: measured by `gemmcli tune --calibrate` on an NVIDIA H200,
     * 2026-11-28; its multiply-adds never bound it there) */
    { "f16", "mma_thin", 0.00, 3395.0, 1.00, 1.00 },
    { "f64", "f64_naive", 2.12, 0.0, 1.00, 1.00 },
    { "f64", "f64_pipeline", 24.17, 0.0, 1.00, 1.00 },
    { "f64", "f64_small", 0.00, 2729.5, 1.00, 1.00 },
    { "f64", "f64_dmma", 58.24, 0.0, 1.00, 1.00 },
    { "f64", "f64_gemv", 0.00, 4377.5, 1.00, 1.00 },
    { "f64", "f64_thin", 6.19, 3763.0, 1.00, 1.00 },
    { "f64", "f64_small_k", 1.96, 2236.1, 1.00, 1.00 },
    /* (measured by `gemmcli tune --calibrate` on an NVIDIA H200,
     * 2026-11-26, where f64_dmma fitted 58.09) */
    { "f64", "f64_dmma_small", 47.48, 0.0, 1.00, 1.00 },
    /* (f64_dmma_tiny: measured by `gemmcli tune --calibrate` on an NVIDIA
     * H200, 2026-11-26, where f64_dmma_small fitted 48.50) */
    { "f64", "f64_dmma_tiny", 22.38, 0.0, 1.00, 1.00 },
    /* (f64_dmma_128x64, f64_dmma_64x128: measured by `gemmcli tune
     * --calibrate` on an NVIDIA H200, 2026-11-26, where f64_dmma fitted
     * 58.12) */
    { "f64", "f64_dmma_128x64", 52.21, 0.0, 1.00, 1.00 },
    { "f64", "f64_dmma_64x128", 57.18, 0.0, 1.00, 1.00 },
    /* (mma_tiny: measured by `gemmcli tune --calibrate` on an NVIDIA H200,
     * 2026-11-26, where mma_sync fitted 552.6 and 561.5) */
    { "f16", "mma_tiny", 54.78, 0.0, 1.00, 1.00 },
    { "bf16", "mma_tiny", 53.17, 0.0, 1.00, 1.00 },
    { "bf16", "mma_sync", 456.39, 0.0, 1.00, 1.00 },
    /* (mma_sync_128x128, mma_sync_128x64: mma_sync's figures, their warps'
     * tile the same) */
    { "f16", "mma_sync_128x128", 448.51, 0.0, 1.00, 1.00 },
    { "bf16", "mma_sync_128x128", 456.39, 0.0, 1.00, 1.00 },
    { "f16", "mma_sync_128x64", 448.51, 0.0, 1.00, 1.00 },
    { "bf16", "mma_sync_128x64", 456.39, 0.0, 1.00, 1.00 },
    { "bf16", "wgmma", 525.96, 0.0, 1.00, 1.00 },
    { "bf16", "wgmma_tma", 650.51, 0.0, 1.00, 1.00 },
    { "bf16", "wgmma_pipeline", 705.16, 0.0, 1.00, 1.00 },
    { "bf16", "warp_specialized", 711.24, 0.0, 1.00, 1.00 },
    { "bf16", "persistent", 694.90, 0.0, 1.00, 1.00 },
    { "bf16", "cluster_multicast", 706.22, 0.0, 1.00, 1.00 },
    { "tf32", "tf32", 350.69, 0.0, 1.00, 1.00 },
    { "tf32x3", "tf32x3", 131.35, 0.0, 1.00, 1.00 },
    { "i64", "i64_tiled", 1.00, 0.0, 1.00, 1.00 },
    /* (the int8 stages: 8192^3 int8 on an NVIDIA H200, 2026-11-28, TOP/s
     * from `gemmcli mul --kernel K --repeat 10`'s kernel median; every
     * result exact) */
    { "i8", "i8_dp4a", 56.70, 0.0, 1.00, 1.00 },
    { "i8", "i8_imma", 251.80, 0.0, 1.00, 1.00 },
    { "i8", "i8_igmma", 1426.00, 0.0, 1.00, 1.00 },
    /* (i8_limbs: 4096^3 over the operands' whole range on an NVIDIA
     * H200, 2026-11-28, `gemmcli mul --repeat 5`'s kernel median: int16
     * 0.658 ms, int32 1.956 ms; every result exact) */
    { "i16", "i8_limbs", 208.90, 0.0, 1.00, 1.00 },
    { "i32", "i8_limbs", 70.30, 0.0, 1.00, 1.00 },
};
const size_t auto_rate_count = sizeof auto_rates / sizeof auto_rates[0];

const struct auto_choice auto_choices[] = {
    { "transpose", "any", 1, 4096, 4096, 1, "vec", 3342.07 },   /* GB/s */
    { "transpose", "any", 1, 8192, 8192, 1, "vec", 3918.54 },   /* GB/s */
    { "transpose", "any", 1, 16384, 16384, 1, "vec", 4033.71 },   /* GB/s */
    { "transpose", "any", 1, 7001, 3000, 1, "vec", 3020.28 },   /* GB/s */
};
const size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];
