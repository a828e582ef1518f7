#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

static int isatty_path(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOCTTY);
    int tty = fd >= 0 && isatty(fd);
    if (fd >= 0)
        close(fd);
    return tty;
}

int output_begin(struct gc_output *o, const char *path, int binary)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->name = gc_display_name(path, 1);
    if (strcmp(path, "-") == 0) {
        if (binary && isatty(STDOUT_FILENO))
            return gc_fail(GC_EXIT_USAGE, "%s: refusing to write binary data to a terminal "
                           "(redirect it, or use --format csv)", o->name);
        o->f = stdout;
        return 0;
    }

    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return gc_fail(GC_EXIT_OUTPUT, "%s: is a directory", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device or a pipe (/dev/null, a FIFO): there is nothing to
         * replace atomically, so write to it directly. */
        if (binary && S_ISCHR(st.st_mode) && isatty_path(path))
            return gc_fail(GC_EXIT_USAGE, "%s: refusing to write binary data to a terminal", path);
        o->f = fopen(path, "wb");
        if (!o->f)
            return gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(errno));
        return 0;
    }

    /* The temporary file lives beside the target so that rename() is atomic. */
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t len = dir_len + strlen(base) + sizeof ".gemmcli-.XXXXXX";
    o->tmp_path = malloc(len);
    if (!o->tmp_path)
        return gc_fail(GC_EXIT_OUTPUT, "%s: out of memory", path);
    snprintf(o->tmp_path, len, "%.*s.gemmcli-%s.XXXXXX", (int)dir_len, path, base);

    int fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        return gc_fail(GC_EXIT_OUTPUT, "%s: cannot create a file in its directory: %s",
                       path, strerror(e));
    }
    /* mkstemp makes the file 0600; give the result the usual 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);

    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(e));
    }
    return 0;
}

int output_commit(struct gc_output *o)
{
    if (!o->tmp_path) {
        int failed = fflush(o->f) != 0 || ferror(o->f);
        int e = errno;
        if (o->f != stdout && fclose(o->f) != 0 && !failed) {
            failed = 1;
            e = errno;
        }
        o->f = NULL;
        if (failed)
            return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", o->name, strerror(e));
        return 0;
    }
    /* No fsync: the rename already makes the output appear whole or not at
     * all to other processes, as with sort -o or gzip; syncing would add the
     * disk's latency to every run for protection only against power loss. */
    int failed = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (fclose(o->f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    o->f = NULL;
    if (failed) {
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", o->path, strerror(e));
    }
    if (rename(o->tmp_path, o->path) != 0) {
        e = errno;
        output_abort(o);
        return gc_fail(GC_EXIT_OUTPUT, "%s: cannot rename the finished output into place: %s",
                       o->path, strerror(e));
    }
    free(o->tmp_path);
    o->tmp_path = NULL;
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
}
