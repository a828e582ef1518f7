/* The product plan (src/plan/product.c) without a GPU, from made-up device
 * facts: the executor for each budget and set of GPUs, the kernel chosen
 * once (the same as select_gemm's), a kernel planned for every tile shape
 * the tiles will run (looked up as tiled_run looks them up, on every kind
 * of GPU that shares them), the two routes of an integer product and the
 * failure of the second told only when it is taken, an MPI rank's panels
 * kept on the GPU or tiled by its budget, and a budget too small for any
 * tiles refused.  Prints 'test_plan: N passed, M failed'. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "src/plan/product.h"
#include "src/plan/select.h"
#include "tests/check.h"


static struct matmul_plan semantics(enum gc_dtype dt, size_t batch, size_t m, size_t n, size_t k)
{
    struct gc_tensor a = { 0 }, b = { 0 };
    a.dtype = b.dtype = dt;
    gc_tensor_set_stack(&a, batch, m, k);
    gc_tensor_set_stack(&b, batch, k, n);
    struct matmul_plan mm;
    int rc = matmul_plan(&a, &b, COMPUTE_AUTO, "A", "B", &mm);
    CHECK(rc == 0, "matmul_plan %zux%zux%zux%zu: status %d", batch, m, n, k, rc);
    return mm;
}

static struct product_ask ask_for(const struct matmul_plan *mm, const char *kernel)
{
    return (struct product_ask){ .kernel = kernel, .alpha = 1,
                                 .a_count = (size_t)(mm->batch * mm->m * mm->k),
                                 .b_count = (size_t)(mm->batch * mm->k * mm->n) };
}

/* An H100-like GPU with `free` bytes free, and `n` GPUs for the tiles, the
 * odd ones of compute capability 8.0. */
static struct device_facts facts_of(size_t free, int n, int mixed)
{
    struct device_facts f;
    memset(&f, 0, sizeof f);
    f.present = 1;
    snprintf(f.name, sizeof f.name, "test GPU");
    f.cc = 90;
    f.sm_count = 132;
    f.free_bytes = free;
    f.n_devices = n;
    for (int i = 0; i < n; i++)
        f.devices[i] = (struct device_fact){ i, mixed && i % 2 ? 80 : 90,
                                             mixed && i % 2 ? 108 : 132 };
    return f;
}

/* Every tile of the plan (every step of it) finds its kernel on every
 * kind of GPU that shares them, and the kernel computes that tile. */
static void check_tiles(const char *what, const struct product_plan *pp,
                        const struct product_route *r)
{
    const struct product_tiles *t = &r->tiles;
    const struct tiled_plan *tp = &t->tp;
    int missing = 0, wrong = 0;
    for (int d = 0; d < pp->facts.n_devices; d++) {
        const struct device_fact *f = &pp->facts.devices[d];
        for (int64_t i = 0; i < tp->tiles_m * tp->tiles_n; i++) {
            struct tiled_rect rect = tiled_tile(tp, i);
            for (int64_t s = 0; s < tp->steps; s++) {
                int64_t k0, kk;
                tiled_step(tp, s, &k0, &kk);
                const struct gemm_kernel *kern = NULL;
                struct gc_capture quiet;
                gc_capture_set(&quiet);
                int rc = product_tile_kernel(t, f->cc, f->sm_count, rect.rows, rect.cols, kk,
                                             &kern);
                gc_capture_set(NULL);
                if (rc) {
                    missing++;
                    continue;
                }
                struct gemm_problem p = { .sig = r->pick.sig, .m = rect.rows, .n = rect.cols,
                                          .k = kk, .batch = 1, .cc = f->cc };
                gemm_problem_dense(&p);
                char why[256];
                wrong += !gemm_can_implement(kern, &p, why, sizeof why);
            }
        }
    }
    CHECK(!missing && !wrong, "%s: %d tiles without a kernel, %d with one that cannot "
          "compute them", what, missing, wrong);
}

static void executors(void)
{
    struct matmul_plan mm = semantics(GC_F32, 1, 4096, 4096, 4096);
    struct product_ask ask = ask_for(&mm, "auto");
    struct product_plan pp;
    struct device_facts roomy = facts_of((size_t)64 << 30, 1, 0);
    CHECK(product_plan_make(&ask, &mm, &roomy, &pp) == 0 && pp.exec == PRODUCT_GPU &&
          pp.n_routes == 1 && pp.route[0].pick.kern, "4096^3 f32 in 64 GiB: one GPU (%s)",
          product_exec_names[pp.exec]);
    /* The kernel is select_gemm's, asked once. */
    enum gemm_sig sig;
    int is_auto;
    const struct gemm_kernel *k = NULL;
    select_gemm_kernel("auto", &mm, 90, 132, 1, &k, &sig, &is_auto);
    CHECK(k == pp.route[0].pick.kern && sig == pp.route[0].pick.sig && pp.is_auto,
          "the plan's kernel is auto's: %s against %s", pp.route[0].pick.kern->name, k->name);

    /* 256 MiB free, 243 MiB to use: the product's 192 MiB fit; with
     * --verify's 448 MiB more, not. */
    struct device_facts small = facts_of((size_t)256 << 20, 1, 0);
    CHECK(product_plan_make(&ask, &mm, &small, &pp) == 0 && pp.exec == PRODUCT_GPU,
          "4096^3 f32 in 256 MiB free: one GPU (%s, needs %zu)", product_exec_names[pp.exec],
          pp.need);
    ask.verify = 1;
    CHECK(product_plan_make(&ask, &mm, &small, &pp) == 0 && pp.exec == PRODUCT_TILES &&
          pp.route[0].tiles.tp.bytes <= pp.budget,
          "with --verify in 256 MiB free: tiles within the budget (%s)",
          product_exec_names[pp.exec]);
    check_tiles("4096^3 --verify", &pp, &pp.route[0]);
    ask.verify = 0;
    ask.device_memory = (size_t)64 << 20;
    CHECK(product_plan_make(&ask, &mm, &roomy, &pp) == 0 && pp.exec == PRODUCT_TILES &&
          pp.budget == ask.device_memory && pp.route[0].tiles.tp.bytes <= pp.budget,
          "--device-memory 64M: tiles in 64 MiB (%zu bytes)", pp.route[0].tiles.tp.bytes);
    check_tiles("4096^3 in 64 MiB", &pp, &pp.route[0]);

    /* A result of gigabytes bound for a file: the operands come to the host
     * and the whole job's model takes bands of whole rows with B kept,
     * written as they land; not where the file cannot take them, nor for
     * a result too small for it to pay. */
    {
        struct matmul_plan big = semantics(GC_F32, 1, 32768, 32768, 32768);
        struct device_facts h200 = facts_of((size_t)140 << 30, 1, 0);
        struct product_ask sa = ask_for(&big, "auto");
        sa.out_dtype = GC_F32;
        sa.stream_tiles = 1;
        sa.rows_out = 1;
        CHECK(product_plan_make(&sa, &big, &h200, &pp) == 0 && pp.exec == PRODUCT_TILES &&
                  pp.route[0].tiles.tp.keep_b && pp.route[0].tiles.tp.tn == 32768 &&
                  pp.has_job && pp.job.copy_out == 0,
              "32768^3 f32 to a file: tiles of whole rows, B kept (%s)",
              product_exec_names[pp.exec]);
        check_tiles("32768^3 streamed", &pp, &pp.route[0]);
        sa.rows_out = 0;
        CHECK(product_plan_make(&sa, &big, &h200, &pp) == 0 && pp.exec == PRODUCT_GPU,
              "32768^3 f32 to a pipe: in core (%s)", product_exec_names[pp.exec]);
        sa.rows_out = 1;
        sa.stream_tiles = 0;
        CHECK(product_plan_make(&sa, &big, &h200, &pp) == 0 && pp.exec == PRODUCT_GPU,
              "32768^3 f32, the operands streamed to the GPU: in core (%s)",
              product_exec_names[pp.exec]);
        struct matmul_plan mid = semantics(GC_F32, 1, 2048, 2048, 2048);
        struct product_ask ma = ask_for(&mid, "auto");
        ma.out_dtype = GC_F32;
        ma.stream_tiles = ma.rows_out = 1;
        CHECK(product_plan_make(&ma, &mid, &h200, &pp) == 0 && pp.exec == PRODUCT_GPU,
              "2048^3 f32: in core (%s)", product_exec_names[pp.exec]);

        /* A host of two such GPUs: auto shares the bands between them
         * (the job's own first), and says so; not a 2048^3 product, not
         * where the GPUs differ, not with C0, not when --devices names
         * them (share: its own plan), not without a file for the bands. */
        struct device_facts two = h200;
        two.host_gpus = 2;
        two.host[0] = (struct device_fact){ 1, 90, 132 };
        two.host[1] = (struct device_fact){ 0, 90, 132 };
        sa.stream_tiles = sa.rows_out = 1;
        CHECK(product_plan_make(&sa, &big, &two, &pp) == 0 && pp.exec == PRODUCT_TILES &&
                  pp.shared && pp.facts.n_devices == 2 && pp.facts.devices[0].ordinal == 1 &&
                  pp.facts.devices[1].ordinal == 0 && pp.route[0].tiles.tp.keep_b &&
                  pp.route[0].tiles.tp.tiles_m % 2 == 0 && pp.has_job,
              "32768^3 f32 to a file on a host of two GPUs: shared (%s, shared %d, %d GPUs)",
              product_exec_names[pp.exec], pp.shared, pp.facts.n_devices);
        check_tiles("32768^3 shared", &pp, &pp.route[0]);
        double shared_s = pp.job.total;
        CHECK(product_plan_make(&sa, &big, &h200, &pp) == 0 && !pp.shared &&
                  shared_s <= 0.9 * pp.job.total,
              "the model: %.2f s on two GPUs, %.2f s on one", shared_s, pp.job.total);
        CHECK(product_plan_make(&ma, &mid, &two, &pp) == 0 && !pp.shared &&
                  pp.exec == PRODUCT_GPU, "2048^3 f32 on two GPUs: in core on one (%s)",
              product_exec_names[pp.exec]);
        struct device_facts unlike = two;
        unlike.host[1].sm_count = 114;
        CHECK(product_plan_make(&sa, &big, &unlike, &pp) == 0 && !pp.shared,
              "GPUs of two kinds: not shared without --devices");
        sa.with_c0 = 1;
        CHECK(product_plan_make(&sa, &big, &two, &pp) == 0 && !pp.shared, "with C0: not shared");
        sa.with_c0 = 0;
        sa.rows_out = 0;
        CHECK(product_plan_make(&sa, &big, &two, &pp) == 0 && !pp.shared,
              "to a pipe: not shared");
        sa.rows_out = 1;
        sa.share = 1;
        CHECK(product_plan_make(&sa, &big, &two, &pp) == 0 && !pp.shared &&
                  pp.facts.n_devices == 1, "--devices: its own GPUs, not the host's");
    }

    /* Shared among GPUs of two kinds: each kind has its kernels. */
    ask.device_memory = 0;
    ask.share = 1;
    struct matmul_plan ragged = semantics(GC_F32, 3, 5000, 3001, 777);
    ask.a_count = 3 * 5000 * 777;
    ask.b_count = 3 * 777 * 3001;
    struct device_facts four = facts_of((size_t)64 << 30, 4, 1);
    CHECK(product_plan_make(&ask, &ragged, &four, &pp) == 0 && pp.exec == PRODUCT_TILES,
          "--devices on 4 GPUs: tiles (%s)", product_exec_names[pp.exec]);
    int kinds[2] = { 0, 0 };
    for (int i = 0; i < pp.route[0].tiles.n_kernels; i++)
        kinds[pp.route[0].tiles.kernels[i].cc == 80]++;
    CHECK(kinds[0] && kinds[1], "two kinds of GPU: %d and %d tile kernels", kinds[0], kinds[1]);
    check_tiles("a ragged stack on 4 GPUs of two kinds", &pp, &pp.route[0]);

    /* Not even 256-sided tiles: refused, saying so. */
    ask.share = 0;
    ask.device_memory = 4096;
    struct gc_capture said;
    gc_capture_set(&said);
    int rc = product_plan_make(&ask, &mm, &roomy, &pp);
    gc_capture_set(NULL);
    CHECK(rc == GC_EXIT_GPU && strstr(said.text, "too little"), "4 KiB: refused (%d)", rc);
}

static void routes(void)
{
    struct matmul_plan mm = semantics(GC_I32, 1, 300, 200, 100);
    struct product_ask ask = ask_for(&mm, "auto");
    struct device_facts f = facts_of((size_t)64 << 30, 1, 0);
    struct product_plan pp;
    const struct product_route *r = NULL;
    /* (beyond the bound: int32 from byte limbs on the int8 tensor cores,
     * which the model puts well ahead of int64 on the CUDA cores) */
    CHECK(product_plan_make(&ask, &mm, &f, &pp) == 0 && pp.n_routes == 2 &&
          pp.route[1].pick.sig == GEMM_I32 && strcmp(pp.route[1].pick.kern->name, "i8_limbs") == 0,
          "int32: two routes, the second int32 from byte limbs");
    CHECK(product_settle(&pp, 1, &r) == 0 && r == &pp.route[0] &&
          product_settle(&pp, 0, &r) == 0 && r == &pp.route[1], "settled by the bound");
    CHECK(product_f64_exact(&mm, 1u << 20, 1u << 20) && !product_f64_exact(&mm, 1u << 24, 1u << 23),
          "the FP64 bound: 2^40 * 100 within, 2^47 * 100 beyond");
    /* A kernel of FP64 alone: fine within the bound, refused beyond it,
     * and said only then. */
    ask.kernel = "f64_naive";
    struct gc_capture said;
    gc_capture_set(&said);
    int rc = product_plan_make(&ask, &mm, &f, &pp);
    gc_capture_set(NULL);
    CHECK(rc == 0 && said.len == 0 && pp.route[0].pick.sig == GEMM_F64 && pp.route[1].status,
          "f64_naive on int32: planned (%d), the second route failing, unsaid (%zu)", rc,
          said.len);
    CHECK(strstr(pp.route[1].why.text, "f64_naive") != NULL, "the second route's why: %.*s",
          (int)pp.route[1].why.len, pp.route[1].why.text);
    fprintf(stderr, "(expected next: the second route's message)\n");
    rc = product_settle(&pp, 0, &r);
    CHECK(rc == GC_EXIT_USAGE, "taking the second route fails (%d)", rc);
    /* The host kernel for --kernel cpu, whatever the device. */
    ask.kernel = "cpu";
    CHECK(product_plan_make(&ask, &mm, &f, &pp) == 0 && pp.exec == PRODUCT_HOST &&
          pp.route[1].pick.sig == GEMM_I32 && !product_needs_device(&ask, &mm),
          "--kernel cpu: the host");
    struct matmul_plan empty = semantics(GC_F32, 1, 0, 5, 5);
    ask = ask_for(&empty, "auto");
    CHECK(product_plan_make(&ask, &empty, &f, &pp) == 0 && pp.exec == PRODUCT_EMPTY &&
          !pp.route[0].pick.kern && !product_needs_device(&ask, &empty), "0x5x5: nothing to run");
}

static void panels(void)
{
    struct matmul_plan mm = semantics(GC_F32, 1, 3000, 2000, 5000);
    struct product_ask ask = ask_for(&mm, "auto");
    ask.panel_k = 1024;
    ask.n_panels = 5;
    struct device_facts roomy = facts_of((size_t)64 << 30, 1, 0);
    struct product_plan pp;
    CHECK(product_plan_make(&ask, &mm, &roomy, &pp) == 0 && pp.exec == PRODUCT_PANELS &&
          pp.route[0].resident && pp.route[0].panel_pick[0].kern && pp.route[0].panel_pick[1].kern,
          "panels with room: the block kept on the GPU");
    ask.device_memory = (size_t)16 << 20;
    CHECK(product_plan_make(&ask, &mm, &roomy, &pp) == 0 && !pp.route[0].resident &&
          pp.route[0].panel_tiles[0].n_kernels && pp.route[0].panel_tiles[2].tp.k == 5000 - 4096,
          "panels in 16 MiB: each in tiles, the last %lld wide",
          (long long)pp.route[0].panel_tiles[2].tp.k);
    ask.kernel = "cpu";
    CHECK(product_plan_make(&ask, &mm, &roomy, &pp) == 0 && pp.exec == PRODUCT_PANELS &&
          pp.on_host && pp.route[0].pick.kern == gemm_kernel_find("cpu"), "panels on the host");
}

int main(void)
{
    executors();
    routes();
    panels();
    printf("test_plan: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
