#include "src/job/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/suggest.h"

enum {
    OPT_HELP = 'h', OPT_OUTPUT = 'o', OPT_C0 = 'c', OPT_KERNEL = 'k',
    OPT_QUIET = 'q', OPT_REPEAT = 'r',
    OPT_ALPHA = 256, OPT_BETA, OPT_VERIFY, OPT_TOL, OPT_JSON, OPT_DETAILS, OPT_WIDE,
    OPT_THREADS, OPT_DEVICE, OPT_FORMAT, OPT_IN_FORMAT, OPT_DTYPE, OPT_IN_DTYPE, OPT_SHAPE,
    OPT_ORDER, OPT_DELIMITER, OPT_HEADER, OPT_PRECISION, OPT_LEVEL,
    OPT_OP, OPT_SIZES, OPT_BENCH_OUT, OPT_AUTO_TABLE, OPT_COMPUTE, OPT_SWEEP, OPT_SEED, OPT_FOR,
    OPT_TUNE, OPT_SHOW, OPT_CLEAR, OPT_DEVICE_MEMORY, OPT_DEVICES, OPT_HOST_MEMORY,
    OPT_FORCE, OPT_DRY_RUN, OPT_NO_CALIBRATE, OPT_CALIBRATE, OPT_RATES,
};

struct opt_def {
    const char *name;
    int short_name;       /* 0: long only */
    int key;
    const char *arg;      /* NULL: takes no argument */
    unsigned groups;      /* OPTS_*: a command that takes any of them takes it */
    const char *help;
};

static const struct opt_def opt_defs[] = {
    { "output", 'o', OPT_OUTPUT, "FILE", OPTS_WRITE, "write the result to FILE ('-': stdout)" },
    { "force", 0, OPT_FORCE, NULL, OPTS_REPLACE, "replace an existing output that you may not write to (write-protected, or another user's); without it such a file is kept and the run fails (status 4)" },
    { "format", 0, OPT_FORMAT, "FMT", OPTS_WRITE, "output format: npy, raw, csv, csv.gz, csv.zst, npy.zst (default: from -o's extension; for stdout, the first input's format)" },
    { "in-format", 0, OPT_IN_FORMAT, "FMT", OPTS_READ, "input format: npy, raw, csv, csv.gz, csv.zst, npy.zst, npz (default: detected from magic bytes, then extension)" },
    { "dtype", 0, OPT_DTYPE, "T", OPTS_DTYPE, "element type of the result, converted to: f16 bf16 f32 f64 i8..i64 u8..u64 bool (default: NumPy's; kernels --for: the operands')" },
    { "dtype", 0, OPT_DTYPE, "LIST", OPTS_DTYPES, "comma-separated: bench, the signatures to time (f32 f16 bf16 f64 tf32 tf32x3; default: all of them, --sweep: f32); tune, the element types (default: f32)" },
    { "in-dtype", 0, OPT_IN_DTYPE, "T", OPTS_READ, "element type of raw input (default f32) and of CSV text (default f64, as numpy.loadtxt); a .npy file carries its own" },
    { "shape", 0, OPT_SHAPE, "DIMS", OPTS_READ, "shape of raw input: 5, 96x64, 4x8x5, or scalar for 0-d (repeat for each raw operand)" },
    { "order", 0, OPT_ORDER, "C|F", OPTS_READ, "element order of raw input: C (row-major, default) or F" },
    { "delimiter", 0, OPT_DELIMITER, "CHAR", OPTS_READ | OPTS_WRITE, "CSV field delimiter: 'space' or ' ' for any run of blanks, 'tab', or one character (default: ',' to write; to read, ',' or blanks if the first row has no comma)" },
    { "header", 0, OPT_HEADER, NULL, OPTS_READ, "CSV input has one header row to skip" },
    { "precision", 0, OPT_PRECISION, "N", OPTS_WRITE, "CSV output: N significant digits (default: shortest exact)" },
    { "level", 0, OPT_LEVEL, "N", OPTS_WRITE, "compression level: .csv.gz 0 (stored) to 12, default 1; .csv.zst and .npy.zst 1 to 19, default 3" },
    { "c0", 'c', OPT_C0, "FILE", OPTS_MUL, "C0 for C = alpha*A*B + beta*C0" },
    { "alpha", 0, OPT_ALPHA, "X", OPTS_MUL, "scale of A*B (default 1): a finite number for a float result; for an integer one an integer in its dtype's range, exact (bool: 0 or 1)" },
    { "beta", 0, OPT_BETA, "X", OPTS_MUL, "scale of C0 (default 0), the same values as --alpha" },
    { "kernel", 'k', OPT_KERNEL, "NAME", OPTS_RUN, "kernel to run (default auto; see 'gemmcli kernels')" },
    { "compute", 0, OPT_COMPUTE, "MODE", OPTS_COMPUTE, "arithmetic: auto (the result dtype's own), fp32, fp64, exact (integers), f16, bf16, tf32 (lossy), tf32x3 (float on tensor cores, FP32-class), ozaki (FP64 from int8 products, Ozaki scheme II), ozaki32 (FP32-class from fewer of them)" },
    { "tune", 0, OPT_TUNE, NULL, OPTS_MUL, "with --kernel auto: on a miss in the tune cache, time auto's candidates on this product, cache the fastest and run it" },
    { "no-calibrate", 0, OPT_NO_CALIBRATE, NULL, OPTS_MUL | OPTS_BENCH, "with --kernel auto: do not measure this GPU's kernel rates when none are kept for it; auto plans with the table's rates scaled to this GPU" },
    { "calibrate", 0, OPT_CALIBRATE, NULL, OPTS_TUNE, "measure this GPU's kernel rates for auto now (a few seconds), keep them beside the tune cache and print them" },
    { "show", 0, OPT_SHOW, NULL, OPTS_TUNE, "print the tune cache's path and entries" },
    { "clear", 0, OPT_CLEAR, NULL, OPTS_TUNE, "remove the tune cache" },
    { "dry-run", 0, OPT_DRY_RUN, NULL, OPTS_MUL, "print the plan (executor, kernel and signature, tiles, output format) for these operands and exit: reads their headers only, runs nothing, writes no output" },
    { "verify", 0, OPT_VERIFY, NULL, OPTS_RUN, "check the result against an FP64 (or exact integer) product" },
    { "tol", 0, OPT_TOL, "X", OPTS_RUN, "largest relative Frobenius error --verify accepts (default by dtype)" },
    { "repeat", 'r', OPT_REPEAT, "N", OPTS_RUN, "time the kernel N times after a warm-up, report the median (a lone run of 20 ms or more is its own warm-up)" },
    { "threads", 0, OPT_THREADS, "N", OPTS_READ | OPTS_WRITE, "host threads for reading and writing text, binary reads and writes, the cpu kernel and the FP64 check (default: all cores)" },
    { "device", 0, OPT_DEVICE, "N", OPTS_DEVICE, "CUDA device ordinal (default 0, or $GEMMCLI_DEVICE)" },
    { "device-memory", 0, OPT_DEVICE_MEMORY, "SIZE", OPTS_MUL, "device memory mul may use on each GPU: 6G, 512M, 1.5GiB or bytes (default: what is free); a product that needs more is computed in tiles streamed from host memory" },
    { "devices", 0, OPT_DEVICES, "LIST", OPTS_MUL, "share the product's tiles among these GPUs: 0,1 or all" },
    { "host-memory", 0, OPT_HOST_MEMORY, "SIZE", OPTS_MUL, "under an MPI launcher: host memory each rank may use for its parts of A and B and its block of C (default: 3/4 of the host's, shared among its ranks); parts that need more are read in panels along K, each read once and broadcast" },
    { "for", 0, OPT_FOR, "SHAPE", OPTS_KERNELS, "the kernels that can compute MxNxK (or BxMxNxK), by auto's estimate, and auto's choice" },
    { "rates", 0, OPT_RATES, "FILE", OPTS_KERNELS, "with --for: plan for the GPU whose kernel rates FILE holds, as 'tune --calibrate' keeps them (rates-NAME-CC-SMS.txt beside the tune cache), whatever GPU this machine has or lacks" },
    { "details", 0, OPT_DETAILS, NULL, OPTS_KERNELS, "add registers, shared memory and occupancy on this device" },
    { "wide", 0, OPT_WIDE, NULL, OPTS_KERNELS, "every column whole, on a terminal too (it is cut to the terminal's width otherwise; a pipe has it whole)" },
    { "op", 0, OPT_OP, "OP", OPTS_BENCH, "bench mul, transpose or all (default all)" },
    { "sizes", 0, OPT_SIZES, "LIST", OPTS_BENCH, "comma-separated sizes: N (square) or MxNxK / RxC" },
    { "sweep", 0, OPT_SWEEP, "N", OPTS_BENCH, "time auto against cuBLAS on N random shapes and the edge families" },
    { "seed", 0, OPT_SEED, "S", OPTS_BENCH, "--sweep: the seed of its random shapes (default 1)" },
    { "bench-out", 0, OPT_BENCH_OUT, "PREFIX", OPTS_BENCH, "write PREFIX-OP.csv, .json and .svg" },
    { "auto-table", 0, OPT_AUTO_TABLE, "FILE", OPTS_BENCH, "write auto's choices as C (kernels/auto_table.c)" },
    { "json", 0, OPT_JSON, NULL, OPTS_JSON, "print the summary as one JSON object" },
    { "quiet", 'q', OPT_QUIET, NULL, OPTS_QUIET, "print no timing summary or progress line" },
    { "help", 'h', OPT_HELP, NULL, OPTS_EVERY, "show this help and exit" },
};
#define N_OPTS (sizeof opt_defs / sizeof opt_defs[0])

/* Help's columns: the options from column 2, their texts from HELP_TEXT,
 * lines of at most HELP_WIDTH. */
#define HELP_TEXT 29
#define HELP_WIDTH 79

/* `text` from column `indent` (where the line stands now) in words, lines
 * broken before HELP_WIDTH and continued at `indent`. */
static void print_wrapped(FILE *f, const char *text, int indent)
{
    int col = indent;
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > indent && col + 1 + (int)word > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(text, 1, word, f);
        col += (int)word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

size_t options_long_names(unsigned groups, const char **names, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < N_OPTS && n < max; i++)
        if (opt_defs[i].groups & groups)
            names[n++] = opt_defs[i].name;
    return n;
}

void options_print_paragraph(FILE *f, const char *text)
{
    print_wrapped(f, text, 0);
}

void options_print_item(FILE *f, const char *left, const char *text)
{
    /* (a name too long for its column: its text on the next line) */
    int col = fprintf(f, "  %-26s", left);
    if (col >= HELP_TEXT)
        fprintf(f, "\n%*s", HELP_TEXT, "");
    else
        fprintf(f, " ");
    print_wrapped(f, text, HELP_TEXT);
}

void options_print_help(FILE *f, unsigned groups)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct opt_def *d = &opt_defs[i];
        if (!(d->groups & groups))
            continue;
        char left[64];
        if (d->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", d->short_name, d->name,
                     d->arg ? " " : "", d->arg ? d->arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", d->name,
                     d->arg ? " " : "", d->arg ? d->arg : "");
        options_print_item(f, left, d->help);
    }
}

int options_parse_shape(const char *s, struct gc_shape_opt *shape)
{
    shape->ndim = 0;
    if (strcmp(s, "scalar") == 0)
        return 0;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9' || shape->ndim == GC_MAX_DIMS)
            return -1;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        /* NumPy's limit on a dimension: PY_SSIZE_T_MAX. */
        if (errno || v > INT64_MAX)
            return -1;
        shape->dims[shape->ndim++] = (size_t)v;
        if (*end == '\0')
            return 0;
        if (*end != 'x' && *end != 'X')
            return -1;
        s = end + 1;
    }
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return gc_fail(GC_EXIT_USAGE, "--%s: expected an integer from %ld to %ld, got '%s'",
                       opt, lo, hi, s);
    *out = (int)v;
    return 0;
}

/* 6G, 512M, 1.5GiB, 4096K or plain bytes; K, M, G, T are powers of 1024,
 * with or without "iB" or "B". */
static int parse_size(const char *opt, const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double scale = 1;
    const char *units = "KMGT";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (u) {
        for (const char *p = units; p <= u; p++)
            scale *= 1024;
        end++;
        if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
            end += strlen(end);
    } else if (strcmp(end, "B") == 0) {
        end++;
    }
    if (errno || end == s || *end || !isfinite(v) || v * scale < 1 || v * scale > 0x1p62)
        return gc_fail(GC_EXIT_USAGE, "--%s: expected a size such as 6G, 512M or 1.5GiB, "
                       "got '%s'", opt, s);
    *out = (size_t)(v * scale);
    return 0;
}

/* "all", or a comma list of distinct device ordinals. */
static int parse_devices(const char *opt, const char *s, struct gc_opts *o)
{
    if (strcmp(s, "all") == 0) {
        o->n_devices = -1;
        return 0;
    }
    o->n_devices = 0;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v > 1024 || (*end && *end != ',') ||
            o->n_devices == GC_MAX_DEVICES)
            return gc_fail(GC_EXIT_USAGE, "--%s: expected 'all' or device ordinals such as "
                           "0,1, got '%s'", opt, s);
        for (int i = 0; i < o->n_devices; i++)
            if (o->devices[i] == v)
                return gc_fail(GC_EXIT_USAGE, "--%s: device %ld named twice", opt, v);
        o->devices[o->n_devices++] = (int)v;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

static int parse_real(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return gc_fail(GC_EXIT_USAGE, "--%s: expected a finite number, got '%s'", opt, s);
    *out = v;
    return 0;
}

static int parse_format(const char *opt, const char *s, int *out)
{
    int f = format_by_name(s);
    int out_only = strcmp(opt, "format") == 0;
    if (f < 0 || (out_only && format_can(f, FORMAT_ARCHIVE))) {
        char names[256];
        size_t used = 0;
        for (int i = 0; i < GC_FMT_COUNT && used < sizeof names; i++)
            if (!(out_only && format_can(i, FORMAT_ARCHIVE)))
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         used ? ", " : "", gc_formats[i].name);
        if (f >= 0)
            return gc_fail(GC_EXIT_USAGE, "--format %s: .%s is read, not written (%s)", s,
                           gc_formats[f].name, names);
        return gc_fail(GC_EXIT_USAGE, "--%s: unknown format '%s' (%s)", opt, s, names);
    }
    *out = f;
    return 0;
}

/* The highest --level any format takes; the output's format checks its
 * own range (src/job/io.c). */
static int level_max(void)
{
    int most = 0;
    for (int i = 0; i < GC_FMT_COUNT; i++)
        most = gc_formats[i].level_max > most ? gc_formats[i].level_max : most;
    return most;
}

static int parse_dtype(const char *opt, const char *s, int *out)
{
    int t = gc_dtype_parse(s);
    if (t < 0)
        return gc_fail(GC_EXIT_USAGE, "--%s: unknown dtype '%s' (f16 bf16 f32 f64 i8 i16 i32 i64 "
                       "u8 u16 u32 u64 bool)", opt, s);
    *out = t;
    return 0;
}

static int apply(struct gc_opts *o, const struct opt_def *d, const char *arg)
{
    double x;
    int rc = 0;
    switch (d->key) {
    case OPT_OUTPUT: o->output = arg; break;
    case OPT_C0: o->c0_path = arg; break;
    case OPT_KERNEL: o->kernel = arg; break;
    case OPT_QUIET: o->quiet = 1; break;
    case OPT_FORCE: o->force = 1; break;
    case OPT_JSON: o->json = 1; break;
    case OPT_VERIFY: o->verify = 1; break;
    case OPT_DETAILS: o->details = 1; break;
    case OPT_WIDE: o->wide = 1; break;
    case OPT_HEADER: o->read.header = 1; break;
    case OPT_REPEAT: rc = parse_int(d->name, arg, 1, 1000000, &o->repeat); break;
    case OPT_THREADS:
        rc = parse_int(d->name, arg, 1, 4096, &o->threads);
        o->read.threads = o->write.threads = o->threads;
        break;
    case OPT_DEVICE:
        rc = parse_int(d->name, arg, 0, 1024, &o->device);
        o->device_given = 1;
        break;
    case OPT_DEVICE_MEMORY: rc = parse_size(d->name, arg, &o->device_memory); break;
    case OPT_DEVICES: rc = parse_devices(d->name, arg, o); break;
    case OPT_HOST_MEMORY: rc = parse_size(d->name, arg, &o->host_memory); break;
    case OPT_PRECISION: rc = parse_int(d->name, arg, 1, 17, &o->write.precision); break;
    case OPT_LEVEL: rc = parse_int(d->name, arg, 0, level_max(), &o->write.level); break;
    case OPT_ALPHA:
        rc = parse_real(d->name, arg, &o->alpha);
        o->alpha_text = arg;
        break;
    case OPT_BETA:
        rc = parse_real(d->name, arg, &o->beta);
        o->beta_text = arg;
        break;
    case OPT_TOL:
        if (!(rc = parse_real(d->name, arg, &x)) && x < 0)
            rc = gc_fail(GC_EXIT_USAGE, "--tol: must not be negative");
        o->tol = x;
        break;
    case OPT_FORMAT: rc = parse_format(d->name, arg, &o->out_format); break;
    case OPT_IN_FORMAT: rc = parse_format(d->name, arg, &o->in_format); break;
    case OPT_DTYPE: {
        if (o->groups & OPTS_DTYPES) {
            o->bench_dtypes = arg;
            break;
        }
        rc = parse_dtype(d->name, arg, &o->out_dtype);
        break;
    }
    case OPT_IN_DTYPE: rc = parse_dtype(d->name, arg, &o->read.dtype); break;
    case OPT_COMPUTE: {
        int m = matmul_compute_parse(arg);
        if (m < 0)
            return gc_fail(GC_EXIT_USAGE, "--compute: expected auto, fp32, fp64, exact, f16, "
                           "bf16, tf32 or tf32x3, got '%s'", arg);
        o->compute = m;
        break;
    }
    case OPT_SHAPE:
        if (o->n_shapes == GC_MAX_SHAPES)
            return gc_fail(GC_EXIT_USAGE, "--shape: given more than %d times", GC_MAX_SHAPES);
        if (options_parse_shape(arg, &o->shapes[o->n_shapes]))
            return gc_fail(GC_EXIT_USAGE, "--shape: expected dimensions joined by 'x' (5, 96x64, "
                           "4x8x5) or 'scalar', each at most %lld, got '%s'",
                           (long long)INT64_MAX, arg);
        o->n_shapes++;
        break;
    case OPT_ORDER:
        if (strcmp(arg, "C") == 0 || strcmp(arg, "c") == 0)
            o->read.fortran_order = 0;
        else if (strcmp(arg, "F") == 0 || strcmp(arg, "f") == 0)
            o->read.fortran_order = 1;
        else
            return gc_fail(GC_EXIT_USAGE, "--order: expected C or F, got '%s'", arg);
        break;
    case OPT_DELIMITER: {
        char c;
        if (strcmp(arg, "space") == 0 || strcmp(arg, "whitespace") == 0 || strcmp(arg, " ") == 0)
            c = ' ';
        else if (strcmp(arg, "tab") == 0 || strcmp(arg, "\\t") == 0 || strcmp(arg, "\t") == 0)
            c = '\t';
        else if (strlen(arg) == 1 && csv_delimiter_ok(arg[0]))
            c = arg[0];
        else
            return gc_fail(GC_EXIT_USAGE, "--delimiter: expected one character that cannot "
                           "occur in a number, inf or nan, nor start a comment or quote "
                           "(or 'space', 'tab'), got '%s'", arg);
        o->read.delimiter = c;
        o->write.delimiter = c;
        break;
    }
    case OPT_OP:
        if (strcmp(arg, "mul") && strcmp(arg, "transpose") && strcmp(arg, "all"))
            return gc_fail(GC_EXIT_USAGE, "--op: expected mul, transpose or all, got '%s'", arg);
        o->bench_op = arg;
        break;
    case OPT_SIZES: o->bench_sizes = arg; break;
    case OPT_BENCH_OUT: o->bench_out = arg; break;
    case OPT_AUTO_TABLE: o->auto_table = arg; break;
    case OPT_FOR:
        if (options_parse_shape(arg, &o->kernels_for) ||
            (o->kernels_for.ndim != 3 && o->kernels_for.ndim != 4))
            return gc_fail(GC_EXIT_USAGE, "--for: expected MxNxK or BxMxNxK, got '%s'", arg);
        o->kernels_for_given = 1;
        break;
    case OPT_SWEEP: rc = parse_int(d->name, arg, 0, 100000, &o->sweep); break;
    case OPT_SEED: rc = parse_int(d->name, arg, 0, INT_MAX, &o->seed); break;
    case OPT_TUNE: o->tune = 1; break;
    case OPT_DRY_RUN: o->dry_run = 1; break;
    case OPT_NO_CALIBRATE: o->no_calibrate = 1; break;
    case OPT_CALIBRATE: o->calibrate = 1; break;
    case OPT_RATES: o->rates_file = arg; break;
    case OPT_SHOW: o->tune_show = 1; break;
    case OPT_CLEAR: o->tune_clear = 1; break;
    }
    return rc;
}

static void set_defaults(struct gc_opts *o, unsigned groups)
{
    memset(o, 0, sizeof *o);
    o->groups = groups;
    o->alpha = 1.0;
    o->kernel = "auto";
    o->tol = -1;
    o->compute = COMPUTE_AUTO;
    o->repeat = 1;
    o->out_format = GC_FMT_AUTO;
    o->in_format = GC_FMT_AUTO;
    o->out_dtype = -1;
    o->read.dtype = -1;
    o->read.delimiter = 0;     /* ',' or blanks, by the first row */
    o->write.delimiter = ',';
    o->write.level = -1;
    o->bench_op = "all";
    o->seed = 1;
}

/* The long option that `arg` ("--x" or "--x=v") abbreviates: reports an
 * unknown or an ambiguous one (listing the candidates). */
static int report_bad_long(const char *arg, unsigned groups, const char *usage)
{
    const char *name = arg + 2;
    size_t len = strcspn(name, "=");
    char list[512];
    size_t used = 0;
    int matches = 0;
    list[0] = '\0';
    for (size_t i = 0; i < N_OPTS; i++) {
        if (!(opt_defs[i].groups & groups) || strncmp(opt_defs[i].name, name, len) != 0)
            continue;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s",
                                     matches ? ", " : "", opt_defs[i].name);
        matches++;
    }
    if (matches > 1)
        return gc_fail(GC_EXIT_USAGE, "ambiguous option '%.*s': could be %s", (int)(len + 2), arg,
                       list);
    if (matches == 1 && name[len] == '=')
        return gc_fail(GC_EXIT_USAGE, "option '%.*s' takes no argument", (int)(len + 2), arg);
    /* (a mistyped name: the nearest of the command's options) */
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)len, name);
    struct suggest s;
    suggest_init(&s, word);
    for (size_t i = 0; i < N_OPTS; i++)
        if (opt_defs[i].groups & groups)
            suggest_offer(&s, opt_defs[i].name);
    if (suggest_result(&s))
        return gc_fail(GC_EXIT_USAGE, "unknown option '%.*s': did you mean '--%s'? (see '%s')",
                       (int)(len + 2), arg, suggest_result(&s), usage);
    return gc_fail(GC_EXIT_USAGE, "unknown option '%s' (see '%s')", arg, usage);
}

int options_parse(struct gc_opts *o, unsigned groups, const char *usage, int argc, char **argv,
                  int *help)
{
    struct option longs[N_OPTS + 1];
    char shorts[2 * N_OPTS + 2];
    size_t nl = 0, ns = 0;

    *help = 0;
    set_defaults(o, groups);
    shorts[ns++] = ':';   /* report a missing argument as ':' */
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct opt_def *d = &opt_defs[i];
        if (!(d->groups & groups))
            continue;
        longs[nl++] = (struct option){ d->name, d->arg ? required_argument : no_argument,
                                       NULL, d->key };
        if (d->short_name) {
            shorts[ns++] = (char)d->short_name;
            if (d->arg)
                shorts[ns++] = ':';
        }
    }
    longs[nl] = (struct option){ 0, 0, 0, 0 };
    shorts[ns] = '\0';

    /* GNU getopt permutes operands behind the options, so options may follow
     * operands ("mul a.npy b.npy -o c.npy"); "--" ends option parsing. */
    optind = 0;
    opterr = 0;
    for (;;) {
        int idx = -1;
        int c = getopt_long(argc, argv, shorts, longs, &idx);
        if (c == -1)
            break;
        if (c == '?') {
            const char *bad = argv[optind - 1];
            if (strncmp(bad, "--", 2) == 0)
                return report_bad_long(bad, groups, usage);
            if (optopt)
                return gc_fail(GC_EXIT_USAGE, "unknown option '-%c' (see '%s')", optopt, usage);
            return gc_fail(GC_EXIT_USAGE, "unknown option '%s' (see '%s')", bad, usage);
        }
        if (c == ':')
            return gc_fail(GC_EXIT_USAGE, "option '%s' needs an argument", argv[optind - 1]);
        if (c == OPT_HELP) {
            *help = 1;
            return 0;
        }
        const struct opt_def *d = NULL;
        for (size_t i = 0; i < N_OPTS; i++)
            if (opt_defs[i].key == c && (opt_defs[i].groups & groups))
                d = &opt_defs[i];
        if (!d)
            return gc_fail(GC_EXIT_USAGE, "unexpected option (see '%s')", usage);
        int rc = apply(o, d, optarg);
        if (rc)
            return rc;
    }
    for (int i = optind; i < argc; i++) {
        if (o->n_operands == GC_MAX_OPERANDS)
            return gc_fail(GC_EXIT_USAGE, "too many operands (see '%s')", usage);
        o->operands[o->n_operands++] = argv[i];
    }
    /* $GEMMCLI_DEVICE is the default of --device, checked as strictly. */
    const char *env = getenv("GEMMCLI_DEVICE");
    if (!o->device_given && env && *env && (groups & OPTS_DEVICE)) {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (errno || end == env || *end || v < 0 || v > 1024)
            return gc_fail(GC_EXIT_USAGE, "GEMMCLI_DEVICE: expected a device number from 0 to "
                           "1024, got '%s'", env);
        o->device = (int)v;
    }
    return 0;
}
