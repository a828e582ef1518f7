/* A GEMM on the device more accurate than FP64, the reference against
 * which the error of FP64 products (the DGEMM stages, cuBLAS DGEMM) is
 * measured: an FP64 reference such as kernels/reference/ref_dgemm.cu makes errors of
 * the same size as the products it judges, so DGEMM's own error cannot be
 * measured against DGEMM.  Double operands, a stack with the registry's
 * strides, the same interface as ref_dgemm.  Not a registered kernel.
 *
 * Arithmetic.  Each sum of products is carried as a double-double, an
 * unevaluated sum hi + lo of two doubles with |lo| <= ulp(hi) / 2 (106
 * bits).  Each product a * b is split exactly into p + e (TwoProd: p = a *
 * b rounded, e = fma(a, b, -p)); the pair is added to the accumulator with
 * the accurate double-double sum (two TwoSums, of the high and of the low
 * parts, then two renormalisations), 20 operations.  At the end alpha *
 * acc is taken in double-double (TwoProd of the high part, an fma for the
 * low one), beta * C0 (TwoProd again) added accurately, and the pair
 * rounded once to double.  Every addition of the double-double code is an
 * __dadd_rn / __dsub_rn / __dmul_rn intrinsic and every product split an
 * explicit fma(), so that neither contraction (-fmad) nor any reordering
 * can change it.
 *
 * Error.  With u = 2^-53, the accurate sum has a relative error below
 * 3 u^2 (+ O(u^3)) and TwoProd none, so after k steps the accumulator is
 * within 3 k u^2 sum |a||b| (about k 2^-104.4 sum |a||b|) of the exact
 * dot product; the alpha product and the beta sum add 2 u^2 and 3 u^2
 * relative.  Before the final rounding the error is thus some 2^-91 of
 * sum |a||b| at k = 8192, against 2^-53-sized roundings in any FP64
 * product: the result lies within half an ulp, plus that bound, of the
 * exact value.
 *
 * Small magnitudes.  A product under about 2^-969 would lose the
 * exactness of its low part to underflow (an absolute error of 2^-1075 a
 * product), and the reference would be no better than the FP64 product
 * it judges on subnormal or near-subnormal data.  So the largest |a| and
 * |b| are found first (rdd_max_abs, the magnitudes' bits compared as
 * integers), and where the largest product falls below 2^-500 the
 * operands are multiplied by powers of two (exactly: upwards, A to at
 * most 1 first, then B) so that it lands there; each result is scaled
 * back at the end, rounded once where beta == 0 (after alpha * acc is
 * rounded to double, 53 bits far finer than the subnormal spacing it
 * then rounds to), the pair scaled part by part before beta * C0 is
 * added otherwise.  A stack takes one scale, from all its products.
 *
 * Non-finite values.  Double-double arithmetic turns an infinity into NaN
 * (inf - inf inside TwoSum and TwoProd), so each thread also keeps the
 * plain FP64 sum (one fma per step); where alpha * sum + beta * C0 in FP64
 * is not finite, or the double-double one is not (it can overflow inside
 * TwoSum a little before FP64 does), the element is the FP64 value.  k = 0
 * is an exactly empty sum: alpha is not applied, so an infinite alpha
 * gives beta * C0 rather than NaN.
 *
 * Tiling.  64x64 tiles of C per block of 16x16 threads, each thread 4x4
 * results 16 rows and 16 columns apart (as in ref_dgemm), A and B passing
 * through shared memory in slices of 32 values of k, zeros outside them.
 * Blocks: x is the tile, y + 65535 z the product, so any batch fits one
 * launch.
 *
 * Cost.  23 FP64 instructions per multiply-add (TwoProd 2, accurate sum 20,
 * plain fma 1) against DGEMM's one DFMA; per value of k a thread does 16
 * of them per 8 shared loads, so the FP64 pipe sets the pace and 16
 * independent accumulators per thread keep it fed.  8192^3 is 1.27e13
 * such instructions: 0.76 s at an H200's 132 SMs x 64 FP64 lanes x 1.98
 * GHz if the FP64 pipe never waits (a whole 8192^3 `mul --verify` of
 * float64 data took 3.5 s on an H200, reading and writing included).
 *
 * ptxas (CUDA 13.0, sm_90): 202 registers, no spills, 33 KiB of shared
 * memory, one block of 8 warps per SM; the main loop's SASS holds 736 FP64
 * instructions (640 DADD, 32 DMUL, 64 DFMA) in 759 per two values of k,
 * the same with -fmad=false. */
#include <math.h>
#ifdef __CUDACC__
#include "kernels/common.cuh"
#include "kernels/reference/ref_ddgemm.h"
#define RDD_FN static __host__ __device__ __forceinline__
#else
/* A host C++ compile (no nvcc) gets the double-double arithmetic alone, for
 * testing it; it must not use -ffast-math or FP contraction. */
#define RDD_FN static inline
#endif

/* hi + lo, unevaluated. */
struct dd {
    double hi, lo;
};

/* Correctly rounded operations that the compiler may not contract into an
 * fma or reorder. */
RDD_FN double rdd_add(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

RDD_FN double rdd_sub(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

RDD_FN double rdd_mul(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/* a + b exactly as hi + lo, for any a and b (6 operations). */
RDD_FN struct dd two_sum(double a, double b)
{
    struct dd r;
    r.hi = rdd_add(a, b);
    double bv = rdd_sub(r.hi, a);
    double av = rdd_sub(r.hi, bv);
    r.lo = rdd_add(rdd_sub(a, av), rdd_sub(b, bv));
    return r;
}

/* a + b exactly as hi + lo where a == 0 or |a| >= |b| (3 operations). */
RDD_FN struct dd fast_two_sum(double a, double b)
{
    struct dd r;
    r.hi = rdd_add(a, b);
    r.lo = rdd_sub(b, rdd_sub(r.hi, a));
    return r;
}

/* a * b exactly as hi + lo (barring underflow of lo). */
RDD_FN struct dd two_prod(double a, double b)
{
    struct dd r;
    r.hi = rdd_mul(a, b);
    r.lo = fma(a, b, -r.hi);
    return r;
}

/* x + y, relative error below 3 u^2 (20 operations). */
RDD_FN struct dd dd_add(struct dd x, struct dd y)
{
    struct dd s = two_sum(x.hi, y.hi);
    struct dd t = two_sum(x.lo, y.lo);
    struct dd v = fast_two_sum(s.hi, rdd_add(s.lo, t.hi));
    return fast_two_sum(v.hi, rdd_add(t.lo, v.lo));
}

/* x * y for a double y, relative error below 2 u^2. */
RDD_FN struct dd dd_mul_d(struct dd x, double y)
{
    struct dd p = two_prod(x.hi, y);
    return fast_two_sum(p.hi, fma(x.lo, y, p.lo));
}

/* acc + a * b, the step of a dot product. */
RDD_FN struct dd dd_fma(struct dd acc, double a, double b)
{
    return dd_add(acc, two_prod(a, b));
}

/* The double nearest x (a normalised pair rounds to its high part). */
RDD_FN double dd_round(struct dd x)
{
    return rdd_add(x.hi, x.lo);
}

/* One element of out: alpha * acc + beta * c in double-double, rounded
 * once; the FP64 value alpha * plain + beta * c where either is not
 * finite.  empty: k == 0, the sum is exactly zero and alpha not applied. */
RDD_FN double rdd_result(struct dd acc, double plain, bool empty, double alpha, double beta,
                         double c, int shift)
{
    struct dd r = { 0.0, 0.0 };
    double r64 = 0.0;
    if (!empty) {
        r = dd_mul_d(acc, alpha);
        r64 = ldexp(rdd_mul(alpha, plain), -shift);
    }
    double out;
    if (beta == 0.0) {
        out = ldexp(dd_round(r), -shift);
    } else {
        r.hi = ldexp(r.hi, -shift);
        r.lo = ldexp(r.lo, -shift);
        r = dd_add(r, two_prod(beta, c));
        r64 = fma(beta, c, r64);
        out = dd_round(r);
    }
    return isfinite(r64) && isfinite(out) ? out : r64;
}

#ifdef __CUDACC__

enum {
    RDD_TILE = 64,                    /* rows and columns of C per block */
    RDD_BK = 32,                      /* values of k per slice */
    RDD_DIM = 16,                     /* threads per block along each side */
    RDD_PER = RDD_TILE / RDD_DIM,     /* results per thread along each side */
    RDD_THREADS = RDD_DIM * RDD_DIM,
    RDD_COPIES = RDD_TILE * RDD_BK / RDD_THREADS, /* elements of A (and of B) per thread per slice */
    RDD_GRID_YZ = 65535,
};
static_assert(RDD_TILE * RDD_BK % RDD_THREADS == 0, "copies split evenly over the threads");

/* The powers of two the operands are multiplied by (*sa, *sb >= 0) for
 * the largest magnitudes' bits max_a, max_b: the largest product brought
 * up to about 2^-500 where it is below, A to at most 1 first. */
static __device__ void rdd_shifts(unsigned long long max_a, unsigned long long max_b, int *sa, int *sb)
{
    *sa = *sb = 0;
    if (max_a == 0 || max_b == 0)
        return;
    int ea = ilogb(__longlong_as_double((long long)max_a));
    int eb = ilogb(__longlong_as_double((long long)max_b));
    int s = -500 - (ea + eb);
    if (s <= 0)
        return;
    *sa = s < -ea ? s : (-ea > 0 ? -ea : 0);
    *sb = s - *sa;
}

/* The largest finite |x| over a stack (count products of `per` values,
 * `stride` apart) into *out by atomicMax on its bits: the bits of
 * non-negative doubles order as the numbers do. */
static __global__ void rdd_max_abs(const double *x, long long per, long long stride,
                                   long long count, unsigned long long *out)
{
    unsigned long long m = 0;
    long long total = per * count;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        double v = fabs(x[t / per * stride + t % per]);
        unsigned long long bits = (unsigned long long)__double_as_longlong(v);
        if (isfinite(v) && bits > m)
            m = bits;
    }
    for (int o = 16; o > 0; o /= 2) {
        unsigned long long other = __shfl_xor_sync(0xffffffffu, m, o);
        m = other > m ? other : m;
    }
    if (threadIdx.x % 32 == 0 && m != 0)
        atomicMax(out, m);
}

/* Block (x, y, z) computes tile x of product z * gridDim.y + y. */
static __global__ void __launch_bounds__(RDD_THREADS, 1)
ref_ddgemm_kernel(int m, int n, int k, long long batch, int tiles_n, double alpha,
                  const double *a, const double *b, double beta, const double *c0, double *out,
                  long long sa, long long sb, const unsigned long long *max_ab)
{
    __shared__ double as[RDD_TILE][RDD_BK + 1];
    __shared__ double bs[RDD_BK][RDD_TILE];
    long long z = (long long)blockIdx.z * gridDim.y + blockIdx.y;
    if (z >= batch)
        return;
    a += z * sa;
    b += z * sb;
    size_t c_off = (size_t)z * m * n;
    int tile = (int)blockIdx.x;
    int row0 = tile / tiles_n * RDD_TILE, col0 = tile % tiles_n * RDD_TILE;
    /* What lies inside C from the tile's corner (no overflow near 2^31). */
    int rows_left = m - row0, cols_left = n - col0;
    int tid = threadIdx.x, tx = tid % RDD_DIM, ty = tid / RDD_DIM;
    int up_a, up_b;
    rdd_shifts(max_ab[0], max_ab[1], &up_a, &up_b);

    struct dd acc[RDD_PER][RDD_PER];
    double plain[RDD_PER][RDD_PER];
#pragma unroll
    for (int i = 0; i < RDD_PER; i++)
#pragma unroll
        for (int j = 0; j < RDD_PER; j++) {
            acc[i][j].hi = 0.0;
            acc[i][j].lo = 0.0;
            plain[i][j] = 0.0;
        }

    int slices = k > 0 ? (k - 1) / RDD_BK + 1 : 0;
    for (int s = 0; s < slices; s++) {
        int k0 = s * RDD_BK, k_left = k - k0;
        /* Zeros outside A and B: along k they meet zeros, beyond m or n
         * they reach results never stored. */
        /* A fixed count of copies per thread, unrolled: all the loads of a
         * slice are in flight at once. */
#pragma unroll
        for (int q = 0; q < RDD_COPIES; q++) {
            int e = tid + q * RDD_THREADS;
            int i = e / RDD_BK, j = e % RDD_BK;
            as[i][j] = i < rows_left && j < k_left
                           ? ldexp(a[(size_t)(row0 + i) * k + k0 + j], up_a) : 0.0;
        }
#pragma unroll
        for (int q = 0; q < RDD_COPIES; q++) {
            int e = tid + q * RDD_THREADS;
            int i = e / RDD_TILE, j = e % RDD_TILE;
            bs[i][j] = i < k_left && j < cols_left
                           ? ldexp(b[(size_t)(k0 + i) * n + col0 + j], up_b) : 0.0;
        }
        __syncthreads();
#pragma unroll 2
        for (int kk = 0; kk < RDD_BK; kk++) {
            double ra[RDD_PER], rb[RDD_PER];
#pragma unroll
            for (int i = 0; i < RDD_PER; i++) {
                ra[i] = as[ty + RDD_DIM * i][kk];
                rb[i] = bs[kk][tx + RDD_DIM * i];
            }
#pragma unroll
            for (int i = 0; i < RDD_PER; i++)
#pragma unroll
                for (int j = 0; j < RDD_PER; j++) {
                    acc[i][j] = dd_fma(acc[i][j], ra[i], rb[j]);
                    plain[i][j] = fma(ra[i], rb[j], plain[i][j]);
                }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < RDD_PER; i++) {
        int r = ty + RDD_DIM * i;
        if (r >= rows_left)
            continue;
#pragma unroll
        for (int j = 0; j < RDD_PER; j++) {
            int c = tx + RDD_DIM * j;
            if (c >= cols_left)
                continue;
            size_t at = c_off + (size_t)(row0 + r) * n + col0 + c;
            out[at] = rdd_result(acc[i][j], plain[i][j], k == 0, alpha, beta,
                                 beta != 0.0 ? c0[at] : 0.0, up_a + up_b);
        }
    }
}

extern "C" cudaError_t ref_ddgemm(int m, int n, int k, int batch, long long stride_a,
                                  long long stride_b, double alpha, const double *a,
                                  const double *b, double beta, const double *c0, double *out,
                                  cudaStream_t stream)
{
    if (m <= 0 || n <= 0 || batch <= 0)
        return cudaSuccess;
    long long tiles_m = (m - 1LL) / RDD_TILE + 1, tiles_n = (n - 1LL) / RDD_TILE + 1;
    if (tiles_m * tiles_n > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    /* The largest magnitudes first, into scratch of this stream's own. */
    unsigned long long *max_ab = NULL;
    cudaError_t err = cudaMallocAsync((void **)&max_ab, 2 * sizeof *max_ab, stream);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(max_ab, 0, 2 * sizeof *max_ab, stream);
    if (err != cudaSuccess) {
        if (max_ab)
            cudaFreeAsync(max_ab, stream);
        return err;
    }
    if (k > 0) {
        long long per_a = (long long)m * k, per_b = (long long)k * n;
        long long count_a = stride_a ? batch : 1, count_b = stride_b ? batch : 1;
        long long blocks_a = (per_a * count_a + 255) / 256, blocks_b = (per_b * count_b + 255) / 256;
        rdd_max_abs<<<(unsigned)(blocks_a < 1024 ? blocks_a : 1024), 256, 0, stream>>>(
            a, per_a, stride_a, count_a, max_ab);
        rdd_max_abs<<<(unsigned)(blocks_b < 1024 ? blocks_b : 1024), 256, 0, stream>>>(
            b, per_b, stride_b, count_b, max_ab + 1);
    }
    /* Products in y, in chunks of 65535 along z. */
    int per_z = batch < RDD_GRID_YZ ? batch : RDD_GRID_YZ;
    dim3 grid((unsigned)(tiles_m * tiles_n), (unsigned)per_z, (unsigned)((batch - 1) / per_z + 1));
    ref_ddgemm_kernel<<<grid, RDD_THREADS, 0, stream>>>(m, n, k < 0 ? 0 : k, batch, (int)tiles_n,
                                                       alpha, a, b, beta, c0, out, stride_a,
                                                       stride_b, max_ab);
    err = launch_result();
    cudaError_t freed = cudaFreeAsync(max_ab, stream);
    return err != cudaSuccess ? err : freed;
}

#endif
