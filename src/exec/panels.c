/* The panels executor: an MPI rank's block, K in panels. */
#include "src/exec/exec.h"

#include "src/exec/steps.h"
#include "src/scale/summa.h"

/* An MPI rank's block, K in panels (src/scale/summa.h): every rank takes
 * part, an empty block's too. */
int exec_panels(struct mul_run *r)
{
    const struct product_route *route = &r->plan->route[0];
    if (route->pick.kern)
        exec_report_pick(r, &route->pick, route->auto_source);
    return summa_mul(r->dist, r->job, r->plan, route, &r->result);
}
