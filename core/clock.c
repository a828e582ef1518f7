#include "core/clock.h"

#include <stdlib.h>
#include <time.h>

double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double clock_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int host_begin(void *state)
{
    *(double *)state = clock_ms();
    return 0;
}

static int host_end(void *state, double *ms)
{
    *ms = clock_ms() - *(double *)state;
    return 0;
}

struct clock_timer clock_host_timer(double *state)
{
    return (struct clock_timer){ host_begin, host_end, state };
}

int clock_time_runs(const struct clock_timer *timer, int (*run)(void *arg, int i),
                    int (*before)(void *arg, int i), void *arg, const struct clock_plan *plan,
                    double *median_ms, int *runs)
{
    int want = plan->repeat > 0 ? plan->repeat : plan->min_runs > 0 ? plan->min_runs : 1;
    int cap = plan->repeat > 0 ? plan->repeat : plan->max_runs > want ? plan->max_runs : want;
    double *ms = malloc((size_t)cap * sizeof *ms);
    if (!ms)
        return -1;
    int rc = 0, done = 0;
    for (int i = plan->warmup ? -1 : 0; i < want && !rc; i++) {
        double t = 0;
        if ((before && (rc = before(arg, i))) || (rc = timer->begin(timer->state)) ||
            (rc = run(arg, i)) || (rc = timer->end(timer->state, &t)))
            break;
        if (i >= 0) {
            ms[done++] = t;
        } else if (plan->repeat == 1 && plan->own_warmup_ms > 0 && t >= plan->own_warmup_ms) {
            ms[done++] = t;
            break;
        } else if (plan->repeat <= 0) {
            /* The warm-up sizes the timed runs. */
            double fit = plan->budget_ms / (t > 1e-3 ? t : 1e-3);
            want = fit < want ? want : fit > cap ? cap : (int)fit;
            if (plan->max_run_ms > 0 && t > plan->max_run_ms)
                want = 1;
        }
    }
    if (!rc) {
        *median_ms = clock_median(ms, done);
        if (runs)
            *runs = done;
    }
    free(ms);
    return rc;
}
