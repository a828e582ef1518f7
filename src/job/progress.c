#include "src/job/progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "src/job/report.h"

#define SHOW_AFTER_MS 1000.0
#define REDRAW_MS 100

/* Called with the lock held. */
static void erase(struct gc_progress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = 0;
    }
}

static void *ticker(void *arg)
{
    struct gc_progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += REDRAW_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        int rc = pthread_cond_timedwait(&p->wake, &p->lock, &until);
        if (p->stop || rc != ETIMEDOUT || p->phase_start <= 0)
            continue;
        double elapsed = now_ms() - p->phase_start;
        if (elapsed >= SHOW_AFTER_MS) {
            fprintf(stderr, "\r\033[Kgemmcli: %s ... %.1f s", p->phase, elapsed / 1000.0);
            fflush(stderr);
            p->drawn = 1;
        }
    }
    erase(p);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void progress_begin(struct gc_progress *p, int quiet)
{
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->phase[0] = '\0';
    p->phase_start = 0;
    p->stop = p->drawn = 0;
    if (!p->enabled)
        return;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (pthread_create(&p->thread, NULL, ticker, p) != 0) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->wake);
        p->enabled = 0;
    }
}

void progress_phase(struct gc_progress *p, const char *fmt, ...)
{
    if (!p->enabled)
        return;
    pthread_mutex_lock(&p->lock);
    erase(p);
    char raw[sizeof p->phase];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* It names files, which must not move the cursor. */
    gc_escape(p->phase, sizeof p->phase, raw);
    p->phase_start = now_ms();
    pthread_mutex_unlock(&p->lock);
}

void progress_end(struct gc_progress *p)
{
    if (!p->enabled)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    p->enabled = 0;
}
