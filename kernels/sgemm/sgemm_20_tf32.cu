/* tf32: float operands on the tensor cores, one TF32 pass: each operand
 * rounded to TF32 (10 bits of mantissa, FP32's range), products summed in
 * FP32 by the tensor core.  Lossy: relative errors near 3e-4 where FP32
 * gets 1e-6 (--compute tf32 asks for it; auto never takes it).
 *
 * Against the FP32 ladder's top (edge_peel, CUDA cores), this is the
 * 16-bit chapter's persistent stage (hgemm_06_persistent.cu) fed with
 * floats: the same producer warpgroup, 4-slot TMA ring, two consumer
 * warpgroups of 64 x 256 and persistent walk in L2 bands; what changes is
 * the instruction, wgmma m64n256k8 .tf32, which reads both operands
 * K-major, so B goes through a packed transposed copy, and A through a
 * packed copy too, both rounded to TF32 on the way
 * (kernels/sgemm/tf32_split.cu; the layout in kernels/sgemm/sgemm_tf32.cuh).
 * A step is 32 values of k: the same 128-byte rows, 48 KiB a slot, as the
 * 16-bit stages' 64.
 *
 * Accumulation.  The tensor core keeps FP32 sums without rounding to
 * nearest, so over a long K its sum drifts (kernels/gemm_dispatch.c); one
 * chain per element here, as in cuBLAS's TF32 mode, which tf32x3 does not
 * copy (sgemm_21_tf32x3.cu).
 *
 * A single product with fewer tiles than SMs is split along K
 * (kernels/sgemm/sgemm_tf32.cuh).
 *
 * Follows no write-up of its own: gemmcli's own, persistent's kernel on
 * TF32 wgmma (the PTX ISA's wgmma .tf32 and cvt.rna.tf32.f32; TF32 as
 * NVIDIA's A100 whitepaper describes it).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel tf32 --compute tf32 --verify --repeat 20 */
#include "kernels/hgemm/hgemm_hopper.cuh"
#include "kernels/sgemm/sgemm_tf32.cuh"

typedef tc32_cfg<1> TF;

static __global__ void __launch_bounds__(TF::threads, 1)
sgemm_tf32_kernel(const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, const struct tc32_args args)
{
    extern __shared__ __align__(16) unsigned char tf_smem[];
    __shared__ __align__(8) uint64_t tf_bars[2 * TF::stages];
    tc32_body<TF>(&map_a, &map_b, args, tf_smem, tf_bars,
                  [&](uint32_t ring, uint32_t full, uint32_t empty, int cw) {
        const int tid = threadIdx.x % 128, rows0 = 64 * cw;
        struct tc32_ring r = { 0, 0, false };
        float acc[128];
        for (int id = blockIdx.x; id < args.units; id += gridDim.x) {
            int product, tm, tn;
            tc32_unit_of<TF>(args, id, &product, &tm, &tn);
#pragma unroll
            for (int i = 0; i < 128; i++)
                acc[i] = 0.0f;
            int prev = 0;
            for (int t = 0; t < args.k_tiles; t++) {
                hopper_bar_wait(full + 8 * r.slot, r.phase);
                uint32_t sa = tc32_a_tile<TF>(ring, r.slot, 0) + rows0 * HOPPER_ROW_BYTES;
                uint32_t sb = tc32_b_tile<TF>(ring, r.slot, 0);
                hopper_fence_regs(acc);
                hopper_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < TF::bk / 8; kk++)
                    hopper_mma_tf32_256(acc, hopper_desc_k(sa + kk * 32), hopper_desc_k(sb + kk * 32),
                                 1);
                hopper_wgmma_commit();
                hopper_wgmma_wait<1>();
                hopper_fence_regs(acc);
                if (t > 0 && threadIdx.x % 32 == 0)
                    hopper_bar_arrive(empty + 8 * prev);
                prev = r.slot;
                tc32_next<TF>(r);
            }
            hopper_wgmma_wait<0>();
            hopper_fence_regs(acc);
            if (args.k_tiles > 0 && threadIdx.x % 32 == 0)
                hopper_bar_arrive(empty + 8 * prev);
            tc32_store<TF>(acc, tid, args, product, tm, tn, rows0);
        }
    });
}

extern "C" cudaError_t sgemm_tf32_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    return tc32_launch<TF>(sgemm_tf32_kernel, p, env);
}

extern "C" cudaError_t sgemm_tf32_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_tf32_kernel, TF::threads, TF::smem, out);
}

extern "C" int sgemm_tf32_check(const struct gemm_problem *p, char *why, size_t n)
{
    return tc32_check(p, why, n);
}

extern "C" size_t sgemm_tf32_workspace(const struct gemm_problem *p)
{
    return tc32_workspace<TF>(p);
}
