#include "core/newfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the signal handlers' list of temporary files ----
 *
 * Each path is stored before its slot is marked used, so that a handler
 * (which may interrupt anything) only ever sees complete paths. */

enum { TMP_SLOTS = 8 };
static char tmp_slot_path[TMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t tmp_slot_used[TMP_SLOTS];
static pthread_mutex_t tmp_slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

void newfile_die_of(int sig)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (tmp_slot_used[i])
            unlink(tmp_slot_path[i]);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* Pending while its handler runs; delivered once unblocked. */
    raise(sig);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    _exit(128 + sig);
}

static void on_fatal_signal(int sig)
{
    newfile_die_of(sig);
}

/* Every signal whose default action ends the process and that a handler
 * may catch, but SIGPIPE (whose handling depends on the descriptor that
 * met it: src/job/output.c) and SIGXFSZ (ignored, so that a write past the
 * size limit fails with EFBIG and is reported). */
static void install_handlers(void)
{
    static const int sigs[] = {
        SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM,
        SIGPROF, SIGPOLL, SIGPWR, SIGSTKFLT, SIGSYS, SIGTRAP,
        SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL,
    };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        /* A signal the caller ignores (nohup, a background job) stays
         * ignored, and one another handler took (a sanitizer's) is left
         * to it. */
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigfillset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Returns the slot's number plus one, or 0 when none could be had. */
static int claim_slot(const char *path)
{
    if (strlen(path) >= PATH_MAX)
        return 0;
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

/* ---- names ---- */

static const char name_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static int is_name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* 1 for a name this program gives its temporary files: .gemmcli.XXXXXX or
 * .gemmcli-NAME.XXXXXX, the X from name_chars (mkstemp's). */
static int is_temp_name(const char *n)
{
    size_t len = strlen(n);
    if (len < 15 || n[len - 7] != '.')
        return 0;
    for (size_t i = len - 6; i < len; i++)
        if (!is_name_char(n[i]))
            return 0;
    if (strncmp(n, ".gemmcli.", 9) == 0)
        return len == 15;
    return strncmp(n, ".gemmcli-", 9) == 0 && len > 16;
}

/* target's directory ("." for a bare name), malloc'd. */
static char *dir_of(const char *target)
{
    const char *slash = strrchr(target, '/');
    if (!slash)
        return strdup(".");
    size_t len = slash == target ? 1 : (size_t)(slash - target);
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, target, len);
        d[len] = '\0';
    }
    return d;
}

/* The temporary name beside `target`, ending in XXXXXX, malloc'd. */
static char *temp_template(const char *target, const char *dir)
{
    const char *slash = strrchr(target, '/');
    size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = slash ? slash + 1 : target;
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

/* Six name characters; a name that is taken already is only retried, so
 * the clock serves where getrandom cannot. */
static void fill_random(char *x)
{
    unsigned char r[6];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long long v = (unsigned long long)ts.tv_nsec ^ (unsigned long long)getpid() << 32;
        for (size_t i = 0; i < sizeof r; i++, v = v * 6364136223846793005ull + 1442695040888963407ull)
            r[i] = (unsigned char)(v >> 56);
    }
    for (size_t i = 0; i < sizeof r; i++)
        x[i] = name_chars[r[i] % (sizeof name_chars - 1)];
}

/* ---- stale files ---- */

/* A temporary file is mode 0600 until its writer commits it: a file of
 * another mode with such a name is someone's output. */
static int may_be_stale(const struct stat *st, const struct timespec *now)
{
    return S_ISREG(st->st_mode) && (st->st_mode & 07777) == 0600 && st->st_uid == geteuid() &&
           st->st_nlink == 1 && st->st_ctim.tv_sec <= now->tv_sec - NEWFILE_STALE_S;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Removes `name` in the directory `dfd` if it is a stale temporary file:
 * its lock taken shows that its writer is gone, and the name is checked to
 * still be that file once the lock is held. */
static void remove_if_stale(int dfd, const char *name, const struct timespec *now)
{
    struct stat seen, held, again;
    if (fstatat(dfd, name, &seen, AT_SYMLINK_NOFOLLOW) != 0 || !may_be_stale(&seen, now))
        return;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &held) == 0 &&
        fstatat(dfd, name, &again, AT_SYMLINK_NOFOLLOW) == 0 && same_file(&seen, &held) &&
        same_file(&held, &again) && may_be_stale(&again, now))
        unlinkat(dfd, name, 0);
    close(fd);
}

static void remove_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (struct dirent *e; (e = readdir(d));)
        if (is_temp_name(e->d_name))
            remove_if_stale(dirfd(d), e->d_name, &now);
    closedir(d);
}

/* ---- creating and committing ---- */

/* An unnamed file in `dir`, or -1.  It must be reachable as
 * /proc/self/fd/N, through which it is linked in on commit. */
static int create_unnamed(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    struct stat by_fd, by_proc;
    if (fstat(fd, &by_fd) != 0 || stat(proc, &by_proc) != 0 || !same_file(&by_fd, &by_proc)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A named file from the template, locked and listed for the handlers with
 * every signal blocked, so that no handler can miss it. */
static int create_named(struct gc_newfile *nf, char *template)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int fd = mkostemp(template, O_CLOEXEC);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        /* Without locks (some network file systems), the file is never
         * taken for stale: a failure here only costs that. */
        (void)flock(fd, LOCK_EX | LOCK_NB);
        /* Whatever the umask: the mode marks it as a file being written. */
        fchmod(fd, 0600);
        nf->tmp_path = template;
        nf->slot = claim_slot(template);
        nf->fd = fd;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

int newfile_create(struct gc_newfile *nf, const char *target, int flags)
{
    memset(nf, 0, sizeof *nf);
    nf->fd = -1;
    pthread_once(&handlers_once, install_handlers);
    char *dir = dir_of(target);
    char *template = dir ? temp_template(target, dir) : NULL;
    nf->target = strdup(target);
    if (!dir || !template || !nf->target) {
        free(dir);
        free(template);
        newfile_discard(nf);
        return ENOMEM;
    }
    remove_stale(dir);
    int fd = flags & NEWFILE_NAMED ? -1 : create_unnamed(dir);
    free(dir);
    if (fd >= 0) {
        (void)flock(fd, LOCK_EX | LOCK_NB);
        nf->fd = fd;
        free(template);
        return 0;
    }
    int err = create_named(nf, template);
    if (err) {
        free(template);
        newfile_discard(nf);
    }
    return err;
}

/* An unnamed file linked in under a fresh temporary name, so that a
 * rename can put it over the target. */
static int link_in(struct gc_newfile *nf)
{
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", nf->fd);
    char *dir = dir_of(nf->target);
    char *name = dir ? temp_template(nf->target, dir) : NULL;
    free(dir);
    if (!name)
        return ENOMEM;
    size_t len = strlen(name);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int err = EEXIST;
    for (int tries = 0; tries < 100 && err == EEXIST; tries++) {
        fill_random(name + len - 6);
        err = linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
    }
    if (!err) {
        nf->tmp_path = name;
        nf->slot = claim_slot(name);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err)
        free(name);
    return err;
}

int newfile_commit(struct gc_newfile *nf)
{
    int err = nf->tmp_path ? 0 : link_in(nf);
    if (err)
        return err;
    /* The lock stays held until the file has its name. */
    if (rename(nf->tmp_path, nf->target) != 0)
        return errno;
    release_slot(nf->slot);
    nf->slot = 0;
    free(nf->tmp_path);
    nf->tmp_path = NULL;
    newfile_discard(nf);
    return 0;
}

void newfile_discard(struct gc_newfile *nf)
{
    if (nf->tmp_path)
        unlink(nf->tmp_path);
    release_slot(nf->slot);
    nf->slot = 0;
    free(nf->tmp_path);
    nf->tmp_path = NULL;
    /* A zeroed one was never created: its fd 0 is not its own. */
    if (nf->target && nf->fd >= 0)
        close(nf->fd);
    nf->fd = -1;
    free(nf->target);
    nf->target = NULL;
}
