/* A progress line on stderr for phases that run longer than a second: the
 * phase and its elapsed time, redrawn in place and erased when the phase
 * ends.  Only when stderr is a terminal and neither --quiet nor --json was
 * given; otherwise every call does nothing. */
#ifndef GC_PROGRESS_H
#define GC_PROGRESS_H

#include <pthread.h>

struct gc_progress {
    int enabled;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    char phase[160];
    double phase_start;      /* ms; 0 while no phase runs */
    int stop, drawn;
};

void progress_begin(struct gc_progress *p, int quiet);
/* Starts a phase named by the printf-style arguments; ends the last one. */
void progress_phase(struct gc_progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void progress_end(struct gc_progress *p);

#endif
