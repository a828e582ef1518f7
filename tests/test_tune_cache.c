/* Unit tests of the tuned-choice cache (src/plan/tune_cache.c), no GPU:
 *
 *   cc -I. -D_GNU_SOURCE tests/test_tune_cache.c src/plan/tune_cache.c -lm -o test_tune_cache
 *
 * (tests/tests.mk does that as build/tests/test_tune_cache, and again
 * under ASan and UBSan as build/tests/test_tune_cache_san.)  Every case
 * points XDG_CACHE_HOME or HOME into a temporary directory of its own.
 * Each check prints only when it fails; the last line counts them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/plan/tune_cache.h"

struct tally {
    int passed, failed;
};

static struct tally *tally_of(void)
{
    static struct tally t;     /* the test binary's one counter */
    return &t;
}

#define CHECK(cond, ...) check_at((cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

static int check_at(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
    if (ok) {
        tally_of()->passed++;
        return 1;
    }
    tally_of()->failed++;
    fprintf(stdout, "FAIL %s:%d: %s: ", file, line, expr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    return 0;
}

/* ---- scaffolding ---- */

static char tmp_dir[] = "/tmp/test_tune_cache.XXXXXX";

/* A fresh directory under tmp_dir, as XDG_CACHE_HOME; the cache file's
 * path into `file`. */
static void fresh_cache(const char *name, char *dir, size_t dn, char *file, size_t fn)
{
    snprintf(dir, dn, "%s/%s", tmp_dir, name);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        fprintf(stdout, "cannot create %s: %s\n", dir, strerror(errno));
    setenv("XDG_CACHE_HOME", dir, 1);
    snprintf(file, fn, "%s/gemmcli/tune.txt", dir);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        fprintf(stdout, "cannot write %s: %s\n", path, strerror(errno));
}

/* The file's contents (free them), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, used = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + used, 1, cap - used, f)) > 0) {
        used += got;
        if (used == cap) {
            char *grown = realloc(buf, cap * 2 + 1);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[used] = '\0';
    if (len)
        *len = used;
    return buf;
}

static struct tune_key key_of(const char *device, const char *sig, int64_t batch, int64_t m,
                              int64_t n, int64_t k)
{
    struct tune_key key;
    memset(&key, 0, sizeof key);
    if (tune_key_make(&key, device, 9, 0, 132, sig, batch, m, n, k) != 0)
        fprintf(stdout, "tune_key_make refused %s %s\n", device, sig);
    return key;
}

static struct tune_entry entry_of(struct tune_key key, const char *kernel, double ms)
{
    struct tune_entry e;
    memset(&e, 0, sizeof e);
    e.key = key;
    snprintf(e.kernel, sizeof e.kernel, "%s", kernel);
    e.ms = ms;
    e.cublas_ms = 2 * ms;
    return e;
}

static int store1(struct tune_entry e, char *why, size_t n)
{
    return tune_cache_store(&e, 1, why, n);
}

/* The kernel of `key` in the cache, or "" on a miss. */
static const char *looked_up(const struct tune_key *key)
{
    static char kernel[64];
    if (!tune_cache_lookup(key, kernel, sizeof kernel))
        kernel[0] = '\0';
    return kernel;
}

/* Files in dir whose names start with the store's temporary prefix. */
static int temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    int count = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        count += strncmp(e->d_name, ".gemmcli-", 9) == 0;
    closedir(d);
    return count;
}

/* Lines of the text that parse as entries, and those with each key twice. */
static int well_formed(const char *text, int *entries, int *duplicates)
{
    *entries = *duplicates = 0;
    if (strncmp(text, "# gemmcli tune cache 1\n", 23) != 0)
        return 0;
    static char keys[TUNE_CACHE_MAX_ENTRIES][TUNE_KEY_MAX];
    const char *p = text + 23;
    while (*p) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            return 0;
        char line[TUNE_LINE_MAX + 1];
        size_t len = (size_t)(nl - p);
        if (len > TUNE_LINE_MAX)
            return 0;
        memcpy(line, p, len);
        line[len] = '\0';
        /* The key is the first eight fields. */
        char *q = line;
        for (int f = 0; f < 8 && q; f++)
            q = strchr(q + (f > 0), ' ');
        if (!q)
            return 0;
        *q = '\0';
        int rest = 1;     /* kernel, ms, cuBLAS's ms, date */
        for (char *r = q + 1; *r; r++)
            rest += *r == ' ';
        if (rest != 4 || *entries == TUNE_CACHE_MAX_ENTRIES)
            return 0;
        for (int i = 0; i < *entries; i++)
            *duplicates += strcmp(keys[i], line) == 0;
        if (strlen(line) >= TUNE_KEY_MAX)
            return 0;
        memcpy(keys[(*entries)++], line, strlen(line) + 1);
        p = nl + 1;
    }
    return 1;
}

/* ---- the cases ---- */

static void test_buckets(void)
{
    static const struct { int64_t d; const char *text; } cases[] = {
        { 1, "1/1" }, { 3, "3/1" }, { 4, "4/4" }, { 8, "8/8" }, { 12, "12/4" }, { 16, "16/8" },
        { 17, "q16/1" }, { 20, "q17/4" }, { 64, "q24/8" }, { 4096, "q48/8" }, { 4100, "q48/4" },
        { 4097, "q48/1" }, { 4466, "q48/1" }, { 4467, "q49/1" }, { 4871, "q49/1" },
        { 3000, "q46/8" }, { 65536, "q64/8" }, { INT64_MAX, "q252/1" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[16];
        tune_bucket_text(cases[i].d, buf, sizeof buf);
        CHECK(strcmp(buf, cases[i].text) == 0, "%lld: got %s, wanted %s",
              (long long)cases[i].d, buf, cases[i].text);
    }
    struct tune_key k;
    CHECK(tune_key_make(&k, "NVIDIA H200", 9, 0, 132, "f32", 1, 4096, 4100, 4097) == 0, "make");
    CHECK(strcmp(k.text, "NVIDIA_H200 9.0 132 f32 1/1 q48/8 q48/4 q48/1") == 0, "%s", k.text);
    CHECK(tune_key_make(&k, "A\tB  C", 8, 6, 84, "tf32x3", 16, 1, 2, 3) == 0, "make");
    CHECK(strcmp(k.text, "A_B__C 8.6 84 tf32x3 16/8 1/1 2/1 3/1") == 0, "%s", k.text);
    CHECK(tune_key_make(&k, "", 9, 0, 132, "f32", 1, 1, 1, 1) == -1, "an empty device");
    CHECK(tune_key_make(&k, "X", 9, 0, 132, "F32", 1, 1, 1, 1) == -1, "an uppercase signature");
    CHECK(tune_key_make(&k, "X", 9, 0, 132, "f 32", 1, 1, 1, 1) == -1, "a blank in a signature");
    CHECK(tune_key_make(&k, "X", 9, 0, 132, "f32", 1, 0, 1, 1) == -1, "a zero dimension");
    CHECK(tune_key_make(&k, "X", 9, 0, 0, "f32", 1, 1, 1, 1) == -1, "no SMs");
}

static void test_paths(void)
{
    char path[TUNE_PATH_MAX], want[1024], why[512];
    setenv("HOME", "/home/someone", 1);
    setenv("XDG_CACHE_HOME", "/var/cache/me", 1);
    CHECK(tune_cache_path(path, sizeof path) == 0 &&
          strcmp(path, "/var/cache/me/gemmcli/tune.txt") == 0, "XDG set: %s", path);
    unsetenv("XDG_CACHE_HOME");
    CHECK(tune_cache_path(path, sizeof path) == 0 &&
          strcmp(path, "/home/someone/.cache/gemmcli/tune.txt") == 0, "XDG unset: %s", path);
    setenv("XDG_CACHE_HOME", "relative/cache", 1);
    CHECK(tune_cache_path(path, sizeof path) == 0 &&
          strcmp(path, "/home/someone/.cache/gemmcli/tune.txt") == 0, "XDG relative: %s", path);
    setenv("XDG_CACHE_HOME", "", 1);
    CHECK(tune_cache_path(path, sizeof path) == 0 &&
          strcmp(path, "/home/someone/.cache/gemmcli/tune.txt") == 0, "XDG empty: %s", path);
    CHECK(tune_cache_path(path, 10) == -1, "a path that does not fit");

    /* HOME as the only location, really used. */
    snprintf(want, sizeof want, "%s/home", tmp_dir);
    mkdir(want, 0700);
    setenv("HOME", want, 1);
    unsetenv("XDG_CACHE_HOME");
    struct tune_key k = key_of("GPU", "f32", 1, 64, 64, 64);
    CHECK(store1(entry_of(k, "swizzle", 0.5), why, sizeof why) == 0, "store under HOME: %s", why);
    snprintf(path, sizeof path, "%s/.cache/gemmcli/tune.txt", want);
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600,
          "%s: mode %o", path, st.st_mode & 0777);
    snprintf(path, sizeof path, "%s/.cache/gemmcli", want);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700, "%s: mode %o", path,
          st.st_mode & 0777);
    CHECK(strcmp(looked_up(&k), "swizzle") == 0, "lookup under HOME: '%s'", looked_up(&k));

    /* Neither: no cache, and nothing breaks. */
    unsetenv("HOME");
    unsetenv("XDG_CACHE_HOME");
    CHECK(tune_cache_path(path, sizeof path) == -1, "no location");
    CHECK(strcmp(looked_up(&k), "") == 0, "lookup without a location");
    why[0] = '\0';
    CHECK(store1(entry_of(k, "swizzle", 0.5), why, sizeof why) == -1 && strstr(why, "HOME"),
          "store without a location: %s", why);
    CHECK(tune_cache_clear(why, sizeof why) == 1, "clear without a location");
    struct tune_cache_listing l;
    CHECK(tune_cache_list(&l) == 0 && l.state == TUNE_CACHE_NONE && l.count == 0, "listing");
    tune_cache_listing_free(&l);
    setenv("HOME", "relative/home", 1);
    CHECK(tune_cache_path(path, sizeof path) == -1, "a relative HOME is no location");
    setenv("HOME", "/nonexistent-home", 1);
}

static void test_store_lookup(void)
{
    char dir[1024], file[1200], why[512];
    fresh_cache("store", dir, sizeof dir, file, sizeof file);
    struct tune_key k = key_of("NVIDIA H200", "f32", 1, 4096, 4096, 4096);
    CHECK(strcmp(looked_up(&k), "") == 0, "a missing file misses");
    CHECK(store1(entry_of(k, "edge_peel", 2.87), why, sizeof why) == 0, "store: %s", why);
    CHECK(strcmp(looked_up(&k), "edge_peel") == 0, "lookup: '%s'", looked_up(&k));
    /* The same bucket, another size in it. */
    struct tune_key k2 = key_of("NVIDIA H200", "f32", 1, 4000, 4000, 4000);
    CHECK(strcmp(k.text, k2.text) == 0 && strcmp(looked_up(&k2), "edge_peel") == 0,
          "4000 is in 4096's bucket: %s", k2.text);
    char small[4];
    CHECK(tune_cache_lookup(&k, small, sizeof small) == 0, "a name longer than the buffer");

    /* Replacing a key: one line, the new kernel. */
    CHECK(store1(entry_of(k, "stream_k", 2.80), why, sizeof why) == 0, "replace: %s", why);
    CHECK(strcmp(looked_up(&k), "stream_k") == 0, "replaced: '%s'", looked_up(&k));
    char *text = slurp(file, NULL);
    int entries, dups;
    CHECK(text && well_formed(text, &entries, &dups) && entries == 1 && dups == 0,
          "one line for the key: %s", text ? text : "(none)");
    CHECK(text && strstr(text, " stream_k 2.8 5.6 ") != NULL, "the figures: %s",
          text ? text : "(none)");
    free(text);

    /* Keys that differ in one field each do not collide. */
    struct tune_key keys[] = {
        key_of("NVIDIA H100", "f32", 1, 4096, 4096, 4096),
        key_of("NVIDIA H200", "f16", 1, 4096, 4096, 4096),
        key_of("NVIDIA H200", "f32", 2, 4096, 4096, 4096),
        key_of("NVIDIA H200", "f32", 1, 4100, 4096, 4096),
        key_of("NVIDIA H200", "f32", 1, 4096, 4097, 4096),
        key_of("NVIDIA H200", "f32", 1, 4096, 4096, 8192),
    };
    struct tune_key other_cc;
    tune_key_make(&other_cc, "NVIDIA H200", 8, 0, 132, "f32", 1, 4096, 4096, 4096);
    struct tune_key other_sms;
    tune_key_make(&other_sms, "NVIDIA H200", 9, 0, 114, "f32", 1, 4096, 4096, 4096);
    const char *names[] = { "k_h100", "k_f16", "k_batch", "k_m4100", "k_n4097", "k_k8192" };
    struct tune_entry es[6];
    for (int i = 0; i < 6; i++) {
        es[i] = entry_of(keys[i], names[i], 1.0 + i);
        es[i].cublas_ms = -1;
    }
    CHECK(tune_cache_store(es, 6, why, sizeof why) == 0, "store six: %s", why);
    for (int i = 0; i < 6; i++)
        CHECK(strcmp(looked_up(&keys[i]), names[i]) == 0, "key %d: '%s'", i,
              looked_up(&keys[i]));
    CHECK(strcmp(looked_up(&k), "stream_k") == 0, "the first key kept");
    CHECK(strcmp(looked_up(&other_cc), "") == 0, "another compute capability misses");
    CHECK(strcmp(looked_up(&other_sms), "") == 0, "another SM count misses");
    struct tune_entry out[3];
    struct tune_key ask[3] = { keys[1], other_cc, k };
    CHECK(tune_cache_lookup_entries(ask, 3, out) == 2 && strcmp(out[0].kernel, "k_f16") == 0 &&
          out[0].ms == 2.0 && out[0].cublas_ms < 0 && out[1].kernel[0] == '\0' &&
          strcmp(out[2].kernel, "stream_k") == 0 && out[2].cublas_ms == 5.6,
          "several keys at once");

    struct tune_cache_listing l;
    CHECK(tune_cache_list(&l) == 0 && l.state == TUNE_CACHE_OK && l.count == 7 &&
          l.malformed == 0 && strcmp(l.path, file) == 0, "listing: %zu entries", l.count);
    tune_cache_listing_free(&l);
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/gemmcli", dir);
    CHECK(temp_files(sub) == 0, "no temporary files");

    /* Bad entries are refused, not written. */
    struct tune_entry bad = entry_of(k, "two words", 1.0);
    CHECK(store1(bad, why, sizeof why) == -1, "a kernel name with a blank");
    bad = entry_of(k, "ok", 0.0);
    CHECK(store1(bad, why, sizeof why) == -1, "a zero time");
    CHECK(strcmp(looked_up(&k), "stream_k") == 0, "refused entries change nothing");

    CHECK(tune_cache_clear(why, sizeof why) == 0, "clear: %s", why);
    CHECK(access(file, F_OK) != 0 && strcmp(looked_up(&k), "") == 0, "cleared");
    CHECK(tune_cache_clear(why, sizeof why) == 1, "clear twice");
}

/* A file that is not a good cache misses, and the next store repairs it. */
static void bad_file_case(const char *name, const void *data, size_t len, int keeps_entry)
{
    char dir[1024], file[1200], why[512], sub[1100];
    fresh_cache(name, dir, sizeof dir, file, sizeof file);
    snprintf(sub, sizeof sub, "%s/gemmcli", dir);
    mkdir(sub, 0700);
    write_file(file, data, len);
    struct tune_key k = key_of("GPU", "f32", 1, 1024, 1024, 1024);
    struct tune_key k2 = key_of("GPU", "f16", 1, 1024, 1024, 1024);
    CHECK(strcmp(looked_up(&k), keeps_entry ? "cp_async" : "") == 0, "%s: lookup '%s'", name,
          looked_up(&k));
    CHECK(store1(entry_of(k2, "wgmma", 0.1), why, sizeof why) == 0, "%s: store: %s", name, why);
    CHECK(strcmp(looked_up(&k2), "wgmma") == 0, "%s: repaired", name);
    size_t size = 0;
    char *text = slurp(file, &size);
    int entries, dups;
    CHECK(text && strlen(text) == size && well_formed(text, &entries, &dups) &&
          entries == 1 + keeps_entry && dups == 0, "%s: well formed after the store", name);
    free(text);
    CHECK(temp_files(sub) == 0, "%s: no temporary files", name);
}

static void test_bad_files(void)
{
    static const char good_line[] = "GPU 9.0 132 f32 1/1 q40/8 q40/8 q40/8 cp_async 0.2 0.19 "
                                    "2026-01-01T00:00:00Z\n";
    char buf[1024];
    int n;
    n = snprintf(buf, sizeof buf, "hello\nworld\n");
    bad_file_case("garbage", buf, (size_t)n, 0);
    n = snprintf(buf, sizeof buf, "# gemmcli tune cache 2\n%s", good_line);
    bad_file_case("other-version", buf, (size_t)n, 0);
    n = snprintf(buf, sizeof buf, "%s", good_line);
    bad_file_case("no-header", buf, (size_t)n, 0);
    n = snprintf(buf, sizeof buf, "# gemmcli tune cache 1\n%.*s", 40, good_line);
    bad_file_case("truncated", buf, (size_t)n, 0);
    n = snprintf(buf, sizeof buf, "# gemmcli tune cache 1\n%.*s", (int)strlen(good_line) - 1,
                 good_line);
    bad_file_case("no-last-newline", buf, (size_t)n, 0);
    n = snprintf(buf, sizeof buf, "# gemmcli tune cache 1\n%s", good_line);
    buf[n] = '\0';
    memcpy(buf + n, "\0\x01\x02\xff", 4);
    bad_file_case("binary", buf, (size_t)n + 4, 0);
    bad_file_case("empty", "", 0, 0);
    /* Malformed lines are skipped; the good one is kept. */
    n = snprintf(buf, sizeof buf,
                 "# gemmcli tune cache 1\n"
                 "GPU 9.0 132 f32 1/1 q40/8 q40/8 q40/8 cp_async\n"
                 "GPU 9.0 132 f32 1/1 q40/8 q40/8 q40/8 cp_async -1 0.19 2026-01-01T00:00:00Z\n"
                 "GPU 9.0 132 f32 1/1 q40/8 q40/8 12/8 cp_async 0.1 0.19 2026-01-01T00:00:00Z\n"
                 "GPU 9.0 132 f32 1/1 q40/8 q40/8 q40/2 cp_async 0.1 0.19 2026-01-01T00:00:00Z\n"
                 "GPU 9.0 132 f32 1/1 q40/8 q40/8 q40/8 cp_async 0.1 0.19 yesterday\n"
                 "GPU 9.0 132 f32 1/1 q40/8 q40/8 q40/8 cp-async 0.1 0.19 2026-01-01T00:00:00Z\n"
                 "GPU 9.0 132 f32 1/1 q40/8 q40/8 q40/8 cp_async 0.1 nan 2026-01-01T00:00:00Z\n"
                 "%s", good_line);
    struct tune_cache_listing l;
    {
        char dir[1024], file[1200], sub[1100];
        fresh_cache("malformed-lines", dir, sizeof dir, file, sizeof file);
        snprintf(sub, sizeof sub, "%s/gemmcli", dir);
        mkdir(sub, 0700);
        write_file(file, buf, (size_t)n);
        CHECK(tune_cache_list(&l) == 0 && l.state == TUNE_CACHE_OK && l.malformed == 7 &&
              l.count == 1, "malformed lines are counted: %zu, %zu", l.malformed, l.count);
        tune_cache_listing_free(&l);
    }
    bad_file_case("malformed-lines", buf, (size_t)n, 1);

    /* Oversized: good lines, then more than the limit. */
    size_t big = TUNE_CACHE_MAX_BYTES + 100;
    char *huge = malloc(big);
    if (huge) {
        n = snprintf(huge, big, "# gemmcli tune cache 1\n%s", good_line);
        for (size_t i = (size_t)n; i < big; i++)
            huge[i] = (i % 64 == 63) ? '\n' : 'x';
        bad_file_case("oversized", huge, big, 0);
        char dir[1024], file[1200];
        fresh_cache("oversized", dir, sizeof dir, file, sizeof file);
        CHECK(tune_cache_list(&l) == 0 && l.state == TUNE_CACHE_OK && l.count == 1,
              "oversized: replaced by a small file");
        tune_cache_listing_free(&l);
        free(huge);
    }

    /* The listing says what it found. */
    char dir[1024], file[1200], sub[1100];
    fresh_cache("foreign", dir, sizeof dir, file, sizeof file);
    snprintf(sub, sizeof sub, "%s/gemmcli", dir);
    mkdir(sub, 0700);
    CHECK(tune_cache_list(&l) == 0 && l.state == TUNE_CACHE_MISSING, "missing");
    tune_cache_listing_free(&l);
    write_file(file, "# gemmcli tune cache 9\n", 23);
    CHECK(tune_cache_list(&l) == 0 && l.state == TUNE_CACHE_FOREIGN && l.count == 0, "foreign");
    tune_cache_listing_free(&l);

    /* A FIFO at the path must not hang a lookup. */
    unlink(file);
    if (mkfifo(file, 0600) == 0) {
        struct tune_key k = key_of("GPU", "f32", 1, 1024, 1024, 1024);
        CHECK(strcmp(looked_up(&k), "") == 0, "a FIFO misses");
        char why[512];
        CHECK(store1(entry_of(k, "swizzle", 1), why, sizeof why) == -1 &&
              strstr(why, "not a regular file"), "a FIFO is not replaced: %s", why);
        unlink(file);
    }
}

static void test_unwritable(void)
{
    char dir[1024], file[1200], why[512], sub[1100];
    struct tune_key k = key_of("GPU", "f32", 1, 1024, 1024, 1024);

    /* A directory where the file should be. */
    fresh_cache("dir-at-path", dir, sizeof dir, file, sizeof file);
    snprintf(sub, sizeof sub, "%s/gemmcli", dir);
    mkdir(sub, 0700);
    mkdir(file, 0700);
    CHECK(strcmp(looked_up(&k), "") == 0, "a directory misses");
    why[0] = '\0';
    CHECK(store1(entry_of(k, "swizzle", 1), why, sizeof why) == -1 &&
          strstr(why, "is a directory"), "store: %s", why);
    CHECK(tune_cache_clear(why, sizeof why) == -1 && strstr(why, "cannot remove"), "clear: %s",
          why);
    CHECK(temp_files(sub) == 0, "no temporary files");

    /* A regular file as a component of the path: XDG_CACHE_HOME itself,
     * then the gemmcli directory. */
    snprintf(sub, sizeof sub, "%s/plain-file", tmp_dir);
    write_file(sub, "x", 1);
    setenv("XDG_CACHE_HOME", sub, 1);
    why[0] = '\0';
    CHECK(store1(entry_of(k, "swizzle", 1), why, sizeof why) == -1 &&
          strstr(why, "Not a directory") && strstr(why, "plain-file"), "store: %s", why);
    CHECK(strcmp(looked_up(&k), "") == 0, "lookup under a file");
    fresh_cache("gemmcli-is-a-file", dir, sizeof dir, file, sizeof file);
    snprintf(sub, sizeof sub, "%s/gemmcli", dir);
    write_file(sub, "x", 1);
    why[0] = '\0';
    CHECK(store1(entry_of(k, "swizzle", 1), why, sizeof why) == -1 &&
          strstr(why, "cannot create the directory"), "store: %s", why);
    CHECK(temp_files(dir) == 0, "no temporary files");

    /* A read-only file is read, and left as it is. */
    fresh_cache("read-only", dir, sizeof dir, file, sizeof file);
    CHECK(store1(entry_of(k, "swizzle", 1), why, sizeof why) == 0, "store: %s", why);
    chmod(file, 0444);
    size_t before_len = 0, after_len = 0;
    char *before = slurp(file, &before_len);
    CHECK(strcmp(looked_up(&k), "swizzle") == 0, "a read-only file is read");
    struct tune_key k2 = key_of("GPU", "f16", 1, 1024, 1024, 1024);
    why[0] = '\0';
    CHECK(store1(entry_of(k2, "wgmma", 1), why, sizeof why) == -1 && strstr(why, "read-only"),
          "store: %s", why);
    char *after = slurp(file, &after_len);
    CHECK(before && after && before_len == after_len && memcmp(before, after, before_len) == 0,
          "the read-only file is unchanged");
    free(before);
    free(after);
    snprintf(sub, sizeof sub, "%s/gemmcli", dir);
    CHECK(temp_files(sub) == 0, "no temporary files");
    chmod(file, 0600);
}

static void test_cap(void)
{
    char dir[1024], file[1200], why[512];
    fresh_cache("cap", dir, sizeof dir, file, sizeof file);
    enum { N = TUNE_CACHE_MAX_ENTRIES };
    struct tune_entry *es = calloc(N, sizeof *es);
    if (!es)
        return;
    /* Dated a second apart, oldest first; the file keeps them in that
     * order, so dates decide what goes. */
    for (int i = 0; i < N; i++) {
        es[i] = entry_of(key_of("GPU", "f32", 1 + i % 16, 1 + i / 16 % 16, 1 + i / 256, 1),
                         "swizzle", 1);
        struct tm tm = { .tm_year = 120, .tm_mon = 0, .tm_mday = 1, .tm_sec = i };
        time_t t = timegm(&tm);
        strftime(es[i].date, sizeof es[i].date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    }
    CHECK(tune_cache_store(es, N, why, sizeof why) == 0, "store %d: %s", N, why);
    struct tune_entry more[3];
    for (int i = 0; i < 3; i++)
        more[i] = entry_of(key_of("GPU", "f64", 1, 1 + i, 5000, 1), "f64_dmma", 1);
    CHECK(tune_cache_store(more, 3, why, sizeof why) == 0, "store 3 more: %s", why);
    struct tune_cache_listing l;
    CHECK(tune_cache_list(&l) == 0 && l.count == N, "capped at %d: %zu", N, l.count);
    tune_cache_listing_free(&l);
    /* The three oldest went; the fourth stayed. */
    int dropped = 0;
    for (int i = 0; i < 4; i++)
        dropped += looked_up(&es[i].key)[0] == '\0';
    CHECK(dropped == 3 && looked_up(&es[3].key)[0], "the oldest were dropped: %d", dropped);
    for (int i = 0; i < 3; i++)
        CHECK(strcmp(looked_up(&more[i].key), "f64_dmma") == 0, "new entry %d kept", i);

    /* A lookup in a full file stays far below a millisecond (a loose
     * bound for loaded machines and sanitizers). */
    double best = 1e9;
    for (int r = 0; r < 21; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        looked_up(&more[2].key);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        best = ms < best ? ms : best;
    }
    CHECK(best < 5.0, "a lookup took %.3f ms", best);
    size_t size = 0;
    free(slurp(file, &size));
    CHECK(size < TUNE_CACHE_MAX_BYTES / 2, "a full file is %zu bytes", size);
    free(es);
}

/* 8 processes store 50 times each, into overlapping keys. */
static void test_concurrent(void)
{
    char dir[1024], file[1200], sub[1100];
    fresh_cache("concurrent", dir, sizeof dir, file, sizeof file);
    enum { WRITERS = 8, STORES = 50, KEYS = 12 };
    pid_t pids[WRITERS];
    fflush(stdout);
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            int failures = 0;
            for (int s = 0; s < STORES; s++) {
                char why[512], kernel[32];
                snprintf(kernel, sizeof kernel, "w%d_s%d", w, s);
                struct tune_entry e = entry_of(key_of("GPU", "f32", 1, 64, 64 + (w + s) % KEYS,
                                                      64), kernel, 1 + s);
                failures += store1(e, why, sizeof why) != 0;
                struct tune_key k = key_of("GPU", "f32", 1, 64, 64 + s % KEYS, 64);
                looked_up(&k);
            }
            _exit(failures ? 1 : 0);
        }
    }
    int all_ok = 1;
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        if (pids[w] < 0 || waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            all_ok = 0;
    }
    CHECK(all_ok, "every store succeeded");
    char *text = slurp(file, NULL);
    int entries = 0, dups = 0;
    CHECK(text && well_formed(text, &entries, &dups) && dups == 0 && entries >= 1 &&
          entries <= KEYS, "well formed, one line a key: %d entries, %d duplicates", entries,
          dups);
    struct tune_cache_listing l;
    CHECK(tune_cache_list(&l) == 0 && l.state == TUNE_CACHE_OK && l.malformed == 0 &&
          (int)l.count == entries, "every line parses");
    tune_cache_listing_free(&l);
    free(text);
    snprintf(sub, sizeof sub, "%s/gemmcli", dir);
    CHECK(temp_files(sub) == 0, "no temporary files left");
}

int main(void)
{
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 2;
    }
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    test_buckets();
    test_paths();
    test_store_lookup();
    test_bad_files();
    test_unwritable();
    test_cap();
    test_concurrent();
    if (old_home)
        setenv("HOME", old_home, 1);
    free(old_home);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_tune_cache: could not remove %s\n", tmp_dir);
    printf("test_tune_cache: %d passed, %d failed\n", tally_of()->passed, tally_of()->failed);
    return tally_of()->failed ? 1 : 0;
}
