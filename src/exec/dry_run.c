/* mul --dry-run: the plan printed instead of run, as text or JSON. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "src/exec/exec.h"
#include "src/job/job.h"
#include "src/job/json.h"

/* When each route runs, as the plan prints it. */
static const char *route_when(const struct product_plan *pp, int i)
{
    if (pp->n_routes == 1)
        return "always";
    return i == 0 ? "within the FP64 bound" : "beyond the FP64 bound";
}

/* Where auto's choice comes from. */
static const char *route_source(const struct product_plan *pp, const struct product_route *r)
{
    if (!pp->is_auto)
        return "named";
    return r->tune_now ? "tune" : r->auto_source ? r->auto_source : "shipped";
}

static const char *source_words(const char *source)
{
    return strcmp(source, "named") == 0 ? "as named"
         : strcmp(source, "tune") == 0 ? "auto: the model's, unless --tune finds a faster one "
                                         "when it runs (no cached choice)"
         : strcmp(source, "cache") == 0 ? "auto: the tune cache's choice"
                                        : "auto: the model's choice";
}

/* The message of a route that cannot run, without its prefix and end. */
static void route_error(const struct product_route *r, char *buf, size_t n)
{
    const char *t = r->why.text;
    size_t len = r->why.len;
    if (len > 9 && strncmp(t, "gemmcli: ", 9) == 0) {
        t += 9;
        len -= 9;
    }
    while (len && t[len - 1] == '\n')
        len--;
    snprintf(buf, n, "%.*s", (int)len, t);
}

/* Why the plan would not run here as printed, or NULL. */
static const char *plan_note(const struct gc_opts *o, const struct product_plan *pp)
{
    if (pp->exec == PRODUCT_EMPTY || pp->on_host || pp->facts.present)
        return NULL;
    if (job_runs_without_gpu(o))
        return "no GPU on this machine: this is the plan for the model's device; mul itself "
               "runs the product on the host, with --kernel blas where OpenBLAS is installed "
               "and has the type (float32, float64), else --kernel cpu";
    if (!pp->budget)
        return "no CUDA device answered: this is the plan for the model's device, without a "
               "figure for device memory (--device-memory gives one); mul itself would stop "
               "here (status 5), and --kernel cpu runs on the host";
    return "no CUDA device answered: this is the plan for the model's device; mul itself "
           "would stop here (status 5), and --kernel cpu runs on the host";
}

static void tiles_json(struct json *j, const struct product_tiles *t)
{
    json_object(j, "tiles");
    json_int(j, "tiles", t->tp.tiles_m * t->tp.tiles_n);
    json_int(j, "tm", t->tp.tm);
    json_int(j, "tn", t->tp.tn);
    json_int(j, "tk", t->tp.tk);
    json_bool(j, "b_kept", t->tp.keep_b);
    json_count(j, "device_bytes", t->tp.bytes);
    json_number(j, "copied_bytes", t->traffic);
    json_list(j, "kernels", 0);
    for (int i = 0; i < t->n_kernels; i++) {
        const struct product_tile_kernel *e = &t->kernels[i];
        json_object(j, NULL);
        size_t shape[3] = { (size_t)e->m, (size_t)e->n, (size_t)e->k };
        json_shape(j, "mnk", 3, shape);
        json_string(j, "kernel", e->kern->name);
        json_end(j);
    }
    json_end(j);
    json_end(j);
}

static void routes_json(struct json *j, const struct product_plan *pp)
{
    json_list(j, "routes", 1);
    for (int i = 0; i < (pp->exec == PRODUCT_EMPTY ? 0 : pp->n_routes); i++) {
        const struct product_route *r = &pp->route[i];
        char why[1024];
        json_object(j, NULL);
        json_string(j, "when", route_when(pp, i));
        json_string(j, "kernel", r->status ? NULL : r->pick.kern->name);
        json_string(j, "sig", r->status ? NULL : gemm_sigs[r->pick.sig].name);
        json_string(j, "compute", r->status ? NULL : product_compute_words(&pp->mm, r->pick.sig));
        json_string(j, "source", r->status ? NULL : route_source(pp, r));
        if (pp->exec == PRODUCT_TILES && !r->status)
            tiles_json(j, &r->tiles);
        else
            json_null(j, "tiles");
        route_error(r, why, sizeof why);
        json_string(j, "error", r->status ? why : NULL);
        json_end(j);
    }
    json_end(j);
}

static void operand_json(struct json *j, const char *key, const struct gc_tensor *t,
                         const char *path)
{
    json_object(j, key);
    json_string(j, "file", path);
    json_shape(j, "shape", t->ndim, t->shape);
    json_string(j, "dtype", gc_dtypes[t->dtype].name);
    json_end(j);
}

static void plan_json(const struct gc_opts *o, const struct product_plan *pp,
                      const struct gc_tensor *a, const struct gc_tensor *b)
{
    const struct matmul_plan *mm = &pp->mm;
    const struct device_facts *f = &pp->facts;
    const struct product_route *r0 = &pp->route[0];
    int device = pp->exec != PRODUCT_EMPTY && !pp->on_host;
    struct json j;
    char cc[16];
    json_begin(&j, stdout);
    json_object(&j, NULL);
    json_string(&j, "command", "mul");
    json_bool(&j, "dry_run", 1);
    operand_json(&j, "a", a, o->operands[0]);
    operand_json(&j, "b", b, o->operands[1]);
    json_shape(&j, "result_shape", mm->out_ndim, mm->out_shape);
    json_string(&j, "result_dtype", gc_dtypes[mm->result].name);
    json_int(&j, "m", mm->m);
    json_int(&j, "n", mm->n);
    json_int(&j, "k", mm->k);
    json_int(&j, "batch", mm->batch);
    json_int(&j, "launches", pp->exec == PRODUCT_EMPTY ? 0 : mm->outer);
    json_string(&j, "executor", product_exec_names[pp->exec]);
    json_bool(&j, "shared", pp->shared);
    json_object(&j, "device");
    json_bool(&j, "present", f->present);
    json_string(&j, "name", device ? f->name : NULL);
    snprintf(cc, sizeof cc, "%d.%d", f->cc / 10, f->cc % 10);
    json_string(&j, "compute_capability", device ? cc : NULL);
    if (device) {
        json_int(&j, "sm_count", f->sm_count);
        if (f->free_bytes)
            json_count(&j, "free_bytes", f->free_bytes);
        else
            json_null(&j, "free_bytes");
    }
    json_end(&j);
    if (pp->budget && device)
        json_count(&j, "budget_bytes", pp->budget);
    else
        json_null(&j, "budget_bytes");
    if (pp->need)
        json_count(&j, "need_bytes", pp->need);
    else
        json_null(&j, "need_bytes");
    int picked = pp->exec != PRODUCT_EMPTY && r0->pick.kern;
    json_string(&j, "kernel", picked ? r0->pick.kern->name : NULL);
    json_string(&j, "sig", picked ? gemm_sigs[r0->pick.sig].name : NULL);
    json_bool(&j, "auto", pp->is_auto);
    routes_json(&j, pp);
    json_object(&j, "output");
    json_string(&j, "file", o->output);
    json_string(&j, "format", gc_formats[pp->out_format].name);
    json_string(&j, "dtype", gc_dtypes[pp->out_dtype].name);
    json_end(&j);
    if (pp->has_job) {
        json_object(&j, "job");
        json_number(&j, "read_s", pp->job.read);
        json_number(&j, "start_s", pp->job.start);
        json_number(&j, "locking_s", pp->job.locking);
        json_number(&j, "product_s", pp->job.product);
        json_number(&j, "copy_out_s", pp->job.copy_out);
        json_number(&j, "write_s", pp->job.write);
        json_number(&j, "total_s", pp->job.total);
        json_end(&j);
    } else {
        json_null(&j, "job");
    }
    json_string(&j, "note", plan_note(o, pp));
    json_end(&j);
}

static void tiles_text(const struct product_plan *pp, const struct product_tiles *t,
                       const char *when)
{
    printf("  tiles     %s%lld of %lldx%lld, K in steps of %lld,%s %.2f GiB a GPU, %.1f GB "
           "copied; on GPU", when, (long long)(pp->mm.batch * t->tp.tiles_m * t->tp.tiles_n),
           (long long)t->tp.tm, (long long)t->tp.tn, (long long)t->tp.tk,
           t->tp.keep_b ? " B kept," : "", t->tp.bytes / 1073741824.0, t->traffic / 1e9);
    int n = pp->facts.n_devices > 0 ? pp->facts.n_devices : 1;
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? "," : " ", pp->facts.n_devices > 0 ? pp->facts.devices[i].ordinal : 0);
    putchar('\n');
    for (int i = 0; i < t->n_kernels; i++)
        printf("            a %lldx%lldx%lld tile: %s\n", (long long)t->kernels[i].m,
               (long long)t->kernels[i].n, (long long)t->kernels[i].k, t->kernels[i].kern->name);
}

static void routes_text(const struct product_plan *pp)
{
    for (int i = 0; i < pp->n_routes; i++) {
        const struct product_route *r = &pp->route[i];
        char why[1024];
        const char *when = pp->n_routes == 1 ? "" : i == 0 ? "within the FP64 bound: "
                                                           : "beyond it: ";
        route_error(r, why, sizeof why);
        if (r->status) {
            printf("  %-9s %scannot run: %s\n", i ? "" : "kernel", when, why);
            continue;
        }
        printf("  %-9s %s%s (%s: %s), %s%s\n", i ? "" : "kernel", when, r->pick.kern->name,
               gemm_sigs[r->pick.sig].name, product_compute_words(&pp->mm, r->pick.sig),
               source_words(route_source(pp, r)),
               pp->exec == PRODUCT_TILES ? "; its rate weighs the tiles, which run their own" : "");
    }
    if (pp->n_routes == 2)
        printf("            (the bound, max|A| * max|B| * k < 2^53, is measured on the operands "
               "when it runs)\n");
    if (pp->exec == PRODUCT_TILES)
        for (int i = 0; i < pp->n_routes; i++)
            if (!pp->route[i].status)
                tiles_text(pp, &pp->route[i].tiles, pp->n_routes == 1 ? ""
                           : i == 0 ? "within the FP64 bound: " : "beyond it: ");
}

static void device_text(const struct product_plan *pp)
{
    const struct device_facts *f = &pp->facts;
    if (pp->exec == PRODUCT_EMPTY || pp->on_host)
        return;
    if (f->present)
        printf("  device    %s (%d SMs, compute capability %d.%d)", f->name, f->sm_count,
               f->cc / 10, f->cc % 10);
    else
        printf("  device    none: the model's device (%d SMs, compute capability %d.%d)",
               f->sm_count, f->cc / 10, f->cc % 10);
    if (pp->budget)
        printf(", %.2f GiB of device memory to use, the product needs %.2f GiB",
               pp->budget / 1073741824.0, pp->need / 1073741824.0);
    putchar('\n');
}

static const char *const exec_words[PRODUCT_EXEC_COUNT] = {
    "nothing to multiply: zeros (and beta * C0) on the host",
    "the host's kernel",
    "one GPU, the product in its memory",
    "tiles streamed from host memory",
    "an MPI rank's block, K in panels",
};

/* The whole job as the model sees it (src/plan/whole.h). */
static void job_text(const struct whole_job *w)
{
    printf("  job       read %.2f s", w->read);
    if (w->start > 0)
        printf(", GPUs opened %.2f s, operands locked %.2f s", w->start, w->locking);
    printf(", %s %.2f s", w->copy_out > 0 ? "product" : "tiles", w->product);
    if (w->copy_out > 0)
        printf(", C out %.2f s", w->copy_out);
    printf(", writing %s%.2f s: %.2f s whole (the H200 host's rates)\n",
           w->copy_out > 0 || w->start == 0 ? "" : "beyond the tiles ", w->write, w->total);
}

static void plan_text(const struct gc_opts *o, const struct product_plan *pp,
                      const struct gc_tensor *a, const struct gc_tensor *b)
{
    const struct matmul_plan *mm = &pp->mm;
    char sa[96], sb[96], sc[96];
    gc_shape_text(a->ndim, a->shape, sa, sizeof sa);
    gc_shape_text(b->ndim, b->shape, sb, sizeof sb);
    gc_shape_text(mm->out_ndim, mm->out_shape, sc, sizeof sc);
    printf("gemmcli mul --dry-run: %s %s @ %s %s -> %s %s\n", sa, gc_dtypes[a->dtype].name, sb,
           gc_dtypes[b->dtype].name, sc, gc_dtypes[mm->result].name);
    printf("  products  %lld of %lld x %lld x %lld, in %lld launch%s\n", (long long)mm->batch,
           (long long)mm->m, (long long)mm->n, (long long)mm->k,
           (long long)(pp->exec == PRODUCT_EMPTY ? 0 : mm->outer),
           mm->outer == 1 && pp->exec != PRODUCT_EMPTY ? "" : "es");
    printf("  executor  %s: %s\n", product_exec_names[pp->exec], exec_words[pp->exec]);
    if (pp->shared)
        printf("  share     the host's %d GPUs, auto's choice: the whole job's model finds them "
               "faster than one (--devices 0 keeps one)\n", pp->facts.n_devices);
    device_text(pp);
    if (pp->exec != PRODUCT_EMPTY)
        routes_text(pp);
    if (pp->has_job)
        job_text(&pp->job);
    printf("  output    %s: %s, %s\n", gc_display_name(o->output, 1),
           gc_formats[pp->out_format].name, gc_dtypes[pp->out_dtype].name);
    const char *note = plan_note(o, pp);
    if (note)
        printf("  note      %s\n", note);
}

int exec_print_plan(const struct gc_opts *o, const struct product_plan *pp,
                    const struct gc_tensor *a, const struct gc_tensor *b)
{
    if (o->json)
        plan_json(o, pp, a, b);
    else
        plan_text(o, pp, a, b);
    if (fflush(stdout) != 0 || ferror(stdout))
        return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return 0;
}
