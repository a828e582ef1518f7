/* The host tests' product: `batch` dense m x n x k products of signature
 * sig, alpha 1, beta 0, on compute capability 9.0, no data. */
#ifndef GC_TESTS_PROBLEM_H
#define GC_TESTS_PROBLEM_H

#include <stdint.h>
#include <string.h>

#include "kernels/registry.h"

static struct gemm_problem problem(enum gemm_sig sig, int64_t batch, int64_t m, int64_t n,
                                   int64_t k)
{
    struct gemm_problem p;
    memset(&p, 0, sizeof p);
    p.sig = sig;
    p.batch = batch;
    p.m = m;
    p.n = n;
    p.k = k;
    gemm_problem_dense(&p);
    p.stride_a = m * k;
    p.stride_b = k * n;
    p.alpha = 1;
    p.cc = 90;
    return p;
}

#endif
