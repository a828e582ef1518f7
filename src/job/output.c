#include "src/job/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/newfile.h"

/* ---- what a path names ---- */

/* Digits only, as a descriptor number; -1 otherwise. */
static int parse_fd(const char *s)
{
    if (!*s || strlen(s) > 9)
        return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    return atoi(s);
}

/* The descriptor a path names by itself (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N, /proc/<this pid>/fd/N), else -1. */
static int fd_by_name(const char *p)
{
    static const struct { const char *name; int fd; } std_names[] = {
        { "/dev/stdin", 0 }, { "/dev/stdout", 1 }, { "/dev/stderr", 2 },
    };
    for (size_t i = 0; i < sizeof std_names / sizeof std_names[0]; i++)
        if (strcmp(p, std_names[i].name) == 0)
            return std_names[i].fd;
    static const char *const prefixes[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/" };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(p, prefixes[i], strlen(prefixes[i])) == 0)
            return parse_fd(p + strlen(prefixes[i]));
    char own[64];
    int n = snprintf(own, sizeof own, "/proc/%ld/fd/", (long)getpid());
    if (strncmp(p, own, (size_t)n) == 0)
        return parse_fd(p + n);
    return -1;
}

/* Follows the symbolic links in the last component of `path`.  Sets *fd to
 * the descriptor where the chain reaches one of the names above (else -1)
 * and returns the final path, malloc'd (it may not exist), or NULL with
 * errno set. */
static char *resolve_links(const char *path, int *fd)
{
    char *p = strdup(path);
    *fd = -1;
    for (int hops = 0; p && hops < 40; hops++) {
        if ((*fd = fd_by_name(p)) >= 0)
            return p;
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
            return p;
        char target[PATH_MAX];
        ssize_t n = readlink(p, target, sizeof target - 1);
        if (n < 0) {
            free(p);
            return NULL;
        }
        target[n] = '\0';
        char *next;
        const char *slash = strrchr(p, '/');
        if (target[0] == '/' || !slash) {
            next = strdup(target);
        } else {
            size_t dir = (size_t)(slash - p) + 1;
            next = malloc(dir + (size_t)n + 1);
            if (next) {
                memcpy(next, p, dir);
                memcpy(next + dir, target, (size_t)n + 1);
            }
        }
        free(p);
        p = next;
    }
    if (p) {
        free(p);
        errno = ELOOP;
    }
    return NULL;
}

int output_is_stdout(const char *path)
{
    if (strcmp(path, "-") == 0)
        return 1;
    int fd;
    char *final = resolve_links(path, &fd);
    free(final);
    return fd == STDOUT_FILENO;
}

void output_guard_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* open() returns the lowest free descriptor: this one.  Standard
         * input is held write-only and standard output read-only, so that
         * using them fails as a closed descriptor would. */
        int got = open("/dev/null", fd == 0 ? O_WRONLY : fd == 1 ? O_RDONLY : O_WRONLY);
        if (got >= 0 && got != fd)
            close(got);
    }
}

/* ---- writing ---- */

static int refuse_terminal(const char *name)
{
    return gc_fail(GC_EXIT_USAGE, "%s: refusing to write binary data to a terminal "
                   "(redirect it, or use --format csv)", name);
}

/* Writes in place to an open descriptor of this process. */
static int begin_descriptor(struct gc_output *o, int fd, int binary)
{
    if (fd == STDOUT_FILENO) {
        if (binary && isatty(STDOUT_FILENO))
            return refuse_terminal(o->name);
        o->f = stdout;
        return 0;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl == -1 || (fl & O_ACCMODE) == O_RDONLY)
        return gc_fail(GC_EXIT_OUTPUT, "%s: descriptor %d is not open for writing", o->name, fd);
    if (binary && isatty(fd))
        return refuse_terminal(o->name);
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    o->f = dup_fd >= 0 ? fdopen(dup_fd, "wb") : NULL;
    if (!o->f) {
        int e = errno;
        if (dup_fd >= 0)
            close(dup_fd);
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", o->name, strerror(e));
    }
    return 0;
}

/* 1 when the caller may not open the existing file `target` for writing
 * (it is write-protected, or another user's): replacing it would undo a
 * protection that the shell's '>' respects. */
static int write_protected(const char *target)
{
    return faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) != 0 &&
           (errno == EACCES || errno == EPERM);
}

/* A regular file, new or replaced: a new file that takes the target's
 * name on commit (core/newfile.h). */
static int begin_replace(struct gc_output *o, const struct stat *old, int flags)
{
    if (old && !(flags & OUTPUT_FORCE) && write_protected(o->target)) {
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: not replacing a file you may not write to "
                       "(write-protected, or another user's); --force replaces it", o->name);
    }
    int err = newfile_create(&o->file, o->target, flags & OUTPUT_NAMED ? NEWFILE_NAMED : 0);
    if (err) {
        output_abort(o);
        return gc_fail(err == ENOMEM ? GC_EXIT_INPUT : GC_EXIT_OUTPUT,
                       "%s: cannot create a file in its directory: %s", o->name, strerror(err));
    }
    o->replacing = 1;
    if (old) {
        o->old = *old;
        o->has_old = 1;
        if (old->st_nlink > 1)
            gc_warn("%s has %ju hard links; the others keep the old contents "
                    "(the result is a new file)", o->name, (uintmax_t)old->st_nlink);
    } else {
        o->umask = umask(0);
        umask(o->umask);
    }
    int fd = fcntl(o->file.fd, F_DUPFD_CLOEXEC, 3);
    o->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!o->f) {
        err = errno;
        if (fd >= 0)
            close(fd);
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", o->name, strerror(err));
    }
    return 0;
}

/* The file written gets, just before it takes the target's name, the
 * owner, group and mode of the file it replaces (owner and group where
 * this user may set them: root; or the group alone, for one of the user's
 * groups; the mode after them, since a change of owner clears set-id
 * bits), or for a new file what '>' would give.  Until then it is the
 * writer's own, mode 0600, so that a stale one is recognisably the
 * writer's. */
static void give_mode(const struct gc_output *o)
{
    int fd = o->file.fd;
    if (o->has_old) {
        if (fchown(fd, o->old.st_uid, o->old.st_gid) != 0)
            (void)!fchown(fd, (uid_t)-1, o->old.st_gid);
        fchmod(fd, o->old.st_mode & 07777);
    } else {
        fchmod(fd, 0666 & ~o->umask);
    }
}

int output_check_name(const char *path)
{
    if (!*path)
        return gc_fail(GC_EXIT_USAGE, "the output's name is empty (give a file name, or '-' "
                       "for standard output)");
    int fd = -1;
    if (strcmp(path, "-") != 0)
        free(resolve_links(path, &fd));
    if (fd == STDERR_FILENO)
        return gc_fail(GC_EXIT_USAGE, "%s: is standard error, where gemmcli's messages go: "
                       "write the result to a file or to standard output ('-')", path);
    return 0;
}

int output_begin(struct gc_output *o, const char *path, int flags)
{
    memset(o, 0, sizeof *o);
    o->file.fd = -1;
    o->path = path;
    o->name = gc_display_name(path, 1);
    int binary = flags & OUTPUT_BINARY;
    int rc = output_check_name(path);
    if (rc)
        return rc;
    if (strcmp(path, "-") == 0)
        return begin_descriptor(o, STDOUT_FILENO, binary);

    int fd;
    o->target = resolve_links(path, &fd);
    if (!o->target)
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(errno));
    if (fd >= 0) {
        free(o->target);
        o->target = NULL;
        return begin_descriptor(o, fd, binary);
    }
    struct stat st;
    if (stat(o->target, &st) != 0) {
        if (errno != ENOENT) {
            int e = errno;
            output_abort(o);
            return gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(e));
        }
        return begin_replace(o, NULL, flags);
    }
    if (S_ISREG(st.st_mode))
        return begin_replace(o, &st, flags);
    if (S_ISDIR(st.st_mode)) {
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: is a directory", path);
    }
    /* A FIFO, a device or a socket: nothing to replace, so write to it. */
    int wfd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (wfd < 0) {
        int e = errno;
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(e));
    }
    if (binary && isatty(wfd)) {
        close(wfd);
        output_abort(o);
        return refuse_terminal(path);
    }
    o->f = fdopen(wfd, "wb");
    if (!o->f) {
        int e = errno;
        close(wfd);
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(e));
    }
    return 0;
}

int output_commit(struct gc_output *o)
{
    /* No fsync: the rename already makes the output appear whole or not at
     * all to other processes, as with sort -o or gzip; syncing would add the
     * disk's latency to every run for protection only against power loss. */
    int failed = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (o->f != stdout && fclose(o->f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    o->f = NULL;
    if (failed) {
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", o->name, strerror(e));
    }
    if (o->replacing) {
        give_mode(o);
        if ((e = newfile_commit(&o->file))) {
            output_abort(o);
            return gc_fail(GC_EXIT_OUTPUT, "%s: cannot rename the finished output into "
                           "place: %s", o->name, strerror(e));
        }
    }
    o->replacing = 0;
    free(o->target);
    o->target = NULL;
    return 0;
}

void output_abort(struct gc_output *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    o->f = NULL;
    newfile_discard(&o->file);
    o->replacing = 0;
    free(o->target);
    o->target = NULL;
}

int output_replaces(const struct gc_output *o)
{
    return o->replacing;
}

/* Standard output's reader is gone when a write met a broken pipe there:
 * end as Unix filters do, killed by SIGPIPE and silent, after removing
 * any temporary file.  A broken pipe elsewhere (a FIFO named as the
 * output) stays a write error, reported by its writer. */
static void on_sigpipe(int sig)
{
    struct pollfd p = { .fd = STDOUT_FILENO, .events = 0, .revents = 0 };
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)))
        newfile_die_of(sig);
}

void output_signals_init(void)
{
    /* Past the file-size limit a write then fails with EFBIG, which every
     * writer reports as an output error (status 4), cleaning up as for any
     * other, instead of killing the process. */
    signal(SIGXFSZ, SIG_IGN);
    struct sigaction old, sa;
    /* A caller that ignores SIGPIPE gets a write error (status 4) instead. */
    if (sigaction(SIGPIPE, NULL, &old) != 0 || old.sa_handler == SIG_IGN)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigpipe;
    sigfillset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
}
