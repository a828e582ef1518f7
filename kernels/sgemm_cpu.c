/* cpu: C = alpha * A * B + beta * C on the host, for machines without a GPU
 * and as a test oracle.
 *
 * Threads take bands of rows of C.  Within a band, for each block of 512
 * columns the loop order is i, k, j: one element of A times a contiguous
 * piece of a row of B added into a row of accumulators that stays in L1,
 * which the compiler vectorises.  Accumulators are double: each output is then the FP64 sum of FP32
 * products (each exact in double), rounded once, so the CPU result is more
 * accurate than any FP32 GPU kernel and its own error never decides a test. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sgemm.h"

enum { CPU_BLOCK_N = 512, CPU_MAX_THREADS = 256 };

struct cpu_band {
    const struct sgemm_problem *p;
    int row_begin, row_end;
};

static void cpu_band_run(const struct sgemm_problem *p, int row_begin, int row_end)
{
    double acc[CPU_BLOCK_N];
    for (int j0 = 0; j0 < p->n; j0 += CPU_BLOCK_N) {
        int nb = p->n - j0 < CPU_BLOCK_N ? p->n - j0 : CPU_BLOCK_N;
        for (int i = row_begin; i < row_end; i++) {
            const float *a = p->a + (size_t)i * p->k;
            memset(acc, 0, sizeof(double) * (size_t)nb);
            for (int k = 0; k < p->k; k++) {
                double av = a[k];
                const float *b = p->b + (size_t)k * p->n + j0;
                for (int j = 0; j < nb; j++)
                    acc[j] += av * b[j];
            }
            float *c = p->c + (size_t)i * p->n + j0;
            for (int j = 0; j < nb; j++)
                c[j] = (float)(p->beta == 0.0f ? p->alpha * acc[j]
                                               : p->alpha * acc[j] + (double)p->beta * c[j]);
        }
    }
}

static void *cpu_band_main(void *arg)
{
    const struct cpu_band *band = arg;
    cpu_band_run(band->p, band->row_begin, band->row_end);
    return NULL;
}

void sgemm_cpu(const struct sgemm_problem *p, int threads)
{
    if (p->m < 1 || p->n < 1)
        return;
    if (threads < 1)
        threads = 1;
    if (threads > CPU_MAX_THREADS)
        threads = CPU_MAX_THREADS;
    if (threads > p->m)
        threads = p->m;
    struct cpu_band bands[CPU_MAX_THREADS];
    pthread_t ids[CPU_MAX_THREADS];
    int started = 0;
    for (int t = 0; t < threads; t++) {
        bands[t].p = p;
        bands[t].row_begin = (int)((long)p->m * t / threads);
        bands[t].row_end = (int)((long)p->m * (t + 1) / threads);
    }
    /* Band 0 runs on the calling thread; a band whose thread cannot be
     * created runs there too, so the result never depends on resources. */
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&ids[started], NULL, cpu_band_main, &bands[t]) == 0)
            started++;
        else
            cpu_band_run(p, bands[t].row_begin, bands[t].row_end);
    }
    cpu_band_run(p, bands[0].row_begin, bands[0].row_end);
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
}
