#include "src/plan/product.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/plan/model.h"
#include "src/plan/select.h"
#include "src/plan/tune_cache.h"
#include "src/plan/whole.h"

const char *const product_exec_names[PRODUCT_EXEC_COUNT] = {
    "empty", "host", "gpu", "tiles", "panels",
};

void product_facts_model(struct device_facts *f)
{
    memset(f, 0, sizeof *f);
    f->cc = 90;
    f->sm_count = auto_rate_sm_count;
}

int product_f64_exact(const struct matmul_plan *mm, uint64_t max_a, uint64_t max_b)
{
    return (long double)max_a * (long double)max_b * (long double)(mm->k ? mm->k : 1) < 0x1p53L;
}

const char *product_compute_words(const struct matmul_plan *mm, enum gemm_sig sig)
{
    if (mm->exact && mm->needs_bound)
        return sig == GEMM_F64   ? "exact: FP64, below 2^53"
               : sig == GEMM_I8  ? "exact: int32 modulo 2^32"
               : sig == GEMM_I16 ? "exact: byte limbs, modulo 2^16"
               : sig == GEMM_I32 ? "exact: byte limbs, int32 modulo 2^32"
                                 : "exact: int64 modulo 2^64";
    return gemm_sigs[sig].arith;
}

/* The one place a kernel is chosen: select_gemm's answer for the product
 * `mm` on a device of compute capability cc (0: the host) and sm_count SMs. */
static int pick(const char *name, const struct matmul_plan *mm, int cc, int sm_count,
                int f64_exact, struct product_pick *p, int *is_auto)
{
    int automatic;
    return select_gemm_kernel(name, mm, cc, sm_count, f64_exact, &p->kern, &p->sig,
                              is_auto ? is_auto : &automatic);
}

int product_check_kernel(const char *kernel, const struct matmul_plan *mm)
{
    const struct gemm_kernel *named = gemm_kernel_find(kernel);
    struct product_pick p;
    if (!named || (named->flags & KERNEL_HOST))
        return 0;
    return pick(kernel, mm, GEMM_CC_ANY, 0, 1, &p, NULL);
}

static int64_t product_count(const struct matmul_plan *mm)
{
    return mm->batch * mm->m * mm->n;
}

/* One product of m x n x k in signature `sig` alone: a tile's, or a
 * panel's. */
static struct matmul_plan shape_semantics(const struct matmul_plan *mm, enum gemm_sig sig,
                                          int64_t m, int64_t n, int64_t k, int single)
{
    struct matmul_plan sub = *mm;
    sub.m = m;
    sub.n = n;
    sub.k = k;
    if (single) {
        sub.nbatch = 0;
        sub.batch = sub.inner = sub.outer = 1;
        sub.inner_axes = 0;
    }
    sub.sigs[0] = sig;
    sub.n_sigs = 1;
    return sub;
}

/* The kernel's expected rate on the whole product, FLOP/s, from auto's
 * model (0 when it has none): what a tile plan weighs copies against. */
static double model_flops(const struct matmul_plan *mm, const struct product_pick *p, int sm)
{
    struct gemm_problem gp;
    matmul_problem(mm, p->sig, 1, 0, &gp);
    struct model_estimate e = model_estimate(p->kern, &gp, sm);
    double work = 2.0 * (double)mm->batch * (double)mm->m * (double)mm->n * (double)mm->k;
    return isfinite(e.ms) && e.ms > 0 ? work / (e.ms / 1000) : 0;
}

/* ---- tiles ---- */

/* The distinct lengths of `count` pieces of `step` covering `whole`: the
 * full one and the remainder. */
static int piece_sizes(int64_t whole, int64_t step, int64_t count, int64_t out[2])
{
    int n = 0;
    out[n++] = step < whole ? step : whole;
    int64_t last = whole - (count - 1) * step;
    if (count > 1 && last != out[0])
        out[n++] = last;
    return n;
}

/* The kernel of every tile shape of `t` on each kind of GPU in `kinds`
 * (cc 0: a GPU that did not answer, left to fail when it is opened). */
static int plan_tile_kernels(const char *name, const struct matmul_plan *mm, enum gemm_sig sig,
                             const struct device_fact *kinds, int n_kinds,
                             struct product_tiles *t)
{
    const struct tiled_plan *tp = &t->tp;
    int64_t ms[2], ns[2], ks[2];
    int nm = piece_sizes(tp->m, tp->tm, tp->tiles_m, ms);
    int nn = piece_sizes(tp->n, tp->tn, tp->tiles_n, ns);
    int nk = piece_sizes(tp->k, tp->tk, tp->steps, ks);
    t->n_kernels = 0;
    for (int d = 0; d < n_kinds; d++) {
        const struct device_fact *f = &kinds[d];
        int seen = f->cc == 0;
        for (int e = 0; e < d && !seen; e++)
            seen = kinds[e].cc == f->cc && kinds[e].sm_count == f->sm_count;
        for (int i = 0; i < nm * nn * nk && !seen; i++) {
            int64_t m = ms[i / (nn * nk)], n = ns[i / nk % nn], k = ks[i % nk];
            struct matmul_plan sub = shape_semantics(mm, sig, m, n, k, 1);
            struct product_pick p;
            int rc = pick(name, &sub, f->cc, f->sm_count, 1, &p, NULL);
            if (rc)
                return rc;
            if (t->n_kernels == PRODUCT_TILE_KERNELS)
                return gc_fail(GC_EXIT_GPU, "the GPUs that share the tiles are of more kinds "
                               "than a plan holds (%d tile kernels)", PRODUCT_TILE_KERNELS);
            t->kernels[t->n_kernels++] =
                (struct product_tile_kernel){ f->cc, f->sm_count, m, n, k, p.kern };
        }
    }
    return 0;
}

/* The tile plan for `mm` (one product of the stack, `mm->batch` alike) in
 * the pick's signature, within `budget` bytes a GPU, `devices` GPUs, with
 * an FP64 reference beside (`ref`) and C starting from its values (`c_in`),
 * and the kernel of each of its tile shapes. */
static int plan_tiles(const char *name, const struct matmul_plan *mm, const struct product_pick *p,
                      double flops, int ref, int c_in, size_t budget,
                      const struct device_fact *kinds, int n_kinds, struct product_tiles *t)
{
    const struct gemm_sig_info *si = &gemm_sigs[p->sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    /* With a reference, a block has one double copy (when the operands are
     * not doubles already) and a tile one double tile, copied out (and in,
     * with c_in) beside it: half a double an element of the double
     * buffers that tiled_bytes counts. */
    struct tiled_costs costs = {
        .in_es = in_es + (ref && si->in != GC_F64 ? sizeof(double) / 2 : 0),
        .out_es = out_es + (ref ? sizeof(double) / 2 : 0),
        .copy_in_es = in_es,
        .copy_out_es = out_es + (ref ? sizeof(double) : 0),
        .flops = flops,
        .h2d = TILED_H2D_BYTES_S,
        .d2h = TILED_D2H_BYTES_S,
        .dram = TILED_DRAM_BYTES_S,
        .step_s = TILED_STEP_S,
        .devices = n_kinds,
        .batch = mm->batch,
        .c_in = c_in,
    };
    int rc = tiled_plan_make(mm->m, mm->n, mm->k, &costs, budget, &t->tp);
    if (rc)
        return rc;
    t->traffic = tiled_traffic(&t->tp, &costs);
    t->flops = flops;
    return plan_tile_kernels(name, mm, p->sig, kinds, n_kinds, t);
}

int product_tile_kernel(const struct product_tiles *t, int cc, int sm_count, int64_t m,
                        int64_t n, int64_t k, const struct gemm_kernel **kern)
{
    for (int i = 0; i < t->n_kernels; i++) {
        const struct product_tile_kernel *e = &t->kernels[i];
        if (e->cc == cc && e->sm_count == sm_count && e->m == m && e->n == n && e->k == k) {
            *kern = e->kern;
            return 0;
        }
    }
    return gc_fail(GC_EXIT_GPU, "no kernel was planned for a %lldx%lldx%lld tile on a GPU of "
                   "compute capability %d.%d and %d SMs", (long long)m, (long long)n,
                   (long long)k, cc / 10, cc % 10, sm_count);
}

/* ---- auto's tune cache ---- */

/* The tune cache's choice for the product on the facts' device: of the
 * entries of the signatures the product may use, those whose kernel
 * exists, is one auto may pick, computes that signature and can compute
 * this product; the fastest of them.  0 when there is none. */
static int cached_pick(const struct device_facts *f, const struct matmul_plan *mm, int f64_exact,
                       struct product_pick *out)
{
    struct tune_key keys[GEMM_SIG_COUNT];
    struct tune_entry found[GEMM_SIG_COUNT];
    enum gemm_sig sigs[GEMM_SIG_COUNT];
    int n = 0, hit = 0;
    double best_ms = 0;
    for (int i = 0; i < mm->n_sigs && n < GEMM_SIG_COUNT; i++)
        if (select_sig_usable(mm, mm->sigs[i], f64_exact) &&
            tune_key_make(&keys[n], f->name, f->cc / 10, f->cc % 10, f->sm_count,
                          gemm_sigs[mm->sigs[i]].name, mm->batch, mm->m, mm->n, mm->k) == 0)
            sigs[n++] = mm->sigs[i];
    if (!n || !tune_cache_lookup_entries(keys, n, found))
        return 0;
    for (int i = 0; i < n; i++) {
        const struct gemm_kernel *k = found[i].kernel[0] ? gemm_kernel_find(found[i].kernel)
                                                         : NULL;
        if (!k || !select_auto_candidate(k->flags) || !(k->sigs & (1u << sigs[i])))
            continue;
        struct gemm_problem p;
        char why[256];
        matmul_problem(mm, sigs[i], 1, 0, &p);
        p.cc = f->cc;
        if (!gemm_can_implement(k, &p, why, sizeof why))
            continue;
        if (!hit || found[i].ms < best_ms) {
            *out = (struct product_pick){ k, sigs[i] };
            best_ms = found[i].ms;
            hit = 1;
        }
    }
    return hit;
}

/* ---- the routes ---- */

/* Device memory the product takes in one GPU: the operands and C in the
 * kernel's types, the result's dtype when C's is another, and with
 * --verify the FP64 operands and reference and the timed library's C. */
static size_t core_need(const struct product_ask *ask, const struct matmul_plan *mm,
                        const struct product_pick *p)
{
    const struct gemm_sig_info *si = &gemm_sigs[p->sig];
    size_t na = ask->a_count, nb = ask->b_count, nc = (size_t)product_count(mm);
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    size_t need = (na + nb) * in_es + nc * out_es;
    if (si->out != mm->result)
        need += nc * gc_dtypes[mm->result].size;
    if (ask->verify)
        need += (na + nb + nc) * sizeof(double) + nc * out_es;
    return need;
}

/* The GPUs that take the tiles, as kinds for plan_tile_kernels. */
static int tile_kinds(const struct product_plan *pp, struct device_fact *kinds)
{
    if (pp->facts.n_devices > 0) {
        memcpy(kinds, pp->facts.devices, sizeof kinds[0] * (size_t)pp->facts.n_devices);
        return pp->facts.n_devices;
    }
    kinds[0] = (struct device_fact){ 0, pp->facts.cc, pp->facts.sm_count };
    return 1;
}

/* The whole job's model (src/plan/whole.h) for pick p: the operands' and
 * the result's bytes, and the kernel's modelled time in core or the tile
 * plan's on `gpus` GPUs, C taken by the file as the tiles land (`rows`). */
static void job_bytes(const struct product_ask *ask, const struct product_plan *pp,
                      const struct product_pick *p, double *ab, double *c)
{
    *ab = (double)(ask->a_count + ask->b_count) * (double)gc_dtypes[gemm_sigs[p->sig].in].size;
    *c = (double)product_count(&pp->mm) * (double)gc_dtypes[ask->out_dtype].size;
}

static void job_in_core(const struct product_ask *ask, const struct product_plan *pp,
                        const struct product_pick *p, struct whole_job *w)
{
    double ab, c;
    job_bytes(ask, pp, p, &ab, &c);
    struct gemm_problem gp;
    matmul_problem(&pp->mm, p->sig, 1, 0, &gp);
    struct model_estimate e = model_estimate(p->kern, &gp, pp->facts.sm_count);
    whole_in_core(ab, c, isfinite(e.ms) ? e.ms / 1000 : 0, w);
}

static void job_in_tiles(const struct product_ask *ask, const struct product_plan *pp,
                         const struct product_pick *p, const struct tiled_plan *tp, int gpus,
                         int rows, struct whole_job *w)
{
    double ab, c;
    job_bytes(ask, pp, p, &ab, &c);
    whole_tiles(ab, c, tp->seconds, gpus, rows, w);
}

/* Whether the output takes C's rows at their offsets as tiles land: a
 * .npy or raw file (ask->rows_out) of C's own type. */
static int file_takes_rows(const struct product_ask *ask, const struct product_plan *pp,
                           enum gemm_sig sig)
{
    return ask->rows_out && !pp->mm.exact && gemm_sigs[sig].out == pp->mm.result &&
           ask->out_dtype == (int)pp->mm.result;
}

/* Route 0's whole job on `gpus` GPUs' tiles (0: in core). */
static void plan_job(const struct product_ask *ask, struct product_plan *pp,
                     const struct product_route *r, int gpus)
{
    pp->has_job = 1;
    if (!gpus) {
        job_in_core(ask, pp, &r->pick, &pp->job);
        return;
    }
    const struct tiled_plan *tp = &r->tiles.tp;
    int rows = tp->tn == tp->n && file_takes_rows(ask, pp, r->pick.sig);
    job_in_tiles(ask, pp, &r->pick, tp, gpus, rows, &pp->job);
}

/* A route of one GPU, in its memory or in tiles: the model's pick (or the
 * one named), the tune cache's in place of auto's for a product in core. */
static int route_gpu(const struct product_ask *ask, struct product_plan *pp, int f64_exact,
                     struct product_route *r)
{
    const struct device_facts *f = &pp->facts;
    int rc = r->pick.kern ? 0 : pick(ask->kernel, &pp->mm, f->cc, f->sm_count, f64_exact,
                                     &r->pick, &pp->is_auto);
    if (rc || (rc = matmul_check_scalars(&pp->mm, r->pick.sig, ask->alpha, ask->beta)))
        return rc;
    if (pp->exec == PRODUCT_TILES) {
        struct device_fact kinds[TILED_MAX_DEVICES];
        int n = tile_kinds(pp, kinds);
        /* The exact check beyond 2^53 reads the operands on the host. */
        int ref = ask->verify && !(pp->mm.exact && !f64_exact);
        int c_in = ask->with_c0 && !pp->mm.exact;
        rc = plan_tiles(ask->kernel, &pp->mm, &r->pick, model_flops(&pp->mm, &r->pick,
                        f->sm_count), ref, c_in, pp->budget, kinds, n, &r->tiles);
        if (!rc && r == &pp->route[0])
            plan_job(ask, pp, r, n);
        return rc;
    }
    if (r == &pp->route[0])
        plan_job(ask, pp, r, 0);
    if (pp->is_auto && f->present && cached_pick(f, &pp->mm, f64_exact, &r->pick))
        r->auto_source = "cache";
    else
        r->tune_now = pp->is_auto && ask->tune;
    return 0;
}

/* Device memory for the block's sum and one full panel (and their FP64
 * twins with --verify) beside the kernel's workspace. */
static size_t resident_need(const struct product_ask *ask, const struct matmul_plan *full,
                            const struct product_pick *p)
{
    const struct gemm_sig_info *si = &gemm_sigs[p->sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    size_t count = (size_t)product_count(full), rows = (size_t)(full->batch * full->m);
    size_t na = rows * (size_t)full->k, nb = (size_t)full->k * (size_t)full->n;
    int ref = ask->verify && !full->exact;
    struct gemm_problem gp;
    matmul_problem(full, p->sig, 1, 1, &gp);
    return count * out_es + (na + nb) * in_es + gemm_workspace_bytes(p->kern, &gp) +
           (ref ? (count + na + nb) * sizeof(double) : 0);
}

/* An MPI rank's block, K in panels: the full panel's kernel (integers in
 * int64: the FP64 bound would need all of A and B), and on a GPU either
 * the block kept in its memory with a kernel per panel width, or each
 * panel in tiles (the first starts from nothing, the others from the sum). */
static int route_panels(const struct product_ask *ask, struct product_plan *pp,
                        struct product_route *r)
{
    const struct device_facts *f = &pp->facts;
    int64_t kb = ask->panel_k, last = pp->mm.k - (ask->n_panels - 1) * kb;
    struct matmul_plan full = pp->mm;
    full.k = kb;
    int cc = pp->on_host ? 0 : f->cc, sm = pp->on_host ? 0 : f->sm_count;
    int rc = pick(ask->kernel, &full, cc, sm, 0, &r->pick, &pp->is_auto);
    if (rc || (rc = matmul_check_scalars(&pp->mm, r->pick.sig, ask->alpha, ask->beta)) ||
        pp->on_host)
        return rc;
    pp->need = resident_need(ask, &full, &r->pick);
    r->resident = pp->need <= pp->budget;
    if (r->resident) {
        for (int i = 0; i < 2 && !rc; i++) {
            struct matmul_plan w = shape_semantics(&pp->mm, r->pick.sig, pp->mm.m, pp->mm.n,
                                                   i ? last : kb, 0);
            rc = pick(ask->kernel, &w, cc, sm, 0, &r->panel_pick[i], NULL);
        }
        return rc;
    }
    const int64_t widths[3] = { kb, kb, last };
    struct device_fact kind = { 0, cc, sm };
    double flops = model_flops(&full, &r->pick, sm);
    for (int i = 0; i < 3 && !rc; i++) {
        struct matmul_plan w = shape_semantics(&pp->mm, r->pick.sig, pp->mm.m, pp->mm.n,
                                               widths[i], 0);
        rc = plan_tiles(ask->kernel, &w, &r->pick, flops, ask->verify && !pp->mm.exact, i > 0,
                        pp->budget, &kind, 1, &r->panel_tiles[i]);
    }
    return rc;
}

int product_needs_device(const struct product_ask *ask, const struct matmul_plan *mm)
{
    const struct gemm_kernel *named = gemm_kernel_find(ask->kernel);
    if (named && (named->flags & KERNEL_HOST))
        return 0;
    return product_count(mm) > 0 && (ask->panel_k || mm->k > 0);
}

/* Tiles for the whole job's sake: on this GPU, bands of whole rows with B
 * kept, which the file takes as they land, where the whole job's model
 * finds them at most TILES_PAY of the job in core (the product, then the
 * file). */
#define TILES_PAY 0.9

static int tiles_pay(const struct product_ask *ask, const struct product_plan *pp,
                     const struct product_pick *p)
{
    if (ask->with_c0 || !file_takes_rows(ask, pp, p->sig))
        return 0;
    struct device_fact kind = { pp->facts.n_devices > 0 ? pp->facts.devices[0].ordinal : 0,
                                pp->facts.cc, pp->facts.sm_count };
    struct product_tiles *t = malloc(sizeof *t);
    struct gc_capture quiet = { .len = 0 };
    int pays = 0;
    gc_capture_set(&quiet);
    if (t && plan_tiles(ask->kernel, &pp->mm, p, model_flops(&pp->mm, p, pp->facts.sm_count), 0,
                        0, pp->budget, &kind, 1, t) == 0 &&
        t->tp.keep_b && t->tp.tiles_m >= 2) {
        struct whole_job core, tiles;
        job_in_core(ask, pp, p, &core);
        job_in_tiles(ask, pp, p, &t->tp, 1, 1, &tiles);
        pays = tiles.total <= TILES_PAY * core.total;
    }
    gc_capture_set(NULL);
    free(t);
    return pays;
}

/* Tiles on every GPU of the host, without --devices: for a product that
 * streams its operands to the host (tiles_pay's), where the host's GPUs
 * are all of the job's own kind and the whole job's model finds them at
 * most SHARE_PAY of the job on this GPU alone (in core, or in tiles where
 * those pay).  On the two-H200 host, 32768^2 float32: two GPUs 2.19 s
 * whole against 2.53-2.62 in tiles on one (README). */
#define SHARE_PAY 0.9

static int shares_pay(const struct product_ask *ask, const struct product_plan *pp,
                      const struct product_pick *p, int tiles_one)
{
    const struct device_facts *f = &pp->facts;
    int n = f->host_gpus < TILED_MAX_DEVICES ? f->host_gpus : TILED_MAX_DEVICES;
    if (n < 2 || ask->with_c0 || !file_takes_rows(ask, pp, p->sig))
        return 0;
    for (int i = 0; i < n; i++)
        if (f->host[i].cc != f->cc || f->host[i].sm_count != f->sm_count)
            return 0;
    struct product_tiles *t = malloc(sizeof *t);
    struct gc_capture quiet = { .len = 0 };
    int pays = 0;
    gc_capture_set(&quiet);
    double flops = model_flops(&pp->mm, p, f->sm_count);
    if (t && plan_tiles(ask->kernel, &pp->mm, p, flops, 0, 0, pp->budget, f->host, n, t) == 0 &&
        t->tp.keep_b && t->tp.tiles_m >= n) {
        struct whole_job one, all;
        job_in_tiles(ask, pp, p, &t->tp, n, 1, &all);
        if (tiles_one && plan_tiles(ask->kernel, &pp->mm, p, flops, 0, 0, pp->budget, f->host,
                                    1, t) == 0)
            job_in_tiles(ask, pp, p, &t->tp, 1, 1, &one);
        else
            job_in_core(ask, pp, p, &one);
        pays = all.total <= SHARE_PAY * one.total;
    }
    gc_capture_set(NULL);
    free(t);
    return pays;
}

/* Which executor, before the routes: nothing to multiply, the host, an
 * MPI rank's panels, one GPU or tiles (the product's need against the
 * budget, with route 0's kernel). */
static int plan_exec(const struct product_ask *ask, struct product_plan *pp)
{
    const struct gemm_kernel *named = gemm_kernel_find(ask->kernel);
    int host = named && (named->flags & KERNEL_HOST);
    pp->budget = ask->device_memory ? ask->device_memory : pp->facts.free_bytes / 20 * 19;
    pp->on_host = host;
    if (ask->panel_k) {
        pp->exec = PRODUCT_PANELS;
        return 0;
    }
    if (product_count(&pp->mm) == 0 || pp->mm.k == 0) {
        pp->exec = PRODUCT_EMPTY;
        return matmul_check_scalars(&pp->mm, GEMM_F64, ask->alpha, ask->beta);
    }
    if (host) {
        pp->exec = PRODUCT_HOST;
        return 0;
    }
    /* Route 0's kernel decides: an integer product takes 8 bytes an
     * element within the FP64 bound or beyond it. */
    struct product_pick *p = &pp->route[0].pick;
    int rc = pick(ask->kernel, &pp->mm, pp->facts.cc, pp->facts.sm_count, 1, p, &pp->is_auto);
    if (rc)
        return rc;
    pp->need = core_need(ask, &pp->mm, p);
    /* Without a figure for device memory (no device, no --device-memory)
     * nothing says the product needs tiles. */
    int known = ask->device_memory || pp->facts.present;
    pp->exec = known && (ask->share || pp->need > pp->budget) ? PRODUCT_TILES : PRODUCT_GPU;
    if (pp->exec == PRODUCT_GPU && ask->stream_tiles && pp->facts.present &&
        tiles_pay(ask, pp, p))
        pp->exec = PRODUCT_TILES;
    if (ask->stream_tiles && !ask->share && pp->facts.present &&
        (pp->exec == PRODUCT_GPU || pp->exec == PRODUCT_TILES) &&
        shares_pay(ask, pp, p, pp->exec == PRODUCT_TILES)) {
        pp->exec = PRODUCT_TILES;
        pp->shared = 1;
        pp->facts.n_devices = pp->facts.host_gpus;
        memcpy(pp->facts.devices, pp->facts.host,
               sizeof pp->facts.host[0] * (size_t)pp->facts.host_gpus);
    }
    return 0;
}

static int route_host(const struct product_ask *ask, struct product_plan *pp, int f64_exact,
                      struct product_route *r)
{
    int rc = pick(ask->kernel, &pp->mm, 0, 0, f64_exact, &r->pick, &pp->is_auto);
    return rc ? rc : matmul_check_scalars(&pp->mm, r->pick.sig, ask->alpha, ask->beta);
}

/* Route i (0: within the FP64 bound) of the plan, its failure kept in the
 * route when it is the second: said only if the data takes it. */
static int plan_route(const struct product_ask *ask, struct product_plan *pp, int i)
{
    struct product_route *r = &pp->route[i];
    int f64_exact = i == 0 && !ask->panel_k;
    if (i == 1)
        gc_capture_set(&r->why);
    int rc = 0;
    if (ask->panel_k)
        rc = product_count(&pp->mm) ? route_panels(ask, pp, r) : 0;
    else if (pp->exec == PRODUCT_HOST)
        rc = route_host(ask, pp, f64_exact, r);
    else
        rc = route_gpu(ask, pp, f64_exact, r);
    if (i == 1) {
        gc_capture_set(NULL);
        r->status = rc;
        return 0;
    }
    return rc;
}

int product_plan_make(const struct product_ask *ask, const struct matmul_plan *mm,
                      const struct device_facts *facts, struct product_plan *pp)
{
    memset(pp, 0, sizeof *pp);
    pp->mm = *mm;
    pp->facts = *facts;
    pp->kernel = ask->kernel;
    pp->is_auto = strcmp(ask->kernel, "auto") == 0;
    pp->panel_k = ask->panel_k;
    pp->n_panels = ask->n_panels;
    pp->out_format = ask->out_format;
    pp->out_dtype = ask->out_dtype;
    pp->verify = ask->verify;
    int rc = plan_exec(ask, pp);
    if (rc || pp->exec == PRODUCT_EMPTY)
        return rc;
    pp->n_routes = mm->needs_bound && !ask->panel_k ? 2 : 1;
    for (int i = 0; i < pp->n_routes && !rc; i++)
        rc = plan_route(ask, pp, i);
    return rc;
}

int product_settle(const struct product_plan *pp, int f64_exact,
                   const struct product_route **route)
{
    const struct product_route *r = &pp->route[pp->n_routes == 2 && !f64_exact ? 1 : 0];
    if (r->status) {
        gc_capture_emit(&r->why);
        return r->status;
    }
    *route = r;
    return 0;
}
