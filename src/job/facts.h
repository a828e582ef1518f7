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

/* For a plan that is printed for another GPU (kernels --for --rates): the
 * rates in the file at `path`, as `tune --calibrate` writes them, made the
 * model's (rates_use), and the facts of the GPU they were measured on
 * (its compute capability and SMs; nothing of this machine's).  0, or
 * GC_EXIT_INPUT after saying what is wrong with the file. */
int facts_of_rates_file(const char *path, struct device_facts *f);

#endif
