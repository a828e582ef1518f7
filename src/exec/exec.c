#include "src/exec/exec.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/exec/steps.h"
#include "src/scale/summa.h"

/* One executor for each kind of plan. */
static int (*const executors[PRODUCT_EXEC_COUNT])(struct mul_run *r) = {
    [PRODUCT_EMPTY] = exec_empty,
    [PRODUCT_HOST] = exec_host,
    [PRODUCT_GPU] = exec_gpu,
    [PRODUCT_TILES] = exec_tiles,
    [PRODUCT_PANELS] = exec_panels,
};

int exec_run(struct mul_run *r)
{
    return executors[r->plan->exec](r);
}

/* Nothing to multiply: NumPy's (m,0) @ (0,n) is zeros, and beta * C0 is
 * added to them. */
int exec_empty(struct mul_run *r)
{
    const struct matmul_plan *mm = &r->plan->mm;
    const struct gc_opts *o = r->o;
    r->job->rep.kernel = "none (empty product)";
    r->job->rep.compute = "none";
    size_t n = exec_count(mm);
    double *zero = calloc(n ? n : 1, sizeof *zero);
    if (!zero)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    r->result = exec_shape(mm, mm->result);
    int rc = 0;
    if (gc_tensor_alloc(&r->result, NULL)) {
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    } else if (mm->exact) {
        matmul_integer_result(zero, GC_F64, mm->alpha_i, mm->beta_i,
                              r->c0->data ? r->c0 : NULL, n, r->result.data, mm->result);
    } else {
        struct gc_tensor d = exec_shape(mm, GC_F64);
        d.data = zero;
        if (o->beta != 0 && r->c0->data)
            for (size_t i = 0; i < n; i++)
                zero[i] = o->beta * (double)gc_tensor_get(r->c0, i);
        gc_tensor_free(&r->result);
        if (gc_tensor_convert(&d, mm->result, NULL, &r->result))
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    }
    free(zero);
    return rc;
}

/* An MPI rank's block, K in panels (src/scale/summa.h): every rank takes
 * part, an empty block's too. */
int exec_panels(struct mul_run *r)
{
    const struct product_route *route = &r->plan->route[0];
    if (route->pick.kern)
        exec_report_pick(r, &route->pick, route->auto_source);
    return summa_mul(r->dist, r->job, r->plan, route, &r->result);
}
