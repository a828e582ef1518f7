#include "src/plan/tune_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/newfile.h"

#define HEADER_FMT "# gemmcli tune cache %d"
#define FIELDS 12
#define KEY_FIELDS 8

/* ---- keys ---- */

static int align_of(int64_t d)
{
    return d % 8 == 0 ? 8 : d % 4 == 0 ? 4 : 1;
}

void tune_bucket_text(int64_t d, char *buf, size_t n)
{
    if (d <= 16)
        snprintf(buf, n, "%lld/%d", (long long)d, align_of(d));
    else
        snprintf(buf, n, "q%ld/%d", lround(4.0 * log2((double)d)), align_of(d));
}

static int is_word(const char *s, size_t max, int (*ok)(int c))
{
    size_t len = 0;
    for (; s[len]; len++)
        if (!ok((unsigned char)s[len]))
            return 0;
    return len > 0 && len <= max;
}

static int sig_char(int c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static int kernel_char(int c) { return sig_char(c) || (c >= 'A' && c <= 'Z') || c == '_'; }
static int device_char(int c) { return c > ' ' && c != 0x7f; }

int tune_key_make(struct tune_key *key, const char *device, int cc_major, int cc_minor,
                  int sm_count, const char *sig, int64_t batch, int64_t m, int64_t n, int64_t k)
{
    char name[256], dims[4][16];
    size_t len = strlen(device);
    if (len == 0 || len >= sizeof name || !is_word(sig, 15, sig_char) || cc_major < 0 ||
        cc_minor < 0 || sm_count < 1 || batch < 1 || m < 1 || n < 1 || k < 1)
        return -1;
    for (size_t i = 0; i <= len; i++)
        name[i] = device[i] && !device_char((unsigned char)device[i]) ? '_' : device[i];
    int64_t d[4] = { batch, m, n, k };
    for (int i = 0; i < 4; i++)
        tune_bucket_text(d[i], dims[i], sizeof dims[i]);
    int w = snprintf(key->text, sizeof key->text, "%s %d.%d %d %s %s %s %s %s", name, cc_major,
                     cc_minor, sm_count, sig, dims[0], dims[1], dims[2], dims[3]);
    return w > 0 && (size_t)w < sizeof key->text ? 0 : -1;
}

/* ---- the path ---- */

int tune_cache_dir(char *buf, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    /* A relative XDG_CACHE_HOME is to be ignored (the XDG base directory
     * specification); a relative HOME would put the cache wherever the
     * command happens to run. */
    if (xdg && xdg[0] == '/')
        w = snprintf(buf, n, "%s/gemmcli", xdg);
    else if (home && home[0] == '/')
        w = snprintf(buf, n, "%s/.cache/gemmcli", home);
    else
        return -1;
    return w > 0 && (size_t)w < n ? 0 : -1;
}

int tune_cache_path(char *buf, size_t n)
{
    char dir[TUNE_PATH_MAX];
    if (tune_cache_dir(dir, sizeof dir) != 0)
        return -1;
    int w = snprintf(buf, n, "%s/tune.txt", dir);
    return w > 0 && (size_t)w < n ? 0 : -1;
}

/* ---- reading ---- */

/* The file's text, NUL-terminated, in *text (free it): TUNE_CACHE_OK, or
 * TUNE_CACHE_MISSING / TUNE_CACHE_FOREIGN with *text NULL; -1 when out of
 * memory. */
int tune_cache_read_text(const char *path, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    /* O_NONBLOCK: a FIFO at the path must not hang the run. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? TUNE_CACHE_MISSING : TUNE_CACHE_FOREIGN;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (size_t)st.st_size > TUNE_CACHE_MAX_BYTES) {
        close(fd);
        return TUNE_CACHE_FOREIGN;
    }
    /* The size may change under us: read to the end, one byte past the
     * limit at most. */
    size_t cap = (size_t)st.st_size + 1, used = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return -1;
    }
    for (;;) {
        if (used == cap) {
            if (cap > TUNE_CACHE_MAX_BYTES)
                break;
            size_t more = cap * 2 > TUNE_CACHE_MAX_BYTES + 1 ? TUNE_CACHE_MAX_BYTES + 1 : cap * 2;
            char *grown = realloc(buf, more + 1);
            if (!grown) {
                free(buf);
                close(fd);
                return -1;
            }
            buf = grown;
            cap = more;
        }
        ssize_t got = read(fd, buf + used, cap - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(buf);
            close(fd);
            return TUNE_CACHE_FOREIGN;
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    close(fd);
    int bad = used > TUNE_CACHE_MAX_BYTES;
    for (size_t i = 0; i < used && !bad; i++) {
        unsigned char c = (unsigned char)buf[i];
        bad = (c < ' ' && c != '\n' && c != '\t' && c != '\r') || c == 0x7f;
    }
    if (bad) {
        free(buf);
        return TUNE_CACHE_FOREIGN;
    }
    buf[used] = '\0';
    *text = buf;
    *len = used;
    return TUNE_CACHE_OK;
}

/* The end of the header line when `text` starts with this version's, else
 * NULL. */
static char *after_header(char *text)
{
    char header[64];
    int w = snprintf(header, sizeof header, HEADER_FMT, TUNE_CACHE_VERSION);
    size_t len = (size_t)w;
    if (strncmp(text, header, len) != 0)
        return NULL;
    char *p = text + len;
    if (*p == '\r')
        p++;
    return *p == '\n' ? p + 1 : *p == '\0' ? p : NULL;
}

static int digits(const char *s, size_t min, size_t max)
{
    size_t len = strspn(s, "0123456789");
    return s[len] == '\0' && len >= min && len <= max;
}

static int bucket_ok(const char *s)
{
    char num[8];
    const char *slash = strchr(s, '/');
    int q = s[0] == 'q';
    size_t len = slash ? (size_t)(slash - s) - (size_t)q : 0;
    if (!slash || len == 0 || len > 3 ||
        !(strcmp(slash + 1, "1") == 0 || strcmp(slash + 1, "4") == 0 ||
          strcmp(slash + 1, "8") == 0))
        return 0;
    memcpy(num, s + q, len);
    num[len] = '\0';
    if (!digits(num, 1, 3))
        return 0;
    int v = atoi(num), a = atoi(slash + 1);
    if (q)
        /* Above 16 the quarter octaves start at 16; 2^63 is q252. */
        return v >= 16 && v <= 252;
    return v >= 1 && v <= 16 && a == align_of(v);
}

static int number_ok(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && isfinite(*v) && *v > 0;
}

static int date_ok(const char *s)
{
    static const char pattern[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != sizeof pattern - 1)
        return 0;
    for (size_t i = 0; pattern[i]; i++)
        if (pattern[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i])
            return 0;
    return 1;
}

/* One line (without its newline) into *e: 1 when well formed, else 0. */
static int parse_line(const char *line, size_t len, struct tune_entry *e)
{
    char buf[TUNE_LINE_MAX + 1], *field[FIELDS], *save = NULL;
    if (len > TUNE_LINE_MAX)
        return 0;
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (len && buf[len - 1] == '\r')
        buf[len - 1] = '\0';
    int nf = 0;
    for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (nf == FIELDS)
            return 0;
        field[nf++] = t;
    }
    if (nf != FIELDS)
        return 0;
    const char *cc = field[1];
    size_t major = strspn(cc, "0123456789");
    if (!is_word(field[0], 255, device_char) || major == 0 || major > 3 || cc[major] != '.' ||
        !digits(cc + major + 1, 1, 3) || !digits(field[2], 1, 6) || atoi(field[2]) < 1 ||
        !is_word(field[3], 15, sig_char))
        return 0;
    for (int i = 4; i < KEY_FIELDS; i++)
        if (!bucket_ok(field[i]))
            return 0;
    if (!is_word(field[8], sizeof e->kernel - 1, kernel_char) || !number_ok(field[9], &e->ms) ||
        !date_ok(field[11]))
        return 0;
    if (strcmp(field[10], "-") == 0)
        e->cublas_ms = -1;
    else if (!number_ok(field[10], &e->cublas_ms))
        return 0;
    int w = snprintf(e->key.text, sizeof e->key.text, "%s %s %s %s %s %s %s %s", field[0],
                     field[1], field[2], field[3], field[4], field[5], field[6], field[7]);
    if (w < 0 || (size_t)w >= sizeof e->key.text)
        return 0;
    snprintf(e->kernel, sizeof e->kernel, "%s", field[8]);
    snprintf(e->date, sizeof e->date, "%s", field[11]);
    return 1;
}

/* Calls each(arg, entry) for every well-formed line after the header;
 * counts the others in *malformed. */
static void each_line(char *body, void (*each)(void *arg, const struct tune_entry *e), void *arg,
                      size_t *malformed)
{
    char *p = body;
    while (*p) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        struct tune_entry e;
        /* A last line without its newline was cut short: not trusted. */
        if (!nl || !parse_line(p, len, &e)) {
            if (len && malformed)
                (*malformed)++;
        } else {
            each(arg, &e);
        }
        p = nl ? nl + 1 : p + len;
    }
}

struct lookup {
    const struct tune_key *keys;
    int n;
    struct tune_entry *out;
};

static void lookup_one(void *arg, const struct tune_entry *e)
{
    struct lookup *l = arg;
    for (int i = 0; i < l->n; i++)
        if (strcmp(e->key.text, l->keys[i].text) == 0)
            l->out[i] = *e;
}

int tune_cache_lookup_entries(const struct tune_key *keys, int n_keys, struct tune_entry *out)
{
    char path[TUNE_PATH_MAX], *text;
    size_t len;
    for (int i = 0; i < n_keys; i++)
        out[i].kernel[0] = '\0';
    if (tune_cache_path(path, sizeof path) != 0 ||
        tune_cache_read_text(path, &text, &len) != TUNE_CACHE_OK)
        return 0;
    char *body = after_header(text);
    if (body) {
        struct lookup l = { keys, n_keys, out };
        each_line(body, lookup_one, &l, NULL);
    }
    free(text);
    int found = 0;
    for (int i = 0; i < n_keys; i++)
        found += out[i].kernel[0] != '\0';
    return found;
}

int tune_cache_lookup(const struct tune_key *key, char *kernel_out, size_t n)
{
    struct tune_entry e;
    if (!tune_cache_lookup_entries(key, 1, &e) || strlen(e.kernel) >= n)
        return 0;
    memcpy(kernel_out, e.kernel, strlen(e.kernel) + 1);
    return 1;
}

/* ---- the listing ---- */

struct collect {
    struct tune_entry *v;
    size_t count, cap;
    int oom;
};

static void collect_one(void *arg, const struct tune_entry *e)
{
    struct collect *c = arg;
    if (c->oom)
        return;
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct tune_entry *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->oom = 1;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->count++] = *e;
}

/* The entries of the file at `path`: 0 with the state, or -1 out of memory. */
static int load(const char *path, enum tune_cache_state *state, struct collect *c,
                size_t *malformed)
{
    char *text;
    size_t len;
    memset(c, 0, sizeof *c);
    int rc = tune_cache_read_text(path, &text, &len);
    if (rc < 0)
        return -1;
    *state = (enum tune_cache_state)rc;
    if (rc != TUNE_CACHE_OK)
        return 0;
    char *body = after_header(text);
    if (!body)
        *state = TUNE_CACHE_FOREIGN;
    else
        each_line(body, collect_one, c, malformed);
    free(text);
    if (c->oom) {
        free(c->v);
        memset(c, 0, sizeof *c);
        return -1;
    }
    return 0;
}

/* 0 when a store may replace what is at `path` (or there is nothing),
 * else -1 with the reason: a store leaves it as it is. */
static int store_refusal(const char *path, char *why, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode))
        return snprintf(why, n, "it is a directory"), -1;
    if (!S_ISREG(st.st_mode))
        return snprintf(why, n, "it is not a regular file"), -1;
    if (!(st.st_mode & S_IWUSR))
        return snprintf(why, n, "it is read-only (its owner has no write permission)"), -1;
    return 0;
}

int tune_cache_list(struct tune_cache_listing *l)
{
    memset(l, 0, sizeof *l);
    if (tune_cache_path(l->path, sizeof l->path) != 0) {
        l->path[0] = '\0';
        l->state = TUNE_CACHE_NONE;
        return 0;
    }
    struct collect c;
    if (load(l->path, &l->state, &c, &l->malformed) != 0)
        return -1;
    l->stored = store_refusal(l->path, l->kept, sizeof l->kept) == 0;
    l->entries = c.v;
    l->count = c.count;
    return 0;
}

void tune_cache_listing_free(struct tune_cache_listing *l)
{
    free(l->entries);
    l->entries = NULL;
    l->count = 0;
}

/* ---- storing ---- */

#define WHY(...) (snprintf(why, n, __VA_ARGS__), -1)

/* mkdir -p with mode 0700 for what is missing. */
int tune_cache_make_dirs(const char *dir, char *why, size_t n)
{
    char path[TUNE_PATH_MAX];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        struct stat st;
        if (mkdir(path, 0700) != 0) {
            int err = errno;
            if (err == EEXIST)
                err = stat(path, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
            if (err)
                return WHY("cannot create the directory %s: %s", path, strerror(err));
        }
        *p = saved;
        if (!saved)
            return 0;
    }
}

static int valid_entry(const struct tune_entry *e)
{
    char line[TUNE_LINE_MAX + 1];
    struct tune_entry back;
    int w = snprintf(line, sizeof line, "%s %s %.6g %.6g %s", e->key.text, e->kernel, e->ms,
                     e->cublas_ms > 0 ? e->cublas_ms : 1.0,
                     e->date[0] ? e->date : "2000-01-01T00:00:00Z");
    return w > 0 && (size_t)w < sizeof line && parse_line(line, (size_t)w, &back);
}

/* At most TUNE_LINE_MAX bytes: a key of TUNE_KEY_MAX - 1, a kernel of 63,
 * two numbers of 13, a date of 20, blanks and the newline. */
static void append_line(char *buf, size_t cap, size_t *used, const struct tune_entry *e)
{
    char cublas[32] = "-";
    if (e->cublas_ms > 0)
        snprintf(cublas, sizeof cublas, "%.6g", e->cublas_ms);
    int w = snprintf(buf + *used, cap - *used, "%s %s %.6g %s %s\n", e->key.text, e->kernel,
                     e->ms, cublas, e->date);
    if (w > 0 && (size_t)w < cap - *used)
        *used += (size_t)w;
}

/* Writes all of text to a new file in `dir` that takes the name `path`
 * once complete (core/newfile.h: a killed store leaves nothing). */
static int replace_file(const char *dir, const char *path, const char *text, size_t len,
                        char *why, size_t n)
{
    struct gc_newfile nf;
    int err = newfile_create(&nf, path, 0);
    if (err)
        return WHY("cannot create a temporary file in %s: %s", dir, strerror(err));
    size_t done = 0;
    while (done < len && !err) {
        ssize_t w = write(nf.fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            err = w < 0 ? errno : ENOSPC;
        else
            done += (size_t)w;
    }
    if (!err && fsync(nf.fd) != 0)
        err = errno;
    if (err) {
        newfile_discard(&nf);
        return WHY("cannot write a temporary file in %s: %s", dir, strerror(err));
    }
    if ((err = newfile_commit(&nf))) {
        newfile_discard(&nf);
        return WHY("cannot rename a temporary file over it: %s", strerror(err));
    }
    return 0;
}

int tune_cache_write_text(const char *path, const char *text, size_t len, char *why, size_t n)
{
    char dir[TUNE_PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir || !strrchr(dir, '/'))
        return WHY("not a path in a directory: %s", path);
    *strrchr(dir, '/') = '\0';
    if (tune_cache_make_dirs(dir, why, n) != 0 || store_refusal(path, why, n) != 0)
        return -1;
    return replace_file(dir, path, text, len, why, n);
}

int tune_cache_store(const struct tune_entry *entries, int count, char *why, size_t n)
{
    char path[TUNE_PATH_MAX], dir[TUNE_PATH_MAX];
    if (count < 0 || count > TUNE_CACHE_MAX_ENTRIES)
        return WHY("too many entries to store at once");
    for (int i = 0; i < count; i++)
        if (!valid_entry(&entries[i]))
            return WHY("not a valid entry: '%s %s'", entries[i].key.text, entries[i].kernel);
    if (tune_cache_path(path, sizeof path) != 0)
        return WHY("no cache location: XDG_CACHE_HOME and HOME are unset, empty or relative paths");
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    if (tune_cache_make_dirs(dir, why, n) != 0 || store_refusal(path, why, n) != 0)
        return -1;

    enum tune_cache_state state;
    struct collect c;
    if (load(path, &state, &c, NULL) != 0)
        return WHY("out of host memory");
    /* Replaced keys go; the new entries come last, as the newest. */
    struct tune_entry *all = malloc((c.count + (size_t)count) * sizeof *all + 1);
    if (!all) {
        free(c.v);
        return WHY("out of host memory");
    }
    size_t total = 0;
    for (size_t i = 0; i < c.count; i++) {
        int replaced = 0;
        for (int j = 0; j < count && !replaced; j++)
            replaced = strcmp(c.v[i].key.text, entries[j].key.text) == 0;
        if (!replaced)
            all[total++] = c.v[i];
    }
    free(c.v);
    char now[24];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    for (int j = 0; j < count; j++) {
        /* Of two new entries with one key, the later. */
        int again = 0;
        for (int k = j + 1; k < count && !again; k++)
            again = strcmp(entries[j].key.text, entries[k].key.text) == 0;
        if (again)
            continue;
        all[total] = entries[j];
        if (!all[total].date[0])
            snprintf(all[total].date, sizeof all[total].date, "%s", now);
        total++;
    }
    /* The oldest go first (the earliest line among equal dates). */
    while (total > TUNE_CACHE_MAX_ENTRIES) {
        size_t oldest = 0;
        for (size_t i = 1; i < total; i++)
            if (strcmp(all[i].date, all[oldest].date) < 0)
                oldest = i;
        memmove(&all[oldest], &all[oldest + 1], (total - oldest - 1) * sizeof *all);
        total--;
    }
    size_t cap = 64 + total * (TUNE_LINE_MAX + 1);
    char *text = malloc(cap);
    if (!text) {
        free(all);
        return WHY("out of host memory");
    }
    size_t used = (size_t)snprintf(text, cap, HEADER_FMT "\n", TUNE_CACHE_VERSION);
    for (size_t i = 0; i < total; i++)
        append_line(text, cap, &used, &all[i]);
    free(all);
    int rc = replace_file(dir, path, text, used, why, n);
    free(text);
    return rc;
}

int tune_cache_clear(char *why, size_t n)
{
    char path[TUNE_PATH_MAX];
    if (tune_cache_path(path, sizeof path) != 0)
        return 1;
    if (unlink(path) == 0)
        return 0;
    if (errno == ENOENT)
        return 1;
    return WHY("cannot remove it: %s", strerror(errno));
}
