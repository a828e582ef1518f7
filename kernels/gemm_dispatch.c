/* Running a row of gemm_kernels[]: the generic problem is turned into the
 * family's struct (kernels/gemm.h) and handed to the stage's launcher; a
 * stage that takes one product at a time is called once per product of the
 * stack, a batched one once per chunk of at most INT_MAX products. */
#include <limits.h>

#include "gemm.h"

#define CHUNK(k) (((k)->flags & KERNEL_BATCHED) ? (int64_t)INT_MAX : 1)

/* One family, one adapter: the struct, the pointer type and the scalars
 * differ, the walk over the stack does not. */
#define FAMILY_RUN(fn, ptype, elem, launch_t, SET_SCALARS)                            \
    cudaError_t fn(const struct gemm_kernel *k, const struct gemm_problem *p,         \
                   const struct launch_env *env)                                       \
    {                                                                                  \
        launch_t launch = (launch_t)k->impl;                                           \
        int64_t chunk = CHUNK(k);                                                      \
        for (int64_t b0 = 0; b0 < p->batch; b0 += chunk) {                             \
            int64_t nb = p->batch - b0 < chunk ? p->batch - b0 : chunk;                \
            struct ptype q;                                                            \
            q.m = (int)p->m;                                                           \
            q.n = (int)p->n;                                                           \
            q.k = (int)p->k;                                                           \
            SET_SCALARS;                                                               \
            q.a = (const elem *)p->a + b0 * p->stride_a;                               \
            q.b = (const elem *)p->b + b0 * p->stride_b;                               \
            q.c = (__typeof__(q.c))p->c + b0 * p->stride_c;                            \
            q.batch = (int)nb;                                                         \
            q.stride_a = p->stride_a;                                                  \
            q.stride_b = p->stride_b;                                                  \
            q.stride_c = p->stride_c;                                                  \
            cudaError_t err = launch(&q, env);                                         \
            if (err != cudaSuccess)                                                    \
                return err;                                                            \
        }                                                                              \
        return cudaSuccess;                                                            \
    }

FAMILY_RUN(gemm_run_sgemm, sgemm_problem, float, sgemm_launch_fn,
           (q.alpha = (float)p->alpha, q.beta = (float)p->beta))
FAMILY_RUN(gemm_run_dgemm, dgemm_problem, double, dgemm_launch_fn,
           (q.alpha = p->alpha, q.beta = p->beta))
FAMILY_RUN(gemm_run_hgemm, hgemm_problem, uint16_t, hgemm_launch_fn,
           (q.alpha = (float)p->alpha, q.beta = (float)p->beta, q.bf16 = p->sig == GEMM_BF16))
FAMILY_RUN(gemm_run_igemm, igemm_problem, int64_t, igemm_launch_fn, (void)0)

cudaError_t gemm_run(const struct gemm_kernel *k, const struct gemm_problem *p,
                     const struct launch_env *env, int host_threads)
{
    if (k->flags & KERNEL_HOST) {
        k->host(p, host_threads);
        return cudaSuccess;
    }
    return k->run(k, p, env);
}
