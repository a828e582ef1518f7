/* tf32x3: float operands on the tensor cores at FP32-class accuracy: each
 * operand split into a TF32 high part and a TF32 low part, the product
 * taken as a_hi b_hi + a_hi b_lo + a_lo b_hi (3xTF32), and the tensor
 * core's sums moved into FP32 registers every 32 values of k.
 *
 * Against tf32 (sgemm_20_tf32.cu), the copies hold two planes, high and
 * low (kernels/sgemm/tf32_split.cu), and a slot of the ring holds both
 * planes of A's and B's tiles: 96 KiB, so the ring has 2 slots.  Three
 * wgmma per step of 8 instead of one: three times the tensor work for the
 * same bytes.
 *
 * Accumulation.  The split alone does not give FP32's accuracy: the tensor
 * core adds into its FP32 accumulator without rounding to nearest (the low
 * bits of the smaller addend are cut), and over a chain of K products that
 * drift grows with K (kernels/gemm_dispatch.c measures it in the 16-bit
 * stages).  So each warpgroup accumulates a slot's 32 values of k into a
 * fresh accumulator (scale_d = 0 on the first wgmma) and adds it, with FP32
 * adds that round to nearest, into the sums it keeps in registers: the
 * tensor core's chains are 12 wgmma long whatever K is.  The fresh
 * accumulator of a 64 x 256 half-tile would need 128 more registers than a
 * thread has, so it covers half the columns at a time (m64n128k8): 64
 * registers for it, 128 for the sums.
 *
 * A single product with fewer tiles than SMs is split along K
 * (kernels/sgemm/sgemm_tf32.cuh).
 *
 * Follows Ootomo and Yokota, "Recovering single precision accuracy from
 * Tensor Cores while surpassing the FP32 theoretical peak performance"
 * (2022): the split into high and low parts, lo * lo left out, and the
 * sums kept outside the tensor core's accumulator; CUTLASS's 3xTF32
 * example; the PTX ISA's wgmma .tf32.
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel tf32x3 --compute tf32x3 --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/sgemm/sgemm_tf32.cuh"

typedef tc32_cfg<2> T3;

static __global__ void __launch_bounds__(T3::threads, 1)
sgemm_tf32x3_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, const struct tc32_args args)
{
    extern __shared__ __align__(16) unsigned char t3_smem[];
    __shared__ __align__(8) uint64_t t3_bars[2 * T3::stages];
    tc32_body<T3>(&map_a, &map_b, args, t3_smem, t3_bars,
                  [&](uint32_t ring, uint32_t full, uint32_t empty, int cw) {
        const int tid = threadIdx.x % 128, rows0 = 64 * cw;
        struct tc32_ring r = { 0, 0, false };
        float acc[128], part[64];
        for (int id = blockIdx.x; id < args.units; id += gridDim.x) {
            int product, tm, tn;
            tc32_unit_of<T3>(args, id, &product, &tm, &tn);
#pragma unroll
            for (int i = 0; i < 128; i++)
                acc[i] = 0.0f;
            for (int t = 0; t < args.k_tiles; t++) {
                hopper_bar_wait(full + 8 * r.slot, r.phase);
                uint32_t a_hi = tc32_a_tile<T3>(ring, r.slot, 0) + rows0 * HOPPER_ROW_BYTES;
                uint32_t a_lo = tc32_a_tile<T3>(ring, r.slot, 1) + rows0 * HOPPER_ROW_BYTES;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    uint32_t b_hi = tc32_b_tile<T3>(ring, r.slot, 0) + h * 128 * HOPPER_ROW_BYTES;
                    uint32_t b_lo = tc32_b_tile<T3>(ring, r.slot, 1) + h * 128 * HOPPER_ROW_BYTES;
                    hopper_fence_regs(part);
                    hopper_wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < T3::bk / 8; kk++) {
                        hopper_mma_tf32_128(part, hopper_desc_k(a_lo + kk * 32),
                                     hopper_desc_k(b_hi + kk * 32), kk != 0);
                        hopper_mma_tf32_128(part, hopper_desc_k(a_hi + kk * 32),
                                     hopper_desc_k(b_lo + kk * 32), 1);
                        hopper_mma_tf32_128(part, hopper_desc_k(a_hi + kk * 32),
                                     hopper_desc_k(b_hi + kk * 32), 1);
                    }
                    hopper_wgmma_commit();
                    hopper_wgmma_wait<0>();
                    hopper_fence_regs(part);
#pragma unroll
                    for (int i = 0; i < 64; i++)
                        acc[64 * h + i] += part[i];
                }
                if (threadIdx.x % 32 == 0)
                    hopper_bar_arrive(empty + 8 * r.slot);
                tc32_next<T3>(r);
            }
            tc32_store<T3>(acc, tid, args, product, tm, tn, rows0);
        }
    });
}

extern "C" cudaError_t sgemm_tf32x3_launch(const struct sgemm_problem *p,
                                           const struct launch_env *env)
{
    return tc32_launch<T3>(sgemm_tf32x3_kernel, p, env);
}

extern "C" cudaError_t sgemm_tf32x3_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_tf32x3_kernel, T3::threads, T3::smem, out);
}

extern "C" int sgemm_tf32x3_check(const struct gemm_problem *p, char *why, size_t n)
{
    return tc32_check(p, why, n);
}

extern "C" size_t sgemm_tf32x3_workspace(const struct gemm_problem *p)
{
    return tc32_workspace<T3>(p);
}
