#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"

/* ---- the signal handler's list of temporary files ----
 *
 * The one piece of process-wide mutable state in gemmcli, because a signal
 * handler can reach nothing else: the paths of the temporary files being
 * written, each stored before its slot is marked used, so that the handler
 * (which may interrupt anything) only ever sees complete paths. */

enum { TMP_SLOTS = 4 };
static char tmp_slot_path[TMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t tmp_slot_used[TMP_SLOTS];
static pthread_mutex_t tmp_slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

static void remove_tmp_and_die(int sig)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (tmp_slot_used[i])
            unlink(tmp_slot_path[i]);
    /* Die of the same signal, so that the parent sees "killed by SIGxxx". */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        /* A signal the caller ignores (nohup, a background job) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_tmp_and_die;
        sigfillset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    /* Past the file-size limit a write then fails with EFBIG, which is
     * reported and cleaned up like any write error, instead of killing the
     * process with the temporary file left behind. */
    struct sigaction old;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        signal(SIGXFSZ, SIG_IGN);
}

void output_catch_signals(void)
{
    pthread_once(&handlers_once, install_handlers);
}

/* Returns the slot's number plus one, or 0 when none could be had. */
static int claim_slot(const char *path)
{
    if (strlen(path) >= PATH_MAX)
        return 0;
    pthread_once(&handlers_once, install_handlers);
    int slot = 0;
    pthread_mutex_lock(&tmp_slot_lock);
    for (int i = 0; i < TMP_SLOTS && !slot; i++)
        if (!tmp_slot_used[i]) {
            memcpy(tmp_slot_path[i], path, strlen(path) + 1);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            tmp_slot_used[i] = 1;
            slot = i + 1;
        }
    pthread_mutex_unlock(&tmp_slot_lock);
    return slot;
}

static void release_slot(int slot)
{
    if (slot > 0)
        tmp_slot_used[slot - 1] = 0;
}

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

/* The temporary file's name beside `target`: .gemmcli-NAME.XXXXXX, or
 * .gemmcli.XXXXXX where that would pass the directory's name limit. */
static char *tmp_name(const char *target)
{
    const char *slash = strrchr(target, '/');
    size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = slash ? slash + 1 : target;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", dir_len ? (int)dir_len : 1, dir_len ? target : ".");
    long name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max <= 0)
        name_max = 255;
    int long_name = strlen(base) + sizeof ".gemmcli-.XXXXXX" - 1 > (size_t)name_max;
    size_t len = dir_len + strlen(base) + sizeof ".gemmcli-.XXXXXX";
    char *t = malloc(len);
    if (t && long_name)
        snprintf(t, len, "%.*s.gemmcli.XXXXXX", (int)dir_len, target);
    else if (t)
        snprintf(t, len, "%.*s.gemmcli-%s.XXXXXX", (int)dir_len, target, base);
    return t;
}

/* A regular file, new or replaced: a temporary file renamed into place. */
static int begin_replace(struct gc_output *o, const struct stat *old)
{
    o->tmp_path = tmp_name(o->target);
    if (!o->tmp_path)
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", o->name);
    int fd = mkostemp(o->tmp_path, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        return gc_fail(GC_EXIT_OUTPUT, "%s: cannot create a file in its directory: %s",
                       o->name, strerror(e));
    }
    o->slot = claim_slot(o->tmp_path);
    if (old) {
        /* The replacement keeps the owner, group and mode of the file it
         * replaces: owner and group where this user may set them (root;
         * or the group alone, for one of the user's groups), and the mode
         * after them, since a change of owner clears set-id bits. */
        if (fchown(fd, old->st_uid, old->st_gid) != 0)
            (void)!fchown(fd, (uid_t)-1, old->st_gid);
        fchmod(fd, old->st_mode & 07777);
        if (old->st_nlink > 1)
            gc_warn("%s has %ju hard links; the others keep the old contents "
                    "(the result is a new file)", o->name, (uintmax_t)old->st_nlink);
    } else {
        /* mkstemp makes the file 0600; a new file gets what '>' would give. */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", o->name, strerror(e));
    }
    return 0;
}

int output_begin(struct gc_output *o, const char *path, int binary)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->name = gc_display_name(path, 1);
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
        return begin_replace(o, NULL);
    }
    if (S_ISREG(st.st_mode))
        return begin_replace(o, &st);
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
    if (o->tmp_path && rename(o->tmp_path, o->target) != 0) {
        e = errno;
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: cannot rename the finished output into place: %s",
                       o->name, strerror(e));
    }
    release_slot(o->slot);
    o->slot = 0;
    free(o->tmp_path);
    o->tmp_path = NULL;
    free(o->target);
    o->target = NULL;
    return 0;
}

void output_abort(struct gc_output *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp_path) {
        unlink(o->tmp_path);
        free(o->tmp_path);
        o->tmp_path = NULL;
    }
    release_slot(o->slot);
    o->slot = 0;
    free(o->target);
    o->target = NULL;
}
