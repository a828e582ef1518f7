/* An MPI rank's block of C when its rows of A and columns of B do not fit
 * the host memory it may use (src/scale/dist.h decides, alike on every rank):
 * K in panels, SUMMA style.
 *
 * The main thread moves panel q + 1 (read once by its owner and broadcast
 * along the grid row or column, or sent by rank 0: dist_panel) and
 * converts it to the kernel's operand type while a second thread
 * multiplies panel q into the block: two panels' buffers, every MPI call
 * on the main thread.  Each panel ends in an agreement of all ranks, so
 * that a failure on any stops every rank before the next product.
 *
 * C_block = alpha * sum_q A_q @ B_q.  On the GPU the block's sum stays in
 * device memory from the first panel to the last when it fits beside a
 * panel: each panel is copied in and multiplied into it with beta = 1, and
 * the block comes back once.  A block too large for that takes each panel
 * through tiled_run (src/scale/tiled_run.h), summed into the host block (c_in
 * after the first panel).  With --kernel cpu, the cpu kernel with beta = 1
 * after the first.  Integer products are exact in int64 modulo 2^64
 * whatever their size (the FP64 shortcut needs a bound over all of A and
 * B, which is not known before the last panel; the int64 kernels take a
 * nonzero beta as "add"); alpha and the result's dtype come after, as in
 * core.  --verify sums a reference alike: FP64 (DGEMM beside the product,
 * or on the host each panel's verify_host_reference) or exact int64. */
#ifndef GC_SUMMA_H
#define GC_SUMMA_H

#include "src/scale/dist.h"
#include "src/job/job.h"
#include "src/plan/product.h"

/* This rank's block of the plan `pp` (PRODUCT_PANELS: the block's product,
 * as planned from dist_read's shapes, and `route`, its kernels and tiles)
 * into `result`, the plan's result dtype, C order; the report's phases,
 * panels and verification filled in (its kernel and tolerance are the
 * caller's).  Collective over all ranks: each calls it when d->panels,
 * with an empty block too. */
int summa_mul(struct dist *d, struct job *j, const struct product_plan *pp,
              const struct product_route *route, struct gc_tensor *result);

#endif
