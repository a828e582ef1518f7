/* cpu: the host transpose, for machines without a GPU and as a test oracle.
 *
 * Cache blocking: a 64 x 64 block of `in` (4 to 32 KB) is read row by row
 * and written column by column while both stay in L1, instead of striding
 * through memory a whole output row apart for every element.  Large
 * matrices are split by bands of output rows over one thread per core, so
 * no two threads write the same cache line.
 *
 * gemmcli's own.  Run and checked by (no GPU needed):
 *   gemmcli transpose x.npy -o y.npy --kernel cpu --verify --repeat 20 */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include "kernels/transpose.h"

enum {
    cpu_block = 64,
    cpu_max_threads = 64,
};
/* Below this many bytes the threads cost more than they save. */
static const size_t cpu_parallel_bytes = (size_t)4 << 20;

struct cpu_band {
    const struct transpose_problem *p;
    int c_begin, c_end;   /* input columns = output rows of this band */
};

/* One function per element type, so that each inner loop moves a known
 * type (the compiler vectorises none of this, but a known-size load and
 * store is what keeps it fast). */
#define CPU_BAND_FN(name, type)                                                  \
    static void name(const struct transpose_problem *p, int c_begin, int c_end)  \
    {                                                                            \
        const type *in = p->in;                                                  \
        type *out = p->out;                                                      \
        const size_t rows = (size_t)p->rows, cols = (size_t)p->cols;             \
        for (size_t cb = (size_t)c_begin; cb < (size_t)c_end; cb += cpu_block) { \
            size_t ce = cb + cpu_block < (size_t)c_end ? cb + cpu_block : (size_t)c_end; \
            for (size_t rb = 0; rb < rows; rb += cpu_block) {                    \
                size_t re = rb + cpu_block < rows ? rb + cpu_block : rows;       \
                for (size_t c = cb; c < ce; c++)                                 \
                    for (size_t r = rb; r < re; r++)                             \
                        out[c * rows + r] = in[r * cols + c];                    \
            }                                                                    \
        }                                                                        \
    }

CPU_BAND_FN(cpu_band_u8, uint8_t)
CPU_BAND_FN(cpu_band_u16, uint16_t)
CPU_BAND_FN(cpu_band_u32, uint32_t)
CPU_BAND_FN(cpu_band_u64, uint64_t)

static void cpu_band_run(const struct transpose_problem *p, int c_begin, int c_end)
{
    switch (p->elem_size) {
    case 1: cpu_band_u8(p, c_begin, c_end); break;
    case 2: cpu_band_u16(p, c_begin, c_end); break;
    case 4: cpu_band_u32(p, c_begin, c_end); break;
    case 8: cpu_band_u64(p, c_begin, c_end); break;
    }
}

static void *cpu_band_thread(void *arg)
{
    const struct cpu_band *b = arg;
    cpu_band_run(b->p, b->c_begin, b->c_end);
    return NULL;
}

void transpose_cpu_host(const struct transpose_problem *p)
{
    size_t bytes = (size_t)p->rows * (size_t)p->cols * p->elem_size;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int blocks = (p->cols + cpu_block - 1) / cpu_block;
    int threads = online > 1 ? (int)(online < cpu_max_threads ? online : cpu_max_threads) : 1;
    if (threads > blocks)
        threads = blocks;
    if (bytes < cpu_parallel_bytes || threads < 2) {
        cpu_band_run(p, 0, p->cols);
        return;
    }

    struct cpu_band bands[cpu_max_threads];
    pthread_t ids[cpu_max_threads];
    int started[cpu_max_threads];
    for (int t = 0; t < threads; t++) {
        /* Band edges on block boundaries keep the threads' output rows apart. */
        bands[t].p = p;
        bands[t].c_begin = (int)((long long)blocks * t / threads) * cpu_block;
        int end = (int)((long long)blocks * (t + 1) / threads) * cpu_block;
        bands[t].c_end = end < p->cols ? end : p->cols;
    }
    /* Band 0 runs on the calling thread; a band whose thread cannot start
     * runs here too, so the result never depends on thread creation. */
    for (int t = 1; t < threads; t++)
        started[t] = pthread_create(&ids[t], NULL, cpu_band_thread, &bands[t]) == 0;
    cpu_band_run(p, bands[0].c_begin, bands[0].c_end);
    for (int t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(ids[t], NULL);
        else
            cpu_band_run(p, bands[t].c_begin, bands[t].c_end);
    }
}
