/* Command-line options: one table (options.c) that drives getopt_long,
 * each command's --help and the manual's OPTIONS list, and one struct that
 * carries the parsed values to the command. */
#ifndef GC_OPTIONS_H
#define GC_OPTIONS_H

#include <stddef.h>
#include "formats/format.h"
#include "src/plan/matmul.h"

/* The options come in groups, each a kind of work a command may do; a
 * command's row in the command table (src/cli/main.c) names the groups it
 * takes and an option's row (options.c) the groups it belongs to, so that
 * a new command is one row there and a new option one row here. */
enum gc_option_group {
    OPTS_READ = 1 << 0,       /* reads matrix files: --in-format, --shape, ... */
    OPTS_WRITE = 1 << 1,      /* writes a matrix: -o, --format, --precision, ... */
    OPTS_REPLACE = 1 << 2,    /* writes files that may replace others: --force */
    OPTS_RUN = 1 << 3,        /* runs a kernel on its operands: --kernel, --verify, ... */
    OPTS_DEVICE = 1 << 4,     /* uses a GPU: --device, $GEMMCLI_DEVICE */
    OPTS_DTYPE = 1 << 5,      /* --dtype names one element type */
    OPTS_DTYPES = 1 << 6,     /* --dtype names a list of them */
    OPTS_COMPUTE = 1 << 7,    /* --compute chooses the arithmetic */
    OPTS_JSON = 1 << 8,       /* prints its summary as JSON on request */
    OPTS_QUIET = 1 << 9,      /* prints a summary or progress that --quiet silences */
    OPTS_MUL = 1 << 10,       /* mul's own */
    OPTS_KERNELS = 1 << 11,   /* kernels' own */
    OPTS_BENCH = 1 << 12,     /* bench's own */
    OPTS_TUNE = 1 << 13,      /* tune's own */
    OPTS_HELP = 1 << 14,      /* --help: every command's, whatever else it takes */
};
#define OPTS_EVERY (~0u)      /* an option's groups: every command takes it (--help) */

#define GC_MAX_OPERANDS 16
#define GC_MAX_SHAPES 3
#define GC_MAX_DEVICES 64

struct gc_shape_opt {
    int ndim;
    size_t dims[GC_MAX_DIMS];
};
#define GC_MAX_SIZES 32

struct gc_opts {
    unsigned groups;                /* the command's OPTS_* groups */
    const char *operands[GC_MAX_OPERANDS];
    int n_operands;

    const char *output;             /* -o; NULL: none given */
    const char *c0_path;            /* -c: C0 for beta */
    double alpha, beta;             /* a float result's; checked against the compute
                                       precision by mul */
    const char *alpha_text, *beta_text;  /* as given (NULL: 1 and 0): an integer result
                                       takes them exactly (matmul_integer_scalars) */
    const char *kernel;             /* --kernel; "auto" by default */
    int verify;
    double tol;                     /* relative Frobenius error allowed; < 0: by dtype */
    int compute;                    /* --compute: enum matmul_compute */
    int repeat;
    int quiet, json, details, wide;
    int force;                      /* --force: replace outputs the caller may not write to */
    int threads;                    /* host threads; 0: all cores */
    int device;                     /* CUDA device ordinal */
    int device_given;               /* --device was on the command line */

    int out_format;                 /* --format; GC_FMT_AUTO: from -o */
    int in_format;                  /* --in-format; GC_FMT_AUTO: detect */
    int out_dtype;                  /* --dtype; -1: the command's default */
    struct gc_shape_opt shapes[GC_MAX_SHAPES];  /* --shape, in operand order */
    int n_shapes;
    struct gc_read_opts read;
    struct gc_write_opts write;

    const char *bench_op;           /* bench: "mul", "transpose", "all" */
    const char *bench_dtypes;       /* bench, tune: --dtype as given (a list), NULL: the
                                       command's default */
    const char *bench_sizes;        /* bench: size list as given */
    const char *bench_out;          /* bench: prefix for .csv/.json/.svg */
    const char *auto_table;         /* bench: where to write auto's table */
    struct gc_shape_opt kernels_for;   /* kernels --for: a product's shape */
    int kernels_for_given;
    const char *rates_file;         /* kernels --for: --rates FILE; NULL: none */
    int sweep;                      /* bench --sweep: random shapes; 0: no sweep */
    int seed;                       /* bench --seed: the sweep's random shapes */

    size_t device_memory;           /* mul --device-memory: bytes of device memory it may
                                       use per GPU; 0: what is free */
    int devices[GC_MAX_DEVICES];    /* mul --devices: the GPUs to share the tiles */
    int n_devices;                  /* 0: --device's one; -1: all */
    size_t host_memory;             /* mul --host-memory: bytes of host memory an MPI rank may
                                       use for its operands and block; 0: its share of the
                                       host's */

    int tune;                       /* mul --tune: tune auto's choice on a cache miss */
    int dry_run;                    /* mul --dry-run: print the plan, run nothing */
    int tune_show, tune_clear;      /* tune --show, --clear */
    int calibrate;                  /* tune --calibrate */
    int no_calibrate;               /* mul, bench: --no-calibrate */
};

/* Parses argv (argv[0] is the command name) for a command that takes the
 * option `groups`; *help is set when --help was given (then nothing after
 * it is parsed).  Returns 0, or GC_EXIT_USAGE after saying what is wrong. */
int options_parse(struct gc_opts *o, unsigned groups, const char *usage, int argc, char **argv,
                  int *help);

/* Prints the options of `groups` to `f`, each with its text beside it,
 * in lines of at most 79 columns. */
void options_print_help(FILE *f, unsigned groups);

/* One item of a help list: `left` in its column, `text` beside it, broken
 * into lines of at most 79 columns. */
void options_print_item(FILE *f, const char *left, const char *text);

/* The long names of the options of `groups` ("kernel" for --kernel), at
 * most `max` of them into names[]; returns how many. */
size_t options_long_names(unsigned groups, const char **names, size_t max);

/* `text` as a paragraph of lines of at most 79 columns. */
void options_print_paragraph(FILE *f, const char *text);

/* "5", "96x64", "4x8x5" -> a shape of up to GC_MAX_DIMS dimensions, each
 * at most 2^63 - 1, "scalar" -> none (0-d); returns 0 or -1. */
int options_parse_shape(const char *s, struct gc_shape_opt *shape);

#endif
