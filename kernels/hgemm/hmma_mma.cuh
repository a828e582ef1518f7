/* The warp-level tensor-core product of the mma.sync stages
 * (hgemm_01_mma_sync.cu, hgemm_12_mma_tiny.cu): one m16n8k16 tile of
 * half or bfloat16 operands into FP32 accumulators, and the fragment
 * layout its callers fill.  Run through its stages, e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel mma_tiny --verify */
#ifndef GC_KERNELS_HGEMM_HMMA_MMA_CUH
#define GC_KERNELS_HGEMM_HMMA_MMA_CUH

#include <stdint.h>

/* d += a * b for one m16n8k16 tile.  Lane l (g = l / 4, t = l % 4) holds
 * A rows g, g + 8 at k 2t, 2t + 1 and 2t + 8, 2t + 9 (registers: g low k,
 * g + 8 low k, g high k, g + 8 high k); B column g at k 2t, 2t + 1 and
 * 2t + 8, 2t + 9; C rows g, g + 8 at columns 2t, 2t + 1. */
template <bool BF16>
static __device__ __forceinline__ void hmma_mma(float (&d)[4], const uint32_t (&a)[4],
                                                const uint32_t (&b)[2])
{
    if constexpr (BF16)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#endif
