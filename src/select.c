#include "select.h"

#include <math.h>
#include <string.h>

#include "error.h"

static int auto_candidate(unsigned flags)
{
    return !(flags & (KERNEL_HOST | KERNEL_REFERENCE | KERNEL_BENCH_ONLY | KERNEL_NO_AUTO));
}

/* The benchmarked kernel for the shape nearest (m, n, k), nearness taken
 * on a log scale so that 4097 is near 4096 and 64 is far from 1024. */
static const char *auto_table_choice(const char *op, size_t m, size_t n, size_t k)
{
    const char *best = NULL;
    double best_d = 0;
    for (size_t i = 0; i < auto_choice_count; i++) {
        const struct auto_choice *c = &auto_choices[i];
        if (strcmp(c->op, op) != 0)
            continue;
        double dm = log2((double)m / c->m), dn = log2((double)n / c->n),
               dk = log2((double)k / c->k);
        double d = dm * dm + dn * dn + dk * dk;
        if (!best || d < best_d) {
            best = c->kernel;
            best_d = d;
        }
    }
    return best;
}

/* auto: the table's choice for the nearest benchmarked shape; without one,
 * the top of the ladder (the table is in ladder order, so the last
 * eligible row is the most advanced stage). */
static const struct gemm_kernel *auto_gemm(size_t m, size_t n, size_t k)
{
    const char *name = auto_table_choice("mul", m, n, k);
    const struct gemm_kernel *best = name ? gemm_kernel_find(name) : NULL;
    if (best && auto_candidate(best->flags))
        return best;
    best = NULL;
    for (size_t i = 0; i < gemm_kernel_count; i++)
        if (auto_candidate(gemm_kernels[i].flags))
            best = &gemm_kernels[i];
    return best;
}

const struct gemm_kernel *select_gemm(const char *name, size_t m, size_t n, size_t k,
                                      int *is_auto, int *status)
{
    *is_auto = strcmp(name, "auto") == 0;
    const struct gemm_kernel *kern = *is_auto ? auto_gemm(m, n, k) : gemm_kernel_find(name);
    if (!kern)
        *status = gc_fail(GC_EXIT_USAGE, *is_auto ? "no mul kernel is registered"
                          : "unknown mul kernel '%s' (see 'gemmcli kernels')", name);
    return kern;
}

const struct transpose_kernel *select_transpose(const char *name, size_t rows, size_t cols,
                                                size_t elem_size, int *is_auto, int *status)
{
    *is_auto = strcmp(name, "auto") == 0;
    const struct transpose_kernel *kern = NULL;
    if (*is_auto) {
        const char *choice = auto_table_choice("transpose", rows, cols, 1);
        kern = choice ? transpose_kernel_find(choice) : NULL;
        if (kern && auto_candidate(kern->flags) && (kern->elem_sizes & (1u << elem_size)))
            return kern;
        kern = NULL;
        for (size_t i = 0; i < transpose_kernel_count; i++)
            if (auto_candidate(transpose_kernels[i].flags) &&
                (transpose_kernels[i].elem_sizes & (1u << elem_size)))
                kern = &transpose_kernels[i];
        if (!kern)
            *status = gc_fail(GC_EXIT_INPUT, "no transpose kernel moves %zu-byte elements",
                              elem_size);
        return kern;
    }
    kern = transpose_kernel_find(name);
    if (!kern) {
        *status = gc_fail(GC_EXIT_USAGE, "unknown transpose kernel '%s' (see 'gemmcli kernels')",
                          name);
        return NULL;
    }
    if (kern->flags & KERNEL_BENCH_ONLY) {
        *status = gc_fail(GC_EXIT_USAGE, "kernel '%s' copies without transposing; it is a "
                          "bandwidth reference for 'gemmcli bench' only", name);
        return NULL;
    }
    if (elem_size > 8 || !(kern->elem_sizes & (1u << elem_size))) {
        *status = gc_fail(GC_EXIT_INPUT, "kernel '%s' cannot move %zu-byte elements", name,
                          elem_size);
        return NULL;
    }
    return kern;
}
