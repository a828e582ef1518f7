/* The kernel registry: every mul and transpose kernel gemmcli can run, as
 * two tables (kernels/gemm_table.c, kernels/transpose_table.c).
 * `gemmcli kernels`, --kernel, auto, the bench and the GPU tests all walk
 * these tables and ask each row the same question, can_implement; adding
 * a stage is one new file under kernels/ and one row in a table.
 *
 * A product is described once, as a gemm_problem: the operand, arithmetic
 * and result types (its signature), the shape of one product, the leading
 * dimensions, a stack of `batch` products with per-operand strides (0: the
 * same matrix in every product, as NumPy broadcasts), alpha and beta.  A
 * kernel row says which signatures it implements, on which devices, and
 * answers can_implement and workspace_bytes, as CUTLASS's library
 * Operation does. */
#ifndef GC_REGISTRY_H
#define GC_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#include "core/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a launcher may use besides its problem. */
struct launch_env {
    cudaStream_t stream;
    cublasHandle_t cublas;    /* for the cuBLAS reference kernels */
    int sm_count;
    int cc;                   /* compute capability, 90 for 9.0; 0 for the host */
};

/* Resources of a kernel's main __global__ function on this device. */
struct kernel_attr {
    int regs;
    size_t smem_static, smem_dynamic, local_bytes;
    int threads;              /* per block */
    int blocks_per_sm;        /* occupancy */
};

typedef cudaError_t (*kernel_attr_fn)(struct kernel_attr *out);

enum kernel_flags {
    KERNEL_HOST = 1 << 0,      /* runs on the CPU; needs no device */
    KERNEL_REFERENCE = 1 << 1, /* a library's kernel (cuBLAS): never auto */
    KERNEL_BENCH_ONLY = 1 << 2,/* a bandwidth reference, not a transpose */
    KERNEL_NO_AUTO = 1 << 3,   /* a teaching stage auto never picks */
    KERNEL_BATCHED = 1 << 4,   /* runs a whole stack in one launch */
    KERNEL_ANY_LD = 1 << 5,    /* takes leading dimensions other than dense */
    KERNEL_ARCH_EXACT = 1 << 6,/* built for one architecture only (sm_90a): runs
                                  where the compute capability is cc_min exactly */
    KERNEL_SPLIT_K = 1 << 7,   /* the dispatcher splits a long K when the tiles are
                                  too few (kernels/gemm_dispatch.c) */
    KERNEL_VECTOR = 1 << 8,    /* made for M = 1 or N = 1 (gemv; auto weighs it with thin) */
    KERNEL_MEMORY = 1 << 9,    /* a memory-bound stage for the shapes tiles are not made
                                  for (vectors, a thin side, a short K, stacks) */
    KERNEL_FLOAT_VALUES = 1 << 10, /* a transpose that moves elements as floating-point
                                  values (1*x): faithful to f32 and f64 data only, since
                                  an integer's bits may read as a NaN it rewrites */
    KERNEL_PERSISTENT = 1 << 11, /* a persistent grid whose blocks store a tile's C while
                                  their next tile loads: auto's model keeps C's bytes
                                  under the compute (src/plan/model.c) */
    KERNEL_K_LAST = 1 << 12,   /* takes a stack whose last product is shorter in K (the
                                  family struct's k_last): a split's slices in one launch */
};

/* ---- mul ---- */

/* Operand type, arithmetic and the type of C a kernel computes. */
enum gemm_sig {
    GEMM_F32,   /* float operands, FP32 arithmetic, float C */
    GEMM_F16,   /* binary16 operands, FP32 accumulation, float C */
    GEMM_BF16,  /* bfloat16 operands, FP32 accumulation, float C */
    GEMM_F64,   /* double operands, FP64 arithmetic, double C */
    GEMM_I64,   /* int64 operands, exact arithmetic modulo 2^64, int64 C = A*B */
    GEMM_TF32,  /* float operands rounded to TF32, FP32 accumulation, float C (lossy) */
    GEMM_TF32X3,/* float operands split in two TF32 parts, three products: FP32-class */
    GEMM_I8,    /* int8 operands, exact int32 sums modulo 2^32, int32 C = A*B: exact for
                   results of 32 bits or fewer (NumPy's int8, int16, int32, bool) */
    GEMM_OZAKI, /* double operands, FP64 results from int8 products (Ozaki scheme II),
                   double C */
    GEMM_I16,   /* int16 operands, int32 C whose low 16 bits are the sums modulo 2^16:
                   exact for results of 16 bits or fewer (NumPy's int16, int8, uint8) */
    GEMM_I32,   /* int32 operands, exact int32 sums modulo 2^32, int32 C = A*B: exact
                   for results of 32 bits or fewer */
    GEMM_OZAKI32, /* float operands, FP32-class results from int8 products (Ozaki scheme
                     II with fewer moduli), float C */
    GEMM_SIG_COUNT
};

/* A signature's row: everything that depends on the arithmetic alone is
 * a column here, so that a new signature is one row (kernels/registry.c)
 * and the kernels that compute it. */
struct gemm_sig_info {
    const char *name;          /* "f32"; bench --dtype and the tune cache's keys use it */
    enum gc_dtype in, out;     /* operand and C types on the device */
    const char *arith;         /* "FP32", "FP32 accumulation", ... */
    const char *compute;       /* the --compute mode that asks for it on `in` operands
                                  ("tf32"); NULL: `in`'s own arithmetic */
    enum gemm_sig reference;   /* the signature cuBLAS is compared in: its own, or the one
                                  whose accuracy it aims at (cuBLAS has no 3xTF32) */
    double verify_tol;         /* relative Frobenius error --verify allows the arithmetic
                                  by default (gemm_sig_verify_tol) */
    double test_bound;         /* relative error no correct kernel reaches on N(0, 1) data
                                  (tests/gpu_kernels.c) */
    int bench_order;           /* bench times it, in this order (1 first); 0: never */
    unsigned flags;            /* GEMM_SIG_* */
};
enum gemm_sig_flags {
    GEMM_SIG_TENSOR_CORES = 1 << 0,   /* computed on the tensor cores by the kernels
                                         made for it: bench times those chapters' shapes */
};
extern const struct gemm_sig_info gemm_sigs[GEMM_SIG_COUNT];

/* The signature named `name` ("tf32x3"), else the one that computes
 * operands of the dtype so named ("float32", "f16") in their own
 * arithmetic; -1 when there is none. */
int gemm_sig_by_name(const char *name);

/* --verify's default tolerance for a product in `sig` whose result is
 * stored as `result`: the larger of what the arithmetic and what the
 * result's dtype can hold. */
double gemm_sig_verify_tol(enum gemm_sig sig, enum gc_dtype result);

enum { GEMM_CC_ANY = -1 };          /* gemm_problem.cc: no device chosen yet */

struct gemm_problem {
    enum gemm_sig sig;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;          /* row-major leading dimensions */
    int64_t batch;                  /* products in the stack, >= 1 */
    int64_t stride_a, stride_b, stride_c;   /* elements between matrices; 0 for A or B:
                                               the same matrix in every product */
    double alpha, beta;             /* beta != 0: C holds C0 on entry (not GEMM_I64) */
    const void *a, *b;
    void *c;
    int cc;                         /* the device's compute capability; 0 on the host,
                                       GEMM_CC_ANY before a device is chosen */
};

/* The dense problem: leading dimensions and strides of packed matrices. */
void gemm_problem_dense(struct gemm_problem *p);

/* How a kernel spreads a product over the SMs, for auto's model
 * (src/plan/model.c). */
enum gemm_spread {
    SPREAD_WAVES,      /* whole tiles of C, in waves of per_sm blocks on every SM */
    SPREAD_STREAM_K,   /* full waves whole, the last partial wave shared out by k-steps */
    SPREAD_SLICES,     /* too few tiles: K cut into slices, their sums added after */
    SPREAD_MEMORY,     /* memory-bound (vectors, stacks of small products): bytes / bandwidth */
};

/* How a stage lays a product on the GPU, for auto's model: a column of its
 * row in the stage table (kernels/gemm_table.c).  Every row auto may pick
 * has one (tests/model_test.py checks it). */
struct gemm_geometry {
    int tile_m, tile_n;        /* the tile of C a block computes */
    int per_sm;                /* blocks resident on an SM at once */
    int k_fill;                /* values of k a tile's pipeline takes to fill and drain */
    enum gemm_spread spread;
    int slice_k;               /* SPREAD_SLICES: a slice's least length of k */
    double block_us;           /* SPREAD_MEMORY kernels that give every product of a
                                  stack blocks of its own: the least time one takes */
};

struct gemm_kernel;
typedef cudaError_t (*gemm_run_fn)(const struct gemm_kernel *k, const struct gemm_problem *p,
                                   const struct launch_env *env);
/* Host kernels: p's pointers are host memory. */
typedef void (*gemm_host_fn)(const struct gemm_problem *p, int threads);
/* A row's own conditions beyond the generic ones: 1, or 0 with the reason. */
typedef int (*gemm_check_fn)(const struct gemm_problem *p, char *why, size_t n);
typedef size_t (*gemm_workspace_fn)(const struct gemm_problem *p);
/* The slices of K a memory-bound stage cuts p into on sm_count SMs (each
 * slice's sums a slab of the workspace); 1: C written by the one launch.
 * *joined: 1 where the launch adds its slices itself (its last block a
 * region does: kernels/memory_bound/join.cuh), 0 where a second launch
 * does.  *busy: the share of the launch's multiply-adds that are p's; 1
 * where p fills the blocks, less where a block's rows or columns past M
 * or N are computed and dropped, or its threads there idle (the thin
 * stages' blocks of 256 rows, their thin side's bound). */
typedef int64_t (*gemm_slices_fn)(const struct gemm_problem *p, int sm_count, int *joined,
                                  double *busy);

struct gemm_kernel {
    const char *name;
    const char *idea;          /* one line */
    const char *source;        /* which source document describes it */
    const char *file;          /* kernels/... */
    unsigned flags;
    unsigned sigs;             /* bit (1 << GEMM_*) per signature it implements */
    int cc_min;                /* lowest compute capability; 0: any */
    gemm_run_fn run;           /* device kernels: the family's dispatcher */
    const void *impl;          /* the stage's own launcher, which `run` calls */
    gemm_host_fn host;         /* KERNEL_HOST kernels */
    kernel_attr_fn attr;       /* NULL when not applicable */
    gemm_check_fn check;       /* NULL: no conditions of its own */
    gemm_workspace_fn workspace;   /* NULL: none beyond the stream's pool */
    gemm_slices_fn slices;     /* NULL: never slices K itself, or a tiled stage (its geometry) */
    const struct gemm_geometry *geometry;   /* NULL: auto never picks it */
};

extern const struct gemm_kernel gemm_kernels[];
extern const size_t gemm_kernel_count;

const struct gemm_kernel *gemm_kernel_find(const char *name);

/* Refuses a --kernel name that no mul kernel (nor auto) has, with the
 * nearest one where a name was mistyped: a usage status, said. */
int gemm_kernel_unknown(const char *name);

/* 1 if `k` can compute `p`; else 0 and why, in words, in why[0..n). */
int gemm_can_implement(const struct gemm_kernel *k, const struct gemm_problem *p, char *why,
                       size_t n);

/* Device memory `k` takes from the stream's pool for `p`, beyond the
 * operands (an upper bound). */
size_t gemm_workspace_bytes(const struct gemm_kernel *k, const struct gemm_problem *p);

/* Runs `k` on `p` (device pointers, env->stream; host pointers for host
 * kernels, with env->sm_count host threads, 0: all), looping over the
 * stack where the kernel takes one product at a time.  can_implement must
 * have said yes. */
cudaError_t gemm_run(const struct gemm_kernel *k, const struct gemm_problem *p,
                     const struct launch_env *env, int host_threads);

/* The signatures of a row as text ("f32", "f16,f32,f64,i64"). */
void gemm_sigs_text(unsigned sigs, char *buf, size_t n);

/* The family dispatchers named in the table's rows. */
cudaError_t gemm_run_sgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct launch_env *env);
cudaError_t gemm_run_dgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct launch_env *env);
cudaError_t gemm_run_hgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct launch_env *env);
cudaError_t gemm_run_igemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct launch_env *env);
cudaError_t gemm_run_i8gemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                            const struct launch_env *env);
cudaError_t gemm_run_limbgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                              const struct launch_env *env);
cudaError_t gemm_run_ozgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                            const struct launch_env *env);

/* ---- transpose ---- */

/* out = in with the last two axes swapped, for each of `batch` matrices
 * of rows x cols elements of elem_size bytes (1, 2, 4 or 8), moved bit for
 * bit.  Launchers see batch == 1; the dispatcher loops. */
struct transpose_problem {
    int rows, cols;
    size_t elem_size;
    const void *in;
    void *out;
};

typedef cudaError_t (*transpose_launch_fn)(const struct transpose_problem *p,
                                           const struct launch_env *env);
typedef void (*transpose_host_fn)(const struct transpose_problem *p);

struct transpose_kernel {
    const char *name;
    const char *idea;
    const char *source;
    const char *file;
    unsigned flags;
    unsigned elem_sizes;       /* bit mask: 1<<1 | 1<<2 | 1<<4 | 1<<8 */
    transpose_launch_fn launch;
    transpose_host_fn host;
    kernel_attr_fn attr;
};

extern const struct transpose_kernel transpose_kernels[];
extern const size_t transpose_kernel_count;

const struct transpose_kernel *transpose_kernel_find(const char *name);

/* The same for a transpose kernel's name. */
int transpose_kernel_unknown(const char *name);

/* ---- auto ---- */

/* auto's measured rates (kernels/auto_table.c), written by `gemmcli bench
 * --auto-table`: per signature and kernel, the rate it reaches with every
 * SM busy (the bench's figures over the model's utilisation), and the
 * bytes per second of the memory-bound ones. */
struct auto_rate {
    const char *type;          /* a signature's name */
    const char *kernel;
    double tflops;             /* at full utilisation; 0: not measured */
    double gbps;               /* memory-bound kernels: bytes moved per second; tiled ones:
                                  C's stores where they bind; 0: the device's copy */
    double slice_eff;          /* sliced runs' time over the model's (src/plan/rates.h); 0: 1 */
    double ragged_eff;         /* the same where rows are not whole 16-byte units; 0: 1 */
};
extern const struct auto_rate auto_rates[];
extern const size_t auto_rate_count;
/* The device the rates were measured on: its name, the date, its SMs,
 * peak SM clock (MHz), memory bandwidth (GB/s from its memory clock and
 * bus width) and measured copy bandwidth (GB/s). */
extern const char auto_rate_device[];
extern const char auto_rate_date[];
extern const int auto_rate_sm_count;
extern const int auto_rate_clock_mhz;
extern const double auto_rate_mem_gbps;
extern const double auto_rate_copy_gbps;

/* transpose: for each benchmarked shape, the fastest kernel; auto takes
 * the row nearest the problem's shape. */
struct auto_choice {
    const char *op;            /* "transpose" */
    const char *type;          /* "any" */
    unsigned long batch, m, n, k;   /* 1, rows, cols, 1 */
    const char *kernel;
    double rate;               /* GB/s */
};
extern const struct auto_choice auto_choices[];
extern const size_t auto_choice_count;

/* The length of the slices of K that the dispatcher cuts a product into
 * for kernel k on `sm_count` SMs (a multiple of 8), or 0: no split.  Only
 * KERNEL_SPLIT_K rows split, a single product whose tiles (the row's own,
 * its geometry's tile_m x tile_n) leave SMs idle and whose K is at least
 * twice the geometry's slice_k: into as many slices as fill whole waves
 * of the SMs' slots, each about slice_k long or more.  A KERNEL_K_LAST
 * row takes S slices of ceil(K / S) rounded up, the last one shorter, in
 * one launch (gemm_split_pieces counts them); any other row S slices of
 * K / S rounded down, and what is left over (under 8 per slice) is one
 * more slab in a launch of its own.  auto's model (src/plan/model.c)
 * takes the same cut. */
int64_t gemm_split_slice(const struct gemm_kernel *k, const struct gemm_problem *p,
                         int sm_count);

/* The slabs of a split of K into slices `slice` long: the whole slices
 * and one more for any rest. */
int64_t gemm_split_pieces(int64_t k, int64_t slice);

/* Stream-K's plan (kernels/sgemm/sgemm_18_stream_k.cu, stream_k and
 * edge_peel): of `tiles` on `slots` blocks at once, each `k_steps` steps
 * of k deep, the runs that share out the last partial wave's tiles, their
 * k-steps laid end to end, a run a slot and GEMM_STREAM_K_MIN_STEPS steps
 * at least; 0 where the tiles run whole (no partial wave, one nine tenths
 * full or more, or no more runs than its tiles).  auto's model
 * (src/plan/model.c) plans with it too. */
enum { GEMM_STREAM_K_MIN_STEPS = 8 };   /* fewer fill the pipeline more than they compute */
int64_t gemm_stream_k_runs(int64_t tiles, int64_t slots, int64_t k_steps);

/* The slices of K a stage that slices K itself (the splitk stages) cuts
 * `tiles` into, on sm_count SMs of per_sm blocks each, K values of k deep,
 * each slice min_k deep at least: never more blocks than one wave holds.
 * Fewer tiles than SMs: as many slices as that wave holds (the idle SMs
 * are the loss).  More: the count that most lightens the busiest SM's
 * load, ceil(tiles x S / SMs) slices of K / S + k_fill values of k, where
 * it is a tenth lighter than whole tiles' (the slabs' sum costs the rest);
 * else 1.  auto's model (src/plan/model.c) plans with it too. */
int64_t gemm_fill_slices(int64_t tiles, int64_t sm_count, int64_t per_sm, int64_t k,
                         int64_t min_k, int64_t k_fill);

/* Readies the current device for the kernels: a workspace that a launcher
 * takes from the stream-ordered pool (cudaMallocAsync) and gives back stays
 * mapped there for the next launch, instead of being unmapped at every
 * synchronisation and mapped again, which would land inside its timing. */
cudaError_t kernels_prepare_device(void);

#ifdef __cplusplus
}
#endif

#endif
