/* The kernel registry: every mul and transpose kernel gemmcli can run, as
 * two tables (kernels/registry.c).  `gemmcli kernels`, --kernel, auto, the
 * bench loop and the GPU tests all iterate these tables; adding a stage is
 * one new file under kernels/ and one table row.
 *
 * Launchers are extern "C" functions in the .cu files.  All matrices are
 * row-major and densely packed on the device. */
#ifndef GC_REGISTRY_H
#define GC_REGISTRY_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* C (m x n) = alpha * A (m x k) * B (k x n) + beta * C.  When beta == 0, C
 * is not read (it may hold garbage or NaN). */
struct sgemm_problem {
    int m, n, k;
    float alpha, beta;
    const float *a, *b;
    float *c;
};

/* out (cols x rows) = in (rows x cols) transposed; elements of elem_size
 * bytes (2, 4 or 8), moved bit for bit. */
struct transpose_problem {
    int rows, cols;
    size_t elem_size;
    const void *in;
    void *out;
};

/* What a launcher may use besides its problem. */
struct launch_env {
    cudaStream_t stream;
    cublasHandle_t cublas;    /* for the cuBLAS reference kernels */
    int sm_count;
};

/* Resources of a kernel's main __global__ function on this device. */
struct kernel_attr {
    int regs;
    size_t smem_static, smem_dynamic, local_bytes;
    int threads;              /* per block */
    int blocks_per_sm;        /* occupancy */
};

typedef cudaError_t (*sgemm_launch_fn)(const struct sgemm_problem *p,
                                       const struct launch_env *env);
typedef cudaError_t (*transpose_launch_fn)(const struct transpose_problem *p,
                                           const struct launch_env *env);
typedef cudaError_t (*kernel_attr_fn)(struct kernel_attr *out);
typedef void (*sgemm_host_fn)(const struct sgemm_problem *p, int threads);
typedef void (*transpose_host_fn)(const struct transpose_problem *p);

enum kernel_flags {
    KERNEL_HOST = 1 << 0,      /* runs on the CPU; needs no device */
    KERNEL_REFERENCE = 1 << 1, /* a library's kernel (cuBLAS): never auto */
    KERNEL_BENCH_ONLY = 1 << 2,/* a bandwidth reference, not a transpose */
    KERNEL_NO_AUTO = 1 << 3,   /* a teaching stage auto never picks */
};

struct gemm_kernel {
    const char *name;
    const char *idea;          /* one line */
    const char *source;        /* which source document describes it */
    const char *file;          /* kernels/... */
    unsigned flags;
    sgemm_launch_fn launch;    /* device kernels */
    sgemm_host_fn host;        /* KERNEL_HOST kernels */
    kernel_attr_fn attr;       /* NULL when not applicable */
};

struct transpose_kernel {
    const char *name;
    const char *idea;
    const char *source;
    const char *file;
    unsigned flags;
    unsigned elem_sizes;       /* bit mask: 1<<2 | 1<<4 | 1<<8 */
    transpose_launch_fn launch;
    transpose_host_fn host;
    kernel_attr_fn attr;
};

extern const struct gemm_kernel gemm_kernels[];
extern const size_t gemm_kernel_count;
extern const struct transpose_kernel transpose_kernels[];
extern const size_t transpose_kernel_count;

/* auto's table (kernels/auto_table.c), written by `gemmcli bench
 * --auto-table`: for each benchmarked shape, the fastest own kernel.  auto
 * takes the row nearest the problem's shape. */
struct auto_choice {
    const char *op;            /* "mul" or "transpose" */
    unsigned long m, n, k;     /* transpose: rows, cols, 1 */
    const char *kernel;
};
extern const struct auto_choice auto_choices[];
extern const size_t auto_choice_count;

const struct gemm_kernel *gemm_kernel_find(const char *name);
const struct transpose_kernel *transpose_kernel_find(const char *name);

/* Readies the current device for the kernels: a workspace that a launcher
 * takes from the stream-ordered pool (cudaMallocAsync) and gives back stays
 * mapped there for the next launch, instead of being unmapped at every
 * synchronisation and mapped again, which would land inside its timing. */
cudaError_t kernels_prepare_device(void);

#ifdef __cplusplus
}
#endif

#endif
