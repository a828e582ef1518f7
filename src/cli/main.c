/* gemmcli: multiply and transpose matrices on NVIDIA GPUs.
 *
 * main() looks the command up in one table, parses its options and maps
 * the status it returns to the process's exit status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/scale/cluster.h"
#include "src/cli/commands.h"
#include "src/job/device.h"
#include "core/error.h"
#include "core/suggest.h"
#include "src/job/options.h"
#include "src/job/output.h"

/* What a command does when an MPI launcher starts several gemmclis. */
enum ranks_rule {
    RANKS_EACH,      /* each rank runs it as its own (info, kernels: they only print) */
    RANKS_SPLIT,     /* the ranks share the work (src/scale/dist.h) */
    RANKS_REFUSE,    /* one process's work: several would race on its output */
};

/* One row a command: adding one is a cmd_*.c file and a row here; its
 * usage line, its --help and the top --help come from the row. */
struct command {
    const char *name;
    const char *operands;    /* for usage lines */
    const char *summary;
    int (*run)(const struct gc_opts *o);
    unsigned options;        /* the option groups it takes (OPTS_*, src/job/options.h) */
    int uses_gpu;            /* may open a GPU: takes --device, and leaves without
                                tearing the CUDA context down (fast_exit) */
    enum ranks_rule ranks;
    /* What the command line alone makes wrong (commands.h); NULL: checked
     * as it runs, by a command that several ranks never run. */
    int (*check_usage)(const struct gc_opts *o);
};

static const struct command commands[] = {
    { "mul", "A B -o C", "C = alpha*A@B + beta*C0 on the GPU, as NumPy's matmul", cmd_mul,
      OPTS_READ | OPTS_WRITE | OPTS_REPLACE | OPTS_RUN | OPTS_DTYPE | OPTS_COMPUTE | OPTS_JSON |
          OPTS_QUIET | OPTS_MUL,
      1, RANKS_SPLIT, mul_check_usage },
    { "transpose", "IN OUT | IN -o OUT", "write the transpose of a matrix", cmd_transpose,
      OPTS_READ | OPTS_WRITE | OPTS_REPLACE | OPTS_RUN | OPTS_DTYPE | OPTS_JSON | OPTS_QUIET,
      1, RANKS_REFUSE, NULL },
    { "convert", "IN -o OUT", "change a matrix's file format (no GPU)", cmd_convert,
      OPTS_READ | OPTS_WRITE | OPTS_REPLACE | OPTS_DTYPE | OPTS_QUIET,
      0, RANKS_REFUSE, NULL },
    { "info", "FILE...", "format, dtype, shape and order of matrix files", cmd_info,
      OPTS_READ | OPTS_JSON,
      0, RANKS_EACH, info_check_usage },
    { "kernels", "", "list the registered kernels", cmd_kernels,
      OPTS_DTYPE | OPTS_COMPUTE | OPTS_JSON | OPTS_KERNELS,
      1, RANKS_EACH, kernels_check_usage },
    { "bench", "", "time every kernel against cuBLAS", cmd_bench,
      OPTS_REPLACE | OPTS_DTYPES | OPTS_QUIET | OPTS_BENCH,
      1, RANKS_REFUSE, NULL },
    { "tune", "SIZE...", "time auto's candidates, cache the fastest (--show, --clear)", cmd_tune,
      OPTS_DTYPES | OPTS_COMPUTE | OPTS_TUNE,
      1, RANKS_REFUSE, NULL },
    { "completion", "bash", "print a bash completion script: commands, options, kernel names",
      cmd_completion, 0,
      0, RANKS_EACH, completion_check_usage },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* The exit statuses, all of them or those a command returns: 1 where it
 * verifies (--verify), 5 where it opens a GPU. */
static void print_exit_statuses(FILE *f, int verifies, int uses_gpu)
{
    char text[512];
    snprintf(text, sizeof text, "Exit status: 0 success,%s 2 usage error, 3 bad input or not "
             "enough host memory, 4 output or I/O error%s.",
             verifies ? " 1 verification failed," : "",
             uses_gpu ? ", 5 GPU error (no device, out of device memory, launch failure)" : "");
    fputc('\n', f);
    options_print_paragraph(f, text);
}

static void print_usage(FILE *f)
{
    fputs("usage: gemmcli <command> [options] <operands>\n"
          "       gemmcli help [<command>] | --help | --version\n\ncommands:\n", f);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s %s", commands[i].name, commands[i].operands);
        options_print_item(f, left, commands[i].summary);
    }
    fputs("\nformats (told by magic bytes, then extension; --in-format, --format):\n", f);
    for (int i = 0; i < GC_FMT_COUNT; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s (%s)", gc_formats[i].name, gc_formats[i].extensions);
        options_print_item(f, left, gc_formats[i].summary);
    }
    fputs("\n'gemmcli help <command>' or 'gemmcli <command> --help' lists a command's\n"
          "options; '-' as a file means stdin or stdout; FILE:NAME is array NAME of\n"
          "an .npz.  See gemmcli(1).\n", f);
    print_exit_statuses(f, 1, 1);
}

/* The option groups a command takes: a GPU's with its own, and --help. */
static unsigned option_groups(const struct command *c)
{
    return c->options | OPTS_HELP | (c->uses_gpu ? OPTS_DEVICE : 0);
}

size_t commands_list(const char **names, unsigned *groups, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < N_COMMANDS && n < max; i++, n++) {
        names[n] = commands[i].name;
        groups[n] = option_groups(&commands[i]);
    }
    return n;
}

static void print_command_help(const struct command *c)
{
    printf("usage: gemmcli %s [options] %s\n%s\n\noptions:\n", c->name, c->operands, c->summary);
    options_print_help(stdout, option_groups(c));
    print_exit_statuses(stdout, (c->options & OPTS_RUN) != 0, c->uses_gpu);
}

/* After a command that may have used the GPU, the CUDA runtime's exit
 * handlers tear the context down, which takes about 0.1 s; the driver frees
 * everything when the process ends anyway.  So flush and leave at once.
 * Sanitizer builds exit normally, so that leaks are still reported. */
static void fast_exit(int status)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)status;
#else
    if (fflush(stdout) != 0 || ferror(stdout))
        status = status ? status : gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error: %s",
                                           strerror(errno));
    fflush(stderr);
    _exit(status);
#endif
}

/* Under an MPI launcher, a rank other than 0 that was started from rank
 * 0's command line finds the same usage errors as rank 0: rank 0 says
 * them, once, and this rank only exits with the same status. */
static int usage_said_by_rank_0(void)
{
    return cluster_launched_size() > 1 && cluster_launched_rank() != 0 &&
           cluster_one_command_line();
}

/* The command named `name`; else NULL, having said so (with the nearest
 * name where one was mistyped). */
static const struct command *command_named(const char *name)
{
    struct suggest s;
    suggest_init(&s, name);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
        suggest_offer(&s, commands[i].name);
    }
    suggest_offer(&s, "help");
    if (suggest_result(&s))
        gc_fail(GC_EXIT_USAGE, "unknown command '%s': did you mean '%s'? (see 'gemmcli --help')",
                name, suggest_result(&s));
    else
        gc_fail(GC_EXIT_USAGE, "unknown command '%s' (see 'gemmcli --help')", name);
    return NULL;
}

/* After --help or --version: 0 when what was printed went out. */
static int printed(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error: %s", strerror(errno));
}

/* The command and its options, and what the command line alone makes
 * wrong: 0 with *cmd set, or with *cmd NULL when --help, --version or a
 * command's --help was all there was to do (and was done); else a status
 * after saying why. */
static int parse_command_line(int argc, char **argv, int hushed, const struct command **cmd,
                              struct gc_opts *o)
{
    *cmd = NULL;
    if (argc < 2) {
        gc_fail(GC_EXIT_USAGE, "no command given");
        if (!hushed)
            print_usage(stderr);
        return GC_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 && argc > 3)
        return gc_fail(GC_EXIT_USAGE, "help takes one command at most (see 'gemmcli --help')");
    if (strcmp(name, "help") == 0 && argc == 3) {
        /* gemmcli help CMD: what gemmcli CMD --help prints */
        const struct command *c = command_named(argv[2]);
        if (!c)
            return GC_EXIT_USAGE;
        print_command_help(c);
        return printed();
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        return printed();
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("gemmcli %s\n", GC_VERSION);
        return printed();
    }
    const struct command *c = command_named(name);
    if (!c)
        return GC_EXIT_USAGE;
    char usage[64];
    snprintf(usage, sizeof usage, "gemmcli %s --help", c->name);
    int help, rc = options_parse(o, option_groups(c), usage, argc - 1, argv + 1, &help);
    if (!rc && help) {
        print_command_help(c);
        return printed();
    }
    if (!rc && c->check_usage)
        rc = c->check_usage(o);
    if (!rc)
        *cmd = c;
    return rc;
}

int main(int argc, char **argv)
{
    /* No file may take the place of a closed stdin, stdout or stderr. */
    output_guard_std_fds();
    output_signals_init();
    device_configure();

    const struct command *c = NULL;
    struct gc_opts o;
    int hushed = usage_said_by_rank_0();
    struct gc_capture unsaid;
    if (hushed)
        gc_capture_set(&unsaid);
    int rc = parse_command_line(argc, argv, hushed, &c, &o);
    if (rc && hushed) {
        gc_capture_set(NULL);
        cluster_defer_to_rank_0(&unsaid);
    }
    gc_capture_set(NULL);
    if (rc || !c)
        return rc;
    int ranks = cluster_launched_size();
    if (ranks > 1) {
        char who[48];
        snprintf(who, sizeof who, "rank %d of %d: ", cluster_launched_rank(), ranks);
        gc_error_origin(who);
        if (c->ranks == RANKS_REFUSE) {
            /* Every rank finds the same: rank 0 says it. */
            int rank = cluster_launched_rank();
            if (rank)
                gc_capture_set(&unsaid);
            gc_fail(GC_EXIT_USAGE, "%s is not shared among MPI ranks: run it as one process "
                    "(only mul is split)", c->name);
            gc_capture_set(NULL);
            if (rank)
                cluster_defer_to_rank_0(&unsaid);
            return GC_EXIT_USAGE;
        }
    }
    rc = c->run(&o);
    if (c->uses_gpu)
        fast_exit(rc);
    return rc;
}
