/* A new file that takes its name (replacing whatever had it) only once it
 * is complete, and that a dead process does not leave behind.
 *
 * Where the file system and /proc allow it, the file has no name while it
 * is written (O_TMPFILE): a process killed by anything, SIGKILL included,
 * leaves nothing.  On commit it is linked in under a hidden name and
 * renamed over the target, since a link cannot replace a file.
 *
 * Otherwise, and when another process must open it by path (an MPI rank),
 * it is a named file beside the target, .gemmcli-NAME.XXXXXX (.gemmcli.XXXXXX
 * when that would pass the directory's name limit), that the fatal signals
 * remove before the process dies of them.  Such a file is held under an
 * exclusive flock(2) lock as long as its writer lives, so that what a
 * SIGKILL leaves can be told from a file being written: creating a file
 * first removes the stale ones in its directory, those of this program's
 * names that are regular files of the caller's, mode 0600, with one link,
 * whose lock nobody holds and that changed no less than NEWFILE_STALE_S
 * seconds ago.
 *
 * The paths to remove on a signal are the one piece of process-wide
 * mutable state here, because a signal handler can reach nothing else. */
#ifndef GC_NEWFILE_H
#define GC_NEWFILE_H

/* A temporary file younger than this is never taken for stale: its writer
 * may not yet have locked it. */
#define NEWFILE_STALE_S 5

struct gc_newfile {
    int fd;            /* the file being written (mode 0600); -1 when none */
    char *target;      /* the name it takes on commit */
    char *tmp_path;    /* its temporary name; NULL while it has none */
    int slot;          /* in the signal handlers' list, plus one; 0: not listed */
};

enum {
    NEWFILE_NAMED = 1,   /* the file must have a name from the start */
};

/* Removes the stale temporary files of target's directory, then creates the
 * file (unnamed where possible, unless `flags` has NEWFILE_NAMED).  Returns
 * 0, or an errno value with nf->fd -1. */
int newfile_create(struct gc_newfile *nf, const char *target, int flags);

/* Gives the file the target's name and closes it.  Returns 0, or an errno
 * value with the file still to discard. */
int newfile_commit(struct gc_newfile *nf);

/* Removes and closes the file; safe on one never created (zeroed, or fd -1)
 * and after a failed commit. */
void newfile_discard(struct gc_newfile *nf);

/* Every temporary file of this process removed, the process dies of `sig`
 * with its default action (its parent sees it killed by that signal).
 * Async-signal-safe: for other signal handlers. */
void newfile_die_of(int sig);

#endif
