/* One error idiom for the whole program.
 *
 * Functions return 0 on success or one of the GC_EXIT_* statuses below, and
 * report what went wrong through gc_fail() on the way out.  Only main()
 * turns that status into the process's exit status. */
#ifndef GC_ERROR_H
#define GC_ERROR_H

#include <stddef.h>

enum gc_status {
    GC_OK = 0,
    GC_EXIT_VERIFY = 1,   /* --verify found an error above tolerance */
    GC_EXIT_USAGE = 2,    /* bad command line */
    GC_EXIT_INPUT = 3,    /* bad input: format, dtype, shape; or a problem too large
                             for host memory (every host allocation failure) */
    GC_EXIT_OUTPUT = 4,   /* cannot write the output, or another I/O error */
    GC_EXIT_GPU = 5,      /* no device, out of device memory, launch failure */
};

/* Prints "gemmcli: <message>\n" to stderr and returns `status`, so that
 * callers can write `return gc_fail(GC_EXIT_INPUT, "%s: truncated", name);`.
 * A message is one write(2), with what it quotes (file names, arguments)
 * escaped as gc_escape does. */
int gc_fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "gemmcli: warning: <message>\n" to stderr. */
void gc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "gemmcli: note: <message>\n" to stderr: something the user may
 * want to know that is not wrong. */
void gc_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Messages held back: while a thread has a capture set, gc_fail, gc_warn
 * and gc_note on that thread append to it instead of writing to stderr, so
 * that work done ahead on a helper thread reports its fault only if the
 * work before it turns out well. */
struct gc_capture {
    char text[1024];
    size_t len;
};

/* Sets (or, with NULL, clears) the calling thread's capture. */
void gc_capture_set(struct gc_capture *c);
/* Writes what a capture holds to stderr. */
void gc_capture_emit(const struct gc_capture *c);

/* Names the process in every message after "gemmcli: " (one of several
 * MPI ranks: "rank 2 of 4: "); call once, before any thread starts. */
void gc_error_origin(const char *who);

/* `text` as a message shows it, into out[0..cap) (NUL-terminated, cut
 * short where it would not fit): backslash as \\, newline, tab and return
 * as \n, \t, \r, other control characters and bytes that are not UTF-8
 * as \xNN, so that no name can move the cursor or forge a line.  Returns
 * the length written. */
size_t gc_escape(char *out, size_t cap, const char *text);

/* The name to show for a path in messages ("<stdin>"/"<stdout>" for "-"). */
const char *gc_display_name(const char *path, int is_output);

#endif
