/* The tuner: for one product with its operands on the device, every kernel
 * auto may pick (select_auto_candidate) that can compute it, timed in each
 * signature the plan may use, and cuBLAS beside them for comparison (never
 * chosen).  `gemmcli tune` runs it on random operands, `mul --tune` on the
 * product's own; each signature's fastest goes to the cache of tuned
 * choices (src/plan/tune_cache.h), which auto consults before its shipped
 * choice.
 *
 * Each candidate gets a warm-up run, then one timed run; one that takes
 * over TUNE_DROP_FACTOR times the best own kernel so far is dropped, the
 * others get the median of as many more runs as TUNE_BUDGET_MS allows
 * (TUNE_MIN_RUNS to TUNE_MAX_RUNS), by core/clock.h's loop with CUDA
 * events.  The strongest stages are timed first, so that the weak ones
 * are dropped after one run.  With beta != 0 every run starts from a
 * scratch copy of C0: the product's own C is never written. */
#ifndef GC_TUNE_H
#define GC_TUNE_H

#include <stddef.h>

#include "core/tensor.h"
#include "src/job/device.h"
#include "src/plan/matmul.h"
#include "src/plan/tune_cache.h"

#define TUNE_BUDGET_MS 30.0
#define TUNE_MIN_RUNS 2
#define TUNE_MAX_RUNS 20
#define TUNE_DROP_FACTOR 10.0
#define TUNE_MAX_ROWS 128

/* An operand on the device as it was read: `t` describes it (dtype, shape,
 * order; its data is not used), `d` holds it. */
struct tune_operand {
    const struct gc_tensor *t;
    const void *d;
};

/* A product to tune.  A and B are the plan's operands; C0 is in the
 * result's dtype and shape, read only when beta != 0. */
struct tune_target {
    const struct matmul_plan *plan;
    int f64_exact;              /* an exact plan's f64 signature is exact (2^53 bound) */
    double alpha, beta;         /* as the kernels take them */
    struct tune_operand a, b, c0;
};

struct tune_row {
    const struct gemm_kernel *kern;
    enum gemm_sig sig;          /* the signature it ran in */
    double ms;                  /* the median; NAN: not run (no device memory for it) */
    int dropped;                /* ms is its one timed run, over TUNE_DROP_FACTOR x the best */
    int reference;              /* cuBLAS: for comparison only */
    int choice;                 /* the signature's entry in tune_result.choices */
};

/* The fastest own kernel of one signature. */
struct tune_choice {
    enum gemm_sig sig;
    const struct gemm_kernel *kern;     /* NULL: none ran */
    double ms;
    double cublas_ms;           /* < 0: not measured (cuBLAS lacks the signature) */
};

struct tune_result {
    struct tune_row rows[TUNE_MAX_ROWS];
    int n_rows;
    struct tune_choice choices[GEMM_SIG_COUNT];
    int n_choices;
    int best;                   /* the fastest of choices[]; -1 when none ran */
};

/* Tunes t on dev (its stream; cuBLAS's handle is created here).  A
 * signature whose operands do not fit in the free device memory is left
 * out, as is a kernel whose workspace does not.  Returns 0, or
 * GC_EXIT_GPU after reporting a CUDA error. */
int tune_product(struct gc_device *dev, const struct tune_target *t, struct tune_result *res);

/* The cache key of the plan's product in signature `sig` on dev: 0 or -1. */
int tune_key_for(const struct gc_device *dev, const struct matmul_plan *plan, enum gemm_sig sig,
                 struct tune_key *key);

/* Stores the fastest kernel of each signature of res: 0, or -1 with the
 * reason in why[0..n) (see tune_cache_store). */
int tune_store_result(const struct gc_device *dev, const struct matmul_plan *plan,
                      const struct tune_result *res, char *why, size_t n);

#endif
