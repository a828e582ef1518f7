/* Safe output.
 *
 * A regular file (new, or one being replaced) is written to a temporary
 * file in the target's directory and renamed over the target only when
 * everything was written: a failed run leaves no partial file and never
 * clobbers an existing one.  The temporary file gets the replaced file's
 * mode and, where permitted, its owner and group (a new file gets
 * 0666 & ~umask); a symbolic link to a regular file is kept and its target
 * replaced.  SIGINT, SIGTERM and SIGHUP remove the temporary file before
 * the process dies of the signal.
 *
 * Everything else is written in place, never replaced: standard output
 * ('-'), a path that names one of this process's open descriptors
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a link to one of these),
 * and anything that is not a regular file (a FIFO, a device). */
#ifndef GC_OUTPUT_H
#define GC_OUTPUT_H

#include <stdio.h>

struct gc_output {
    const char *path;     /* as given; "-" for stdout */
    const char *name;     /* for messages */
    char *target;         /* the regular file the rename replaces */
    char *tmp_path;       /* NULL when writing in place */
    int slot;             /* in the signal handler's list, plus one; 0: none */
    FILE *f;
};

/* Opens the temporary file, or the target in place.  `binary` output is
 * refused when it would go to a terminal.  Returns 0, GC_EXIT_USAGE or
 * GC_EXIT_OUTPUT. */
int output_begin(struct gc_output *o, const char *path, int binary);
/* Flushes, checks for write errors and renames into place; on failure the
 * temporary file is removed.  Returns 0 or GC_EXIT_OUTPUT. */
int output_commit(struct gc_output *o);
/* Removes the temporary file; safe to call after a failed commit and on an
 * output never begun (zeroed). */
void output_abort(struct gc_output *o);

/* The signal handling output_begin sets up, for a process that writes
 * into a temporary file another process began (an MPI rank's block): past
 * the file-size limit its writes then fail with EFBIG instead of killing
 * it. */
void output_catch_signals(void);

/* 1 when `path` ("-", /dev/stdout, /proc/self/fd/1, ...) writes to this
 * process's standard output, where only matrix data may go. */
int output_is_stdout(const char *path);

/* Makes sure descriptors 0, 1 and 2 are open, so that no file gemmcli
 * opens takes their place; a closed one is occupied by /dev/null opened so
 * that using it fails (stdout: reading only), as writing to a closed
 * stdout must.  Call first in main. */
void output_guard_std_fds(void);

#endif
