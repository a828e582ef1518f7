#include "src/plan/select.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "src/plan/model.h"
#include "src/plan/rates.h"

double select_convert_ms(const struct matmul_plan *plan, enum gemm_sig sig, int result)
{
    const struct gemm_sig_info *si = &gemm_sigs[sig];
    double bytes = 0, launches = 0;
    if (plan->a_dtype != si->in) {
        bytes += (double)plan->a_count * (gc_dtypes[plan->a_dtype].size + gc_dtypes[si->in].size);
        launches++;
    }
    if (plan->b_dtype != si->in) {
        bytes += (double)plan->b_count * (gc_dtypes[plan->b_dtype].size + gc_dtypes[si->in].size);
        launches++;
    }
    if (result && plan->result != si->out) {
        bytes += (double)plan->batch * (double)plan->m * (double)plan->n *
                 (gc_dtypes[plan->result].size + gc_dtypes[si->out].size);
        launches++;
    }
    return launches * MODEL_LAUNCH_MS + bytes / (rates_active()->copy_gbps * 1e9) * 1e3;
}

int select_auto_candidate(unsigned flags)
{
    return !(flags & (KERNEL_HOST | KERNEL_REFERENCE | KERNEL_BENCH_ONLY | KERNEL_NO_AUTO));
}

int select_vector_candidate(const struct gemm_kernel *k)
{
    const struct gemm_geometry *g = k->geometry;
    return (k->flags & KERNEL_MEMORY) && g && g->tile_m == 1 && g->tile_n == 1;
}

/* The benchmarked transpose row for the shape nearest this one, nearness
 * taken on a log scale so that 4097 is near 4096 and 64 is far from 1024;
 * NULL when the table has none. */
static const struct auto_choice *transpose_table_row(double rows, double cols)
{
    const struct auto_choice *best = NULL;
    double best_d = 0;
    for (size_t i = 0; i < auto_choice_count; i++) {
        const struct auto_choice *c = &auto_choices[i];
        if (strcmp(c->op, "transpose") != 0)
            continue;
        double dm = log2(rows / c->m), dn = log2(cols / c->n);
        double d = dm * dm + dn * dn;
        if (!best || d < best_d) {
            best = c;
            best_d = d;
        }
    }
    return best;
}

int select_sig_usable(const struct matmul_plan *plan, enum gemm_sig sig, int f64_exact)
{
    return !(plan->needs_bound && sig == GEMM_F64 && !f64_exact);
}

/* The top of the ladder that can compute p (the table is in ladder order,
 * and the top stage of each signature's ladder covers every shape). */
static const struct gemm_kernel *ladder_top(const struct gemm_problem *p)
{
    char why[512];
    const struct gemm_kernel *best = NULL;
    for (size_t j = 0; j < gemm_kernel_count; j++)
        if (select_auto_candidate(gemm_kernels[j].flags) &&
            gemm_can_implement(&gemm_kernels[j], p, why, sizeof why))
            best = &gemm_kernels[j];
    return best;
}

int select_gemm_kernel(const char *name, const struct matmul_plan *plan, int cc, int sm_count,
                       int f64_exact, const struct gemm_kernel **kern, enum gemm_sig *sig,
                       int *is_auto)
{
    char why[512] = "", first_why[512] = "";
    struct gemm_problem p;
    *is_auto = strcmp(name, "auto") == 0;
    if (!*is_auto) {
        const struct gemm_kernel *k = gemm_kernel_find(name);
        if (!k)
            return gemm_kernel_unknown(name);
        for (int i = 0; i < plan->n_sigs; i++) {
            if (!select_sig_usable(plan, plan->sigs[i], f64_exact))
                continue;
            matmul_problem(plan, plan->sigs[i], 1, 0, &p);
            p.cc = cc;
            if (gemm_can_implement(k, &p, why, sizeof why)) {
                *sig = plan->sigs[i];
                *kern = k;
                return 0;
            }
            if (!first_why[0])
                memcpy(first_why, why, sizeof why);
        }
        /* The arithmetic is the question only where the kernel has none of
         * the product's signatures. */
        int other_sig = 1;
        for (int i = 0; i < plan->n_sigs; i++)
            if (k->sigs & (1u << plan->sigs[i]))
                other_sig = 0;
        return gc_fail(GC_EXIT_USAGE, "%s%s", first_why,
                       !first_why[0] ? "no signature of this product is usable"
                       : other_sig ? "; --compute chooses the arithmetic" : "");
    }
    /* The model's fastest among the kernels auto may pick that can
     * compute this product, in any of its signatures (a float16 product
     * may run faster on float operands, say, converted first: the
     * conversion is part of that signature's time).  A vector times a matrix or
     * a matrix times a vector goes to gemv or thin (select_vector_candidate)
     * where one can take it: the tiles stream such a
     * product well below the copy rate the model grants them (float16
     * 1x65536x4096: wgmma_tma at 60% of cuBLAS, f16_gemv above it; H200,
     * 2026-11-22), and small_k's warps load their strip of B for each
     * row's band (float16 1x2951x22 ran at 73% of cuBLAS on it, 129% on
     * f16_gemv).  Between gemv and thin the model chooses: thin's thread
     * a row beats gemv's warp a row where K is short (float 30025x1x49:
     * 6.2 us against 15.9, NVIDIA H200, 2026-11-26, ncu). */
    const struct gemm_kernel *pick = NULL, *vec_pick = NULL;
    double pick_ms = INFINITY, vec_ms = INFINITY;
    enum gemm_sig vec_sig = GEMM_F32;
    int vector = plan->m == 1 || plan->n == 1;
    for (int i = 0; i < plan->n_sigs; i++) {
        enum gemm_sig s = plan->sigs[i];
        if (!select_sig_usable(plan, s, f64_exact))
            continue;
        matmul_problem(plan, s, 1, 0, &p);
        p.cc = cc;
        double convert_ms = select_convert_ms(plan, s, 1);
        for (size_t j = 0; j < gemm_kernel_count; j++) {
            const struct gemm_kernel *k = &gemm_kernels[j];
            /* (the signature first: most kernels are another family's, and
             * gemm_can_implement's reasons, formatted and dropped, were
             * most of the choice's time) */
            if (!(k->sigs & (1u << s)) || !select_auto_candidate(k->flags) ||
                !gemm_can_implement(k, &p, why, sizeof why))
                continue;
            double ms = model_estimate(k, &p, sm_count).ms + convert_ms;
            if (ms < pick_ms) {
                pick = k;
                pick_ms = ms;
                *sig = s;
            }
            if (vector && select_vector_candidate(k) && (!vec_pick || ms < vec_ms)) {
                vec_pick = k;
                vec_ms = ms;
                vec_sig = s;
            }
        }
    }
    if (vec_pick) {
        *sig = vec_sig;
        *kern = vec_pick;
        return 0;
    }
    if (pick) {
        *kern = pick;
        return 0;
    }
    for (int i = 0; i < plan->n_sigs; i++) {
        enum gemm_sig s = plan->sigs[i];
        if (!select_sig_usable(plan, s, f64_exact))
            continue;
        matmul_problem(plan, s, 1, 0, &p);
        p.cc = cc;
        /* Off the table: the top of the ladder that can. */
        const struct gemm_kernel *best = ladder_top(&p);
        if (best) {
            *sig = s;
            *kern = best;
            return 0;
        }
    }
    return gc_fail(GC_EXIT_GPU, "no kernel of gemmcli's own computes this product on this "
                   "device; --kernel cublas or --kernel cpu can");
}

int select_transpose_takes(const struct transpose_kernel *kern, enum gc_dtype dtype)
{
    size_t es = gc_dtypes[dtype].size;
    if (es > 8 || !(kern->elem_sizes & (1u << es)))
        return 0;
    return !(kern->flags & KERNEL_FLOAT_VALUES) || dtype == GC_F32 || dtype == GC_F64;
}

int select_transpose_kernel(const char *name, size_t rows, size_t cols, enum gc_dtype dtype,
                            const struct transpose_kernel **kern, int *is_auto)
{
    size_t elem_size = gc_dtypes[dtype].size;
    *is_auto = strcmp(name, "auto") == 0;
    const struct transpose_kernel *k = NULL;
    if (*is_auto) {
        const struct auto_choice *row = transpose_table_row((double)rows, (double)cols);
        k = row ? transpose_kernel_find(row->kernel) : NULL;
        if (k && select_auto_candidate(k->flags) && select_transpose_takes(k, dtype)) {
            *kern = k;
            return 0;
        }
        k = NULL;
        for (size_t i = 0; i < transpose_kernel_count; i++)
            if (select_auto_candidate(transpose_kernels[i].flags) &&
                select_transpose_takes(&transpose_kernels[i], dtype))
                k = &transpose_kernels[i];
        if (!k)
            return gc_fail(GC_EXIT_INPUT, "no transpose kernel moves %zu-byte elements",
                           elem_size);
        *kern = k;
        return 0;
    }
    k = transpose_kernel_find(name);
    if (!k)
        return transpose_kernel_unknown(name);
    if (k->flags & KERNEL_BENCH_ONLY)
        return gc_fail(GC_EXIT_USAGE, "kernel '%s' copies without transposing; it is a "
                       "bandwidth reference for 'gemmcli bench' only", name);
    if (elem_size > 8 || !(k->elem_sizes & (1u << elem_size)))
        return gc_fail(GC_EXIT_USAGE, "kernel '%s' cannot move %zu-byte elements", name,
                       elem_size);
    if (!select_transpose_takes(k, dtype))
        return gc_fail(GC_EXIT_USAGE, "kernel '%s' moves elements as floating-point values, "
                       "which would rewrite %s elements whose bits read as a NaN: it takes "
                       "f32 and f64 only", name, gc_dtypes[dtype].name);
    *kern = k;
    return 0;
}

