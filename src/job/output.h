/* Safe output.
 *
 * A regular file (new, or one being replaced) is written to a new file in
 * the target's directory that takes the target's name only when everything
 * was written (core/newfile.h: unnamed while written where the file system
 * allows, so that even a killed run leaves nothing): a failed run leaves no
 * partial file and never clobbers an existing one.  The result gets the
 * replaced file's mode and, where permitted, its owner and group (a new
 * file gets 0666 & ~umask); a symbolic link to a regular file is kept and
 * its target replaced.  An existing file the caller may not write to is
 * not replaced unless forced.
 *
 * Everything else is written in place, never replaced: standard output
 * ('-'), a path that names one of this process's open descriptors
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a link to one of these),
 * and anything that is not a regular file (a FIFO, a device).  Standard
 * error is refused: messages go there. */
#ifndef GC_OUTPUT_H
#define GC_OUTPUT_H

#include <stdio.h>
#include <sys/stat.h>

#include "core/newfile.h"

struct gc_output {
    const char *path;     /* as given; "-" for stdout */
    const char *name;     /* for messages */
    char *target;         /* the path after its symbolic links */
    int replacing;        /* `file` takes the target's name on commit */
    struct gc_newfile file;
    struct stat old;      /* the file replaced, when has_old */
    int has_old;
    mode_t umask;         /* for a new file */
    FILE *f;
};

enum {
    OUTPUT_BINARY = 1,    /* refused on a terminal */
    OUTPUT_FORCE = 2,     /* replaces a file the caller may not write to */
    OUTPUT_NAMED = 4,     /* the new file has a name while written, for other
                             processes to open (MPI ranks) */
};

/* Opens the new file, or the target in place, as `flags` ask.  Returns 0,
 * GC_EXIT_USAGE or GC_EXIT_OUTPUT. */
int output_begin(struct gc_output *o, const char *path, int flags);
/* Flushes, checks for write errors and gives the result its name; on
 * failure the new file is removed.  Returns 0 or GC_EXIT_OUTPUT. */
int output_commit(struct gc_output *o);
/* Removes the new file; safe to call after a failed commit and on an
 * output never begun (zeroed). */
void output_abort(struct gc_output *o);

/* 1 when `o` writes a regular file that replaces the target on commit
 * (what can be written at offsets), 0 when it writes in place. */
int output_replaces(const struct gc_output *o);

/* 0 for a name an output may have, else GC_EXIT_USAGE after saying why:
 * an empty name, or one for standard error (where the result would be
 * mixed with the messages).  For checking before anything is read. */
int output_check_name(const char *path);

/* SIGXFSZ ignored, so that a write past the file-size limit fails with
 * EFBIG and is reported; SIGPIPE on standard output ends the process as
 * SIGPIPE does (its reader has gone), elsewhere it is a write error.  Call
 * first in main. */
void output_signals_init(void);

/* 1 when `path` ("-", /dev/stdout, /proc/self/fd/1, ...) writes to this
 * process's standard output, where only matrix data may go. */
int output_is_stdout(const char *path);

/* Makes sure descriptors 0, 1 and 2 are open, so that no file gemmcli
 * opens takes their place; a closed one is occupied by /dev/null opened so
 * that using it fails (stdout: reading only), as writing to a closed
 * stdout must.  Call first in main. */
void output_guard_std_fds(void);

#endif
