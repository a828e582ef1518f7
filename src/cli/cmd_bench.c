/* gemmcli bench: every kernel against cuBLAS on the same inputs, per
 * signature and for transpose (src/bench/bench.c), or with --sweep auto
 * against cuBLAS on random shapes (src/bench/sweep.c).
 *
 *   gemmcli bench --op mul --dtype f32 --sizes 4096,1000x3000x500
 *   gemmcli bench --sweep 200 --dtype f32,f16 --bench-out out/sweep */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "kernels/registry.h"
#include "src/bench/bench.h"
#include "src/bench/sweep.h"
#include "src/cli/commands.h"
#include "src/job/output.h"

/* The signatures bench times, as the error names them: "f32, f16 and f64". */
static void benched_names(char *buf, size_t n)
{
    int count = 0, said = 0;
    size_t used = 0;
    for (int s = 0; s < GEMM_SIG_COUNT; s++)
        count += gemm_sigs[s].bench_order > 0;
    buf[0] = '\0';
    for (int s = 0; s < GEMM_SIG_COUNT && used < n; s++) {
        if (!gemm_sigs[s].bench_order)
            continue;
        said++;
        used += (size_t)snprintf(buf + used, n - used, "%s%s",
                                 said == 1 ? "" : said == count ? " and " : ", ", gemm_sigs[s].name);
    }
}

/* --dtype for bench: a comma-separated list of signatures (f32, tf32x3)
 * or the dtypes whose own arithmetic they are (float16); NULL: every
 * signature bench times. */
static int parse_sigs(const char *list, unsigned *sigs)
{
    *sigs = 0;
    if (!list) {
        for (int s = 0; s < GEMM_SIG_COUNT; s++)
            if (gemm_sigs[s].bench_order)
                *sigs |= 1u << s;
        return 0;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int s = gemm_sig_by_name(tok);
        if (s < 0 || !gemm_sigs[s].bench_order) {
            char names[128];
            benched_names(names, sizeof names);
            return gc_fail(GC_EXIT_USAGE, "--dtype: bench times %s, not '%s'", names, tok);
        }
        *sigs |= 1u << s;
    }
    return 0;
}

static int sweep(const struct gc_opts *o, unsigned sigs)
{
    if (o->bench_sizes || o->auto_table || strcmp(o->bench_op, "transpose") == 0)
        return gc_fail(GC_EXIT_USAGE, "--sweep draws its own mul shapes: it takes no "
                       "--sizes, --auto-table or --op transpose");
    /* One signature unless asked: the ladder's, bench's first. */
    if (!o->bench_dtypes)
        for (int s = 0; s < GEMM_SIG_COUNT; s++)
            if (gemm_sigs[s].bench_order == 1)
                sigs = 1u << s;
    int rc = 0;
    for (int s = 0; s < GEMM_SIG_COUNT && !rc; s++)
        if (sigs & (1u << s))
            rc = bench_sweep(o, (enum gemm_sig)s);
    return rc;
}

int cmd_bench(const struct gc_opts *o)
{
    if (o->n_operands)
        return gc_fail(GC_EXIT_USAGE, "bench takes no operands (sizes go in --sizes)");
    int all = strcmp(o->bench_op, "all") == 0;
    if (all && o->bench_sizes && !o->sweep)
        return gc_fail(GC_EXIT_USAGE, "--sizes needs --op mul or --op transpose");
    unsigned sigs;
    int rc = parse_sigs(o->bench_dtypes, &sigs);
    if (!rc && o->bench_out)
        rc = output_check_name(o->bench_out);
    if (!rc && o->auto_table)
        rc = output_check_name(o->auto_table);
    if (rc)
        return rc;
    if (o->sweep)
        rc = sweep(o, sigs);
    else
        rc = bench_run(o, sigs, all || strcmp(o->bench_op, "mul") == 0,
                       all || strcmp(o->bench_op, "transpose") == 0);
    if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
        rc = gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return rc;
}
