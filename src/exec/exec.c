/* exec_run: the plan's kind picks its executor. */
#include "src/exec/exec.h"

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
