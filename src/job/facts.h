/* The device facts a product's plan takes (src/plan/product.h), gathered
 * in one query before the plan: the job's GPU's name, compute capability,
 * SMs and free memory, and the compute capability and SMs of each GPU that
 * --devices names to share the tiles. */
#ifndef GC_FACTS_H
#define GC_FACTS_H

#include "src/job/job.h"
#include "src/plan/product.h"

/* The job's device, opened here (the warm thread joined first), with
 * `held` bytes of device memory that operands uploaded as they were read
 * hold and the product reuses.  0, or a status after saying why (no
 * device: GC_EXIT_GPU, suggesting --kernel cpu). */
int facts_of_job(struct job *j, const struct gc_opts *o, size_t held, struct device_facts *f);

/* For a plan that is printed, not run (mul --dry-run, kernels --for): the
 * facts of --device when it answers (opened and closed again), else the
 * model's device (product_facts_model).  Always 0. */
int facts_of_device(const struct gc_opts *o, struct device_facts *f);

#endif
