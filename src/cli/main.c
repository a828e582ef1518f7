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
#include "src/job/options.h"
#include "src/job/output.h"

/* What a command does when an MPI launcher starts several gemmclis. */
enum ranks_rule {
    RANKS_EACH,      /* each rank runs it as its own (info, kernels: they only print) */
    RANKS_SPLIT,     /* the ranks share the work (src/scale/dist.h) */
    RANKS_REFUSE,    /* one process's work: several would race on its output */
};

struct command {
    const char *name;
    unsigned bit;
    const char *operands;    /* for usage lines */
    const char *summary;
    int (*run)(const struct gc_opts *o);
    enum ranks_rule ranks;
    /* What the command line alone makes wrong (commands.h); NULL: checked
     * as it runs, by a command that several ranks never run. */
    int (*check_usage)(const struct gc_opts *o);
};

static const struct command commands[] = {
    { "mul", CMD_MUL, "A B -o C", "C = alpha*A@B + beta*C0 on the GPU, as NumPy's matmul", cmd_mul,
      RANKS_SPLIT, mul_check_usage },
    { "transpose", CMD_TRANSPOSE, "IN OUT | IN -o OUT", "write the transpose of a matrix",
      cmd_transpose, RANKS_REFUSE, NULL },
    { "convert", CMD_CONVERT, "IN -o OUT", "change a matrix's file format (no GPU)", cmd_convert,
      RANKS_REFUSE, NULL },
    { "info", CMD_INFO, "FILE...", "format, dtype, shape and order of matrix files", cmd_info,
      RANKS_EACH, info_check_usage },
    { "kernels", CMD_KERNELS, "", "list the registered kernels", cmd_kernels, RANKS_EACH,
      kernels_check_usage },
    { "bench", CMD_BENCH, "", "time every kernel against cuBLAS", cmd_bench, RANKS_REFUSE,
      NULL },
    { "tune", CMD_TUNE, "SIZE...", "time auto's candidates, cache the fastest (--show, --clear)",
      cmd_tune, RANKS_REFUSE, NULL },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const char exit_statuses[] =
    "Exit status: 0 success, 1 verification failed, 2 usage error, 3 bad input or not\n"
    "enough host memory, 4 output or I/O error, 5 GPU error (no device, out of device\n"
    "memory, launch failure).\n";

static void print_usage(FILE *f)
{
    fputs("usage: gemmcli <command> [options] <operands>\n"
          "       gemmcli --help | --version\n\ncommands:\n", f);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s %s", commands[i].name, commands[i].operands);
        fprintf(f, "  %-30s %s\n", left, commands[i].summary);
    }
    fputs("\n'gemmcli <command> --help' lists a command's options; '-' as a file means\n"
          "stdin or stdout.  See gemmcli(1).\n\n", f);
    fputs(exit_statuses, f);
}

static void print_command_help(const struct command *c)
{
    printf("usage: gemmcli %s [options] %s\n%s\n\noptions:\n", c->name, c->operands, c->summary);
    options_print_help(stdout, c->bit);
    printf("\n%s", exit_statuses);
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

/* The command and its options, and what the command line alone makes
 * wrong: 0, GC_EXIT_USAGE after saying why, or -1 after --help, --version
 * or a command's --help was printed (*status: its exit status). */
static int parse_command_line(int argc, char **argv, int hushed, const struct command **cmd,
                              struct gc_opts *o, int *status)
{
    if (argc < 2) {
        gc_fail(GC_EXIT_USAGE, "no command given");
        if (!hushed)
            print_usage(stderr);
        return GC_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        *status = fflush(stdout) == 0 ? 0 : GC_EXIT_OUTPUT;
        return -1;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("gemmcli %s\n", GC_VERSION);
        *status = fflush(stdout) == 0 ? 0 : GC_EXIT_OUTPUT;
        return -1;
    }
    const struct command *c = NULL;
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            c = &commands[i];
    if (!c)
        return gc_fail(GC_EXIT_USAGE, "unknown command '%s' (see 'gemmcli --help')", name);
    *cmd = c;
    char usage[64];
    snprintf(usage, sizeof usage, "gemmcli %s --help", c->name);
    int rc = options_parse(o, c->bit, usage, argc - 1, argv + 1);
    if (rc < 0) {
        print_command_help(c);
        *status = fflush(stdout) == 0 ? 0 : GC_EXIT_OUTPUT;
        return -1;
    }
    if (!rc && c->check_usage)
        rc = c->check_usage(o);
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
    int hushed = usage_said_by_rank_0(), status = 0;
    struct gc_capture unsaid;
    if (hushed)
        gc_capture_set(&unsaid);
    int rc = parse_command_line(argc, argv, hushed, &c, &o, &status);
    if (rc > 0 && hushed) {
        gc_capture_set(NULL);
        cluster_defer_to_rank_0(&unsaid);
    }
    gc_capture_set(NULL);
    if (rc < 0)
        return status;
    if (rc)
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
    if (c->bit & (CMD_MUL | CMD_TRANSPOSE | CMD_BENCH | CMD_KERNELS | CMD_TUNE))
        fast_exit(rc);
    return rc;
}
