/* Time: a monotonic clock, and the one timing loop that the CLI, the bench
 * and the kernel tests share (a warm-up run, then timed runs, the median),
 * whatever does the timing: the host's clock here, CUDA events for device
 * work (kernels/timer.h). */
#ifndef GC_CLOCK_H
#define GC_CLOCK_H

/* Milliseconds on a monotonic clock. */
double clock_ms(void);

/* The median of n values (sorts them); 0 for n == 0. */
double clock_median(double *v, int n);

/* How one run is timed: begin() before it, end() after, which waits for it
 * and gives its time.  Both return 0 or a nonzero status. */
struct clock_timer {
    int (*begin)(void *state);
    int (*end)(void *state, double *ms);
    void *state;
};

/* The host's clock (state: a double). */
struct clock_timer clock_host_timer(double *state);

/* How many runs.  repeat > 0: exactly that many timed runs.  repeat == 0:
 * as many as fit budget_ms going by the warm-up run's time, within
 * [min_runs, max_runs], and one when the warm-up took over max_run_ms.
 * warmup == 0 skips the warm-up run (repeat must then be > 0).
 * own_warmup_ms > 0 with repeat == 1: a warm-up run that took at least
 * this long is timed as it is, not run again (what a warm-up saves, the
 * loading of the code and the clocks' ramp, is small beside it). */
struct clock_plan {
    int repeat;
    int warmup;
    double budget_ms, max_run_ms;
    int min_runs, max_runs;
    double own_warmup_ms;
};

/* run(arg, i) for i = -1 (the warm-up), 0, 1, ...; before(arg, i), if not
 * NULL, runs untimed ahead of each (to restore an output, say).  Stores the
 * median time of the timed runs and how many there were.  A nonzero status
 * from any callback stops the loop and is returned. */
int clock_time_runs(const struct clock_timer *timer, int (*run)(void *arg, int i),
                    int (*before)(void *arg, int i), void *arg, const struct clock_plan *plan,
                    double *median_ms, int *runs);

#endif
