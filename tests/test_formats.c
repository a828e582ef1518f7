/* Unit tests of the format layer (core/ and every formats/ file), no GPU.
 * Build with all of core/'s and formats/'s C files:
 *
 *   cc -I. -D_GNU_SOURCE -pthread tests/test_formats.c core/[a-z]*.c
 *      formats/[a-z]*.c -ldeflate -lz -lm -o test_formats && ./test_formats
 *
 * (tests/tests.mk does that as build/tests/test_formats, and again under
 * ASan and UBSan as build/tests/test_formats_san.)
 * Each check prints only when it fails; the last line counts them. */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/pwrite.h"
#include "core/tensor.h"
#include "formats/decimal.h"
#include "formats/format.h"
#include "formats/inflate_par.h"

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

/* ---- scaffolding: temporary files, pipes, captured stderr ---- */

static char tmp_dir[] = "/tmp/test_formats.XXXXXX";

static const char *tmp_path(const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", tmp_dir, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

static char captured[4096];
static int saved_stderr = -1;

static void capture_begin(void)
{
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    int fd = open(tmp_path("stderr.txt"), O_RDWR | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

static void capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    FILE *f = fopen(tmp_path("stderr.txt"), "rb");
    size_t n = f ? fread(captured, 1, sizeof captured - 1, f) : 0;
    captured[n] = 0;
    if (f)
        fclose(f);
}

/* Reads `data` as format `fmt` (GC_FMT_AUTO: detected) from a file named
 * `name`, or through a pipe when `pipe_it`; stderr is captured. */
static int read_bytes(int fmt, const char *name, const void *data, size_t n,
                      const struct gc_read_opts *o, struct gc_tensor *m, int pipe_it)
{
    struct gc_input in;
    /* Readers fill *m only on success; a cleared tensor is safe to free. */
    memset(m, 0, sizeof *m);
    char path[600];
    pid_t child = -1;
    int status;
    if (pipe_it) {
        int fds[2];
        if (pipe(fds) != 0)
            return -1;
        child = fork();
        if (child == 0) {
            close(fds[0]);
            size_t done = 0;
            while (done < n) {
                ssize_t w = write(fds[1], (const char *)data + done, n - done);
                if (w <= 0)
                    _exit(1);
                done += (size_t)w;
            }
            _exit(0);
        }
        close(fds[1]);
        snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
        capture_begin();
        status = input_open(&in, path);
        close(fds[0]);
    } else {
        snprintf(path, sizeof path, "%s", tmp_path(name));
        write_file(path, data, n);
        capture_begin();
        status = input_open(&in, path);
    }
    if (!status) {
        if (fmt == GC_FMT_AUTO)
            status = format_identify(&in, 0, &fmt);
        if (!status)
            status = gc_formats[fmt].read(&in, o, m);
        input_close(&in);
    }
    capture_end();
    if (child > 0)
        waitpid(child, NULL, 0);
    return status;
}

static struct gc_read_opts default_read(void)
{
    return (struct gc_read_opts){ .dtype = -1, .delimiter = ',' };
}

/* --shape DIMS for a reader. */
static void set_shape(struct gc_read_opts *o, int ndim, const size_t *shape)
{
    o->has_shape = 1;
    o->ndim = ndim;
    memcpy(o->shape, shape, (size_t)ndim * sizeof shape[0]);
}

/* A tensor over the caller's data (not owned: gc_tensor_free leaves it). */
static struct gc_tensor tensor_of(int ndim, const size_t *shape, enum gc_dtype dt, int fortran,
                                  void *data)
{
    struct gc_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = ndim;
    memcpy(t.shape, shape, (size_t)ndim * sizeof shape[0]);
    t.dtype = dt;
    t.fortran_order = fortran;
    t.data = data;
    return t;
}

static struct gc_tensor matrix_of(size_t rows, size_t cols, enum gc_dtype dt, int fortran,
                                  void *data)
{
    const size_t shape[2] = { rows, cols };
    return tensor_of(2, shape, dt, fortran, data);
}

/* Element (r, c) of a 2-D tensor, whatever its storage order. */
static long double get_2d(const struct gc_tensor *t, size_t r, size_t c)
{
    return gc_tensor_get(t, r * t->shape[1] + c);
}

static int shape_is(const struct gc_tensor *t, const size_t *shape, int ndim)
{
    if (t->ndim != ndim)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (t->shape[d] != shape[d])
            return 0;
    return 1;
}

/* SHAPE_IS(&t, 2, 3, 4): t is exactly 2x3x4. */
#define SHAPE_IS(t, ...)                                                        \
    shape_is((t), (const size_t[]){ __VA_ARGS__ },                              \
             (int)(sizeof (const size_t[]){ __VA_ARGS__ } / sizeof(size_t)))

/* The element index in C order of index[] in `shape`. */
static size_t c_index(int ndim, const size_t *shape, const size_t *index)
{
    size_t at = 0;
    for (int d = 0; d < ndim; d++)
        at = at * shape[d] + index[d];
    return at;
}

/* Where element number i in C order is stored in Fortran order. */
static size_t fortran_offset(int ndim, const size_t *shape, size_t i)
{
    size_t idx[GC_MAX_DIMS], at = 0, stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    for (int d = 0; d < ndim; d++) {
        at += idx[d] * stride;
        stride *= shape[d];
    }
    return at;
}

/* Writes m in format fmt and returns the bytes (malloc'd); stderr is
 * captured. */
static unsigned char *write_bytes(int fmt, const struct gc_tensor *m,
                                  const struct gc_write_opts *o, size_t *n, int *status)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    capture_begin();
    *status = gc_formats[fmt].write(f, "out", m, o);
    capture_end();
    fclose(f);
    *n = len;
    return (unsigned char *)buf;
}

/* What the format's write_header writes for t (malloc'd). */
static unsigned char *header_bytes(int fmt, const struct gc_tensor *t, size_t *n, int *status)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *status = gc_formats[fmt].write_header(f, "out", t);
    fclose(f);
    *n = len;
    return (unsigned char *)buf;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---- core/dtype.c, core/tensor.c ---- */

static void test_dtypes_and_sizes(void)
{
    CHECK(gc_dtype_parse("f32") == GC_F32, "f32");
    CHECK(gc_dtype_parse("float64") == GC_F64, "float64");
    CHECK(gc_dtype_parse("F2") == GC_F16, "F2");
    CHECK(gc_dtype_parse("i8") == GC_I8, "i8 means int8 here");
    CHECK(gc_dtype_parse("uint64") == GC_U64, "uint64");
    CHECK(gc_dtype_parse("complex64") == -1, "complex64");
    CHECK(gc_dtype_parse("bool") == GC_BOOL && gc_dtype_parse("b1") == GC_BOOL, "bool");
    size_t out = 7;
    CHECK(!gc_shape_count(2, (const size_t[]){ SIZE_MAX / 2 + 1, 2 }, &out),
          "a dimension past 2^63-1");
    CHECK(!gc_shape_count(3, (const size_t[]){ (size_t)1 << 32, 2, (size_t)1 << 32 }, &out),
          "count overflow");
    CHECK(!gc_shape_count(2, (const size_t[]){ (size_t)1 << 62, 2 }, &out),
          "count past 2^63-1 without wrapping");
    CHECK(gc_shape_count(2, (const size_t[]){ 3, 5 }, &out) && out == 15, "3*5");
    CHECK(gc_shape_count(4, (const size_t[]){ 2, 3, 4, 5 }, &out) && out == 120, "2x3x4x5");
    CHECK(gc_shape_count(3, (const size_t[]){ 5, 0, 7 }, &out) && out == 0, "a zero dimension");
    CHECK(gc_shape_count(0, NULL, &out) && out == 1, "a scalar is one element");
    struct gc_tensor sized = matrix_of((size_t)1 << 62, 2, GC_F32, 0, NULL);
    CHECK(!gc_tensor_bytes(&sized, &out), "bytes overflow");
    sized = matrix_of(3, 4, GC_F64, 0, NULL);
    CHECK(gc_tensor_bytes(&sized, &out) && out == 96, "3x4 f64");
    sized = tensor_of(3, (const size_t[]){ 2, 3, 4 }, GC_F16, 0, NULL);
    CHECK(gc_tensor_bytes(&sized, &out) && out == 48 && gc_tensor_count(&sized) == 24,
          "2x3x4 f16");
    sized.ndim = GC_MAX_DIMS + 1;
    CHECK(!gc_tensor_bytes(&sized, &out), "more than GC_MAX_DIMS dimensions");
    struct gc_tensor m = matrix_of((size_t)1 << 40, (size_t)1 << 40, GC_F32, 0, NULL);
    CHECK(gc_tensor_alloc(&m, NULL) == -1, "huge allocation refused");
    struct gc_tensor z = matrix_of(0, 5, GC_F32, 0, NULL);
    CHECK(gc_tensor_alloc(&z, NULL) == 0 && z.data == NULL, "empty matrix");
    gc_tensor_free(&z);
    z = tensor_of(3, (const size_t[]){ 4, 0, 3 }, GC_F64, 0, NULL);
    CHECK(gc_tensor_alloc(&z, NULL) == 0 && z.data == NULL, "empty 3-D tensor");
    gc_tensor_free(&z);

    char text[64];
    gc_shape_text(3, (const size_t[]){ 4, 8, 5 }, text, sizeof text);
    CHECK(strcmp(text, "4x8x5") == 0, "shape text '%s'", text);
    gc_shape_text(1, (const size_t[]){ 5 }, text, sizeof text);
    CHECK(strcmp(text, "5") == 0, "1-D shape text '%s'", text);
    gc_shape_text(0, NULL, text, sizeof text);
    CHECK(strcmp(text, "scalar") == 0, "0-d shape text '%s'", text);

    /* Fortran order matters only with two or more dimensions above 1. */
    struct gc_tensor cm = tensor_of(3, (const size_t[]){ 2, 1, 3 }, GC_F32, 1, NULL);
    CHECK(gc_tensor_column_major(&cm), "2x1x3 Fortran is column-major");
    cm = tensor_of(3, (const size_t[]){ 1, 1, 5 }, GC_F32, 1, NULL);
    CHECK(!gc_tensor_column_major(&cm), "1x1x5 Fortran is also C order");
    cm = tensor_of(1, (const size_t[]){ 5 }, GC_F32, 1, NULL);
    CHECK(!gc_tensor_column_major(&cm), "a vector has one order");
    cm = matrix_of(2, 3, GC_F32, 0, NULL);
    CHECK(!gc_tensor_column_major(&cm), "C order");
}

static void test_half(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = gc_half_to_float((uint16_t)h);
        if (isnan(f))
            continue;
        if (gc_float_to_half(f) != h)
            bad++;
        /* Halfway to the next half up rounds to the even one of the two. */
        uint16_t next = (uint16_t)(h + 1);
        if ((h & 0x7fff) < 0x7bff && !(h & 0x8000)) {
            float g = gc_half_to_float(next);
            float mid = (f + g) / 2;     /* exact: both have few bits */
            uint16_t want = (h & 1) ? next : (uint16_t)h;
            if (gc_float_to_half(mid) != want)
                bad++;
            if (gc_float_to_half(nextafterf(mid, INFINITY)) != next)
                bad++;
            if (gc_float_to_half(nextafterf(mid, 0)) != h)
                bad++;
        }
    }
    CHECK(bad == 0, "%d half conversions wrong", bad);
    CHECK(gc_float_to_half(65520.0f) == 0x7c00, "65520 overflows to inf");
    CHECK(gc_float_to_half(65519.0f) == 0x7bff, "65519 rounds to max");
    CHECK(gc_float_to_half(0x1p-25f) == 0, "half of the smallest subnormal ties to 0");
    CHECK(gc_float_to_half(0x1.000002p-25f) == 1, "just above rounds up");
    CHECK(gc_float_to_half(-INFINITY) == 0xfc00, "-inf");
    CHECK((gc_float_to_half(NAN) & 0x7e00) == 0x7e00, "nan stays nan");
}

static void test_convert(void)
{
    float cm[6] = { 1, 4, 2, 5, 3, 6 };     /* [[1 2 3] [4 5 6]] column-major */
    struct gc_tensor src = matrix_of(2, 3, GC_F32, 1, cm), dst;
    CHECK(gc_tensor_convert(&src, GC_F32, NULL, &dst) == 0, "convert");
    const float *d = dst.data;
    CHECK(d[0] == 1 && d[1] == 2 && d[2] == 3 && d[3] == 4 && d[5] == 6 && !dst.fortran_order,
          "F to C order");
    CHECK(get_2d(&src, 1, 2) == 6, "get from F order");
    gc_tensor_free(&dst);

    double v[6] = { 300.5, -129, NAN, 2.5, 3.5, -0.5 };
    struct gc_tensor vs = matrix_of(2, 3, GC_F64, 0, v);
    CHECK(gc_tensor_convert(&vs, GC_I8, NULL, &dst) == 0, "to i8");
    const int8_t *i8 = dst.data;
    CHECK(i8[0] == 127 && i8[1] == -128 && i8[2] == 0 && i8[3] == 2 && i8[4] == 4 && i8[5] == 0,
          "saturate, NaN to 0, ties to even: %d %d %d %d %d %d", i8[0], i8[1], i8[2], i8[3],
          i8[4], i8[5]);
    gc_tensor_free(&dst);

    int64_t big[2] = { (1LL << 24) + 1, INT64_MAX };
    struct gc_tensor bs = matrix_of(1, 2, GC_I64, 0, big);
    CHECK(gc_tensor_convert(&bs, GC_F32, NULL, &dst) == 0, "i64 to f32");
    const float *bf = dst.data;
    CHECK(bf[0] == 16777216.0f && bf[1] == 0x1p63f, "one rounding from i64");
    gc_tensor_free(&dst);

    uint64_t um[1] = { (1ULL << 53) + 1 };
    struct gc_tensor us = matrix_of(1, 1, GC_U64, 0, um);
    CHECK(gc_tensor_convert(&us, GC_F64, NULL, &dst) == 0 &&
          ((double *)dst.data)[0] == 0x1p53, "u64 to f64");
    gc_tensor_free(&dst);

    uint16_t hv[4] = { 0x3c00, 0x0001, 0xfbff, 0x7c00 };
    struct gc_tensor hm = matrix_of(2, 2, GC_F16, 0, hv);
    CHECK(gc_tensor_convert(&hm, GC_F32, NULL, &dst) == 0 && ((float *)dst.data)[1] == 0x1p-24f &&
          ((float *)dst.data)[2] == -65504.0f && isinf(((float *)dst.data)[3]), "f16 to f32");
    struct gc_tensor back;
    CHECK(gc_tensor_convert(&dst, GC_F16, NULL, &back) == 0 && memcmp(back.data, hv, 8) == 0,
          "f32 to f16");
    gc_tensor_free(&back);
    gc_tensor_free(&dst);

    double hd[1] = { 1.0 + 0x1p-11 + 0x1p-40 };   /* just above a half midpoint */
    struct gc_tensor hs = matrix_of(1, 1, GC_F64, 0, hd);
    CHECK(gc_tensor_convert(&hs, GC_F16, NULL, &dst) == 0 &&
          ((uint16_t *)dst.data)[0] == 0x3c01, "f64 to f16 rounds once");
    gc_tensor_free(&dst);

    float bv[5] = { 0.0f, -0.0f, NAN, 2.5f, -1e-30f };
    struct gc_tensor bt = tensor_of(1, (const size_t[]){ 5 }, GC_F32, 0, bv);
    CHECK(gc_tensor_convert(&bt, GC_BOOL, NULL, &dst) == 0 && dst.dtype == GC_BOOL &&
          memcmp(dst.data, "\0\0\1\1\1", 5) == 0, "to bool: nonzero and NaN are true");
    gc_tensor_free(&dst);
    uint8_t bb[3] = { 0, 1, 7 };
    struct gc_tensor bs8 = tensor_of(1, (const size_t[]){ 3 }, GC_BOOL, 0, bb);
    CHECK(gc_tensor_get(&bs8, 2) == 1 && gc_tensor_get(&bs8, 0) == 0, "bool reads as 0 or 1");
    CHECK(gc_tensor_convert(&bs8, GC_F32, NULL, &dst) == 0 && ((float *)dst.data)[1] == 1 &&
          ((float *)dst.data)[2] == 1, "bool to f32");
    gc_tensor_free(&dst);
}

/* N-D Fortran-order sources: gc_tensor_get and gc_tensor_convert walk them
 * in C order, for every dtype and with or without a change of dtype. */
static void test_convert_nd(void)
{
    static const size_t shapes[][4] = { { 2, 3, 4, 0 }, { 3, 1, 2, 5 }, { 2, 2, 2, 2 } };
    static const int ndims[] = { 3, 4, 4 };
    for (size_t s = 0; s < sizeof ndims / sizeof ndims[0]; s++) {
        int nd = ndims[s];
        size_t n = 1;
        for (int d = 0; d < nd; d++)
            n *= shapes[s][d];
        /* Values 0..n-1 placed where the Fortran layout keeps them. */
        double stored[120];
        for (size_t i = 0; i < n; i++)
            stored[fortran_offset(nd, shapes[s], i)] = (double)i;
        for (int dt = 0; dt < GC_DTYPE_COUNT; dt++) {
            if (dt == GC_BOOL)
                continue;
            struct gc_tensor f64 = tensor_of(nd, shapes[s], GC_F64, 1, stored), src, dst;
            /* The source in dtype dt, still Fortran order: convert each
             * stored value by hand through a 1-D view of the storage. */
            struct gc_tensor flat = tensor_of(1, &n, GC_F64, 0, stored);
            CHECK(gc_tensor_convert(&flat, dt, NULL, &src) == 0, "flat to %s", gc_dtypes[dt].name);
            src.ndim = nd;
            memcpy(src.shape, shapes[s], (size_t)nd * sizeof shapes[s][0]);
            src.fortran_order = 1;
            int bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += gc_tensor_get(&src, i) != (long double)i ||
                       gc_tensor_get(&f64, i) != (long double)i;
            CHECK(bad == 0, "%d-D Fortran %s: %d elements misread", nd, gc_dtypes[dt].name, bad);
            static const int targets[] = { -1, GC_F32, GC_F64, GC_F16, GC_I16, GC_U8 };
            for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
                int to = targets[k];
                if (gc_tensor_convert(&src, to, NULL, &dst) != 0) {
                    CHECK(0, "convert %s to %d", gc_dtypes[dt].name, to);
                    continue;
                }
                bad = !shape_is(&dst, shapes[s], nd) || dst.fortran_order != 0 ||
                      (int)dst.dtype != (to < 0 ? (int)src.dtype : to);
                for (size_t i = 0; i < n; i++)
                    bad += gc_tensor_get(&dst, i) != (long double)i;
                CHECK(bad == 0, "%d-D Fortran %s to %s in C order", nd, gc_dtypes[dt].name,
                      to < 0 ? "itself" : gc_dtypes[to].name);
                gc_tensor_free(&dst);
            }
            gc_tensor_free(&src);
        }
    }
}

/* ---- formats/decimal.c ---- */

static void test_decimal_parse(locale_t loc)
{
    static const char *const ok[] = {
        "0", "-0", "1", "+1", "1.", ".5", "-.5e-3", "1e10", "1E+10", "3.4028235e38",
        "3.4028236e38", "1e39", "1e-45", "7e-46", "1.17549435e-38", "0.000001",
        "123456789012345678901234567890", "1.00000005960464477539062500",
        "1.0000000596046447753906250001", "16777217", "9007199254740993", "1e-400",
        "0.1", "0.30000001192092896", "4.9406564584124654e-324", "2.2250738585072011e-308",
        "00000000000000000000000000001.5", "1.5e0000000000000000000000", "1e22", "1e23",
        "8.589973e9", "1.00000000000000011102230246251565404236316680908203125",
        "18888e18888888888888888888888", "1e-18888888888888888888888", "1e00000000000000000000038",
        /* float64's edges: the least subnormal, its halfway neighbours (the
         * lower ties to zero), the least normal, the largest and past it. */
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "7.4109846876186981e-324", "7.4109846876186982e-324", "2.2250738585072014e-308",
        "2.2250738585072009e-308", "2.225073858507201136057409796709131975934e-308",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.797693134862315807e308",
        "1.7976931348623159e308", "1e309", "-1e309", "1e-324", "3e-324", "1e-400",
        /* Ties above 2^53 (even and odd significands), one unit either side,
         * and 17 to 20 digits where the mantissa passes 2^64. */
        "9007199254740993", "9007199254740995", "9007199254740993.0000000000001",
        "9007199254740992.9999999999999", "18014398509481986", "18014398509481990",
        "36028797018963971", "12345678901234567890", "18446744073709551615",
        "18446744073709551616", "99999999999999999999", "9999999999999999999",
        "0.30000000000000004", "0.1000000000000000055511151231257827", "2.5e-5", "7.038531e-26",
        "1448997445238699", "179769313486231570000000000000000000000000000000000000000000000000e243",
        /* A 10^q whose 128-bit entry is exact, and ties it decides alone. */
        "1e55", "1e56", "8.507059173023462e37", "9.313225746154785e-10", "1.1920928955078125e-7",
        "4503599627370497.5", "4503599627370498.5", "5e-1", "0.000000000000000000000000000000001",
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        float f;
        double d;
        const char *e1 = dec_parse_f32(ok[i], ok[i] + strlen(ok[i]), loc, &f);
        const char *e2 = dec_parse_f64(ok[i], ok[i] + strlen(ok[i]), loc, &d);
        float rf = strtof(ok[i], NULL);
        double rd = strtod(ok[i], NULL);
        if (!e1 || *e1 || memcmp(&f, &rf, 4) != 0 || !e2 || *e2 || memcmp(&d, &rd, 8) != 0) {
            bad++;
            printf("  parse '%s': %a vs %a, %a vs %a\n", ok[i], f, rf, d, rd);
        }
    }
    CHECK(bad == 0, "%d decimal strings misparsed", bad);

    static const char *const specials[] = { "nan", "NaN", "-nan", "inf", "-INF", "+Infinity",
                                            "infinity" };
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        float f;
        const char *e = dec_parse_f32(specials[i], specials[i] + strlen(specials[i]), loc, &f);
        CHECK(e && !*e && (isnan(f) || isinf(f)), "special '%s'", specials[i]);
    }
    static const char *const not_numbers[] = { "", "-", ".", "e5", "1e", "1e+", "+-1", "nan1x",
                                               "0x10", "in", "--1", " 1", "+.inf", ".nan" };
    for (size_t i = 0; i < sizeof not_numbers / sizeof not_numbers[0]; i++) {
        float f;
        const char *s = not_numbers[i], *e = dec_parse_f32(s, s + strlen(s), loc, &f);
        CHECK(!e || *e, "'%s' must not parse whole", not_numbers[i]);
    }

    /* Random decimal strings of 1 to 19 digits, exponents of float32's
     * range and, every other one, float64's. */
    uint64_t s = 12345;
    bad = 0;
    for (int i = 0; i < 300000; i++) {
        char buf[64];
        uint64_t r = rng_next(&s);
        int digits = 1 + (int)(r % 19), e = (int)((r >> 8) % 90) - 50;
        if (i % 2)
            e = (int)((r >> 8) % 680) - 350;    /* all of float64's range and past it */
        uint64_t mant = rng_next(&s) % 10000000000000000000ULL;
        snprintf(buf, sizeof buf, "%.*llue%d", digits, (unsigned long long)mant, e);
        buf[digits] = buf[digits] ? buf[digits] : 0;
        float f, rf = strtof(buf, NULL);
        double d, rd = strtod(buf, NULL);
        if (!dec_parse_f32(buf, buf + strlen(buf), loc, &f) || memcmp(&f, &rf, 4) != 0 ||
            !dec_parse_f64(buf, buf + strlen(buf), loc, &d) || memcmp(&d, &rd, 8) != 0) {
            if (bad++ < 5)
                printf("  parse '%s': %a vs %a\n", buf, f, rf);
        }
    }
    CHECK(bad == 0, "%d random decimals misparsed", bad);

    /* Decimals of 17 to 20 digits at and beside float64 midpoints, whose
     * rounding the 128-bit product cannot always settle (long double holds
     * the midpoint exactly), and of subnormals. */
    bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t b = rng_next(&s) & 0x7fffffffffffffffULL;
        if (i % 4 == 1)
            b &= 0x000fffffffffffffULL;
        double lo;
        memcpy(&lo, &b, 8);
        double hi = nextafter(lo, INFINITY);
        if (!isfinite(hi))
            continue;
        long double mid = ((long double)lo + hi) / 2;
        char buf[80];
        snprintf(buf, sizeof buf, "%.*Le", 16 + i % 4, mid);
        double d, rd = strtod(buf, NULL);
        const char *e = dec_parse_f64(buf, buf + strlen(buf), loc, &d);
        if (!e || *e || memcmp(&d, &rd, 8) != 0)
            if (bad++ < 5)
                printf("  parse '%s': %a vs %a\n", buf, d, rd);
    }
    CHECK(bad == 0, "%d decimals beside float64 midpoints misparsed", bad);

    /* Exact float midpoints, and one unit either side in the 30th digit. */
    bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint32_t b = (uint32_t)rng_next(&s) & 0x7effffff;
        float lo;
        memcpy(&lo, &b, 4);
        if (!isfinite(lo) || lo == 0)
            continue;
        double mid = ((double)lo + (double)nextafterf(lo, INFINITY)) / 2;
        char buf[80];
        snprintf(buf, sizeof buf, "%.40e", mid);
        float f, rf = strtof(buf, NULL);
        if (!dec_parse_f32(buf, buf + strlen(buf), loc, &f) || memcmp(&f, &rf, 4) != 0)
            bad++;
    }
    CHECK(bad == 0, "%d midpoints misparsed", bad);
}

/* Digits in a formatted number, to compare lengths with the shortest. */
static int count_sig_digits(const char *s)
{
    int n = 0, started = 0;
    const char *last_nonzero = NULL;
    for (const char *p = s; *p && *p != 'e'; p++) {
        if (*p >= '1' && *p <= '9')
            started = 1;
        if (started && *p >= '0' && *p <= '9') {
            n++;
            if (*p != '0')
                last_nonzero = p;
        }
    }
    if (!last_nonzero)
        return 1;
    int trailing = 0;
    for (const char *p = last_nonzero + 1; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            trailing++;
    return n - trailing;
}

/* A random float64 of one of several kinds: any bits, subnormal, a power
 * of two and its neighbours, the lowest or highest of a binade, the
 * ordinary range, a small integer over a small integer. */
static double random_f64(uint64_t *s, int kind)
{
    uint64_t b = rng_next(s), r = rng_next(s);
    double v;
    switch (kind % 6) {
    case 1: b &= 0x800fffffffffffffULL; break;
    case 2: b = (b & 0xfff0000000000000ULL) | (r % 3 == 2 ? 0x000fffffffffffffULL : r % 2); break;
    case 3: b = (b & 0x800fffffffffffffULL) | (1023 + r % 120 - 60) << 52; break;
    case 4: v = (double)(int64_t)(r % 2000001 - 1000000) / (double)(1 + b % 1000); return v;
    default: break;
    }
    memcpy(&v, &b, 8);
    return v;
}

/* The significant digits of a number's text (no leading or trailing
 * zeros) as an integer, and the power of ten of its last one. */
static uint64_t text_digits(const char *t, int *exp10)
{
    uint64_t d = 0;
    int frac = 0, seen_point = 0, zeros = 0;     /* zeros: not yet known to be inside */
    const char *p = t;
    for (; *p && *p != 'e'; p++) {
        if (*p == '.') {
            seen_point = 1;
        } else if (*p >= '0' && *p <= '9') {
            frac += seen_point;
            if (*p == '0') {
                zeros++;
                continue;
            }
            for (; zeros; zeros--)
                d *= 10;
            d = d * 10 + (uint64_t)(*p - '0');
        }
    }
    *exp10 = (*p == 'e' ? atoi(p + 1) : 0) - frac + zeros;
    return d;
}

/* Does d * 10^e read back as v (a float32's value when f32)? */
static int reads_back(uint64_t d, int e, double v, int f32)
{
    char t[48];
    snprintf(t, sizeof t, "%llue%d", (unsigned long long)d, e);
    return f32 ? strtof(t, NULL) == (float)v : strtod(t, NULL) == v;
}

/* The text `buf` written for a = |v| > 0 against printf's correctly
 * rounded digits: no decimal of one digit fewer reads back (any that did
 * would be the floor or the ceiling of a at that length: the rounded one
 * or a unit either side), and when the correctly rounded decimal of the
 * written length reads back, it is the one written, the nearest of the
 * shortest.  Counts failures into *longer and *farther. */
static void check_shortest(const char *buf, double a, int f32, int *longer, int *farther)
{
    char ref[48];
    int k = count_sig_digits(buf), e_mine, e_ref;
    uint64_t mine = text_digits(buf, &e_mine);
    if (k > 1) {
        snprintf(ref, sizeof ref, "%.*e", k - 2, a);
        uint64_t r = text_digits(ref, &e_ref);
        if ((reads_back(r, e_ref, a, f32) || reads_back(r + 1, e_ref, a, f32) ||
             (r > 1 && reads_back(r - 1, e_ref, a, f32))) && ++*longer <= 5)
            printf("  not shortest: %a -> '%s', %d digits read back\n", a, buf, k - 1);
    }
    snprintf(ref, sizeof ref, "%.*e", k - 1, a);
    uint64_t r = text_digits(ref, &e_ref);
    if (reads_back(r, e_ref, a, f32) && (r != mine || e_ref != e_mine) && ++*farther <= 5)
        printf("  not nearest: %a -> '%s', '%s' is nearer\n", a, buf, ref);
}

/* The shortest float64 text: two million values of every kind format and
 * parse back to the same bits (by dec_parse_f64 and by strtod), and a
 * tenth of them are the shortest and nearest by printf. */
static void test_decimal_shortest_f64(locale_t loc)
{
    char buf[DEC_MAX_TEXT + 1];
    uint64_t s = 4242;
    int bad = 0, longer = 0, farther = 0;
    for (int i = 0; i < 2000000; i++) {
        double v = random_f64(&s, i), back, back_lib;
        size_t n = dec_format_f64(v, 0, loc, buf);
        buf[n] = 0;
        const char *e = dec_parse_f64(buf, buf + n, loc, &back);
        back_lib = strtod(buf, NULL);
        if (n > DEC_MAX_TEXT || !e || *e ||
            (isnan(v) ? !isnan(back) || !isnan(back_lib)
                      : memcmp(&back, &v, 8) != 0 || memcmp(&back_lib, &v, 8) != 0)) {
            if (bad++ < 5)
                printf("  format %a -> '%s'\n", v, buf);
            continue;
        }
        if (i % 10 == 0 && isfinite(v) && v != 0)
            check_shortest(buf, fabs(v), 0, &longer, &farther);
    }
    CHECK(bad == 0, "%d doubles did not round-trip", bad);
    CHECK(longer == 0, "%d doubles not shortest", longer);
    CHECK(farther == 0, "%d doubles not the nearest shortest", farther);
}

/* The same of float32: half of them random bits, half the ordinary range. */
static void test_decimal_shortest_f32(locale_t loc)
{
    char buf[DEC_MAX_TEXT + 1];
    uint64_t s = 987654321;
    int bad = 0, longer = 0, farther = 0;
    for (int i = 0; i < 1000000; i++) {
        uint32_t b = (uint32_t)rng_next(&s);
        if (i % 2)
            b = (b & 0x807fffff) | (uint32_t)(100 + (b >> 23) % 60) << 23;
        float v, back, back_lib;
        memcpy(&v, &b, 4);
        size_t n = dec_format_f32(v, 0, loc, buf);
        buf[n] = 0;
        const char *e = dec_parse_f32(buf, buf + n, loc, &back);
        back_lib = strtof(buf, NULL);
        if (n > DEC_MAX_TEXT || !e || *e ||
            (isnan(v) ? !isnan(back) || !isnan(back_lib)
                      : memcmp(&back, &v, 4) != 0 || memcmp(&back_lib, &v, 4) != 0)) {
            if (bad++ < 5)
                printf("  format %a -> '%s'\n", v, buf);
            continue;
        }
        if (i % 4 == 0 && isfinite(v) && v != 0)
            check_shortest(buf, fabs((double)v), 1, &longer, &farther);
    }
    CHECK(bad == 0, "%d floats did not round-trip", bad);
    CHECK(longer == 0, "%d floats not shortest", longer);
    CHECK(farther == 0, "%d floats not the nearest shortest", farther);
}

static void test_decimal_format(locale_t loc)
{
    char buf[DEC_MAX_TEXT + 1];
    uint64_t s = 987654321;
    int bad = 0;
    test_decimal_shortest_f32(loc);
    test_decimal_shortest_f64(loc);

    /* Python's repr() digits, in gemmcli's layout: the bottom of a binade
     * (a narrower interval below), the extremes, ties between two nearest
     * candidates (to the even digit). */
    struct { double v; const char *want; } shortest[] = {
        { 0x1p710, "5.386379163185535e213" }, { 0x1p-383, "5.075883674631299e-116" },
        { 562949953421312.25, "562949953421312.2" }, { 562949953421312.75, "562949953421312.8" },
        { 0x1p-1074, "5e-324" }, { 0x1.fffffffffffffp1023, "1.7976931348623157e308" },
        { 0x1p-1022, "2.2250738585072014e-308" }, { 0x0.fffffffffffffp-1022, "2.225073858507201e-308" },
        { 0.1 + 0.2, "0.30000000000000004" }, { 1e23, "1e23" }, { 1e16, "1e16" },
        { 123456789012345680.0, "123456789012345680" }, { 0.001, "1e-3" }, { -1e-5, "-1e-5" },
        { 9007199254740992.0, "9007199254740992" }, { 0x1p-1022 * 0x1.09a65b3238769p-4, "1.443092016896717e-309" },
    };
    for (size_t i = 0; i < sizeof shortest / sizeof shortest[0]; i++) {
        size_t n = dec_format_f64(shortest[i].v, 0, loc, buf);
        buf[n] = 0;
        CHECK(strcmp(buf, shortest[i].want) == 0, "shortest %a: '%s', want '%s'", shortest[i].v,
              buf, shortest[i].want);
    }
    struct { float v; const char *want; } shortest32[] = {
        { 2525989.75f, "2525989.8" }, { 225464.875f, "225464.88" }, { 0x1p-149f, "1e-45" },
        { 0x1.fffffep127f, "3.4028235e38" }, { 0x1p-126f, "1.1754944e-38" }, { 16777216.0f, "16777216" },
    };
    for (size_t i = 0; i < sizeof shortest32 / sizeof shortest32[0]; i++) {
        size_t n = dec_format_f32(shortest32[i].v, 0, loc, buf);
        buf[n] = 0;
        CHECK(strcmp(buf, shortest32[i].want) == 0, "shortest %a: '%s', want '%s'",
              shortest32[i].v, buf, shortest32[i].want);
    }

    struct { double v; int prec; const char *want; } fixed[] = {
        { 0.125, 2, "0.12" }, { 0.375, 2, "0.38" }, { 123456, 3, "123000" },
        { 9.9999, 3, "10" }, { 1e-7, 2, "1e-7" }, { -2.5, 1, "-2" }, { 1.0 / 3, 5, "0.33333" },
        { 1e300, 4, "1e300" }, { 100, 1, "100" },
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        size_t n = dec_format_f64(fixed[i].v, fixed[i].prec, loc, buf);
        buf[n] = 0;
        CHECK(strcmp(buf, fixed[i].want) == 0, "%.17g at %d digits: '%s', want '%s'",
              fixed[i].v, fixed[i].prec, buf, fixed[i].want);
    }
    bad = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t b = rng_next(&s);
        double v;
        memcpy(&v, &b, 8);
        if (!isfinite(v))
            continue;
        int prec = 1 + (int)(b % 17);
        size_t n = dec_format_f64(v, prec, loc, buf);
        buf[n] = 0;
        char ref[64];
        snprintf(ref, sizeof ref, "%.*e", prec - 1, v);
        if (strtod(buf, NULL) != strtod(ref, NULL) && bad++ < 5)
            printf("  %%.%de of %a: '%s' vs '%s'\n", prec, v, buf, ref);
    }
    CHECK(bad == 0, "%d fixed-precision values differ from printf", bad);

    CHECK(dec_format_f32(-0.0f, 0, loc, buf) == 2 && memcmp(buf, "-0", 2) == 0, "-0");
    CHECK(dec_format_f32(INFINITY, 0, loc, buf) == 3 && memcmp(buf, "inf", 3) == 0, "inf");
    CHECK(dec_format_f32(-INFINITY, 0, loc, buf) == 4 && memcmp(buf, "-inf", 4) == 0, "-inf");
    CHECK(dec_format_f32(NAN, 0, loc, buf) == 3 && memcmp(buf, "nan", 3) == 0, "nan");
    size_t n = dec_format_f32(1e-5f, 0, loc, buf);
    CHECK(n == 4 && memcmp(buf, "1e-5", 4) == 0, "1e-5 is short: %.*s", (int)n, buf);
    n = dec_format_f32(0.1f, 0, loc, buf);
    CHECK(n == 3 && memcmp(buf, "0.1", 3) == 0, "0.1: %.*s", (int)n, buf);
    n = dec_format_f32(123.5f, 0, loc, buf);
    CHECK(n == 5 && memcmp(buf, "123.5", 5) == 0, "123.5: %.*s", (int)n, buf);
}

/* ---- .npy ---- */

static size_t npy_make(unsigned char *out, unsigned major, const char *dict, size_t pad,
                       const void *payload, size_t payload_len)
{
    size_t dlen = strlen(dict), hlen = dlen + pad + 1, pre = major == 1 ? 10 : 12;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        out[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(out + pre, dict, dlen);
    memset(out + pre + dlen, ' ', pad);
    out[pre + dlen + pad] = '\n';
    if (payload_len)
        memcpy(out + pre + hlen, payload, payload_len);
    return pre + hlen + payload_len;
}

static void test_npy_header_bytes(void)
{
    /* What np.save writes (NumPy 2.x: 64-byte alignment, growth padding). */
    static const char want_34[] =
        "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    static const char want_t[] =
        "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': True, 'shape': (4, 3), }";
    float data[12] = { 0 };
    struct gc_tensor m = matrix_of(3, 4, GC_F32, 0, data);
    size_t n;
    int status;
    unsigned char *b = write_bytes(GC_FMT_NPY, &m, NULL, &n, &status);
    CHECK(status == 0 && n == 128 + 48, "size %zu", n);
    CHECK(memcmp(b, want_34, sizeof want_34 - 1) == 0 && b[127] == '\n' && b[126] == ' ',
          "header like np.save");
    free(b);
    struct gc_tensor t = matrix_of(4, 3, GC_F32, 1, data);
    b = write_bytes(GC_FMT_NPY, &t, NULL, &n, &status);
    CHECK(status == 0 && n == 176 && memcmp(b, want_t, sizeof want_t - 1) == 0,
          "fortran header like np.save(a.T)");
    free(b);
    /* Exactly np.save(np.zeros((0, 123456789012345678), np.float32)). */
    static const char want_wide[] =
        "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, "
        "'shape': (0, 123456789012345678), }                                         \n";
    struct gc_tensor w = matrix_of(0, 123456789012345678, GC_F32, 0, NULL);
    b = write_bytes(GC_FMT_NPY, &w, NULL, &n, &status);
    CHECK(status == 0 && n == 128 && memcmp(b, want_wide, 128) == 0, "wide empty header");
    free(b);
    uint8_t u[5] = { 1, 2, 3, 4, 5 };
    struct gc_tensor um = matrix_of(1, 5, GC_U8, 1, u);
    b = write_bytes(GC_FMT_NPY, &um, NULL, &n, &status);
    CHECK(status == 0 && memmem(b, n, "'descr': '|u1', 'fortran_order': False", 38) != NULL,
          "u8 descr, a vector is C order");
    free(b);
}

/* The header np.save writes: magic, version 1.0, the header length as a
 * little-endian uint16, `dict`, spaces, a newline; `total` bytes in all. */
static void npy_expect(unsigned char *out, const char *dict, size_t total)
{
    size_t dlen = strlen(dict);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)((total - 10) & 0xff);
    out[9] = (unsigned char)((total - 10) >> 8);
    memcpy(out + 10, dict, dlen);
    memset(out + 10 + dlen, ' ', total - 11 - dlen);
    out[total - 1] = '\n';
}

/* N-D headers, byte for byte as NumPy's format.py writes them:
 *   header = "{'descr': D, 'fortran_order': F, 'shape': S, }"
 *            + " " * (21 - len(repr(growing dimension)))
 *   hlen   = len(header) + 1                        (the final newline)
 *   padlen = 64 - (10 + hlen) % 64                  (64 when aligned)
 *   bytes  = magic "\x93NUMPY" 1 0, uint16 (hlen + padlen) little-endian,
 *            header, padlen spaces, "\n"
 * where the growing dimension is shape[0] in C order and shape[-1] in
 * Fortran order, and F is True only when the data is really stored
 * column-major (a 1-D array is C order). */
static void test_npy_header_nd(void)
{
    /* np.save(np.zeros(7, np.float32)) */
    static const char want_1d[] =
        "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }"
        "                                                            \n";
    /* np.save(np.zeros((2, 3, 4), np.float32)) */
    static const char want_3d[] =
        "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }"
        "                                                       \n";
    /* np.save(np.asfortranarray(np.zeros((2, 3, 4)))) */
    static const char want_3d_f[] =
        "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }"
        "                                                        \n";
    struct {
        const char *want;        /* the whole header, or NULL: from dict and total */
        const char *dict;
        size_t total;
        int ndim;
        size_t shape[GC_MAX_DIMS];
        enum gc_dtype dtype;
        int fortran;
    } cases[] = {
        { want_1d, NULL, 128, 1, { 7 }, GC_F32, 0 },
        /* A vector marked Fortran order is written as C order, as NumPy
         * writes any array that is both C- and F-contiguous. */
        { want_1d, NULL, 128, 1, { 7 }, GC_F32, 1 },
        { want_3d, NULL, 128, 3, { 2, 3, 4 }, GC_F32, 0 },
        { want_3d_f, NULL, 128, 3, { 2, 3, 4 }, GC_F64, 1 },
        /* np.save(np.zeros((3, 4, 5, 6), np.float16).T) */
        { NULL, "{'descr': '<f2', 'fortran_order': True, 'shape': (6, 5, 4, 3), }", 128,
          4, { 6, 5, 4, 3 }, GC_F16, 1 },
        /* np.save(np.zeros((2, 3, 4, 5), bool)) */
        { NULL, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3, 4, 5), }", 128,
          4, { 2, 3, 4, 5 }, GC_BOOL, 0 },
        /* np.save(np.zeros((1, 1, 6), np.int64, order='F')): F-contiguous and
         * C-contiguous at once, so C order. */
        { NULL, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1, 6), }", 128,
          3, { 1, 1, 6 }, GC_I64, 1 },
        /* np.save(np.float32(0)): a 0-d array has no growing dimension. */
        { NULL, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 128, 0, { 0 },
          GC_F32, 0 },
        /* np.save(np.zeros((0, 2, 3), np.float32)) */
        { NULL, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2, 3), }", 128,
          3, { 0, 2, 3 }, GC_F32, 0 },
        /* Here the growth padding decides the length: a 97-byte dict and
         * 20 spaces for the 1-digit first dimension make 10 + 97 + 20 + 1
         * = 128, already aligned, so NumPy adds 64 more.  Without growth
         * padding (108) or with the last dimension's 15 spaces (123) it
         * would be 128 bytes.
         * np.save(np.zeros((2,) + (1,) * 11 + (100000,), np.float32)) */
        { NULL, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 1, 1, 1, 1, 1, 1, 1, "
                "1, 1, 1, 100000), }", 192,
          13, { 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 100000 }, GC_F32, 0 },
        /* The same in Fortran order, where the last dimension grows (1
         * digit; the first has 4, which would give 125 and 128 bytes):
         * np.save(np.asfortranarray(np.zeros((1000,) + (1,) * 12 + (2,), np.float32))) */
        { NULL, "{'descr': '<f4', 'fortran_order': True, 'shape': (1000, 1, 1, 1, 1, 1, 1, 1, "
                "1, 1, 1, 1, 1, 2), }", 192,
          14, { 1000, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2 }, GC_F32, 1 },
    };
    unsigned char want[2048];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gc_tensor t = tensor_of(cases[i].ndim, cases[i].shape, cases[i].dtype,
                                       cases[i].fortran, NULL);
        if (cases[i].want)
            memcpy(want, cases[i].want, cases[i].total);
        else
            npy_expect(want, cases[i].dict, cases[i].total);
        size_t n;
        int st;
        unsigned char *b = header_bytes(GC_FMT_NPY, &t, &n, &st);
        CHECK(st == 0 && n == cases[i].total && memcmp(b, want, n) == 0,
              "header %zu like np.save: %zu bytes, want %zu:\n  got  %.*s|\n  want %.*s|", i, n,
              cases[i].total, n > 10 ? (int)n - 10 : 0, n > 10 ? (const char *)b + 10 : "",
              (int)cases[i].total - 10, (const char *)want + 10);
        free(b);
    }

    /* 64 dimensions of 2^63-1 each, the longest header there is: NumPy's
     * _write_array_header gives 1472 bytes, still version 1.0, with the
     * 2 spaces of growth padding a 19-digit dimension leaves. */
    struct gc_tensor t64;
    memset(&t64, 0, sizeof t64);
    t64.ndim = GC_MAX_DIMS;
    t64.dtype = GC_F32;
    char dict[1600];
    size_t used = (size_t)snprintf(dict, sizeof dict,
                                   "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    for (int d = 0; d < GC_MAX_DIMS; d++) {
        t64.shape[d] = GC_DIM_MAX;
        used += (size_t)snprintf(dict + used, sizeof dict - used, "%s9223372036854775807",
                                 d ? ", " : "");
    }
    snprintf(dict + used, sizeof dict - used, "), }");
    npy_expect(want, dict, 1472);
    size_t n;
    int st;
    unsigned char *b = header_bytes(GC_FMT_NPY, &t64, &n, &st);
    CHECK(st == 0 && n == 1472 && memcmp(b, want, n) == 0, "64-D header: %zu bytes", n);
    free(b);

    /* The whole file is that header and the payload as stored. */
    float fdata[24];
    for (int i = 0; i < 24; i++)
        fdata[i] = (float)i;
    struct gc_tensor f3 = tensor_of(3, (const size_t[]){ 2, 3, 4 }, GC_F32, 1, fdata);
    b = write_bytes(GC_FMT_NPY, &f3, NULL, &n, &st);
    npy_expect(want, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", 128);
    CHECK(st == 0 && n == 128 + sizeof fdata && memcmp(b, want, 128) == 0 &&
          memcmp(b + 128, fdata, sizeof fdata) == 0, "3-D Fortran file: header, then storage");
    free(b);
}

static void test_npy_read(void)
{
    unsigned char file[4096];
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    float payload[6] = { 1, 2, 3, 4, 5, 6 };
    size_t n;

    struct { unsigned major; const char *dict; size_t pad; } good[] = {
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0 },
        { 1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}", 5 },
        { 2, "{\"descr\": \"<f4\", \"shape\": (2,3), \"fortran_order\": False}", 1000 },
        { 3, "{'descr':'f4','fortran_order':False,'shape':(2L, 3L),}", 16 },
        { 1, "{'descr': '=f4', 'fortran_order': False, 'shape': (2, 3)}", 40 },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        n = npy_make(file, good[i].major, good[i].dict, good[i].pad, payload, sizeof payload);
        for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
            int st = read_bytes(GC_FMT_AUTO, "g.npy", file, n, &o, &m, pipe_it);
            CHECK(st == 0 && SHAPE_IS(&m, 2, 3) && m.dtype == GC_F32 &&
                  ((float *)m.data)[5] == 6, "good header %zu (pipe %d): %s", i, pipe_it,
                  captured);
            if (st == 0)
                gc_tensor_free(&m);
        }
    }

    /* Big-endian doubles, Fortran order, 1-D. */
    double be[6];
    for (int i = 0; i < 6; i++) {
        double v = i + 0.5;
        uint64_t b;
        memcpy(&b, &v, 8);
        b = __builtin_bswap64(b);
        memcpy(&be[i], &b, 8);
    }
    n = npy_make(file, 1, "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }", 3, be,
                 sizeof be);
    CHECK(read_bytes(GC_FMT_NPY, "be.npy", file, n, &o, &m, 0) == 0 && m.dtype == GC_F64 &&
          m.fortran_order == 1 && get_2d(&m, 1, 0) == 1.5 && get_2d(&m, 0, 2) == 4.5,
          "big-endian Fortran f64: %s", captured);
    gc_tensor_free(&m);
    n = npy_make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", 3,
                 payload, sizeof payload);
    /* 1-D stays 1-D: shape (6,), no longer the 1 x 6 it used to read as. */
    CHECK(read_bytes(GC_FMT_NPY, "v.npy", file, n, &o, &m, 0) == 0 && SHAPE_IS(&m, 6) &&
          ((float *)m.data)[5] == 6 && gc_tensor_get(&m, 4) == 5, "1-D reads as (6,): %s",
          captured);
    gc_tensor_free(&m);
    n = npy_make(file, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", 3,
                 payload, sizeof payload);
    CHECK(read_bytes(GC_FMT_NPY, "vf.npy", file, n, &o, &m, 1) == 0 && SHAPE_IS(&m, 6) &&
          !m.fortran_order, "1-D marked Fortran order is C order: %s", captured);
    gc_tensor_free(&m);
    /* 3-D reads as it is (it was refused while only matrices were read). */
    n = npy_make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", 3,
                 payload, sizeof payload);
    CHECK(read_bytes(GC_FMT_NPY, "3d.npy", file, n, &o, &m, 0) == 0 && SHAPE_IS(&m, 1, 2, 3) &&
          memcmp(m.data, payload, sizeof payload) == 0, "1x2x3: %s", captured);
    gc_tensor_free(&m);
    /* Booleans, with or without a byte-order character. */
    const unsigned char flags[6] = { 1, 0, 0, 1, 1, 0 };
    for (int k = 0; k < 2; k++) {
        n = npy_make(file, 1, k ? "{'descr': '<b1', 'fortran_order': False, 'shape': (3, 2), }"
                                : "{'descr': '|b1', 'fortran_order': False, 'shape': (3, 2), }",
                     3, flags, sizeof flags);
        CHECK(read_bytes(GC_FMT_NPY, "b.npy", file, n, &o, &m, k) == 0 && m.dtype == GC_BOOL &&
              SHAPE_IS(&m, 3, 2) && memcmp(m.data, flags, 6) == 0 && get_2d(&m, 1, 1) == 1,
              "bool %d: %s", k, captured);
        gc_tensor_free(&m);
    }
    n = npy_make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", 3,
                 NULL, 0);
    CHECK(read_bytes(GC_FMT_NPY, "e.npy", file, n, &o, &m, 0) == 0 && SHAPE_IS(&m, 0, 3),
          "empty matrix");
    gc_tensor_free(&m);
    int16_t i16[6] = { -1, 2, -3, 4, -5, 6 };
    n = npy_make(file, 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3, 2), }", 3,
                 i16, sizeof i16);
    CHECK(read_bytes(GC_FMT_NPY, "i.npy", file, n, &o, &m, 0) == 0 && m.dtype == GC_I16 &&
          get_2d(&m, 2, 0) == -5, "int16 kept as int16");
    gc_tensor_free(&m);
    /* np.save(np.float64(2.5)): a 0-d array of one element. */
    double scalar = 2.5;
    n = npy_make(file, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 3,
                 &scalar, sizeof scalar);
    CHECK(read_bytes(GC_FMT_NPY, "s.npy", file, n, &o, &m, 0) == 0 && m.ndim == 0 &&
          m.dtype == GC_F64 && gc_tensor_count(&m) == 1 && gc_tensor_get(&m, 0) == 2.5,
          "0-d array: %s", captured);
    gc_tensor_free(&m);
    n = npy_make(file, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 3,
                 &scalar, 4);
    CHECK(read_bytes(GC_FMT_NPY, "s.npy", file, n, &o, &m, 0) == GC_EXIT_INPUT,
          "0-d array cut short");

    struct { const char *dict; const char *why; } bad[] = {
        { "{'descr': '<f4', 'fortran_order': False}", "key 'shape' missing" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", "unexpected key" },
        { "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", "repeated" },
        { "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3)}", "complex" },
        { "{'descr': '|O', 'fortran_order': False, 'shape': (2, 3)}", "object" },
        { "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}", "structured" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", "negative" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "not a tuple" },
        { "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", "neither True" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3)}",
          "NumPy's limit" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615, 0)}",
          "NumPy's limit" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
          "too large" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x", "after the dict" },
        { "{'descr': '<U5', 'fortran_order': False, 'shape': (2, 3)}", "unsupported dtype" },
        { "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (2, 3)}", "unsupported dtype" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, -1)}", "negative" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,, 1)}", "not a tuple" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "comma" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = npy_make(file, 1, bad[i].dict, 3, payload, sizeof payload);
        int st = read_bytes(GC_FMT_NPY, "bad.npy", file, n, &o, &m, 0);
        CHECK(st == GC_EXIT_INPUT && strstr(captured, bad[i].why) && strstr(captured, "bad.npy"),
              "bad header %zu: status %d, message %s", i, st, captured);
    }

    /* 64 dimensions are NumPy's limit: read; 65 are refused. */
    char dict[512];
    for (int extra = 0; extra < 2; extra++) {
        size_t used = (size_t)snprintf(dict, sizeof dict,
                                       "{'descr': '<f4', 'fortran_order': False, 'shape': (");
        for (int d = 0; d < GC_MAX_DIMS - 1 + extra; d++)
            used += (size_t)snprintf(dict + used, sizeof dict - used, "1, ");
        snprintf(dict + used, sizeof dict - used, "6), }");
        n = npy_make(file, 1, dict, 3, payload, sizeof payload);
        for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
            int st = read_bytes(GC_FMT_AUTO, "many.npy", file, n, &o, &m, pipe_it);
            if (extra)
                CHECK(st == GC_EXIT_INPUT && strstr(captured, "more than 64 dimensions") &&
                      (pipe_it || strstr(captured, "many.npy")), "65 dimensions (pipe %d): %d %s",
                      pipe_it, st, captured);
            else
                CHECK(st == 0 && m.ndim == 64 && m.shape[0] == 1 && m.shape[63] == 6 &&
                      gc_tensor_count(&m) == 6 && ((float *)m.data)[5] == 6,
                      "64 dimensions (pipe %d): %s", pipe_it, captured);
            gc_tensor_free(&m);
        }
    }

    const char *ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    n = npy_make(file, 1, ok_dict, 3, payload, sizeof payload);
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        CHECK(read_bytes(GC_FMT_NPY, "short.npy", file, n - 1, &o, &m, pipe_it) == GC_EXIT_INPUT &&
              strstr(captured, "truncated"), "one byte short: %s", captured);
        file[n] = 0;
        CHECK(read_bytes(GC_FMT_NPY, "long.npy", file, n + 1, &o, &m, pipe_it) == GC_EXIT_INPUT &&
              strstr(captured, "trailing"), "one byte long: %s", captured);
    }
    file[6] = 4;
    CHECK(read_bytes(GC_FMT_NPY, "v4.npy", file, n, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "version 4.0"), "version 4: %s", captured);
    file[6] = 1;
    file[8] = 0xff;
    file[9] = 0xff;
    CHECK(read_bytes(GC_FMT_NPY, "len.npy", file, n, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "past the end"), "header length past the end: %s", captured);
    CHECK(read_bytes(GC_FMT_NPY, "magic.npy", "\x93NUMPZ\x01\x00", 8, &o, &m, 0) ==
          GC_EXIT_INPUT && strstr(captured, "magic"), "bad magic: %s", captured);
    n = npy_make(file, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000)}",
                 3, payload, sizeof payload);
    /* Refused before anything is allocated: as more than the memory
     * available, or, where 80 GB is available, as truncated. */
    CHECK(read_bytes(GC_FMT_NPY, "claims.npy", file, n, &o, &m, 1) == GC_EXIT_INPUT &&
          (strstr(captured, "truncated") || strstr(captured, "memory")),
          "80 GB claimed on a pipe: %s", captured);

    /* Past the size a pipe's header is trusted with, in both directions. */
    size_t big_n = 4200 * 4200, big_bytes = big_n * 4;
    unsigned char *big = malloc(big_bytes + 256);
    size_t pre = npy_make(big, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4200, 4200)}",
                          3, NULL, 0);
    for (size_t i = 0; i < big_n; i++) {
        float x = (float)i;
        memcpy(big + pre + 4 * i, &x, 4);
    }
    CHECK(read_bytes(GC_FMT_NPY, "big", big, pre + big_bytes, &o, &m, 1) == 0 &&
          get_2d(&m, 4199, 4199) == (float)(big_n - 1), "70 MB from a pipe: %s", captured);
    gc_tensor_free(&m);
    CHECK(read_bytes(GC_FMT_NPY, "big", big, pre + big_bytes - 1, &o, &m, 1) == GC_EXIT_INPUT &&
          strstr(captured, "truncated"), "70 MB less a byte from a pipe: %s", captured);
    big[pre + big_bytes] = 0;
    CHECK(read_bytes(GC_FMT_NPY, "big", big, pre + big_bytes + 1, &o, &m, 1) == GC_EXIT_INPUT &&
          strstr(captured, "trailing"), "70 MB and a byte from a pipe: %s", captured);
    free(big);

    memcpy(file, "\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
    CHECK(read_bytes(GC_FMT_NPY, "huge.npy", file, 12, &o, &m, 1) == GC_EXIT_INPUT &&
          strstr(captured, "limit"), "oversized header from a pipe: %s", captured);
}

static void test_npy_roundtrip_all_dtypes(void)
{
    unsigned char data[8 * 12];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 37 + 11);
    for (int dt = 0; dt < GC_DTYPE_COUNT; dt++)
        for (int fo = 0; fo < 2 && gc_dtypes[dt].numpy; fo++) {   /* .npy dtypes */
            struct gc_tensor m = matrix_of(3, 4, (enum gc_dtype)dt, fo, data), r;
            size_t n;
            int st;
            unsigned char *b = write_bytes(GC_FMT_NPY, &m, NULL, &n, &st);
            struct gc_read_opts o = default_read();
            int rs = read_bytes(GC_FMT_AUTO, "rt.npy", b, n, &o, &r, 0);
            CHECK(st == 0 && rs == 0 && SHAPE_IS(&r, 3, 4) && r.dtype == m.dtype &&
                  r.fortran_order == fo && memcmp(r.data, data, 12 * gc_dtypes[dt].size) == 0,
                  "npy round trip %s order %d", gc_dtypes[dt].name, fo);
            if (rs == 0)
                gc_tensor_free(&r);
            free(b);
        }
}

static int same_value(long double a, long double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* Two C-order tensors of one shape and dtype hold the same bytes, but for
 * NaNs, which need only both be NaN. */
/* The same bytes element by element: reordering must not touch NaN
 * payloads or bool bytes. */
static int same_elements(const struct gc_tensor *a, const struct gc_tensor *b)
{
    size_t es = gc_dtypes[a->dtype].size;
    for (size_t i = 0; i < gc_tensor_count(a); i++)
        if (memcmp((const char *)a->data + i * es, (const char *)b->data + i * es, es) != 0)
            return 0;
    return 1;
}

/* N-D tensors through .npy and back, every dtype, both orders, from a file
 * and from a pipe; what comes back is the same bytes in the same layout,
 * and the same elements in C order; raw output is those elements. */
/* bfloat16: no .npy form (refused with a usage error), raw round trip, and
 * the conversion rounds to nearest even once. */
static void test_bf16(void)
{
    uint16_t v[6] = { 0x3f80, 0xc000, 0x7f80, 0x0001, 0x3f81, 0x7fc0 };
    struct gc_tensor m = matrix_of(2, 3, GC_BF16, 0, v), r;
    size_t n;
    int st;
    unsigned char *b = write_bytes(GC_FMT_NPY, &m, NULL, &n, &st);
    CHECK(st == GC_EXIT_USAGE && strstr(captured, "bfloat16"), "bf16 to .npy refused: %d %s", st,
          captured);
    free(b);
    b = write_bytes(GC_FMT_RAW, &m, NULL, &n, &st);
    struct gc_read_opts o = { .dtype = GC_BF16, .has_shape = 1, .ndim = 2, .shape = { 2, 3 } };
    CHECK(st == 0 && n == 12 && read_bytes(GC_FMT_RAW, "b.bin", (const char *)b, n, &o, &r, 0) == 0 &&
          r.dtype == GC_BF16 && memcmp(r.data, v, 12) == 0, "bf16 raw round trip");
    free(b);
    gc_tensor_free(&r);
    CHECK(gc_double_to_bf16(1.0) == 0x3f80 && gc_double_to_bf16(1.0 + 0x1p-8) == 0x3f80 &&
          gc_double_to_bf16(1.0 + 0x1p-8 + 0x1p-40) == 0x3f81 &&
          gc_double_to_bf16(1.0 + 3 * 0x1p-8) == 0x3f82 && gc_bf16_to_float(0xc000) == -2.0f,
          "bf16 rounding: ties to even, and a double just past a tie rounds up");
}

static void test_npy_roundtrip_nd(void)
{
    static const struct { int ndim; size_t shape[5]; } shapes[] = {
        { 3, { 2, 3, 4 } }, { 4, { 2, 1, 3, 5 } }, { 4, { 3, 2, 2, 2 } }, { 5, { 2, 2, 1, 3, 2 } },
        { 3, { 1, 1, 7 } },   /* Fortran order stores it as C order does */
    };
    unsigned char data[8 * 60];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int dt = 0; dt < GC_DTYPE_COUNT; dt++)
            for (int fo = 0; fo < 2 && gc_dtypes[dt].numpy; fo++) {   /* .npy dtypes */
                size_t es = gc_dtypes[dt].size;
                for (size_t i = 0; i < sizeof data; i++)
                    data[i] = dt == GC_BOOL ? (unsigned char)(i % 3 == 1)
                                            : (unsigned char)(i * 37 + 11 + s);
                struct gc_tensor t = tensor_of(shapes[s].ndim, shapes[s].shape,
                                               (enum gc_dtype)dt, fo, data), r, c;
                size_t count = gc_tensor_count(&t), n, rn;
                int st, column_major = gc_tensor_column_major(&t), pipe_it = (dt + fo) % 2;
                unsigned char *b = write_bytes(GC_FMT_NPY, &t, NULL, &n, &st);
                struct gc_read_opts o = default_read();
                int rs = read_bytes(GC_FMT_AUTO, "nd.npy", b, n, &o, &r, pipe_it);
                int same = st == 0 && rs == 0 && shape_is(&r, shapes[s].shape, shapes[s].ndim) &&
                           r.dtype == t.dtype && r.fortran_order == column_major &&
                           memcmp(r.data, data, count * es) == 0;
                for (size_t i = 0; same && i < count; i++)
                    same = same_value(gc_tensor_get(&r, i), gc_tensor_get(&t, i));
                CHECK(same, "npy round trip %d-D #%zu %s order %d (pipe %d): %s",
                      shapes[s].ndim, s, gc_dtypes[dt].name, fo, pipe_it, captured);
                free(b);
                /* Raw output is the elements in C order, and so is what
                 * convert to its own dtype makes.  A NaN need only stay a
                 * NaN: an N-D column-major source goes through a value
                 * conversion that quiets signalling NaNs (2-D ones keep
                 * their bytes). */
                unsigned char c_order[sizeof data];
                for (size_t i = 0; i < count; i++)
                    memcpy(c_order + i * es,
                           data + es * (column_major ? fortran_offset(t.ndim, t.shape, i) : i), es);
                struct gc_tensor want = tensor_of(t.ndim, t.shape, t.dtype, 0, c_order);
                b = write_bytes(GC_FMT_RAW, &r, NULL, &rn, &st);
                struct gc_tensor got = tensor_of(t.ndim, t.shape, t.dtype, 0, b);
                CHECK(st == 0 && rn == count * es && same_elements(&got, &want),
                      "raw from %d-D #%zu %s order %d", shapes[s].ndim, s, gc_dtypes[dt].name,
                      fo);
                CHECK(gc_tensor_convert(&t, -1, NULL, &c) == 0 && !c.fortran_order &&
                      same_elements(&c, &want), "convert %d-D #%zu %s order %d to C order",
                      shapes[s].ndim, s, gc_dtypes[dt].name, fo);
                gc_tensor_free(&c);
                gc_tensor_free(&r);
                free(b);
            }
}

/* Big-endian N-D input: every element is byte-swapped on reading, in
 * either order. */
static void test_npy_big_endian_nd(void)
{
    static const struct {
        const char *dict;
        enum gc_dtype dtype;
        int ndim;
        size_t shape[4];
    } cases[] = {
        { "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3, 4), }", GC_F32, 3,
          { 2, 3, 4 } },
        { "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3, 2, 2), }", GC_F64, 4,
          { 2, 3, 2, 2 } },
        { "{'descr': '>f2', 'fortran_order': True, 'shape': (3, 2, 4), }", GC_F16, 3,
          { 3, 2, 4 } },
        { "{'descr': '>i4', 'fortran_order': False, 'shape': (2, 2, 2, 3), }", GC_I32, 4,
          { 2, 2, 2, 3 } },
        { "{'descr': '>u2', 'fortran_order': True, 'shape': (4, 3, 2), }", GC_U16, 3,
          { 4, 3, 2 } },
        { "{'descr': '>i8', 'fortran_order': False, 'shape': (24,), }", GC_I64, 1, { 24 } },
    };
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    unsigned char le[24 * 8], be[24 * 8], file[512];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t es = gc_dtypes[cases[k].dtype].size, count = 24;
        /* Bytes, not values: a swap is checked bit for bit, NaNs or not. */
        for (size_t i = 0; i < count * es; i++)
            le[i] = (unsigned char)(i * 73 + k);
        for (size_t i = 0; i < count; i++)
            for (size_t j = 0; j < es; j++)
                be[i * es + j] = le[i * es + es - 1 - j];
        size_t n = npy_make(file, 1, cases[k].dict, 7, be, count * es);
        int fortran = strstr(cases[k].dict, "True") != NULL;
        for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
            int st = read_bytes(GC_FMT_NPY, "be.npy", file, n, &o, &m, pipe_it);
            CHECK(st == 0 && m.dtype == cases[k].dtype && m.fortran_order == fortran &&
                  shape_is(&m, cases[k].shape, cases[k].ndim) &&
                  memcmp(m.data, le, count * es) == 0,
                  "big-endian %s (pipe %d): %s", cases[k].dict, pipe_it, captured);
            gc_tensor_free(&m);
        }
    }
    /* And by position: element (1, 2, 0, 1) of the 2x3x2x2 Fortran f64
     * file is stored at 1 + 2*2 + 0*6 + 1*12 = 17. */
    double be8[24];
    for (int i = 0; i < 24; i++) {
        double v = (i * 3 - 20) / 8.0;
        uint64_t u;
        memcpy(&u, &v, 8);
        u = __builtin_bswap64(u);
        memcpy(&be8[i], &u, 8);
    }
    size_t n = npy_make(file, 1, cases[1].dict, 7, be8, sizeof be8);
    const size_t at[4] = { 1, 2, 0, 1 };
    CHECK(read_bytes(GC_FMT_NPY, "be4.npy", file, n, &o, &m, 0) == 0 &&
          gc_tensor_get(&m, c_index(4, cases[1].shape, at)) == (17 * 3 - 20) / 8.0L,
          "big-endian Fortran 4-D element (1,2,0,1): %s", captured);
    gc_tensor_free(&m);
}

/* info reads the N-D shape from the header alone. */
static void test_npy_info_nd(void)
{
    unsigned char file[512];
    float payload[24] = { 0 };
    size_t n = npy_make(file, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }",
                        3, payload, sizeof payload);
    write_file(tmp_path("info.npy"), file, n);
    struct gc_input in;
    struct gc_info info;
    struct gc_read_opts o = default_read();
    capture_begin();
    int st = input_open(&in, tmp_path("info.npy"));
    if (!st) {
        st = gc_formats[GC_FMT_NPY].info(&in, &o, &info);
        input_close(&in);
    }
    capture_end();
    CHECK(st == 0 && info.format == GC_FMT_NPY && info.ndim == 3 && info.shape[0] == 2 &&
          info.shape[1] == 3 && info.shape[2] == 4 && info.fortran_order &&
          info.header_bytes == n - sizeof payload, "info of a 3-D Fortran .npy: %s", captured);
}

/* ---- the format table's capabilities ---- */

/* Bytes a terminal shows as text: printable ASCII, newline, tab, return. */
static int is_text(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((b[i] < 0x20 && b[i] != '\n' && b[i] != '\t' && b[i] != '\r') || b[i] > 0x7e)
            return 0;
    return 1;
}

/* What a format's row says it can do is what its reader and writer do:
 * the dtypes it holds are the ones it writes; a binary format writes bytes
 * that are not text and a text one text; a format written at offsets
 * writes a header of the length info() gives and then the elements as
 * memory holds them; a versioned one reports its version. */
static void test_format_capabilities(void)
{
    for (int f = 0; f < GC_FMT_COUNT; f++) {
        const struct gc_format *F = &gc_formats[f];
        size_t n;
        int st;
        /* An archive is read, never written; its members are .npy. */
        int archive = format_can(f, FORMAT_ARCHIVE);
        CHECK(archive == (F->write == NULL) && archive == (F->members != NULL) &&
              archive == (F->member_info != NULL) && (!archive || !F->write_header),
              "%s: an archive has no writer and lists its members", F->name);
        if (archive) {
            CHECK(F->dtypes == gc_formats[GC_FMT_NPY].dtypes, "%s holds what .npy holds",
                  F->name);
            continue;
        }
        for (int dt = 0; dt < GC_DTYPE_COUNT; dt++) {
            uint64_t zeros[4] = { 0 };
            struct gc_tensor z = matrix_of(2, 2, (enum gc_dtype)dt, 0, zeros);
            free(write_bytes(f, &z, NULL, &n, &st));
            CHECK((st == 0) == format_holds(f, (enum gc_dtype)dt), "%s holds %s: table %d, "
                  "writer %d %s", F->name, gc_dtypes[dt].name, format_holds(f, (enum gc_dtype)dt),
                  st, captured);
        }
        float v[4] = { 1, 2, 3, 4 };
        struct gc_tensor m = matrix_of(2, 2, GC_F32, 0, v);
        unsigned char *b = write_bytes(f, &m, NULL, &n, &st);
        CHECK(st == 0 && (!is_text(b, n)) == format_can(f, FORMAT_BINARY),
              "%s: binary in the table %d, its bytes text %d", F->name,
              format_can(f, FORMAT_BINARY), is_text(b, n));
        write_file(tmp_path("caps"), b, n);
        struct gc_read_opts o = default_read();
        o.dtype = GC_F32;
        set_shape(&o, 2, (const size_t[]){ 2, 2 });
        struct gc_input in;
        struct gc_info info;
        memset(&info, 0, sizeof info);
        capture_begin();
        st = input_open(&in, tmp_path("caps"));
        if (!st) {
            st = F->info(&in, &o, &info);
            input_close(&in);
        }
        capture_end();
        CHECK(st == 0 && (info.version_major > 0) == format_can(f, FORMAT_VERSIONED),
              "%s: versioned in the table %d, info's version %u: %s", F->name,
              format_can(f, FORMAT_VERSIONED), info.version_major, captured);
        if (format_can(f, FORMAT_AT_OFFSETS)) {
            size_t hn = 0;
            int hst = -1;
            unsigned char *h = F->write_header ? header_bytes(f, &m, &hn, &hst) : NULL;
            CHECK(h && hst == 0 && info.header_bytes == hn && n == hn + sizeof v &&
                  memcmp(b, h, hn) == 0 && memcmp(b + hn, v, sizeof v) == 0,
                  "%s: written at offsets: a header of info's length (%zu of %zu), then the "
                  "elements", F->name, info.header_bytes, hn);
            free(h);
        }
        free(b);
    }
}

/* ---- raw ---- */

static void test_raw(void)
{
    float v[16];
    for (int i = 0; i < 16; i++)
        v[i] = (float)i;
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    CHECK(read_bytes(GC_FMT_AUTO, "sq.bin", v, 9 * 4, &o, &m, 0) == 0 && SHAPE_IS(&m, 3, 3),
          "square inferred: %s", captured);
    gc_tensor_free(&m);
    CHECK(read_bytes(GC_FMT_RAW, "sq", v, 9 * 4, &o, &m, 1) == 0 && SHAPE_IS(&m, 3, 3),
          "square inferred from a pipe: %s", captured);
    gc_tensor_free(&m);
    CHECK(read_bytes(GC_FMT_RAW, "ns.bin", v, 12 * 4, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "not a square"), "12 elements: %s", captured);
    set_shape(&o, 2, (const size_t[]){ 3, 4 });
    CHECK(read_bytes(GC_FMT_RAW, "s.bin", v, 12 * 4, &o, &m, 0) == 0 && SHAPE_IS(&m, 3, 4) &&
          get_2d(&m, 2, 1) == 9, "--shape 3x4");
    gc_tensor_free(&m);
    o.fortran_order = 1;
    CHECK(read_bytes(GC_FMT_RAW, "f.bin", v, 12 * 4, &o, &m, 1) == 0 && m.fortran_order &&
          get_2d(&m, 2, 1) == 5, "--order F from a pipe");
    gc_tensor_free(&m);
    o.fortran_order = 0;
    CHECK(read_bytes(GC_FMT_RAW, "m.bin", v, 11 * 4, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "3x4") && strstr(captured, "48") && strstr(captured, "44"),
          "size and shape both stated: %s", captured);
    CHECK(read_bytes(GC_FMT_RAW, "m", v, 13 * 4 - 2, &o, &m, 1) == GC_EXIT_INPUT &&
          strstr(captured, "trailing"), "pipe too long: %s", captured);
    /* A shape with a zero dimension is a shape like any other: it must fit. */
    o.shape[0] = 0;
    CHECK(read_bytes(GC_FMT_RAW, "z.bin", v, 16 * 4, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "trailing"), "--shape 0x4 of 16 elements: %s", captured);
    CHECK(read_bytes(GC_FMT_RAW, "z.bin", v, 0, &o, &m, 1) == 0 && SHAPE_IS(&m, 0, 4),
          "--shape 0x4 of nothing: %s", captured);
    gc_tensor_free(&m);
    o.has_shape = 0;
    o.ndim = 0;
    o.shape[0] = o.shape[1] = 0;
    o.dtype = GC_F64;
    CHECK(read_bytes(GC_FMT_RAW, "d.bin", v, 12 * 4, &o, &m, 0) == GC_EXIT_INPUT,
          "6 doubles are not square");
    o.dtype = GC_F16;
    CHECK(read_bytes(GC_FMT_RAW, "h.bin", v, 8, &o, &m, 0) == 0 && SHAPE_IS(&m, 2, 2) &&
          m.dtype == GC_F16, "f16 2x2");
    gc_tensor_free(&m);
    o.dtype = -1;
    CHECK(read_bytes(GC_FMT_RAW, "z.bin", v, 0, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "empty"), "empty raw: %s", captured);

    float cm[6] = { 1, 4, 2, 5, 3, 6 };
    struct gc_tensor f = matrix_of(2, 3, GC_F32, 1, cm);
    size_t n;
    int st;
    unsigned char *b = write_bytes(GC_FMT_RAW, &f, NULL, &n, &st);
    float want[6] = { 1, 2, 3, 4, 5, 6 };
    CHECK(st == 0 && n == 24 && memcmp(b, want, 24) == 0, "raw output is row-major");
    free(b);
}

/* --shape with any number of dimensions, zeros included. */
static void test_raw_nd(void)
{
    float v[24];
    for (int i = 0; i < 24; i++)
        v[i] = (float)i;
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        set_shape(&o, 3, (const size_t[]){ 2, 3, 4 });
        o.fortran_order = 0;
        CHECK(read_bytes(GC_FMT_RAW, "c3.bin", v, sizeof v, &o, &m, pipe_it) == 0 &&
              SHAPE_IS(&m, 2, 3, 4) && m.dtype == GC_F32 && !m.fortran_order &&
              gc_tensor_get(&m, c_index(3, m.shape, (const size_t[]){ 1, 2, 3 })) == 23,
              "--shape 2x3x4 (pipe %d): %s", pipe_it, captured);
        gc_tensor_free(&m);
        /* --order F: element (0, 0, 1) is stored after the 2*3 of k = 0. */
        o.fortran_order = 1;
        CHECK(read_bytes(GC_FMT_RAW, "f3.bin", v, sizeof v, &o, &m, pipe_it) == 0 &&
              SHAPE_IS(&m, 2, 3, 4) && m.fortran_order && gc_tensor_get(&m, 1) == 6 &&
              gc_tensor_get(&m, c_index(3, m.shape, (const size_t[]){ 1, 2, 3 })) == 23 &&
              gc_tensor_get(&m, c_index(3, m.shape, (const size_t[]){ 1, 0, 0 })) == 1,
              "--shape 2x3x4 --order F (pipe %d): %s", pipe_it, captured);
        gc_tensor_free(&m);
        o.fortran_order = 0;
        set_shape(&o, 4, (const size_t[]){ 1, 2, 3, 4 });
        CHECK(read_bytes(GC_FMT_RAW, "c4.bin", v, sizeof v, &o, &m, pipe_it) == 0 &&
              SHAPE_IS(&m, 1, 2, 3, 4) && memcmp(m.data, v, sizeof v) == 0,
              "--shape 1x2x3x4 (pipe %d): %s", pipe_it, captured);
        gc_tensor_free(&m);
        set_shape(&o, 1, (const size_t[]){ 24 });
        CHECK(read_bytes(GC_FMT_RAW, "v.bin", v, sizeof v, &o, &m, pipe_it) == 0 &&
              SHAPE_IS(&m, 24) && gc_tensor_get(&m, 23) == 23,
              "--shape 24 is 1-D (pipe %d): %s", pipe_it, captured);
        gc_tensor_free(&m);
        /* The size must match the shape, N-D as 2-D, and the message says
         * both. */
        set_shape(&o, 3, (const size_t[]){ 2, 3, 4 });
        CHECK(read_bytes(GC_FMT_RAW, "s3.bin", v, 23 * 4, &o, &m, pipe_it) == GC_EXIT_INPUT &&
              strstr(captured, "2x3x4") && strstr(captured, "truncated"),
              "2x3x4 one element short (pipe %d): %s", pipe_it, captured);
        set_shape(&o, 3, (const size_t[]){ 2, 3, 3 });
        CHECK(read_bytes(GC_FMT_RAW, "l3.bin", v, sizeof v, &o, &m, pipe_it) == GC_EXIT_INPUT &&
              strstr(captured, "2x3x3") && strstr(captured, "trailing"),
              "2x3x3 of 24 elements (pipe %d): %s", pipe_it, captured);
        /* Zero dimensions: --shape is honoured because has_shape says so. */
        set_shape(&o, 3, (const size_t[]){ 3, 0, 4 });
        CHECK(read_bytes(GC_FMT_RAW, "z3.bin", v, 0, &o, &m, pipe_it) == 0 &&
              SHAPE_IS(&m, 3, 0, 4) && gc_tensor_count(&m) == 0,
              "--shape 3x0x4 of nothing (pipe %d): %s", pipe_it, captured);
        gc_tensor_free(&m);
        CHECK(read_bytes(GC_FMT_RAW, "z3.bin", v, 4, &o, &m, pipe_it) == GC_EXIT_INPUT &&
              strstr(captured, "trailing"), "--shape 3x0x4 of one element (pipe %d): %s",
              pipe_it, captured);
        set_shape(&o, 1, (const size_t[]){ 0 });
        CHECK(read_bytes(GC_FMT_RAW, "z1.bin", v, 0, &o, &m, pipe_it) == 0 && SHAPE_IS(&m, 0),
              "--shape 0 of nothing (pipe %d): %s", pipe_it, captured);
        gc_tensor_free(&m);
    }
    /* Limits are checked before anything is allocated. */
    set_shape(&o, 3, (const size_t[]){ (size_t)1 << 32, (size_t)1 << 32, 2 });
    CHECK(read_bytes(GC_FMT_RAW, "big.bin", v, sizeof v, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "too large"), "--shape 2^32x2^32x2: %s", captured);
    set_shape(&o, 2, (const size_t[]){ 2, 3 });
    o.dtype = GC_BOOL;
    const unsigned char flags[6] = { 0, 1, 1, 0, 0, 1 };
    CHECK(read_bytes(GC_FMT_RAW, "b.bin", flags, 6, &o, &m, 1) == 0 && m.dtype == GC_BOOL &&
          SHAPE_IS(&m, 2, 3) && get_2d(&m, 1, 2) == 1, "--dtype bool: %s", captured);
    gc_tensor_free(&m);

    /* Writing an N-D Fortran tensor gives its elements in C order. */
    float f[24];
    const size_t shape[3] = { 2, 3, 4 };
    for (size_t i = 0; i < 24; i++)
        f[fortran_offset(3, shape, i)] = (float)i;
    struct gc_tensor t = tensor_of(3, shape, GC_F32, 1, f);
    size_t n;
    int st;
    unsigned char *b = write_bytes(GC_FMT_RAW, &t, NULL, &n, &st);
    CHECK(st == 0 && n == sizeof v && memcmp(b, v, sizeof v) == 0, "3-D Fortran written raw");
    free(b);
}

/* ---- CSV ---- */

static int csv_read_str(const char *text, const struct gc_read_opts *o, struct gc_tensor *m)
{
    return read_bytes(GC_FMT_CSV, "t.csv", text, strlen(text), o, m, 0);
}

static void test_csv_read(void)
{
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    CHECK(csv_read_str("\xef\xbb\xbf# c\n1, 2 ,3\r\n\n  4,5,6 # x\r\n# end\n", &o, &m) == 0 &&
          SHAPE_IS(&m, 2, 3) && get_2d(&m, 1, 2) == 6, "BOM, CRLF, comments: %s",
          captured);
    gc_tensor_free(&m);
    CHECK(csv_read_str("nan,-INF,+Infinity\n1e-3,.5,-0\n", &o, &m) == 0 &&
          isnan(get_2d(&m, 0, 0)) && get_2d(&m, 0, 1) == -INFINITY &&
          get_2d(&m, 1, 0) == 0.001 && signbit(get_2d(&m, 1, 2)), "specials, float64");
    gc_tensor_free(&m);
    CHECK(csv_read_str("1,2", &o, &m) == 0 && SHAPE_IS(&m, 1, 2), "no final newline");
    gc_tensor_free(&m);
    o.header = 1;
    CHECK(csv_read_str("# c\na,b\n1,2\n", &o, &m) == 0 && SHAPE_IS(&m, 1, 2), "--header");
    gc_tensor_free(&m);
    o.header = 0;
    o.delimiter = ' ';
    CHECK(csv_read_str("  1 \t 2   3\n4 5 6  \n", &o, &m) == 0 && SHAPE_IS(&m, 2, 3),
          "whitespace: %s", captured);
    gc_tensor_free(&m);
    o.delimiter = '\t';
    CHECK(csv_read_str("1\t2\n3\t4\n", &o, &m) == 0 && SHAPE_IS(&m, 2, 2), "tab");
    gc_tensor_free(&m);
    o.delimiter = ',';
    o.dtype = GC_F64;
    CHECK(csv_read_str("0.1,1e-320\n", &o, &m) == 0 && m.dtype == GC_F64 &&
          get_2d(&m, 0, 0) == 0.1 && get_2d(&m, 0, 1) == 1e-320, "f64");
    gc_tensor_free(&m);
    o.dtype = -1;

    struct { const char *text; const char *want; size_t len; } bad[] = {
        { "", "no data", 0 },
        { "# only\n\n", "no data", 0 },
        { "1,2\n3\n", "t.csv:2:2: 1 fields where line 1 has 2", 0 },
        { "1,2\n3,4,5\n", "t.csv:2:5: more than 2 fields", 0 },
        { "1,,2\n", "t.csv:1:3: empty field", 0 },
        { "1,2,\n", "t.csv:1:5: trailing delimiter", 0 },
        { "1,2\n3,x\n", "t.csv:2:3: not a number: 'x'", 0 },
        { "1,\"2\"\n", "t.csv:1:3: quoted", 0 },
        { "1,2\n3,4.5.6\n", "t.csv:2:3: not a number: '4.5.6'", 0 },
        { "1,2\n3,4 5\n", "t.csv:2:3: not a number: '4 5'", 0 },
        { "1;2\n", "t.csv:1:1: not a number: '1;2'", 0 },
        { ",1\n", "t.csv:1:1: empty field", 0 },
        { "1,0x10\n", "not a number: '0x10'", 0 },
        { "1,1e\n", "not a number: '1e'", 0 },
        { "1,2\n3,4\0\n", "t.csv:2:3: not a number", 9 },
        { "1,1_000\n", "not a number", 0 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
        int st = read_bytes(GC_FMT_CSV, "t.csv", bad[i].text, len, &o, &m, 0);
        CHECK(st == GC_EXIT_INPUT && strstr(captured, bad[i].want), "csv '%s': %d %s",
              bad[i].text, st, captured);
    }
    o.header = 1;
    CHECK(csv_read_str("a,b\n", &o, &m) == GC_EXIT_INPUT && strstr(captured, "header"),
          "header only: %s", captured);
}

/* Text read as each dtype, as numpy.loadtxt reads it with that dtype:
 * integers exactly, and an error at FILE:LINE:COLUMN for a field that is
 * not an integer literal or does not fit (NumPy 2's loadtxt refuses each
 * of these too). */
static void test_csv_dtypes(void)
{
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    /* float64 by default: 0.123456789012345 is not 0.12345679. */
    CHECK(csv_read_str("0.123456789012345,16777217\n", &o, &m) == 0 && m.dtype == GC_F64 &&
          ((double *)m.data)[0] == 0.123456789012345 && ((double *)m.data)[1] == 16777217.0,
          "float64 by default: %s", captured);
    gc_tensor_free(&m);
    o.dtype = GC_F32;
    CHECK(csv_read_str("0.123456789012345,16777217\n", &o, &m) == 0 && m.dtype == GC_F32 &&
          ((float *)m.data)[0] == 0.123456789012345f && ((float *)m.data)[1] == 16777216.0f,
          "float32 asked for: %s", captured);
    gc_tensor_free(&m);
    /* 1 + 2^-11 + 2^-40: through float32 it would become the tie 1 + 2^-11
     * and round to 1; through double it rounds up. */
    o.dtype = GC_F16;
    CHECK(csv_read_str("1.00048828125000090949470177292824\n", &o, &m) == 0 &&
          m.dtype == GC_F16 && ((uint16_t *)m.data)[0] == 0x3c01, "float16 rounded once: %s",
          captured);
    gc_tensor_free(&m);

    o.dtype = GC_I64;
    CHECK(csv_read_str("16777217, 9007199254740993\n-9223372036854775808,+9223372036854775807\n"
                       "-0,0007\n", &o, &m) == 0 && m.dtype == GC_I64 &&
          ((int64_t *)m.data)[0] == 16777217 && ((int64_t *)m.data)[1] == 9007199254740993 &&
          ((int64_t *)m.data)[2] == INT64_MIN && ((int64_t *)m.data)[3] == INT64_MAX &&
          ((int64_t *)m.data)[4] == 0 && ((int64_t *)m.data)[5] == 7, "int64 exact: %s",
          captured);
    gc_tensor_free(&m);
    o.dtype = GC_U64;
    CHECK(csv_read_str("18446744073709551615 # max\n00000000000000000000000000001\n", &o, &m) == 0 &&
          m.dtype == GC_U64 && ((uint64_t *)m.data)[0] == UINT64_MAX &&
          ((uint64_t *)m.data)[1] == 1, "uint64 exact: %s", captured);
    gc_tensor_free(&m);
    o.dtype = GC_BOOL;
    CHECK(csv_read_str("0,-5,-0,9223372036854775807\n", &o, &m) == 0 && m.dtype == GC_BOOL &&
          memcmp(m.data, "\0\1\0\1", 4) == 0, "bool, nonzero is true: %s", captured);
    gc_tensor_free(&m);
    static const struct { int dtype; const char *text; size_t at; int8_t v[2]; } edges[] = {
        { GC_I8, "-128,127", 2, { -128, 127 } },
        { GC_U8, "0,255", 2, { 0, -1 } },
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        o.dtype = edges[i].dtype;
        CHECK(csv_read_str(edges[i].text, &o, &m) == 0 && (int)m.dtype == edges[i].dtype &&
              memcmp(m.data, edges[i].v, 2) == 0, "%s edges: %s",
              gc_dtypes[edges[i].dtype].name, captured);
        gc_tensor_free(&m);
    }
    static const struct { int dtype; const char *text, *want; } bad[] = {
        { GC_I64, "1,nan\n", "t.csv:1:3: not an integer, which i64 text must be: 'nan'" },
        { GC_I64, "1,2\n3,1.5\n", "t.csv:2:3: not an integer" },
        { GC_I64, "1e3\n", "t.csv:1:1: not an integer" },
        { GC_I64, "inf\n", "t.csv:1:1: not an integer" },
        { GC_I64, "5.\n", "t.csv:1:1: not an integer" },
        { GC_I64, "-\n", "t.csv:1:1: not an integer" },
        { GC_I32, "0x10\n", "t.csv:1:1: not an integer" },
        { GC_I64, "9223372036854775808\n",
          "t.csv:1:1: out of range for i64 (-9223372036854775808 to 9223372036854775807)" },
        { GC_I64, "-9223372036854775809\n", "out of range for i64" },
        { GC_I64, "123456789012345678901234567890\n", "out of range for i64" },
        { GC_U64, "18446744073709551616\n", "out of range for u64 (0 to 18446744073709551615)" },
        { GC_I8, "1, 300\n", "t.csv:1:4: out of range for i8 (-128 to 127): '300'" },
        { GC_I8, "-129\n", "out of range for i8" },
        { GC_I16, "32768\n", "out of range for i16" },
        { GC_U8, "1,-1\n", "t.csv:1:3: a minus sign, which u8 (0 to 255) does not take" },
        { GC_U32, "-0\n", "a minus sign, which u32" },
        { GC_U8, "256\n", "out of range for u8 (0 to 255)" },
        { GC_BOOL, "True\n", "not an integer, which bool text must be" },
        { GC_BOOL, "9223372036854775808\n", "out of range for bool" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.dtype = bad[i].dtype;
        int st = csv_read_str(bad[i].text, &o, &m);
        CHECK(st == GC_EXIT_INPUT && strstr(captured, bad[i].want), "%s '%s': %d %s",
              gc_dtypes[bad[i].dtype].name, bad[i].text, st, captured);
        gc_tensor_free(&m);
    }
}

/* An empty-matrix mark is taken only for a shape NumPy can make in the
 * dtype read: the nonzero dimensions times the element size in 2^63 - 1
 * bytes. */
static void test_csv_mark_limits(void)
{
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    static const struct { int dtype; const char *text; int ok; size_t rows, cols; } marks[] = {
        { -1, "# empty matrix: shape (1152921504606846975, 0)\n", 1, 1152921504606846975u, 0 },
        { -1, "# empty matrix: shape (1152921504606846976, 0)\n", 0, 0, 0 },
        { -1, "# empty matrix: shape (0, 9223372036854775807)\n", 0, 0, 0 },
        { GC_U8, "# empty matrix: shape (9223372036854775807, 0)\n", 1, 9223372036854775807u, 0 },
        { GC_F32, "# empty matrix: shape (0, 2305843009213693952)\n", 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        o.dtype = marks[i].dtype;
        int st = csv_read_str(marks[i].text, &o, &m);
        if (marks[i].ok)
            CHECK(st == 0 && SHAPE_IS(&m, marks[i].rows, marks[i].cols), "mark %s: %s",
                  marks[i].text, captured);
        else
            CHECK(st == GC_EXIT_INPUT && strstr(captured, "is too large for"), "mark %s: %d %s",
                  marks[i].text, st, captured);
        gc_tensor_free(&m);
    }
}

static void test_csv_locale_independent(void)
{
    /* A locale with a decimal comma must change nothing. */
    const char *names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", NULL };
    const char *set = NULL;
    for (int i = 0; names[i] && !set; i++)
        set = setlocale(LC_ALL, names[i]);
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    CHECK(csv_read_str("1.5,2.25e-30\n", &o, &m) == 0 && get_2d(&m, 0, 0) == 1.5 &&
          (float)get_2d(&m, 0, 1) == 2.25e-30f, "parse under %s", set ? set : "C");
    size_t n;
    int st;
    unsigned char *b = write_bytes(GC_FMT_CSV, &m, NULL, &n, &st);
    CHECK(st == 0 && n == 13 && memcmp(b, "1.5,2.25e-30\n", 13) == 0, "write under %s: %.*s",
          set ? set : "C", (int)n, b);
    struct gc_write_opts wo = { 20, ',', -1, 0 };
    free(b);
    b = write_bytes(GC_FMT_CSV, &m, &wo, &n, &st);
    CHECK(st == 0 && !memchr(b, ' ', n) && memchr(b, '.', n), "precision path: %.*s", (int)n, b);
    free(b);
    gc_tensor_free(&m);
    setlocale(LC_ALL, "C");
}

static void test_csv_roundtrip(void)
{
    uint64_t s = 42;
    float v[7 * 5];
    for (int i = 0; i < 35; i++) {
        uint32_t b = (uint32_t)rng_next(&s);
        memcpy(&v[i], &b, 4);
    }
    v[0] = NAN;
    v[1] = -INFINITY;
    v[2] = -0.0f;
    for (int fo = 0; fo < 2; fo++)
        for (int gz = 0; gz < 2; gz++) {
            struct gc_tensor m = matrix_of(7, 5, GC_F32, fo, v), r;
            size_t n;
            int st;
            int fmt = gz ? GC_FMT_CSV_GZ : GC_FMT_CSV;
            unsigned char *b = write_bytes(fmt, &m, NULL, &n, &st);
            struct gc_read_opts o = default_read();
            int rs = read_bytes(GC_FMT_AUTO, gz ? "rt.csv.gz" : "rt.csv", b, n, &o, &r, gz);
            int same = rs == 0 && SHAPE_IS(&r, 7, 5);
            for (size_t i = 0; same && i < 7; i++)
                for (size_t j = 0; j < 5; j++) {
                    float a = (float)get_2d(&m, i, j), c = (float)get_2d(&r, i, j);
                    same &= isnan(a) ? isnan(c) : memcmp(&a, &c, 4) == 0;
                }
            CHECK(st == 0 && same, "csv round trip fortran %d gzip %d: %s", fo, gz, captured);
            if (rs == 0)
                gc_tensor_free(&r);
            free(b);
        }
    int32_t iv[4] = { -2147483647 - 1, 0, 7, 2147483647 };
    struct gc_tensor im = matrix_of(2, 2, GC_I32, 0, iv);
    size_t n;
    int st;
    unsigned char *b = write_bytes(GC_FMT_CSV, &im, NULL, &n, &st);
    CHECK(st == 0 && n == 27 && memcmp(b, "-2147483648,0\n7,2147483647\n", 27) == 0,
          "int32 as integers");
    free(b);
    uint16_t hv[2] = { 0x3555, 0xfbff };
    struct gc_tensor hm = matrix_of(1, 2, GC_F16, 0, hv);
    b = write_bytes(GC_FMT_CSV, &hm, NULL, &n, &st);
    CHECK(st == 0 && n == 18 && memcmp(b, "0.33325195,-65504\n", 18) == 0, "f16: %.*s",
          (int)n, b);
    free(b);
}

/* CSV holds a matrix or a vector: a vector one value a line (as
 * numpy.savetxt writes it), more dimensions refused as a usage error; an
 * empty tensor is the one comment line that reads back to its shape. */
static void test_csv_write_nd(void)
{
    float v3[24] = { 0 };
    struct gc_tensor t3 = tensor_of(3, (const size_t[]){ 2, 3, 4 }, GC_F32, 0, v3);
    size_t n;
    int st;
    for (int gz = 0; gz < 2; gz++) {
        unsigned char *b = write_bytes(gz ? GC_FMT_CSV_GZ : GC_FMT_CSV, &t3, NULL, &n, &st);
        CHECK(st == GC_EXIT_USAGE && strstr(captured, "2x3x4") && strstr(captured, "out"),
              "3-D to CSV (gzip %d): %d %s", gz, st, captured);
        free(b);
    }
    CHECK(gc_formats[GC_FMT_CSV].max_ndim == 2 && gc_formats[GC_FMT_CSV_GZ].max_ndim == 2 &&
          gc_formats[GC_FMT_NPY].max_ndim == GC_MAX_DIMS, "max_ndim");

    float v1[4] = { 1.5f, -2, 0.1f, 1e-5f };
    struct gc_tensor t1 = tensor_of(1, (const size_t[]){ 4 }, GC_F32, 0, v1);
    unsigned char *b = write_bytes(GC_FMT_CSV, &t1, NULL, &n, &st);
    CHECK(st == 0 && n == 16 && memcmp(b, "1.5\n-2\n0.1\n1e-5\n", 16) == 0,
          "1-D: one value a line: %.*s", (int)n, b);
    /* ... which reads back as a column. */
    struct gc_read_opts o = default_read();
    o.dtype = GC_F32;
    struct gc_tensor r;
    CHECK(read_bytes(GC_FMT_CSV, "v.csv", b, n, &o, &r, 0) == 0 && SHAPE_IS(&r, 4, 1) &&
          memcmp(r.data, v1, sizeof v1) == 0, "1-D reads back as 4x1: %s", captured);
    gc_tensor_free(&r);
    free(b);
    int64_t i1[3] = { INT64_MIN, 0, 42 };
    struct gc_tensor ti = tensor_of(1, (const size_t[]){ 3 }, GC_I64, 1, i1);
    b = write_bytes(GC_FMT_CSV, &ti, NULL, &n, &st);
    CHECK(st == 0 && n == 26 && memcmp(b, "-9223372036854775808\n0\n42\n", 26) == 0,
          "1-D int64: %.*s", (int)n, b);
    free(b);
    b = write_bytes(GC_FMT_CSV_GZ, &t1, NULL, &n, &st);
    CHECK(st == 0 && read_bytes(GC_FMT_AUTO, "v.csv.gz", b, n, &o, &r, 1) == 0 &&
          SHAPE_IS(&r, 4, 1) && memcmp(r.data, v1, sizeof v1) == 0, "1-D through gzip: %s",
          captured);
    gc_tensor_free(&r);
    free(b);

    /* Empty tensors: the comment line, and back to the same shape. */
    static const struct { size_t rows, cols; const char *text; } empty[] = {
        { 5, 0, "# empty matrix: shape (5, 0)\n" },
        { 0, 3, "# empty matrix: shape (0, 3)\n" },
        /* Found by fuzz_npy: no room is made for rows that do not exist. */
        { 0, 8888888883u, "# empty matrix: shape (0, 8888888883)\n" },
    };
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        struct gc_tensor e = matrix_of(empty[i].rows, empty[i].cols, GC_F32, 0, NULL);
        b = write_bytes(GC_FMT_CSV, &e, NULL, &n, &st);
        size_t len = strlen(empty[i].text);
        CHECK(st == 0 && n == len && memcmp(b, empty[i].text, len) == 0, "empty %zux%zu: %.*s",
              empty[i].rows, empty[i].cols, (int)n, b);
        CHECK(read_bytes(GC_FMT_CSV, "e.csv", b, n, &o, &r, i) == 0 &&
              SHAPE_IS(&r, empty[i].rows, empty[i].cols), "empty %zux%zu reads back: %s",
              empty[i].rows, empty[i].cols, captured);
        gc_tensor_free(&r);
        free(b);
    }
    /* A 1-D vector is a column, so an empty one is 0 x 1. */
    struct gc_tensor e1 = tensor_of(1, (const size_t[]){ 0 }, GC_F64, 0, NULL);
    b = write_bytes(GC_FMT_CSV, &e1, NULL, &n, &st);
    CHECK(st == 0 && n == 29 && memcmp(b, "# empty matrix: shape (0, 1)\n", 29) == 0,
          "empty 1-D: %.*s", (int)n, b);
    free(b);
    /* An empty 3-D tensor is still 3-D. */
    struct gc_tensor e3 = tensor_of(3, (const size_t[]){ 0, 2, 2 }, GC_F32, 0, NULL);
    b = write_bytes(GC_FMT_CSV, &e3, NULL, &n, &st);
    CHECK(st == GC_EXIT_USAGE, "empty 3-D to CSV: %d %s", st, captured);
    free(b);
}

/* ---- gzip ---- */

static size_t gz_member(const char *text, unsigned char *out, size_t cap)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    size_t n = libdeflate_gzip_compress(c, text, strlen(text), out, cap);
    libdeflate_free_compressor(c);
    return n;
}

static void test_gzip(void)
{
    unsigned char buf[4096];
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    size_t a = gz_member("1,2\n3,4\n", buf, sizeof buf);
    size_t b = gz_member("5,6\n", buf + a, sizeof buf - a);
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        CHECK(read_bytes(GC_FMT_AUTO, "mm.csv.gz", buf, a + b, &o, &m, pipe_it) == 0 &&
              SHAPE_IS(&m, 3, 2) && get_2d(&m, 2, 1) == 6, "multi-member (pipe %d): %s",
              pipe_it, captured);
        gc_tensor_free(&m);
    }
    CHECK(read_bytes(GC_FMT_AUTO, "trunc.csv.gz", buf, a - 5, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "truncated"), "truncated: %s", captured);
    unsigned char bad[4096];
    memcpy(bad, buf, a);
    bad[a - 6] ^= 1;
    CHECK(read_bytes(GC_FMT_AUTO, "crc.csv.gz", bad, a, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "CRC"), "bad CRC: %s", captured);
    memcpy(bad, buf, a);
    bad[a - 2] ^= 1;
    CHECK(read_bytes(GC_FMT_AUTO, "len.csv.gz", bad, a, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "length"), "bad length: %s", captured);
    memcpy(bad, buf, a);
    memcpy(bad + a, "\0\0junk", 6);
    CHECK(read_bytes(GC_FMT_AUTO, "junk.csv.gz", bad, a + 6, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "trailing garbage"), "trailing garbage: %s", captured);
    CHECK(read_bytes(GC_FMT_CSV_GZ, "plain.csv.gz", "1,2\n", 4, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "not gzip"), "not gzip: %s", captured);
    /* Too short to hold a header, but gzip's magic as far as it goes. */
    for (int pipe_it = 0; pipe_it < 2; pipe_it++)
        for (size_t len = 1; len < 10; len++) {
            CHECK(read_bytes(GC_FMT_CSV_GZ, "short.csv.gz", buf, len, &o, &m, pipe_it) ==
                  GC_EXIT_INPUT && strstr(captured, "truncated gzip data (member at byte 0)"),
                  "%zu bytes (pipe %d): %s", len, pipe_it, captured);
            memcpy(bad, buf, a);
            memcpy(bad + a, buf, len);
            CHECK(read_bytes(GC_FMT_CSV_GZ, "short.csv.gz", bad, a + len, &o, &m, pipe_it) ==
                  GC_EXIT_INPUT && strstr(captured, "truncated gzip data"),
                  "a member and %zu bytes (pipe %d): %s", len, pipe_it, captured);
        }
    size_t e = gz_member("1,x\n", buf, sizeof buf);
    CHECK(read_bytes(GC_FMT_AUTO, "x.csv.gz", buf, e, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "x.csv.gz:1:3: not a number"), "position inside gzip: %s", captured);
}

/* ---- gzip on several threads (formats/inflate_par.c) ---- */

static uint64_t par_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

/* About n bytes of text: 'n' numbers as np.savetxt writes them, 'r' a few
 * rows repeated (back-references reach across chunk borders), 'b' noise
 * that deflate stores. */
static size_t par_text(int kind, size_t n, unsigned char *out)
{
    uint64_t st = (uint64_t)kind * 7919 + n;
    size_t len = 0;
    while (len + 64 < n) {
        if (kind == 'b') {
            out[len++] = (unsigned char)par_rand(&st);
            continue;
        }
        uint64_t r = kind == 'r' ? par_rand(&st) % 5 : par_rand(&st);
        for (int c = 0; c < 2 && len + 64 < n; c++) {
            uint64_t v = r * 2654435761u + (uint64_t)c * 40503u;
            len += (size_t)sprintf((char *)out + len, "%s%c.%018llue-%02u", c ? " " : "",
                                   v & 1 ? '-' : ' ', (unsigned long long)(v % 1000000000000000000ull),
                                   (unsigned)(v % 3));
        }
        out[len++] = '\n';
    }
    return len;
}

/* A gzip member of text[0, n) as zlib makes it at `level` and `strategy`,
 * with a sync flush (an empty stored block) every `flush` bytes if
 * nonzero, and an empty last block after a final flush if `empty_last`. */
static size_t par_gzip(const unsigned char *text, size_t n, int level, int strategy,
                       size_t flush, int empty_last, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 31, 8, strategy) != Z_OK)
        return 0;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    size_t at = 0, step = flush ? flush : n;
    while (at < n) {
        size_t k = n - at < step ? n - at : step;
        z.next_in = (unsigned char *)text + at;
        z.avail_in = (uInt)k;
        at += k;
        deflate(&z, at < n || empty_last ? Z_SYNC_FLUSH : Z_FINISH);
    }
    if (empty_last || n == 0)
        deflate(&z, Z_FINISH);
    size_t len = z.total_out;
    deflateEnd(&z);
    return len;
}

/* What zlib makes of a member: its text until it ends or fails (*n), and
 * 0 when it ends with a matching trailer. */
static int par_zlib(const unsigned char *gz, size_t len, unsigned char *out, size_t cap, size_t *n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    inflateInit2(&z, 31);
    z.next_in = (unsigned char *)gz;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int r = inflate(&z, Z_FINISH);
    *n = z.total_out;
    inflateEnd(&z);
    return r == Z_STREAM_END ? 0 : -1;
}

/* What inflate_par gives for the member gz[0, len) (zlib's 10-byte
 * header): its text (*n), 0 at the stream's end with *used set, -1 when it
 * gives up. */
static int par_run(const unsigned char *gz, size_t len, int threads, int chunks, size_t bytes,
                   unsigned char *out, size_t cap, size_t *n, size_t *used)
{
    struct inflate_par_plan plan = { threads, chunks, bytes };
    struct inflate_par *p = inflate_par_open(gz + 10, len - 10, &plan);
    const unsigned char *text;
    size_t k;
    int r;
    *n = 0;
    while ((r = inflate_par_next(p, &text, &k, used)) == 1) {
        if (*n + k > cap) {
            r = -2;
            break;
        }
        memcpy(out + *n, text, k);
        *n += k;
    }
    inflate_par_close(p);
    return r;
}

/* Valid members of several kinds, inflated on 2 to 8 chunks a round, are
 * their text bit for bit; each faulty one is given up, after giving no
 * byte that zlib does not give. */
static void test_inflate_par(void)
{
    size_t cap = (size_t)8 << 20;
    unsigned char *text = malloc(cap), *gz = malloc(cap), *out = malloc(cap),
                  *ref = malloc(cap), *bad = malloc(cap);
    static const struct {
        int kind, level, strategy;
        size_t bytes, flush;
        int empty_last;
    } cases[] = {
        { 'n', 1, Z_DEFAULT_STRATEGY, 3 << 20, 0, 0 },
        { 'n', 6, Z_DEFAULT_STRATEGY, 3 << 20, 0, 0 },
        { 'n', 9, Z_DEFAULT_STRATEGY, 3 << 20, 0, 1 },
        { 'r', 9, Z_DEFAULT_STRATEGY, 4 << 20, 0, 0 },
        { 'n', 6, Z_DEFAULT_STRATEGY, 1 << 20, 50000, 1 },   /* empty stored blocks */
        { 'n', 6, Z_FIXED, 1 << 20, 0, 0 },                  /* fixed-Huffman blocks */
        { 'b', 6, Z_DEFAULT_STRATEGY, 1 << 20, 0, 0 },       /* stored blocks */
        { 'n', 0, Z_DEFAULT_STRATEGY, 1 << 20, 0, 0 },       /* level 0: stored only */
    };
    static const struct {
        int threads, chunks;
        size_t bytes;
    } plans[] = { { 2, 8, 16 << 10 }, { 3, 5, 100000 }, { 4, 4, 0 }, { 1, 3, 7777 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = par_text(cases[c].kind, cases[c].bytes, text);
        size_t len = par_gzip(text, n, cases[c].level, cases[c].strategy, cases[c].flush,
                              cases[c].empty_last, gz, cap - 8);
        /* What follows the member is neither read nor counted. */
        memcpy(gz + len, "\x1f\x8b\x08\0junk", 8);
        for (size_t q = 0; q < sizeof plans / sizeof plans[0]; q++) {
            size_t got, used = 0;
            int r = par_run(gz, len + 8, plans[q].threads, plans[q].chunks, plans[q].bytes,
                            out, cap, &got, &used);
            CHECK(r == 0 && got == n && memcmp(out, text, n) == 0 && used == len - 10,
                  "kind %c level %d case %zu plan %zu: status %d, %zu of %zu bytes, used %zu of %zu",
                  cases[c].kind, cases[c].level, c, q, r, got, n, used, len - 10);
        }
    }
    /* Faults: bits flipped here and there, the trailer, a cut stream. */
    size_t n = par_text('n', 3 << 20, text);
    size_t len = par_gzip(text, n, 6, Z_DEFAULT_STRATEGY, 0, 0, gz, cap);
    size_t flips[] = { 11, len / 5, len / 3 + 1, len / 2, 2 * len / 3 + 3, len - 20,
                       len - 8, len - 6, len - 2 };
    for (size_t f = 0; f <= sizeof flips / sizeof flips[0]; f++) {
        size_t blen = f < sizeof flips / sizeof flips[0] ? len : len / 2;
        memcpy(bad, gz, len);
        if (f < sizeof flips / sizeof flips[0])
            bad[flips[f]] ^= (unsigned char)(1u << (f % 8));
        size_t zn, got, used;
        int zr = par_zlib(bad, blen, ref, cap, &zn);
        for (size_t q = 0; q < sizeof plans / sizeof plans[0]; q++) {
            int r = par_run(bad, blen, plans[q].threads, plans[q].chunks, plans[q].bytes, out,
                            cap, &got, &used);
            CHECK(zr != 0 && r == -1 && got <= zn && memcmp(out, ref, got) == 0,
                  "fault %zu plan %zu: zlib %d, inflate_par %d, %zu bytes of zlib's %zu", f, q,
                  zr, r, got, zn);
        }
    }
    /* Noise, whatever its bits: given up, nothing read or written astray
     * (the sanitizers' build says). */
    uint64_t st = 1;
    for (size_t i = 0; i < ((size_t)1 << 20); i++)
        bad[i] = (unsigned char)par_rand(&st);
    for (size_t q = 0; q < sizeof plans / sizeof plans[0]; q++) {
        size_t got, used;
        CHECK(par_run(bad, (size_t)1 << 20, plans[q].threads, plans[q].chunks, plans[q].bytes,
                      out, cap, &got, &used) == -1, "noise plan %zu", q);
    }
    free(text);
    free(gz);
    free(out);
    free(ref);
    free(bad);
}

/* ---- zstd (libzstd loaded at run time) ---- */

/* One zstd frame holding n bytes (at most 128 KiB) in a raw block, with
 * no checksum, as RFC 8878 lays it out; returns its length. */
static size_t zstd_raw_frame(const void *data, size_t n, unsigned char *out)
{
    static const unsigned char head[6] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3 };
    uint32_t block = (uint32_t)n << 3 | 1;       /* raw, last */
    memcpy(out, head, sizeof head);
    out[6] = (unsigned char)block;
    out[7] = (unsigned char)(block >> 8);
    out[8] = (unsigned char)(block >> 16);
    memcpy(out + 9, data, n);
    return 9 + n;
}

/* The format read_bytes would detect for these bytes under `name`. */
static int detect_bytes(const char *name, const void *data, size_t n)
{
    struct gc_input in;
    int fmt = -2;
    write_file(tmp_path(name), data, n);
    capture_begin();
    if (input_open(&in, tmp_path(name)) == 0) {
        if (format_identify(&in, 0, &fmt) != 0)
            fmt = -3;
        input_close(&in);
    }
    capture_end();
    return fmt;
}

/* What a matrix written as `fmt` (a .zst format) reads back as, from a
 * file and from a pipe, detected or named. */
static void test_zstd_round_trips(void)
{
    double v[6] = { 1.5, -2, 3e-300, 0.1, 7, 1e22 };
    struct gc_tensor m = matrix_of(2, 3, GC_F64, 0, v), r;
    struct gc_read_opts o = default_read();
    const int fmts[2] = { GC_FMT_CSV_ZST, GC_FMT_NPY_ZST };
    for (int k = 0; k < 2; k++) {
        size_t n;
        int st;
        unsigned char *b = write_bytes(fmts[k], &m, NULL, &n, &st);
        CHECK(st == 0 && n >= 4 && memcmp(b, "\x28\xb5\x2f\xfd", 4) == 0, "%s: written: %s",
              gc_formats[fmts[k]].name, captured);
        for (int pipe_it = 0; pipe_it < 2; pipe_it++)
            for (int detect = 0; detect < 2; detect++) {
                st = read_bytes(detect ? GC_FMT_AUTO : fmts[k], k ? "rt.npy.zst" : "rt.csv.zst",
                                b, n, &o, &r, pipe_it);
                int same = st == 0 && SHAPE_IS(&r, 2, 3) && r.dtype == GC_F64;
                for (int i = 0; same && i < 6; i++)
                    same = gc_tensor_get(&r, (size_t)i) == v[i];
                CHECK(same, "%s back (pipe %d, detected %d): %s", gc_formats[fmts[k]].name,
                      pipe_it, detect, captured);
                gc_tensor_free(&r);
            }
        /* Whatever the name, what the frames hold decides. */
        CHECK(detect_bytes("x.zst", b, n) == fmts[k] && detect_bytes("noext", b, n) == fmts[k],
              "%s detected without a name", gc_formats[fmts[k]].name);
        CHECK(detect_bytes("lies.csv.zst", b, n) == fmts[k] ||
              (k == 0 && detect_bytes("lies.npy.zst", b, n) == GC_FMT_NPY_ZST),
              "%s detected under another .zst name", gc_formats[fmts[k]].name);
        CHECK(detect_bytes("x.bin", b, n) == GC_FMT_RAW, "a raw file may start as zstd does");
        free(b);
    }
    /* Two frames read as one stream. */
    double w[3] = { 4, 5, 6 };
    struct gc_tensor m2 = matrix_of(1, 3, GC_F64, 0, w);
    size_t n1, n2;
    int s1, s2;
    unsigned char *b1 = write_bytes(GC_FMT_CSV_ZST, &m, NULL, &n1, &s1);
    unsigned char *b2 = write_bytes(GC_FMT_CSV_ZST, &m2, NULL, &n2, &s2);
    unsigned char *both = malloc(n1 + n2);
    memcpy(both, b1, n1);
    memcpy(both + n1, b2, n2);
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        CHECK(s1 == 0 && s2 == 0 &&
              read_bytes(GC_FMT_AUTO, "two.csv.zst", both, n1 + n2, &o, &r, pipe_it) == 0 &&
              SHAPE_IS(&r, 3, 3) && get_2d(&r, 2, 2) == 6 && get_2d(&r, 0, 0) == 1.5,
              "two frames (pipe %d): %s", pipe_it, captured);
        gc_tensor_free(&r);
    }
    free(both);
    free(b1);
    free(b2);
    /* Levels give other bytes, the same matrix. */
    struct gc_write_opts lo = { 0, ',', 1, 1 }, hi = { 0, ',', 19, 1 };
    size_t nl, nh;
    unsigned char *bl = write_bytes(GC_FMT_NPY_ZST, &m, &lo, &nl, &s1);
    unsigned char *bh = write_bytes(GC_FMT_NPY_ZST, &m, &hi, &nh, &s2);
    CHECK(s1 == 0 && s2 == 0 && read_bytes(GC_FMT_AUTO, "l.npy.zst", bh, nh, &o, &r, 0) == 0 &&
          gc_tensor_get(&r, 5) == 1e22, "level 19: %s", captured);
    gc_tensor_free(&r);
    free(bl);
    free(bh);
}

static void test_zstd_faults(void)
{
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    struct gc_tensor m = matrix_of(3, 2, GC_F64, 0, v), r;
    struct gc_read_opts o = default_read();
    const int fmts[2] = { GC_FMT_CSV_ZST, GC_FMT_NPY_ZST };
    for (int k = 0; k < 2; k++) {
        const char *name = gc_formats[fmts[k]].name;
        size_t n;
        int st;
        unsigned char *b = write_bytes(fmts[k], &m, NULL, &n, &st);
        unsigned char *bad = malloc(n + 8);
        for (int pipe_it = 0; pipe_it < 2; pipe_it++)
            for (size_t len = 1; len < n; len++) {
                CHECK(read_bytes(fmts[k], "cut.zst", b, len, &o, &r, pipe_it) == GC_EXIT_INPUT &&
                      strstr(captured, "truncated zstd data (frame at byte 0)"),
                      "%s cut to %zu of %zu bytes (pipe %d): %s", name, len, n, pipe_it,
                      captured);
                gc_tensor_free(&r);
            }
        memcpy(bad, b, n);
        bad[n - 1] ^= 1;        /* the checksum */
        CHECK(read_bytes(fmts[k], "sum.zst", bad, n, &o, &r, 0) == GC_EXIT_INPUT &&
              strstr(captured, "sum.zst: bad zstd data") && strstr(captured, "checksum"),
              "%s: bad checksum: %s", name, captured);
        memcpy(bad + n, "junkjunk", 8);
        bad[n - 1] ^= 1;
        for (size_t extra = 1; extra <= 8; extra++) {
            CHECK(read_bytes(fmts[k], "junk.zst", bad, n + extra, &o, &r, 1) == GC_EXIT_INPUT &&
                  strstr(captured, "trailing garbage after the zstd data"),
                  "%s and %zu bytes of garbage: %s", name, extra, captured);
            gc_tensor_free(&r);
        }
        memcpy(bad + n, b, 3);  /* the start of a second frame's magic */
        CHECK(read_bytes(fmts[k], "half.zst", bad, n + 3, &o, &r, 0) == GC_EXIT_INPUT &&
              strstr(captured, "truncated zstd data"), "%s and 3 bytes of magic: %s", name,
              captured);
        for (int pipe_it = 0; pipe_it < 2; pipe_it++)
            CHECK(read_bytes(fmts[k], "empty.zst", "", 0, &o, &r, pipe_it) == GC_EXIT_INPUT &&
                  strstr(captured, pipe_it ? "empty input" : "empty file"), "%s empty: %s",
                  name, captured);
        CHECK(read_bytes(fmts[k], "plain.zst", "1,2\n", 4, &o, &r, 0) == GC_EXIT_INPUT &&
              strstr(captured, "plain.zst: not zstd data"), "%s: not zstd: %s", name, captured);
        free(bad);
        free(b);
    }
    /* Frames made by hand (RFC 8878: no checksum, a 128 KiB window, one
     * raw block): a .npy split over two frames, a header that claims more
     * than the frames hold, and one that claims less. */
    double e[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    struct gc_tensor tall = matrix_of(4, 2, GC_F64, 0, e);
    size_t n, zn;
    int st;
    unsigned char *b = write_bytes(GC_FMT_NPY, &tall, NULL, &n, &st);
    unsigned char z[1024];
    zn = zstd_raw_frame(b, 100, z);
    zn += zstd_raw_frame(b + 100, n - 100, z + zn);
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        CHECK(read_bytes(GC_FMT_AUTO, "split.npy.zst", z, zn, &o, &r, pipe_it) == 0 &&
              SHAPE_IS(&r, 4, 2) && get_2d(&r, 3, 1) == 8, "a .npy over two frames: %s",
              captured);
        gc_tensor_free(&r);
    }
    char *dims = strstr((char *)b + 10, "(4, 2)");
    dims[1] = '9';
    zn = zstd_raw_frame(b, n, z);
    for (int pipe_it = 0; pipe_it < 2; pipe_it++)
        CHECK(read_bytes(GC_FMT_AUTO, "claims.npy.zst", z, zn, &o, &r, pipe_it) ==
              GC_EXIT_INPUT && strstr(captured, ": truncated: shape 9x2 of f64 needs 144") &&
              (pipe_it || strstr(captured, "claims.npy.zst: ")),
              "a header claiming more (pipe %d): %s", pipe_it, captured);
    dims[1] = '2';
    zn = zstd_raw_frame(b, n, z);
    for (int pipe_it = 0; pipe_it < 2; pipe_it++)
        CHECK(read_bytes(GC_FMT_AUTO, "more.npy.zst", z, zn, &o, &r, pipe_it) ==
              GC_EXIT_INPUT && (pipe_it || strstr(captured, "more.npy.zst: ")) &&
              strstr(captured, "trailing bytes after the data"),
              "a header claiming less (pipe %d): %s", pipe_it, captured);
    /* info reads the header alone. */
    struct gc_input in;
    struct gc_info info;
    write_file(tmp_path("i.npy.zst"), z, zn);
    capture_begin();
    st = input_open(&in, tmp_path("i.npy.zst"));
    if (!st) {
        st = gc_formats[GC_FMT_NPY_ZST].info(&in, &o, &info);
        input_close(&in);
    }
    capture_end();
    CHECK(st == 0 && info.format == GC_FMT_NPY_ZST && info.ndim == 2 && info.shape[0] == 2 &&
          info.version_major == 1 && info.file_bytes == (off_t)zn, "info: %s", captured);
    free(b);
}

/* Without libzstd every .zst read and write fails, naming the package. */
static void test_zstd(void)
{
    capture_begin();
    int missing = gc_formats[GC_FMT_CSV_ZST].ready("x.csv.zst", GC_EXIT_OUTPUT);
    capture_end();
    if (missing) {
        double v[1] = { 1 };
        struct gc_tensor m = matrix_of(1, 1, GC_F64, 0, v);
        size_t n;
        int st;
        free(write_bytes(GC_FMT_NPY_ZST, &m, NULL, &n, &st));
        CHECK(st == GC_EXIT_OUTPUT && strstr(captured, "libzstd1"), "no libzstd: %s", captured);
        printf("test_formats: libzstd is not installed: only its absence was tested\n");
        return;
    }
    test_zstd_round_trips();
    test_zstd_faults();
}

/* ---- payloads large enough for threaded pread and pwrite ----
 *
 * 1001 x 10477 float32 is 40 MiB and a bit, an odd number of elements, so
 * the payload ends inside a slice; each file's header leaves the payload
 * at an odd offset, so no slice starts on a page. */
enum { BIG_ROWS = 1001, BIG_COLS = 10477 };
#define BIG_BYTES ((size_t)BIG_ROWS * BIG_COLS * 4)

/* Bit patterns that differ from slice to slice and are never NaN. */
static unsigned char *big_payload(void)
{
    uint32_t *v = malloc(BIG_BYTES), x = 2463534242u;
    if (!v) {
        perror("big payload");
        exit(2);
    }
    for (size_t i = 0; i < BIG_BYTES / 4; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v[i] = x & 0xbfffffffu;
    }
    return (unsigned char *)v;
}

/* A .npy of `payload` whose header makes the payload start at an odd
 * offset (NumPy reads any header length). */
static unsigned char *big_npy(const char *dict, const unsigned char *payload, size_t bytes,
                              size_t *n)
{
    size_t pad = 3;
    if ((10 + strlen(dict) + pad + 1) % 2 == 0)
        pad++;
    unsigned char *file = malloc(12 + strlen(dict) + pad + 1 + bytes);
    if (!file) {
        perror("big npy");
        exit(2);
    }
    *n = npy_make(file, 1, dict, pad, payload, bytes);
    return file;
}

static unsigned char *slurp_path(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    *n = 0;
    if (f && fseeko(f, 0, SEEK_END) == 0) {
        off_t len = ftello(f);
        buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
        rewind(f);
        if (buf)
            *n = fread(buf, 1, (size_t)len, f);
    }
    if (f)
        fclose(f);
    return buf;
}

/* format_read_path with `threads`; stderr is captured. */
static int read_threads(const char *path, int fmt, struct gc_read_opts o, int threads,
                        struct gc_tensor *m)
{
    memset(m, 0, sizeof *m);
    o.threads = threads;
    capture_begin();
    int status = format_read_path(path, fmt, &o, m, NULL);
    capture_end();
    return status;
}

static void test_big_read(const unsigned char *payload)
{
    static const int threads[] = { 1, 2, 7, 0 };
    size_t npy_n, u8_n, u8_bytes = BIG_BYTES - 1;
    unsigned char *npy = big_npy("{'descr': '<f4', 'fortran_order': False, "
                                 "'shape': (1001, 10477), }", payload, BIG_BYTES, &npy_n);
    char u8_dict[96];
    snprintf(u8_dict, sizeof u8_dict, "{'descr': '|u1', 'fortran_order': False, "
             "'shape': (%zu,), }", u8_bytes);
    unsigned char *u8 = big_npy(u8_dict, payload, u8_bytes, &u8_n);
    CHECK((npy_n - BIG_BYTES) % 2 == 1 && (u8_n - u8_bytes) % 2 == 1 && u8_bytes % 2 == 1,
          "odd offsets and sizes: %zu %zu", npy_n, u8_n);
    write_file(tmp_path("big.npy"), npy, npy_n);
    write_file(tmp_path("big_u8.npy"), u8, u8_n);
    write_file(tmp_path("big.bin"), payload, BIG_BYTES);
    struct gc_read_opts o = default_read(), raw = default_read();
    set_shape(&raw, 2, (const size_t[]){ BIG_ROWS, BIG_COLS });
    struct gc_tensor m;
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        int t = threads[i];
        CHECK(read_threads(tmp_path("big.npy"), GC_FMT_AUTO, o, t, &m) == 0 &&
              SHAPE_IS(&m, BIG_ROWS, BIG_COLS) && memcmp(m.data, payload, BIG_BYTES) == 0,
              "big .npy, %d threads: %s", t, captured);
        gc_tensor_free(&m);
        CHECK(read_threads(tmp_path("big_u8.npy"), GC_FMT_AUTO, o, t, &m) == 0 &&
              SHAPE_IS(&m, u8_bytes) && m.dtype == GC_U8 &&
              memcmp(m.data, payload, u8_bytes) == 0, "big u8 .npy, %d threads: %s", t, captured);
        gc_tensor_free(&m);
        CHECK(read_threads(tmp_path("big.bin"), GC_FMT_AUTO, raw, t, &m) == 0 &&
              SHAPE_IS(&m, BIG_ROWS, BIG_COLS) && memcmp(m.data, payload, BIG_BYTES) == 0,
              "big raw, %d threads: %s", t, captured);
        gc_tensor_free(&m);
    }
    /* A pipe keeps the one read(2) stream. */
    CHECK(read_bytes(GC_FMT_NPY, "p", npy, npy_n, &o, &m, 1) == 0 &&
          memcmp(m.data, payload, BIG_BYTES) == 0, "big .npy from a pipe: %s", captured);
    gc_tensor_free(&m);

    /* A short and a long file fail alike whatever the threads. */
    char first[2][sizeof captured];
    write_file(tmp_path("short.npy"), npy, npy_n - 5);
    write_file(tmp_path("long.npy"), npy, npy_n);
    FILE *f = fopen(tmp_path("long.npy"), "ab");
    CHECK(f && fwrite("xyz", 1, 3, f) == 3 && fclose(f) == 0, "append");
    for (int k = 0; k < 2; k++) {
        int st = read_threads(tmp_path(k ? "long.npy" : "short.npy"), GC_FMT_AUTO, o, 1, &m);
        CHECK(st == GC_EXIT_INPUT && strstr(captured, k ? "3 trailing bytes" : "truncated"),
              "%s, 1 thread: %s", k ? "long" : "short", captured);
        snprintf(first[k], sizeof first[k], "%s", captured);
        st = read_threads(tmp_path(k ? "long.npy" : "short.npy"), GC_FMT_AUTO, o, 7, &m);
        CHECK(st == GC_EXIT_INPUT && strcmp(captured, first[k]) == 0,
              "%s, 7 threads: '%s' vs '%s'", k ? "long" : "short", captured, first[k]);
    }
    free(u8);
    free(npy);
}

/* The size checks pass at open; then the file shrinks or grows, and the
 * reads themselves must notice. */
static void test_big_read_changed(const unsigned char *payload)
{
    size_t npy_n;
    unsigned char *npy = big_npy("{'descr': '<f4', 'fortran_order': False, "
                                 "'shape': (1001, 10477), }", payload, BIG_BYTES, &npy_n);
    char path[600], first[2][sizeof captured];
    snprintf(path, sizeof path, "%s", tmp_path("changed.npy"));
    for (int grow = 0; grow < 2; grow++)
        for (int threads = 1; threads <= 7; threads += 6) {
            write_file(path, npy, npy_n);
            struct gc_input in;
            struct gc_tensor m;
            memset(&m, 0, sizeof m);
            capture_begin();
            int st = input_open(&in, path);
            if (!st) {
                in.threads = threads;
                int fmt = -1;
                st = format_identify(&in, 0, &fmt) == 0 && fmt == GC_FMT_NPY ? 0 : -1;
                if (grow) {
                    FILE *f = fopen(path, "ab");
                    if (!f || fwrite("abcdefg", 1, 7, f) != 7 || fclose(f) != 0)
                        st = -1;
                } else if (truncate(path, (off_t)(npy_n - 1000)) != 0) {
                    st = -1;
                }
                if (!st)
                    st = gc_formats[GC_FMT_NPY].read(&in, NULL, &m);
                input_close(&in);
            }
            capture_end();
            char found[64];
            snprintf(found, sizeof found, "found %zu", BIG_BYTES - 1000);
            CHECK(st == GC_EXIT_INPUT && strstr(captured, "changed.npy") &&
                  strstr(captured, grow ? "7 trailing bytes" : found),
                  "file %s after open, %d threads: %s", grow ? "grew" : "shrank", threads,
                  captured);
            if (threads == 1)
                snprintf(first[grow], sizeof first[grow], "%s", captured);
            else
                CHECK(strcmp(captured, first[grow]) == 0, "same message: '%s' vs '%s'",
                      captured, first[grow]);
            gc_tensor_free(&m);
        }
    free(npy);
}

/* Writes t as `fmt` into a FILE that already holds a few buffered bytes
 * and adds a few more after, so that the payload lands at an odd offset
 * and the FILE must end up after it. */
static unsigned char *write_between(int fmt, const struct gc_tensor *t, int threads,
                                    const char *mode, size_t *n, int *status)
{
    char path[600];
    snprintf(path, sizeof path, "%s", tmp_path("big_out"));
    struct gc_write_opts wo = { 0, ',', -1, threads };
    FILE *f = fopen(path, mode);
    *status = -1;
    if (f) {
        capture_begin();
        fputs("head", f);
        *status = gc_formats[fmt].write(f, "big_out", t, &wo);
        fputs("tail", f);
        capture_end();
        if (fclose(f) != 0 && !*status)
            *status = -1;
    }
    return slurp_path(path, n);
}

static void test_big_write(unsigned char *payload)
{
    static const int threads[] = { 1, 2, 7, 0 };
    struct gc_tensor t = matrix_of(BIG_ROWS, BIG_COLS, GC_F32, 0, payload);
    for (int fmt = GC_FMT_NPY; fmt <= GC_FMT_RAW; fmt++) {
        size_t want_n, n;
        int st;
        /* A memory stream has no descriptor: the plain fwrite path. */
        unsigned char *want = write_bytes(fmt, &t, NULL, &want_n, &st);
        CHECK(st == 0 && want_n == (fmt == GC_FMT_RAW ? BIG_BYTES : BIG_BYTES + 128),
              "%s in memory: %zu bytes", gc_formats[fmt].name, want_n);
        for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
            unsigned char *got = write_between(fmt, &t, threads[i], "wb", &n, &st);
            CHECK(st == 0 && got && n == want_n + 8 && memcmp(got, "head", 4) == 0 &&
                  memcmp(got + 4, want, want_n) == 0 && memcmp(got + 4 + want_n, "tail", 4) == 0,
                  "big %s, %d threads: status %d, %zu bytes: %s", gc_formats[fmt].name,
                  threads[i], st, n, captured);
            free(got);
        }
        /* With O_APPEND pwrite's offset is ignored: the writes stay in order. */
        write_file(tmp_path("big_out"), "old", 3);
        unsigned char *got = write_between(fmt, &t, 7, "ab", &n, &st);
        CHECK(st == 0 && got && n == want_n + 11 && memcmp(got, "oldhead", 7) == 0 &&
              memcmp(got + 7, want, want_n) == 0, "big %s appended: %zu bytes: %s",
              gc_formats[fmt].name, n, captured);
        free(got);
        free(want);
    }

    /* Past the file-size limit a write fails with EFBIG, named and reported. */
    struct rlimit old, lim;
    void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
    if (getrlimit(RLIMIT_FSIZE, &old) == 0) {
        lim = old;
        lim.rlim_cur = (rlim_t)20 << 20;
        if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
            for (int th = 1; th <= 7; th += 6) {
                size_t n;
                int st;
                free(write_between(GC_FMT_NPY, &t, th, "wb", &n, &st));
                CHECK(st == GC_EXIT_OUTPUT && strstr(captured, "big_out: write error"),
                      "over the size limit, %d threads: %d %s", th, st, captured);
            }
            setrlimit(RLIMIT_FSIZE, &old);
        }
    }
    signal(SIGXFSZ, old_xfsz);
}

/* ---- a payload read into a sink (src/job/upload.c sends it to the device) ----
 *
 * This one copies each slice into `dst`, counting what it sees: slices are
 * checked to be whole, in bounds, each byte delivered once, and no more
 * slots out at once than it has. */
enum { SINK_SLOTS = 5 };
#define SINK_SLOT_BYTES (((size_t)3 << 20) + 4)   /* slices that do not start on a page */

struct test_sink {
    struct gc_sink sink;
    int take;                  /* accept's answer */
    int fail_at;               /* put of this slice fails (-1: none) */
    pthread_mutex_t lock;
    unsigned char *slot[SINK_SLOTS];
    int busy[SINK_SLOTS], out, most_out;
    unsigned char *dst, *seen;
    size_t bytes, delivered, slices;
    int accepted, finished, finish_status, overlap, stray;
};

static void *sink_slot(void *ctx)
{
    struct test_sink *k = ctx;
    pthread_mutex_lock(&k->lock);
    void *p = NULL;
    for (int i = 0; i < SINK_SLOTS && !p; i++)
        if (!k->busy[i]) {
            k->busy[i] = 1;
            p = k->slot[i];
        }
    if (p && ++k->out > k->most_out)
        k->most_out = k->out;
    pthread_mutex_unlock(&k->lock);
    return p;   /* never NULL: threads are fewer than slots */
}

static int sink_accept(void *ctx, const struct gc_tensor *t, size_t bytes)
{
    struct test_sink *k = ctx;
    (void)t;
    k->accepted++;
    if (!k->take)
        return 0;
    k->bytes = bytes;
    k->dst = calloc(bytes, 1);
    k->seen = calloc(bytes / SINK_SLOT_BYTES + 1, 1);
    return k->dst && k->seen;
}

static int sink_put(void *ctx, void *buf, size_t off, size_t n)
{
    struct test_sink *k = ctx;
    int status = 0;
    pthread_mutex_lock(&k->lock);
    size_t s = off / SINK_SLOT_BYTES;
    if (off % SINK_SLOT_BYTES || off + n > k->bytes ||
        (n && n != SINK_SLOT_BYTES && off + n != k->bytes))
        k->stray++;
    else if (n && k->seen[s]++)
        k->overlap++;
    if (n && (int)s == k->fail_at)
        status = GC_EXIT_GPU;
    else if (n && !k->stray)
        memcpy(k->dst + off, buf, n);
    if (n) {
        k->delivered += n;
        k->slices++;
    }
    for (int i = 0; i < SINK_SLOTS; i++)
        if (k->slot[i] == buf) {
            k->busy[i] = 0;
            k->out--;
        }
    pthread_mutex_unlock(&k->lock);
    return status;
}

static int sink_finish(void *ctx, int status)
{
    struct test_sink *k = ctx;
    k->finished++;
    k->finish_status = status;
    return status;
}

static void sink_init(struct test_sink *k, int take, int fail_at)
{
    memset(k, 0, sizeof *k);
    k->take = take;
    k->fail_at = fail_at;
    pthread_mutex_init(&k->lock, NULL);
    for (int i = 0; i < SINK_SLOTS; i++)
        if (!(k->slot[i] = malloc(SINK_SLOT_BYTES))) {
            perror("sink slot");
            exit(2);
        }
    k->sink = (struct gc_sink){ sink_accept, sink_slot, sink_put, sink_finish,
                                SINK_SLOT_BYTES, k };
}

static void sink_free(struct test_sink *k)
{
    for (int i = 0; i < SINK_SLOTS; i++)
        free(k->slot[i]);
    free(k->dst);
    free(k->seen);
    pthread_mutex_destroy(&k->lock);
}

static void test_big_sink(const unsigned char *payload)
{
    static const int threads[] = { 1, 2, 4 };
    struct gc_read_opts npy = default_read(), raw = default_read();
    set_shape(&raw, 2, (const size_t[]){ BIG_ROWS, BIG_COLS });
    const char *files[] = { "big.npy", "big.bin" };
    struct gc_tensor m;
    struct test_sink k;
    for (size_t f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
            struct gc_read_opts o = f ? raw : npy;
            sink_init(&k, 1, -1);
            o.sink = &k.sink;
            int st = read_threads(tmp_path(files[f]), GC_FMT_AUTO, o, threads[i], &m);
            size_t want_slices = (BIG_BYTES + SINK_SLOT_BYTES - 1) / SINK_SLOT_BYTES;
            CHECK(st == 0 && m.data == NULL && SHAPE_IS(&m, BIG_ROWS, BIG_COLS) &&
                  m.dtype == GC_F32 && k.accepted == 1 && k.finished == 1 &&
                  k.finish_status == 0 && k.stray == 0 && k.overlap == 0 &&
                  k.slices == want_slices && k.delivered == BIG_BYTES && k.out == 0 &&
                  k.most_out <= threads[i] && memcmp(k.dst, payload, BIG_BYTES) == 0,
                  "%s into a sink, %d threads: status %d, %zu slices of %zu, %zu bytes, "
                  "%d stray, %d twice, %d out at most: %s", files[f], threads[i], st, k.slices,
                  want_slices, k.delivered, k.stray, k.overlap, k.most_out, captured);
            gc_tensor_free(&m);
            sink_free(&k);
        }

    /* Declined: read into host memory as ever. */
    sink_init(&k, 0, -1);
    npy.sink = &k.sink;
    CHECK(read_threads(tmp_path("big.npy"), GC_FMT_AUTO, npy, 2, &m) == 0 && m.data &&
          memcmp(m.data, payload, BIG_BYTES) == 0 && k.accepted == 1 && k.finished == 0 &&
          k.slices == 0, "a declined sink: %s", captured);
    gc_tensor_free(&m);
    sink_free(&k);

    /* The sink fails on one slice: its status comes back, nothing more is
     * said, the read stops there and the sink is told. */
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        sink_init(&k, 1, 3);
        npy.sink = &k.sink;
        int st = read_threads(tmp_path("big.npy"), GC_FMT_AUTO, npy, threads[i], &m);
        CHECK(st == GC_EXIT_GPU && m.data == NULL && k.finished == 1 &&
              k.finish_status == GC_EXIT_GPU && k.out == 0 && captured[0] == 0,
              "a sink that fails, %d threads: status %d, finish %d (%d), '%s'", threads[i], st,
              k.finished, k.finish_status, captured);
        gc_tensor_free(&m);
        sink_free(&k);
    }

    /* Big-endian data is byte-swapped on the host, so it is not offered;
     * nor is a pipe's payload, nor a small one that a sink may decline. */
    size_t be_n;
    uint32_t *be = malloc(BIG_BYTES);
    for (size_t i = 0; be && i < BIG_BYTES / 4; i++)
        be[i] = __builtin_bswap32(((const uint32_t *)payload)[i]);
    unsigned char *be_file = big_npy("{'descr': '>f4', 'fortran_order': False, "
                                     "'shape': (1001, 10477), }", (unsigned char *)be,
                                     BIG_BYTES, &be_n);
    write_file(tmp_path("big_be.npy"), be_file, be_n);
    sink_init(&k, 1, -1);
    npy.sink = &k.sink;
    CHECK(read_threads(tmp_path("big_be.npy"), GC_FMT_AUTO, npy, 2, &m) == 0 && m.data &&
          memcmp(m.data, payload, BIG_BYTES) == 0 && k.accepted == 0,
          "big-endian .npy is not offered: %s", captured);
    gc_tensor_free(&m);
    float small[4] = { 1, 2, 3, 4 };
    unsigned char file[256];
    size_t n = npy_make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                        3, small, sizeof small);
    CHECK(read_bytes(GC_FMT_AUTO, "p", file, n, &npy, &m, 1) == 0 && m.data &&
          memcmp(m.data, small, sizeof small) == 0 && k.accepted == 0,
          "a pipe's payload is not offered: %s", captured);
    gc_tensor_free(&m);
    sink_free(&k);
    free(be);
    free(be_file);
}

/* Bytes placed by several threads at an offset of a file (core/pwrite.c,
 * as the tiles' bands are written): the file holds them exactly there and
 * nothing else moves; a descriptor that is not open fails with its errno. */
static void test_pwrite_parallel(const unsigned char *payload)
{
    const char *path = tmp_path("pwrite.bin");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0, "open %s", path);
    if (fd < 0)
        return;
    off_t at = 4096 + 3;
    size_t n = BIG_BYTES - 5;
    unsigned char head[8] = "headbyte";
    CHECK(pwrite(fd, head, sizeof head, 0) == (ssize_t)sizeof head, "the head");
    CHECK(pwrite_parallel(fd, payload, n, at, 4) == 0, "%zu bytes at %lld on 4 threads", n,
          (long long)at);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == at + (off_t)n, "the file ends at the run's end");
    unsigned char *back = malloc(n);
    unsigned char h[8];
    CHECK(back && pread(fd, back, n, at) == (ssize_t)n && memcmp(back, payload, n) == 0 &&
              pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && memcmp(h, head, sizeof h) == 0,
          "the run lies at its offset, the head untouched");
    free(back);
    close(fd);
    CHECK(pwrite_parallel(-1, payload, n, 0, 4) == EBADF, "a closed descriptor: EBADF");
    unlink(path);
}

/* Runs of PWRITE_MAP_MIN or more go through a shared mapping where the
 * file system allows it: at an odd offset, into the middle of a longer
 * file (its size kept, the bytes either side untouched) and onto its end
 * (the file grown); a descriptor open for writing only cannot be mapped,
 * and pwrite places the same bytes. */
static void test_pwrite_mapped(void)
{
    size_t n = PWRITE_MAP_MIN + ((size_t)3 << 20) + 11;
    unsigned char *src = malloc(n), *back = malloc(n + 65536);
    CHECK(src && back, "memory for %zu bytes", n);
    if (!src || !back) {
        free(src), free(back);
        return;
    }
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 13));
    const char *path = tmp_path("pwrite_mapped.bin");
    for (int wronly = 0; wronly < 2; wronly++) {
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        CHECK(fd >= 0, "open %s", path);
        if (fd < 0)
            break;
        /* 0x5A everywhere first: the run lands in the middle. */
        off_t at = 3 * 4096 + 1, size = at + (off_t)n + 5000;
        memset(back, 0x5A, n + 65536);
        CHECK(pwrite(fd, back, n + 65536, 0) == (ssize_t)(n + 65536) && ftruncate(fd, size) == 0,
              "the file's first bytes");
        if (wronly) {
            close(fd);
            fd = open(path, O_WRONLY);
        }
        CHECK(pwrite_parallel(fd, src, n, at, 8) == 0, "%zu bytes at %lld on 8 threads%s", n,
              (long long)at, wronly ? ", write-only" : "");
        if (wronly) {
            close(fd);
            fd = open(path, O_RDWR);
        }
        struct stat st;
        CHECK(fstat(fd, &st) == 0 && st.st_size == size, "the file keeps its size%s",
              wronly ? " (write-only)" : "");
        int ok = pread(fd, back, (size_t)size, 0) == (ssize_t)size &&
                 memcmp(back + at, src, n) == 0;
        for (off_t i = 0; ok && i < size; i++)
            ok = (i >= at && i < at + (off_t)n) || back[i] == 0x5A;
        CHECK(ok, "the run at its offset, the bytes either side untouched%s",
              wronly ? " (write-only)" : "");
        /* Onto the end: the file grows to the run's end. */
        off_t end = size + 7;
        CHECK(pwrite_parallel(fd, src, n, end, 8) == 0 && fstat(fd, &st) == 0 &&
                  st.st_size == end + (off_t)n && pread(fd, back, n, end) == (ssize_t)n &&
                  memcmp(back, src, n) == 0,
              "a run past the end grows the file to it");
        close(fd);
    }
    /* A descriptor that appends puts every write at the end, whatever the
     * offset: refused (EINVAL), the file untouched, nothing reserved. */
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && pwrite(fd, "0123456789", 10, 0) == 10, "a file of 10 bytes");
    close(fd);
    fd = open(path, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && pwrite_parallel(fd, src, n, 10, 8) == EINVAL,
          "%zu bytes to a descriptor that appends: EINVAL", n);
    close(fd);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 10, "the file keeps its 10 bytes");
    unlink(path);
    free(src);
    free(back);
}

/* Pages made ahead (file_map_ahead) while stores land: a mapped run at
 * an odd offset, 4 threads making its pages from the start while the
 * test stores its bytes from the end backwards (the two meet and cross),
 * then unmapped: the file holds the bytes.  Where the kernel has
 * MADV_POPULATE_WRITE, every page of a second mapping is made without a
 * store (mincore: resident) and reads back as zeros. */
static void test_file_map_ahead(void)
{
    size_t n = ((size_t)100 << 20) + 12345;
    off_t at = 4096 + 123;
    unsigned char *src = malloc(n), *back = malloc(n);
    CHECK(src && back, "memory for %zu bytes", n);
    const char *path = tmp_path("ahead.bin");
    int fd = src && back ? open(path, O_RDWR | O_CREAT | O_TRUNC, 0600) : -1;
    CHECK(fd >= 0, "open %s", path);
    if (fd < 0) {
        free(src), free(back);
        return;
    }
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 151 + (i >> 15));
    struct file_map m;
    unsigned char *dst = file_map_range(fd, n, at, &m);
    if (!dst) {
        printf("file_map_ahead: %s cannot be mapped here (its file system); skipped\n", path);
        close(fd), unlink(path), free(src), free(back);
        return;
    }
    CHECK(file_map_ahead(&m, 8) == 0 && m.ahead, "4 threads making pages ahead");
    for (size_t end = n; end > 0;) {
        size_t len = end < ((size_t)1 << 20) ? end : ((size_t)1 << 20);
        memcpy(dst + end - len, src + end - len, len);
        end -= len;
    }
    file_unmap(&m);
    CHECK(!m.base && !m.ahead, "unmapped, the threads stopped");
    CHECK(pread(fd, back, n, at) == (ssize_t)n && memcmp(back, src, n) == 0,
          "the stores landed beside the pages made ahead");

    /* Made ahead alone: every page resident, all zeros. */
    long page = sysconf(_SC_PAGESIZE);
    void *probe = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14 */
#endif
    int can = probe != MAP_FAILED && madvise(probe, (size_t)page, MADV_POPULATE_WRITE) == 0;
    if (probe != MAP_FAILED)
        munmap(probe, (size_t)page);
    if (!can) {
        printf("file_map_ahead: this kernel has no MADV_POPULATE_WRITE; its pages are not "
               "made ahead (checked: the stores still land)\n");
    } else {
        CHECK(ftruncate(fd, 0) == 0, "the file emptied");
        dst = file_map_range(fd, n, at, &m);
        CHECK(dst && file_map_ahead(&m, 4) == 0, "mapped again, pages made ahead");
        size_t lead = (size_t)(at % page), pages = (n + lead + (size_t)page - 1) / (size_t)page;
        unsigned char *vec = malloc(pages);
        int all = 0;
        for (int tries = 0; dst && vec && tries < 500 && !all; tries++) {
            all = mincore((unsigned char *)m.base, m.len, vec) == 0;
            for (size_t i = 0; all && i < pages; i++)
                all = vec[i] & 1;
            if (!all)
                usleep(10000);
        }
        CHECK(all, "every page of the %zu made without a store", pages);
        file_unmap(&m);
        CHECK(pread(fd, back, n, at) == (ssize_t)n, "read back");
        size_t nonzero = 0;
        for (size_t i = 0; i < n; i++)
            nonzero += back[i] != 0;
        CHECK(nonzero == 0, "pages made ahead hold zeros: %zu bytes are not", nonzero);
        free(vec);
    }
    close(fd);
    unlink(path);
    free(src);
    free(back);
}

static void test_big_payloads(void)
{
    unsigned char *payload = big_payload();
    test_big_read(payload);
    test_big_sink(payload);
    test_big_read_changed(payload);
    test_big_write(payload);
    test_pwrite_parallel(payload);
    test_pwrite_mapped();
    test_file_map_ahead();
    free(payload);
}

/* ---- .npz ---- */

struct zip_spec {
    const char *name;
    const void *data;
    size_t len;
    int deflate;
    uint32_t crc_xor;         /* spoils the recorded CRC-32 */
    uint64_t usize_add;       /* spoils the recorded size (both headers) */
};

static unsigned char *zput(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

/* An archive as np.savez writes one: every local header with zip64 sizes
 * (0xFFFFFFFF and an extra field), the directory's sizes plain, unless
 * `zip64` puts them in zip64 extra fields too and ends the archive with
 * zip64's end record and locator.  malloc'd; its length to *len. */
static unsigned char *zip_make(const struct zip_spec *m, size_t n, int zip64, size_t *len)
{
    size_t cap = 4096;
    for (size_t i = 0; i < n; i++)
        cap += 2 * (m[i].len + 256) + 2 * strlen(m[i].name);
    unsigned char *out = malloc(cap), *cd = malloc(cap), *p = out, *c = cd;
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(6);
    for (size_t i = 0; i < n; i++) {
        size_t nlen = strlen(m[i].name), clen = m[i].len;
        unsigned char *comp = malloc(m[i].len + 64);
        if (m[i].deflate)
            clen = libdeflate_deflate_compress(z, m[i].data, m[i].len, comp, m[i].len + 64);
        else
            memcpy(comp, m[i].data, m[i].len);
        uint32_t crc = libdeflate_crc32(0, m[i].data, m[i].len) ^ m[i].crc_xor;
        uint64_t usize = m[i].len + m[i].usize_add, at = (uint64_t)(p - out);
        p = zput(p, 0x04034b50, 4), p = zput(p, 45, 2), p = zput(p, 0, 2);
        p = zput(p, m[i].deflate ? 8 : 0, 2), p = zput(p, 0, 4), p = zput(p, crc, 4);
        p = zput(p, 0xffffffff, 4), p = zput(p, 0xffffffff, 4), p = zput(p, nlen, 2);
        p = zput(p, 20, 2);
        memcpy(p, m[i].name, nlen), p += nlen;
        p = zput(p, 1, 2), p = zput(p, 16, 2), p = zput(p, usize, 8), p = zput(p, clen, 8);
        memcpy(p, comp, clen), p += clen;
        c = zput(c, 0x02014b50, 4), c = zput(c, 45, 2), c = zput(c, 45, 2), c = zput(c, 0, 2);
        c = zput(c, m[i].deflate ? 8 : 0, 2), c = zput(c, 0, 4), c = zput(c, crc, 4);
        c = zput(c, zip64 ? 0xffffffff : clen, 4), c = zput(c, zip64 ? 0xffffffff : usize, 4);
        c = zput(c, nlen, 2), c = zput(c, zip64 ? 28 : 0, 2), c = zput(c, 0, 2);
        c = zput(c, 0, 2), c = zput(c, 0, 2), c = zput(c, 0, 4);
        c = zput(c, zip64 ? 0xffffffff : at, 4);
        memcpy(c, m[i].name, nlen), c += nlen;
        if (zip64) {
            c = zput(c, 1, 2), c = zput(c, 24, 2), c = zput(c, usize, 8);
            c = zput(c, clen, 8), c = zput(c, at, 8);
        }
        free(comp);
    }
    uint64_t cd_at = (uint64_t)(p - out), cd_size = (uint64_t)(c - cd);
    memcpy(p, cd, cd_size), p += cd_size;
    if (zip64) {
        uint64_t end64 = (uint64_t)(p - out);
        p = zput(p, 0x06064b50, 4), p = zput(p, 44, 8), p = zput(p, 45, 2), p = zput(p, 45, 2);
        p = zput(p, 0, 4), p = zput(p, 0, 4), p = zput(p, n, 8), p = zput(p, n, 8);
        p = zput(p, cd_size, 8), p = zput(p, cd_at, 8);
        p = zput(p, 0x07064b50, 4), p = zput(p, 0, 4), p = zput(p, end64, 8), p = zput(p, 1, 4);
    }
    p = zput(p, 0x06054b50, 4), p = zput(p, 0, 2), p = zput(p, 0, 2);
    p = zput(p, zip64 ? 0xffff : n, 2), p = zput(p, zip64 ? 0xffff : n, 2);
    p = zput(p, zip64 ? 0xffffffff : cd_size, 4), p = zput(p, zip64 ? 0xffffffff : cd_at, 4);
    p = zput(p, 0, 2);
    libdeflate_free_compressor(z);
    free(cd);
    *len = (size_t)(p - out);
    return out;
}

/* format_read_path of `path` (PATH:NAME allowed); stderr is captured. */
static int read_path(const char *path, struct gc_tensor *m)
{
    struct gc_read_opts o = default_read();
    memset(m, 0, sizeof *m);
    capture_begin();
    int st = format_read_path(path, GC_FMT_AUTO, &o, m, NULL);
    capture_end();
    return st;
}

static void test_npz_read(void)
{
    float a[6] = { 1, 2, 3, 4, 5, 6 };
    int16_t b[4] = { -1, 2, -3, 4 };
    unsigned char na[256], nb[256];
    size_t la = npy_make(na, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                         3, a, sizeof a);
    size_t lb = npy_make(nb, 1, "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }",
                         3, b, sizeof b);
    for (int zip64 = 0; zip64 < 2; zip64++) {
        struct zip_spec two[2] = { { "a.npy", na, la, 0, 0, 0 }, { "b.npy", nb, lb, 1, 0, 0 } };
        size_t n;
        unsigned char *z = zip_make(two, 2, zip64, &n);
        write_file(tmp_path("two.npz"), z, n);
        struct gc_tensor m;
        char path[600];
        snprintf(path, sizeof path, "%s:a", tmp_path("two.npz"));
        CHECK(read_path(path, &m) == 0 && SHAPE_IS(&m, 2, 3) && m.dtype == GC_F32 &&
              get_2d(&m, 1, 2) == 6, "stored member by name (zip64 %d): %s", zip64, captured);
        gc_tensor_free(&m);
        snprintf(path, sizeof path, "%s:b.npy", tmp_path("two.npz"));
        CHECK(read_path(path, &m) == 0 && SHAPE_IS(&m, 2, 2) && m.dtype == GC_I16 &&
              m.fortran_order && get_2d(&m, 1, 0) == 512,
              "deflated big-endian Fortran member by its whole name (zip64 %d): %s", zip64,
              captured);
        gc_tensor_free(&m);
        CHECK(read_path(tmp_path("two.npz"), &m) == GC_EXIT_INPUT &&
              strstr(captured, "holds 2 arrays (a, b): name one as"),
              "two members, none named: %s", captured);
        snprintf(path, sizeof path, "%s:q", tmp_path("two.npz"));
        CHECK(read_path(path, &m) == GC_EXIT_INPUT &&
              strstr(captured, "no array named 'q' (it holds a, b)"), "missing: %s", captured);
        free(z);
    }
    /* One member is taken without a name, from a file and from a pipe. */
    struct zip_spec one = { "arr_0.npy", na, la, 1, 0, 0 };
    size_t n;
    unsigned char *z = zip_make(&one, 1, 0, &n);
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        CHECK(read_bytes(GC_FMT_AUTO, "one.npz", z, n, &o, &m, pipe_it) == 0 &&
              SHAPE_IS(&m, 2, 3) && get_2d(&m, 0, 1) == 2, "the only member (pipe %d): %s",
              pipe_it, captured);
        gc_tensor_free(&m);
    }
    free(z);
}

static void test_npz_hostile(void)
{
    float a[6] = { 1, 2, 3, 4, 5, 6 };
    unsigned char na[256];
    size_t la = npy_make(na, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                         3, a, sizeof a);
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    size_t n;
    for (int deflate = 0; deflate < 2; deflate++) {
        struct zip_spec bad = { "a.npy", na, la, deflate, 1, 0 };
        unsigned char *z = zip_make(&bad, 1, 0, &n);
        for (int pipe_it = 0; pipe_it < 2; pipe_it++)
            CHECK(read_bytes(GC_FMT_AUTO, "crc.npz", z, n, &o, &m, pipe_it) == GC_EXIT_INPUT &&
                  strstr(captured, ":a: CRC-32 mismatch") && !m.data,
                  "CRC (deflate %d, pipe %d): %s", deflate, pipe_it, captured);
        CHECK(read_bytes(GC_FMT_AUTO, "cut.npz", z, n - 7, &o, &m, 0) == GC_EXIT_INPUT &&
              strstr(captured, "truncated zip archive"), "cut short: %s", captured);
        free(z);
        /* A declared size the .npy header does not have. */
        struct zip_spec lie = { "a.npy", na, la, deflate, 0, 8 };
        z = zip_make(&lie, 1, 0, &n);
        CHECK(read_bytes(GC_FMT_AUTO, "size.npz", z, n, &o, &m, 0) == GC_EXIT_INPUT &&
              strstr(captured, "size.npz:a: ") &&
              strstr(captured, deflate ? "trailing bytes" : "a stored member of"),
              "size lie (deflate %d): %s", deflate, captured);
        free(z);
    }
    /* A bomb: a member whose deflate data runs far past its declared size. */
    size_t big = (size_t)8 << 20;
    unsigned char *bomb = calloc(1, big);
    memcpy(bomb, na, la);
    struct zip_spec boom = { "a.npy", bomb, big, 1, 0, 0 };
    unsigned char *z = zip_make(&boom, 1, 0, &n);
    /* The headers say la bytes; the CRC is of those. */
    uint32_t crc = libdeflate_crc32(0, na, la);
    size_t cd = n - 22 - (46 + 5);
    zput(z + cd + 16, crc, 4);
    zput(z + cd + 24, la, 4);
    zput(z + 14, crc, 4);
    zput(z + 30 + 5 + 4, la, 8);
    char want[64];
    snprintf(want, sizeof want, "inflates to more than the %zu bytes", la);
    CHECK(read_bytes(GC_FMT_AUTO, "bomb.npz", z, n, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, want), "bomb: %s", captured);
    /* The same compressed bytes declared as 8 GiB: more than deflate can
     * make of them, refused before anything is allocated. */
    zput(z + cd + 24, 0xfffffff0, 4);
    zput(z + 30 + 5 + 4, 0xfffffff0, 8);
    CHECK(read_bytes(GC_FMT_AUTO, "bomb.npz", z, n, &o, &m, 0) == GC_EXIT_INPUT &&
          strstr(captured, "more than deflate can make"), "declared 4 GiB: %s", captured);
    free(z);
    free(bomb);
}

/* PATH:NAME: a file that exists is itself; else the split at the last ':'
 * whose left part is an archive; else the whole name, opened as it is. */
static void test_npz_names(void)
{
    char path[600];
    struct gc_input in;
    write_file(tmp_path("x:y.npy"), "", 0);
    write_file(tmp_path("arch.npz"), "", 0);
    write_file(tmp_path("zipped.dat"), "PK\x05\x06", 4);
    write_file(tmp_path("plain.dat"), "1,2\n", 4);
    const struct { const char *arg, *file, *member; } cases[] = {
        { "x:y.npy", "x:y.npy", NULL },        { "arch.npz:w", "arch.npz", "w" },
        { "arch.npz:a:b", "arch.npz", "a:b" }, { "arch.npz:", "arch.npz", "" },
        { "zipped.dat:w", "zipped.dat", "w" }, { "plain.dat:w", NULL, NULL },
        { "nosuch.npz:w", NULL, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s", tmp_path(cases[i].arg));
        capture_begin();
        int st = input_open(&in, path);
        capture_end();
        if (!cases[i].file) {
            CHECK(st == GC_EXIT_INPUT && strstr(captured, cases[i].arg) &&
                  strstr(captured, "cannot open"), "%s: opened whole: %s", cases[i].arg,
                  captured);
            continue;
        }
        const char *m = cases[i].member;
        CHECK(st == 0 && strcmp(in.path, tmp_path(cases[i].file)) == 0 &&
              (m ? in.member && strcmp(in.member, m) == 0 : !in.member),
              "%s: path '%s', member '%s': %s", cases[i].arg, st ? "" : in.path,
              st || !in.member ? "(none)" : in.member, captured);
        if (!st)
            input_close(&in);
    }
    snprintf(path, sizeof path, "%s:w", tmp_path("arch.npz"));
    CHECK(!input_is_stdin(path) && input_is_stdin("-") && input_is_stdin("-:w"),
          "stdin is '-' and '-:NAME'");
    CHECK(format_by_extension("x.NPZ") == GC_FMT_NPZ && format_by_name("npz") == GC_FMT_NPZ,
          "npz by name and extension");
}

static void test_npz_info(void)
{
    float a[6] = { 1, 2, 3, 4, 5, 6 };
    unsigned char na[256];
    size_t la = npy_make(na, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                         3, a, sizeof a);
    struct zip_spec two[2] = { { "a.npy", na, la, 0, 0, 0 }, { "odd", na, la, 1, 0, 0 } };
    size_t n;
    unsigned char *z = zip_make(two, 2, 1, &n);
    write_file(tmp_path("info.npz"), z, n);
    struct gc_input in;
    struct gc_info arch, info[2];
    struct gc_read_opts o = default_read();
    capture_begin();
    int st = input_open(&in, tmp_path("info.npz"));
    if (!st)
        st = gc_formats[GC_FMT_NPZ].members(&in, &arch);
    for (size_t i = 0; i < 2 && !st; i++)
        st = gc_formats[GC_FMT_NPZ].member_info(&in, &o, i, &info[i]);
    capture_end();
    CHECK(st == 0 && arch.members == 2 && arch.file_bytes == (off_t)n &&
          info[0].format == GC_FMT_NPY && !info[0].deflated && info[0].stored_bytes == la &&
          strcmp(info[0].key, "a") == 0 && strcmp(info[0].member, "a.npy") == 0 &&
          info[0].file_bytes == (off_t)la && info[1].deflated && info[1].stored_bytes > 0 &&
          strcmp(info[1].key, "odd") == 0 && info[1].ndim == 2 && info[1].shape[0] == 2 &&
          info[1].shape[1] == 3 && info[1].dtype == GC_F32, "members' info: %s", captured);
    if (!st)
        input_close(&in);
    free(z);
}

static void test_npz(void)
{
    test_npz_read();
    test_npz_hostile();
    test_npz_names();
    test_npz_info();
}

static void test_detect(void)
{
    CHECK(format_by_extension("a/b.CSV.GZ") == GC_FMT_CSV_GZ, "csv.gz");
    CHECK(format_by_extension("x.csv") == GC_FMT_CSV, "csv");
    CHECK(format_by_extension("x.bin") == GC_FMT_RAW && format_by_extension("x.raw") == GC_FMT_RAW,
          "raw");
    CHECK(format_by_extension("x.npy") == GC_FMT_NPY, "npy");
    CHECK(format_by_extension("x.txt") == -1, "unknown");
    /* .zst alone says nothing about what the frames hold. */
    CHECK(format_by_extension("a/b.CSV.ZST") == GC_FMT_CSV_ZST &&
          format_by_extension("x.npy.zst") == GC_FMT_NPY_ZST && format_by_extension("x.zst") == -1,
          "zst");
    CHECK(format_by_name("bin") == GC_FMT_RAW && format_by_name("csv.gz") == GC_FMT_CSV_GZ &&
          format_by_name("npy") == GC_FMT_NPY && format_by_name("xls") == -1, "names");
    struct gc_read_opts o = default_read();
    struct gc_tensor m;
    /* Text through a pipe is CSV; a .npy named .csv is still .npy. */
    CHECK(read_bytes(GC_FMT_AUTO, "p", "1,2\n3,4\n", 8, &o, &m, 1) == 0 && SHAPE_IS(&m, 2, 2) &&
          m.dtype == GC_F64, "CSV on a pipe");
    gc_tensor_free(&m);
    float payload[4] = { 1, 2, 3, 4 };
    unsigned char file[256];
    size_t n = npy_make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                        3, payload, sizeof payload);
    CHECK(read_bytes(GC_FMT_AUTO, "lies.csv", file, n, &o, &m, 0) == 0 && SHAPE_IS(&m, 2, 2),
          "magic before extension");
    gc_tensor_free(&m);

    /* Where nothing decides, the guess is announced only when asked. */
    write_file(tmp_path("x.dat"), "1,2\n", 4);
    for (int announce = 0; announce < 2; announce++) {
        struct gc_input in;
        capture_begin();
        int fmt = -2;
        if (input_open(&in, tmp_path("x.dat")) == 0) {
            if (format_identify(&in, announce, &fmt) != 0)
                fmt = -1;
            input_close(&in);
        }
        capture_end();
        CHECK(fmt == GC_FMT_CSV && (announce ? strstr(captured, "read as csv") != NULL
                                             : captured[0] == 0),
              "text in x.dat, announce %d: %d '%s'", announce, fmt, captured);
    }
    o.announce = 1;
    capture_begin();
    int st = format_read_path(tmp_path("x.dat"), GC_FMT_AUTO, &o, &m, NULL);
    capture_end();
    CHECK(st == 0 && SHAPE_IS(&m, 1, 2) && strstr(captured, "note"),
          "format_read_path announces: %s", captured);
    if (st == 0)
        gc_tensor_free(&m);
}

int main(void)
{
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 2;
    }
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    test_dtypes_and_sizes();
    test_format_capabilities();
    test_half();
    test_convert();
    test_convert_nd();
    test_decimal_parse(loc);
    test_decimal_format(loc);
    test_npy_header_bytes();
    test_npy_header_nd();
    test_npy_read();
    test_npy_roundtrip_all_dtypes();
    test_npy_roundtrip_nd();
    test_bf16();
    test_npy_big_endian_nd();
    test_npy_info_nd();
    test_raw();
    test_raw_nd();
    test_csv_read();
    test_csv_dtypes();
    test_csv_mark_limits();
    test_csv_locale_independent();
    test_csv_roundtrip();
    test_csv_write_nd();
    test_gzip();
    test_inflate_par();
    test_zstd();
    test_npz();
    test_detect();
    test_big_payloads();
    freelocale(loc);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_formats: could not remove %s\n", tmp_dir);
    printf("test_formats: %d passed, %d failed\n", tally_of()->passed, tally_of()->failed);
    return tally_of()->failed ? 1 : 0;
}
