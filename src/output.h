/* Safe output: results go to a temporary file in the target's directory,
 * renamed over the target only when everything was written, so that a
 * failed run leaves no partial file and never clobbers an existing one. */
#ifndef GC_OUTPUT_H
#define GC_OUTPUT_H

#include <stdio.h>

struct gc_output {
    const char *path;     /* as given; "-" for stdout */
    const char *name;     /* for messages */
    char *tmp_path;       /* NULL for stdout */
    FILE *f;
};

/* Opens the temporary file (or stdout).  `binary` output is refused when
 * it would go to a terminal.  Returns 0 or GC_EXIT_OUTPUT. */
int output_begin(struct gc_output *o, const char *path, int binary);
/* Flushes, checks for write errors, syncs and renames into place. */
int output_commit(struct gc_output *o);
/* Removes the temporary file; safe to call after a failed commit. */
void output_abort(struct gc_output *o);

#endif
