#include "src/scale/dist.h"

#include <cuda_runtime.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/parallel.h"
#include "formats/format.h"
#include "src/job/io.h"
#include "src/job/output.h"
#include "src/job/report.h"
#include "src/job/result.h"
#include "src/job/verify.h"

/* What a rank finds an operand to be, as numbers all ranks exchange. */
enum { D_STATUS, D_MISSING, D_BY_OFFSET, D_FORMAT, D_DTYPE, D_NDIM, D_FORTRAN, D_SWAP, D_ROWS,
       D_COLS, D_HEADER, D_N };

/* What each rank tells the others at the end: its status, its block's
 * verification and its phases' times (doubles as their bits). */
enum { F_STATUS, F_DONE, F_EXACT, F_MAX_ABS, F_MAX_REL, F_DIFF2, F_REF2, F_SQUARE_EXP, F_NF_GOT,
       F_NF_REF, F_NF_DIFF, F_MISMATCH, F_COUNT, F_TIMED_FRO, F_TIMED_MAX_REL, F_TIMED_ACC_FRO,
       F_TIMED_ACC_MAX_REL, F_REF_MS, F_READ, F_START, F_H2D, F_KERNEL, F_D2H, F_N };

int dist_wanted(void)
{
    return cluster_launched_size() > 1;
}

int dist_begin(struct dist *d, const struct gc_opts *o, int on_host, struct gc_opts *local)
{
    memset(d, 0, sizeof *d);
    d->failed_rank = -1;
    *local = *o;
    const char *why = NULL;
    if (input_is_stdin(o->operands[0]) || input_is_stdin(o->operands[1]))
        why = "every rank reads the operands, so they must be files, not stdin";
    else if (o->c0_path)
        why = "C0 (-c, --beta) is not split among ranks";
    else if (o->tune)
        why = "--tune tunes one GPU: tune as one process, then start the job";
    else if (o->n_devices)
        why = "--devices shares one product among the GPUs of one process; under a launcher "
              "start one rank a GPU instead";
    if (why) {
        /* Every rank finds the same: rank 0 says it. */
        struct gc_capture unsaid;
        int rank = cluster_launched_rank();
        if (rank)
            gc_capture_set(&unsaid);
        gc_fail(GC_EXIT_USAGE, "mul under an MPI launcher (%d ranks): %s",
                cluster_launched_size(), why);
        gc_capture_set(NULL);
        if (rank)
            cluster_defer_to_rank_0(&unsaid);
        return GC_EXIT_USAGE;
    }
    int rc = cluster_join(&d->cl);
    if (rc)
        return rc;
    d->joined = 1;
    /* Room for what every rank tells every other, taken now: a rank that
     * could not take it later would leave the others waiting. */
    size_t per_rank = F_N > 2 * D_N ? F_N : 2 * D_N;
    if (!(d->all = calloc((size_t)d->cl.size * per_rank, sizeof *d->all)))
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    /* The ranks of a host share its cores: each takes its part unless
     * --threads says. */
    if (o->threads <= 0 && d->cl.local_size > 1) {
        int share = parallel_default_threads() / d->cl.local_size;
        local->threads = share > 0 ? share : 1;
    }
    if (!on_host && !o->device_given) {
        int count = 0;
        if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0)
            local->device = d->cl.local_rank % count;
        else
            cudaGetLastError();   /* no device: the job says so when it opens one */
    }
    return 0;
}

/* ---- reading the parts ---- */

struct dist_operand {
    const char *path, *name;
    int64_t desc[D_N];
    struct gc_tensor whole;        /* rank 0: an operand read through its format */
};

static const char *const desc_words[D_N] = {
    "status", "presence", "way of reading", "format", "dtype", "number of dimensions", "order",
    "byte order", "number of rows", "number of columns", "header length",
};

/* The operand as its format's header tells it, when it is a regular .npy
 * or raw file that each rank can read its part of; else D_BY_OFFSET 0,
 * and D_MISSING stat's errno where there is no such file here, -1 where
 * it is not a regular file. */
static int describe(const struct gc_opts *o, int index, struct dist_operand *op)
{
    struct stat st;
    if (input_stat(op->path, &st) != 0) {
        op->desc[D_MISSING] = errno ? errno : ENOENT;
        return 0;
    }
    if (!S_ISREG(st.st_mode)) {
        op->desc[D_MISSING] = -1;
        return 0;
    }
    struct gc_input in;
    int rc = input_open(&in, op->path);
    if (rc)
        return rc;
    int fmt;
    if ((rc = format_choose(&in, o->in_format, 0, &fmt))) {
        input_close(&in);
        return rc;
    }
    if (format_can(fmt, FORMAT_AT_OFFSETS)) {
        struct gc_read_opts ro = io_read_opts(o, index);
        struct gc_info info;
        memset(&info, 0, sizeof info);
        if (!(rc = gc_formats[fmt].info(&in, &ro, &info))) {
            op->desc[D_BY_OFFSET] = 1;
            op->desc[D_FORMAT] = fmt;
            op->desc[D_DTYPE] = info.dtype;
            op->desc[D_NDIM] = info.ndim;
            op->desc[D_FORTRAN] = info.fortran_order;
            op->desc[D_SWAP] = info.big_endian;
            op->desc[D_ROWS] = info.ndim == 2 ? (int64_t)info.shape[0] : 1;
            op->desc[D_COLS] = info.ndim == 2 ? (int64_t)info.shape[1]
                             : info.ndim == 1 ? (int64_t)info.shape[0] : 0;
            op->desc[D_HEADER] = (int64_t)info.header_bytes;
            /* More axes are refused by shape below; a stack's shape is not
             * kept here. */
            if (info.ndim > 2)
                op->desc[D_ROWS] = op->desc[D_COLS] = -1;
        }
    } else if (fmt < 0) {
        rc = GC_EXIT_INPUT;
    }
    input_close(&in);
    return rc;
}

/* An operand this rank cannot find (desc[D_MISSING]), said with the rank
 * (in every message's prefix), its host and the path it looked at. */
static int missing_here(const struct dist_operand *op, const char *why)
{
    char host[256] = "?", cwd[4096] = "";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    if (op->path[0] != '/' && !getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    int missing = (int)op->desc[D_MISSING];
    return gc_fail(GC_EXIT_INPUT, "%s: %s on this rank (host %s%s%s): %s", op->name,
                   missing > 0 ? strerror(missing) : "not a regular file", host,
                   cwd[0] ? ", in " : "", cwd, why);
}

/* Rank 0 reads an operand that is not split by offset whole, through its
 * format, and describes it for the others. */
static int read_whole(const struct gc_opts *o, int index, struct dist_operand *op)
{
    int fmt = -1;
    int rc = io_read_operand(o, index, op->path, NULL, &op->whole, &fmt);
    if (rc)
        return rc;
    const struct gc_tensor *t = &op->whole;
    op->desc[D_FORMAT] = fmt;
    op->desc[D_DTYPE] = t->dtype;
    op->desc[D_NDIM] = t->ndim;
    op->desc[D_FORTRAN] = gc_tensor_column_major(t);
    op->desc[D_ROWS] = t->ndim == 2 ? (int64_t)t->shape[0] : t->ndim > 2 ? -1 : 1;
    op->desc[D_COLS] = t->ndim == 2 ? (int64_t)t->shape[1] : t->ndim == 1 ? (int64_t)t->shape[0]
                     : t->ndim > 2 ? -1 : 0;
    return 0;
}

/* A part of an operand: rows [r0, r0 + nr) and columns [c0, c0 + nc) of
 * its matrix (a vector is one row). */
struct region {
    int64_t r0, nr, c0, nc;
};

/* The part as a tensor of `desc`'s dtype: a vector stays a vector, a
 * matrix part keeps the file's order when `keep_order`. */
static void region_tensor(const int64_t *desc, const struct region *g, int keep_order,
                          struct gc_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->dtype = (enum gc_dtype)desc[D_DTYPE];
    if (desc[D_NDIM] == 1) {
        t->ndim = 1;
        t->shape[0] = (size_t)g->nc;
    } else {
        gc_tensor_set_2d(t, (size_t)g->nr, (size_t)g->nc);
        t->fortran_order = keep_order && desc[D_FORTRAN];
    }
}

/* Parts of a file at their offsets: the payload as lines (rows, or
 * columns in Fortran order) of line_len elements, of which lines [l0, l0 +
 * nl) and elements [e0, e0 + ne) of each are read into, or written from,
 * `buf`, one line after another.  Several threads, one pread or pwrite a
 * line, or 4 MiB slices when the lines are whole. */
struct lines_io {
    int fd, writing;
    off_t base;               /* the payload's first byte */
    size_t es, line_len, l0, e0, ne;
    size_t slice, total;      /* whole lines: bytes a piece, bytes in all */
    unsigned char *buf;
    int status[64];           /* errno, or -1: the file ended early */
};

static int io_all(const struct lines_io *j, unsigned char *p, size_t n, off_t off)
{
    while (n) {
        ssize_t done = j->writing ? pwrite(j->fd, p, n, off) : pread(j->fd, p, n, off);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return done < 0 ? errno : j->writing ? EIO : -1;
        p += done;
        n -= (size_t)done;
        off += done;
    }
    return 0;
}

static void lines_pieces(void *arg, size_t begin, size_t end)
{
    struct lines_io *j = arg;
    int err = 0;
    for (size_t i = begin; i < end && !err; i++) {
        if (j->slice) {
            size_t off = i * j->slice, n = j->total - off < j->slice ? j->total - off : j->slice;
            err = io_all(j, j->buf + off, n, j->base + (off_t)(j->l0 * j->line_len * j->es + off));
        } else {
            err = io_all(j, j->buf + i * j->ne * j->es, j->ne * j->es,
                         j->base + (off_t)(((j->l0 + i) * j->line_len + j->e0) * j->es));
        }
    }
    if (err)
        j->status[begin % 64] = err;   /* each thread's range reports alone */
}

/* 0, an errno, or -1 when a read found the file shorter. */
static int lines_io_run(struct lines_io *j, size_t lines, int threads)
{
    size_t pieces = lines;
    if (!lines || !j->ne)
        return 0;
    if (j->ne == j->line_len) {
        j->total = lines * j->ne * j->es;
        j->slice = (size_t)4 << 20;
        pieces = (j->total + j->slice - 1) / j->slice;
    }
    /* Short lines are grouped so that each thread has work. */
    size_t grain = j->slice ? 1 : 1 + ((size_t)1 << 20) / (j->ne * j->es);
    parallel_for(threads, pieces, grain, lines_pieces, j);
    for (int i = 0; i < 64; i++)
        if (j->status[i])
            return j->status[i];
    return 0;
}

/* `t` shaped as the region, its data in `room` (large enough) or, without
 * room, newly allocated; *bytes its size.  0, or GC_EXIT_INPUT, unsaid:
 * no memory (the caller says for what). */
static int region_room(const int64_t *desc, const struct region *g, int keep_order, void *room,
                       struct gc_tensor *t, size_t *bytes)
{
    region_tensor(desc, g, keep_order, t);
    if (!gc_tensor_bytes(t, bytes))
        return GC_EXIT_INPUT;
    if (room) {
        t->data = room;
        return 0;
    }
    return gc_tensor_alloc(t, NULL) ? GC_EXIT_INPUT : 0;
}

/* The region of an operand read by offset into `t` (in `room`, or
 * allocated); `what` names it in messages ("this rank's part"). */
static int read_region(const struct gc_opts *o, const struct dist_operand *op,
                       const struct region *g, void *room, const char *what, struct gc_tensor *t)
{
    const int64_t *desc = op->desc;
    size_t bytes;
    if (region_room(desc, g, 1, room, t, &bytes))
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory for %s", op->name, what);
    if (!bytes)
        return 0;
    struct lines_io j;
    memset(&j, 0, sizeof j);
    if ((j.fd = open(op->path, O_RDONLY | O_CLOEXEC)) < 0)
        return gc_fail(GC_EXIT_INPUT, "%s: %s", op->name, strerror(errno));
    j.base = (off_t)desc[D_HEADER];
    j.es = gc_dtypes[t->dtype].size;
    j.buf = t->data;
    int colmajor = desc[D_FORTRAN] && desc[D_NDIM] == 2;
    j.line_len = (size_t)(colmajor ? desc[D_ROWS] : desc[D_COLS]);
    j.l0 = (size_t)(colmajor ? g->c0 : g->r0);
    j.e0 = (size_t)(colmajor ? g->r0 : g->c0);
    j.ne = (size_t)(colmajor ? g->nr : g->nc);
    int err = lines_io_run(&j, (size_t)(colmajor ? g->nc : g->nr), o->threads);
    close(j.fd);
    if (err)
        return gc_fail(GC_EXIT_INPUT, "%s: reading %s: %s", op->name, what,
                       err > 0 ? strerror(err) : "the file is shorter than its header says "
                       "(changed while read?)");
    if (desc[D_SWAP])
        gc_byteswap(t->data, gc_tensor_count(t), j.es);
    return 0;
}

/* The region of `w` (any order) packed in C order into `dst`. */
static void pack_region(const struct gc_tensor *w, const struct region *g, void *dst)
{
    size_t es = gc_dtypes[w->dtype].size, rows = w->ndim == 2 ? w->shape[0] : 1;
    size_t cols = w->ndim == 2 ? w->shape[1] : w->ndim == 1 ? w->shape[0] : 1;
    int colmajor = gc_tensor_column_major(w);
    const unsigned char *src = w->data;
    unsigned char *out = dst;
    for (int64_t r = 0; r < g->nr; r++) {
        size_t i = (size_t)(g->r0 + r);
        if (!colmajor) {
            memcpy(out + (size_t)r * (size_t)g->nc * es, src + (i * cols + (size_t)g->c0) * es,
                   (size_t)g->nc * es);
            continue;
        }
        for (int64_t c = 0; c < g->nc; c++)
            memcpy(out + ((size_t)r * (size_t)g->nc + (size_t)c) * es,
                   src + (((size_t)g->c0 + (size_t)c) * rows + i) * es, es);
    }
}

/* The part of operand `which` (0: A, 1: B) that rank r needs, of K's
 * columns (A) or rows (B) [k0, k0 + kn). */
static struct region region_for(const struct dist *d, int which, int r, int64_t k0, int64_t kn)
{
    struct dist_block b = dist_block_of(&d->grid, d->plan.m, d->plan.n, r);
    struct region g;
    if (which == 0)
        g = (struct region){ b.r0, b.rows, k0, kn };
    else
        g = (struct region){ k0, kn, b.c0, b.cols };
    /* A vector is one row whatever its role, and every rank needs it. */
    if (d->whole[which].ndim == 1)
        g = (struct region){ 0, 1, k0, kn };
    return g;
}

/* Rank 0 sends every other rank its part of a whole operand, of K's
 * [k0, k0 + kn); the others receive theirs (into `room`, or allocated).
 * A status goes first, so that a rank 0 that cannot pack a part fails
 * the others instead of leaving them waiting. */
static int scatter_part(struct dist *d, int which, const struct dist_operand *op, int64_t k0,
                        int64_t kn, void *room, struct gc_tensor *part)
{
    struct gc_cluster *cl = &d->cl;
    const int64_t *desc = op->desc;
    int rc = 0;
    if (cl->rank == 0) {
        struct region g = region_for(d, which, 0, k0, kn);
        size_t bytes = 0;
        if (region_room(desc, &g, 0, room, part, &bytes))
            rc = gc_fail(GC_EXIT_INPUT, "%s: out of host memory for the parts", op->name);
        else if (bytes)
            pack_region(&op->whole, &g, part->data);
        int r = 1;
        for (; r < cl->size && !rc; r++) {
            struct gc_tensor t;
            g = region_for(d, which, r, k0, kn);
            int64_t st = 0;
            if (region_room(desc, &g, 0, NULL, &t, &bytes))
                st = gc_fail(GC_EXIT_INPUT, "%s: out of host memory for rank %d's part",
                             op->name, r);
            else if (bytes)
                pack_region(&op->whole, &g, t.data);
            if (!(rc = cluster_send(cl, &st, sizeof st, r)) && !st && bytes)
                rc = cluster_send(cl, t.data, bytes, r);
            gc_tensor_free(&t);
            rc = rc ? rc : (int)st;
        }
        /* The ranks not served yet learn of the failure. */
        for (int64_t st = rc; r < cl->size; r++)
            cluster_send(cl, &st, sizeof st, r);
        return rc;
    }
    int64_t st = 0;
    if ((rc = cluster_recv(cl, &st, sizeof st, 0)))
        return rc;
    if (st)
        return (int)st;   /* rank 0 has said why */
    struct region g = region_for(d, which, cl->rank, k0, kn);
    size_t bytes = 0;
    if (region_room(desc, &g, 0, room, part, &bytes))
        rc = gc_fail(GC_EXIT_INPUT, "%s: out of host memory for this rank's part", op->name);
    /* The bytes are on their way whatever happens here: take them. */
    if (bytes) {
        void *sink = part->data ? part->data : malloc(bytes);
        int r2 = sink ? cluster_recv(cl, sink, bytes, 0) : GC_EXIT_INPUT;
        if (sink != part->data)
            free(sink);
        rc = rc ? rc : r2;
    }
    return rc;
}

/* Every rank's record of n numbers, its status first, gathered into
 * d->all; the first failing rank's status (or the failed gather's), which
 * settles the job, or 0 when all succeeded. */
static int gather_records(struct dist *d, const int64_t *mine, int n)
{
    int rc = cluster_allgather(&d->cl, mine, n, d->all);
    int first = rc ? d->cl.rank : -1;
    for (int r = 0; r < d->cl.size && first < 0; r++)
        if (d->all[(size_t)r * (size_t)n])
            first = r;
    if (first < 0)
        return 0;
    d->settled = 1;
    d->failed_rank = first;
    return rc ? rc : (int)d->all[(size_t)first * (size_t)n];
}

/* The agreement every phase ends with: each rank's status alone. */
int dist_agree(struct dist *d, int rc)
{
    int64_t mine = rc;
    return gather_records(d, &mine, 1);
}

/* ---- panels ---- */

/* What each rank tells the others for the decision on panels. */
enum { P_STATUS, P_FIXED, P_PER_K, P_BUDGET, P_N };

/* The host's physical memory in bytes; 0: unknown. */
static uint64_t host_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* The host memory this rank may use: --host-memory, else 3/4 of its
 * host's, shared among the ranks there (the rest is the system's and the
 * file cache's); unknown, it holds anything. */
static uint64_t host_budget(const struct dist *d, const struct gc_opts *o)
{
    uint64_t phys = host_physical();
    if (o->host_memory || !phys)
        return o->host_memory ? o->host_memory : INT64_MAX;
    return phys / (uint64_t)d->cl.local_size / 4 * 3;
}

/* This rank's need: its rows of A and columns of B (a vector operand is
 * one row or column) as read and converted, and with --verify widened for
 * the host's reference (long double: two copies' worth); its block, and
 * beside it, with --verify, the reference and its panel's (every panel,
 * integers too, sums into the block itself). */
static struct dist_need rank_need(const struct dist *d, const struct gc_opts *o)
{
    int64_t a_rows = d->whole[0].ndim == 1 ? 1 : d->blk.rows;
    int64_t b_cols = d->whole[1].ndim == 1 ? 1 : d->blk.cols;
    return dist_need_of(a_rows, b_cols, d->blk.rows * d->blk.cols,
                        o->verify ? 2 : 0, o->verify ? 4 : 2);
}

static int64_t at_most_int64(uint64_t x)
{
    return x > INT64_MAX ? INT64_MAX : (int64_t)x;
}

/* Bytes in words: "512 KiB", "1.5 GiB". */
static void bytes_words(uint64_t bytes, char *buf, size_t n)
{
    static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
    double x = (double)bytes;
    size_t u = 0;
    while (x >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        x /= 1024;
        u++;
    }
    snprintf(buf, n, "%.4g %s", x, units[u]);
}

/* This rank cannot hold even the narrowest panels: why, naming its budget. */
static int too_little(const struct dist *d, const struct gc_opts *o, const struct dist_need *need,
                      uint64_t budget)
{
    int64_t least = d->plan.k < DIST_PANEL_ALIGN ? d->plan.k : DIST_PANEL_ALIGN;
    char have[32], want[32], host[32];
    bytes_words(budget, have, sizeof have);
    bytes_words(need->fixed + 2 * need->per_k * (uint64_t)least, want, sizeof want);
    bytes_words(host_physical(), host, sizeof host);
    char whose[160];
    if (o->host_memory)
        snprintf(whose, sizeof whose, "--host-memory %s", have);
    else
        snprintf(whose, sizeof whose, "the host memory a rank may use here (3/4 of %s shared "
                 "by %d ranks: %s)", host, d->cl.local_size, have);
    return gc_fail(GC_EXIT_INPUT, "%s is too little for this rank's block of C (%lldx%lld) and "
                   "two panels of %lld along K of its rows of A and columns of B, which need "
                   "%s: give more, or start more ranks", whose, (long long)d->blk.rows,
                   (long long)d->blk.cols, (long long)least, want);
}

/* Every rank's need and budget, one decision for all: when any rank's
 * parts do not fit, K goes in panels of the widest width every rank can
 * hold two of, the operands are kept (`ops`' whole ones moved) for
 * reading them, and each rank's grid row and column become groups. */
static int decide_panels(struct dist *d, const struct gc_opts *o, struct dist_operand *ops)
{
    struct gc_cluster *cl = &d->cl;
    struct dist_need need = rank_need(d, o);
    uint64_t budget = host_budget(d, o);
    int64_t mine[P_N] = { 0, at_most_int64(need.fixed), at_most_int64(need.per_k),
                          at_most_int64(budget) };
    int rc = gather_records(d, mine, P_N);
    if (rc)
        return rc;
    int64_t k = d->plan.k, kb = k;
    int any = 0, short_rank = -1;
    for (int r = 0; r < cl->size; r++) {
        const int64_t *f = d->all + (size_t)r * P_N;
        struct dist_need n = { (uint64_t)f[P_FIXED], (uint64_t)f[P_PER_K] };
        int64_t w = dist_panel_width(&n, k, (uint64_t)f[P_BUDGET]);
        any |= !dist_fits_whole(&n, k, (uint64_t)f[P_BUDGET]);
        if (!w && short_rank < 0)
            short_rank = r;
        kb = w < kb ? w : kb;
    }
    if (!any || k == 0)
        return 0;
    if (short_rank >= 0) {
        /* Known alike on every rank: the first that is short says why. */
        d->settled = 1;
        d->failed_rank = short_rank;
        return cl->rank == short_rank ? too_little(d, o, &need, budget) : GC_EXIT_INPUT;
    }
    d->panels = 1;
    d->kb = kb;
    d->n_panels = dist_panel_count(k, kb);
    if ((d->sources = malloc(2 * sizeof *d->sources))) {
        memcpy(d->sources, ops, 2 * sizeof *d->sources);
        for (int i = 0; i < 2; i++)
            memset(&ops[i].whole, 0, sizeof ops[i].whole);
    } else {
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory");
    }
    int i = cl->rank / d->grid.pc, j = cl->rank % d->grid.pc;
    int r1 = cluster_split(cl, i, j, &d->row), r2 = cluster_split(cl, j, i, &d->col);
    return dist_agree(d, rc ? rc : r1 ? r1 : r2);
}

/* Step 1 of reading: what each rank finds the operands to be, every
 * rank's findings gathered (rank 0's in d->all first); rank 0 reads whole
 * the ones that are not read by offset.  A fault every rank sees alike is
 * said once, by the first. */
static int read_describe(struct dist *d, const struct gc_opts *o, const char *const *paths,
                         struct dist_operand *ops)
{
    struct gc_cluster *cl = &d->cl;
    struct gc_capture cap;
    int rc = 0;
    if (cl->rank)
        gc_capture_set(&cap);
    for (int i = 0; i < 2 && !rc; i++) {
        ops[i].path = paths[i];
        ops[i].name = gc_display_name(paths[i], 0);
        if ((rc = describe(o, i, &ops[i])) || ops[i].desc[D_BY_OFFSET] || cl->rank != 0)
            continue;
        rc = ops[i].desc[D_MISSING] > 0
                 ? missing_here(&ops[i], "rank 0's inputs decide the job, and every rank "
                                "reads the same paths")
                 : read_whole(o, i, &ops[i]);
    }
    int64_t mine[2 * D_N];
    for (int i = 0; i < 2; i++)
        memcpy(mine + i * D_N, ops[i].desc, sizeof ops[i].desc);
    mine[D_STATUS] = rc;
    int all_rc = gather_records(d, mine, 2 * D_N);
    if (cl->rank) {
        gc_capture_set(NULL);
        if (rc && d->failed_rank == cl->rank)
            gc_capture_emit(&cap);
    }
    return all_rc;
}

/* Step 2: rank 0's view is the job's; a rank that reads by offset must
 * see the same file. */
static int read_same_files(struct dist *d, const struct dist_operand *ops,
                           int64_t (*root)[D_N])
{
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++) {
        if (!ops[i].desc[D_BY_OFFSET] && !root[i][D_BY_OFFSET])
            continue;
        if (root[i][D_BY_OFFSET] && ops[i].desc[D_MISSING]) {
            rc = missing_here(&ops[i], "rank 0 finds a regular .npy or raw file there, of "
                              "which every rank reads its own part: each needs the same file "
                              "at this path");
            break;
        }
        for (int f = D_BY_OFFSET; f < D_N && !rc; f++)
            if (ops[i].desc[f] != root[i][f])
                rc = gc_fail(GC_EXIT_INPUT, "%s: this rank does not see the file rank 0 sees "
                             "(its %s differs): every rank must read the same inputs",
                             ops[i].name, desc_words[f]);
    }
    return dist_agree(d, rc);
}

/* Step 3: the whole product, planned alike on every rank (what is wrong
 * with it rank 0 says), the grid and this rank's block. */
static int read_plan_whole(struct dist *d, const struct gc_opts *o, struct dist_operand *ops,
                           int64_t (*root)[D_N])
{
    struct gc_cluster *cl = &d->cl;
    struct gc_capture cap;
    int rc = 0;
    if (cl->rank)
        gc_capture_set(&cap);
    for (int i = 0; i < 2 && !rc; i++) {
        struct gc_tensor *w = &d->whole[i];
        memset(w, 0, sizeof *w);
        w->dtype = (enum gc_dtype)root[i][D_DTYPE];
        if (root[i][D_ROWS] < 0)
            rc = gc_fail(GC_EXIT_USAGE, "%s: under an MPI launcher mul splits matrices and "
                         "vectors; a stack of more than two axes is not split (run it as one "
                         "process)", ops[i].name);
        else if (root[i][D_NDIM] == 1)
            w->ndim = 1, w->shape[0] = (size_t)root[i][D_COLS];
        else if (root[i][D_NDIM] == 2)
            gc_tensor_set_2d(w, (size_t)root[i][D_ROWS], (size_t)root[i][D_COLS]);
        else
            w->ndim = 0;
    }
    if (!rc && !(rc = matmul_plan(&d->whole[0], &d->whole[1], o->compute, ops[0].name,
                                  ops[1].name, &d->plan)))
        rc = matmul_integer_scalars(&d->plan, o->alpha_text, o->beta_text);
    gc_capture_set(NULL);
    if (rc) {
        /* Alike on every rank: no agreement needed. */
        d->settled = 1;
        d->failed_rank = 0;
        return rc;
    }
    d->grid = dist_grid_make(cl->size, d->plan.m, d->plan.n);
    d->blk = dist_block_of(&d->grid, d->plan.m, d->plan.n, cl->rank);
    d->read_as = (int)root[0][D_FORMAT];
    for (int i = 0; i < 2; i++) {
        memcpy(ops[i].desc, root[i], sizeof root[i]);
        d->by_offset[i] = root[i][D_BY_OFFSET] != 0;
    }
    return 0;
}

/* Step 5: this rank's parts, by offset or from rank 0. */
static int read_parts(struct dist *d, const struct gc_opts *o, struct dist_operand *ops,
                      struct gc_tensor *in)
{
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        struct region g = region_for(d, i, d->cl.rank, 0, d->plan.k);
        if (ops[i].desc[D_BY_OFFSET]) {
            if (!rc)
                rc = read_region(o, &ops[i], &g, NULL, "this rank's part", &in[i]);
        } else {
            /* Every rank takes part in the scatter, failed or not. */
            int r2 = scatter_part(d, i, &ops[i], 0, d->plan.k, NULL, &in[i]);
            rc = rc ? rc : r2;
        }
        gc_tensor_free(&ops[i].whole);
    }
    return dist_agree(d, rc);
}

int dist_read(struct dist *d, const struct gc_opts *o, const char *const *paths,
              struct gc_tensor *in, int *read_as)
{
    struct dist_operand ops[2];
    int64_t root[2][D_N];
    memset(ops, 0, sizeof ops);
    int rc = read_describe(d, o, paths, ops);
    if (!rc) {
        memcpy(root, d->all, sizeof root);
        rc = read_same_files(d, ops, root);
    }
    if (!rc)
        rc = read_plan_whole(d, o, ops, root);
    /* 4. Parts that some rank cannot hold: K in panels, read later. */
    if (!rc && !(rc = decide_panels(d, o, ops)) && d->panels) {
        for (int i = 0; i < 2; i++) {
            struct region g = region_for(d, i, d->cl.rank, 0, d->plan.k);
            region_tensor(root[i], &g, 1, &in[i]);
        }
        *read_as = d->read_as;
        return 0;
    }
    if (!rc && !(rc = read_parts(d, o, ops, in))) {
        *read_as = d->read_as;
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        gc_tensor_free(&ops[i].whole);
        gc_tensor_free(&in[i]);
    }
    return rc;
}

size_t dist_panel_room(const struct dist *d, int which)
{
    struct region g = region_for(d, which, d->cl.rank, 0, d->kb);
    struct gc_tensor t;
    size_t bytes = 0;
    region_tensor(d->sources[which].desc, &g, 1, &t);
    return gc_tensor_bytes(&t, &bytes) ? bytes : 0;
}

/* Panel q's part of operand `which` read by its owner in this rank's grid
 * row (A) or column (B) and broadcast there, its status first. */
static int broadcast_panel(struct dist *d, const struct gc_opts *o, int which, int64_t q,
                           void *room, struct gc_tensor *t)
{
    struct gc_cluster *cl = &d->cl;
    const struct dist_operand *op = &d->sources[which];
    int64_t k0, kn;
    dist_panel_range(d->plan.k, d->kb, q, &k0, &kn);
    struct region g = region_for(d, which, cl->rank, k0, kn);
    int owner = dist_panel_owner(&d->grid, which, q, cl->rank);
    /* The owner's rank in the group: its grid column in a row, its grid
     * row in a column. */
    int root = which == 0 ? owner % d->grid.pc : owner / d->grid.pc;
    void *group = which == 0 ? d->row : d->col;
    char what[64];
    snprintf(what, sizeof what, "panel %lld of %lld", (long long)q + 1, (long long)d->n_panels);
    size_t bytes = 0;
    region_room(op->desc, &g, 1, room, t, &bytes);   /* in the room given: cannot fail */
    int64_t st = owner == cl->rank ? read_region(o, op, &g, room, what, t) : 0;
    int rc = cluster_group_bcast(cl, group, &st, sizeof st, root);
    if (!rc && !st && bytes)
        rc = cluster_group_bcast(cl, group, t->data, bytes, root);
    /* An owner's failure is its own to report; the others go on to the
     * agreement that tells them. */
    return owner == cl->rank && st ? (int)st : rc;
}

int dist_panel(struct dist *d, const struct gc_opts *o, int64_t q, void *room_a, void *room_b,
               struct gc_tensor *a, struct gc_tensor *b)
{
    void *room[2] = { room_a, room_b };
    struct gc_tensor *part[2] = { a, b };
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        int64_t k0, kn;
        dist_panel_range(d->plan.k, d->kb, q, &k0, &kn);
        /* Every rank takes part in both transfers, failed or not. */
        int r2 = d->by_offset[i] ? broadcast_panel(d, o, i, q, room[i], part[i])
                                 : scatter_part(d, i, &d->sources[i], k0, kn, room[i], part[i]);
        rc = rc ? rc : r2;
    }
    return rc;
}

/* ---- the result ---- */

static int64_t bits(double x)
{
    int64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double dbl(int64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static void fill_record(const struct job *j, int rc, int64_t *f)
{
    const struct gc_verify_result *v = &j->rep.verify;
    const struct gc_report *r = &j->rep;
    memset(f, 0, F_N * sizeof *f);
    f[F_STATUS] = rc;
    f[F_DONE] = v->done && v->reference && strncmp(v->reference, "none", 4) != 0;
    f[F_EXACT] = v->exact;
    f[F_MAX_ABS] = bits(v->max_abs);
    f[F_MAX_REL] = bits(v->max_rel);
    f[F_DIFF2] = bits(v->diff2);
    f[F_REF2] = bits(v->ref2);
    f[F_SQUARE_EXP] = v->square_exp;
    f[F_NF_GOT] = (int64_t)v->nonfinite_got;
    f[F_NF_REF] = (int64_t)v->nonfinite_ref;
    f[F_NF_DIFF] = (int64_t)v->nonfinite_diff;
    f[F_MISMATCH] = (int64_t)v->mismatches;
    f[F_COUNT] = (int64_t)v->count;
    f[F_TIMED_FRO] = bits(v->timed ? v->timed_rel_fro : -1);
    f[F_TIMED_MAX_REL] = bits(v->timed ? v->timed_max_rel : -1);
    f[F_TIMED_ACC_FRO] = bits(v->timed_acc_dtype ? v->timed_acc_rel_fro : -1);
    f[F_TIMED_ACC_MAX_REL] = bits(v->timed_acc_dtype ? v->timed_acc_max_rel : -1);
    f[F_REF_MS] = bits(v->ref_ms);
    f[F_READ] = bits(r->read_ms);
    f[F_START] = bits(r->start_ms);
    f[F_H2D] = bits(r->h2d_ms);
    f[F_KERNEL] = bits(r->kernel_ms);
    f[F_D2H] = bits(r->d2h_ms);
}

static double most(const int64_t *all, int size, int field)
{
    double m = dbl(all[field]);
    for (int r = 1; r < size; r++)
        if (dbl(all[r * F_N + field]) > m)
            m = dbl(all[r * F_N + field]);
    return m;
}

/* Rank 0's report: the whole product's shapes and work, the slowest
 * rank's phases, the verification of all blocks as one. */
static void merge_report(const struct dist *d, struct job *j, const int64_t *all)
{
    struct gc_report *rep = &j->rep;
    int size = d->cl.size, slowest = 0;
    report_shape(&rep->shape_a, d->whole[0].ndim, d->whole[0].shape);
    report_shape(&rep->shape_b, d->whole[1].ndim, d->whole[1].shape);
    report_shape(&rep->shape_out, d->plan.out_ndim, d->plan.out_shape);
    rep->m = (size_t)d->plan.m;
    rep->n = (size_t)d->plan.n;
    rep->k = (size_t)d->plan.k;
    rep->batch = 1;
    rep->work = 2.0 * (double)d->plan.m * (double)d->plan.n * (double)d->plan.k;
    rep->read_ms = most(all, size, F_READ);
    rep->start_ms = most(all, size, F_START);
    rep->h2d_ms = most(all, size, F_H2D);
    rep->kernel_ms = most(all, size, F_KERNEL);
    rep->d2h_ms = most(all, size, F_D2H);
    for (int r = 1; r < size; r++)
        if (dbl(all[r * F_N + F_KERNEL]) > dbl(all[slowest * F_N + F_KERNEL]))
            slowest = r;
    snprintf(rep->ranks, sizeof rep->ranks, "%d in a %dx%d grid, each its block of C; the "
             "times are the slowest rank's (kernel: rank %d)", size, d->grid.pr, d->grid.pc,
             slowest);
    struct gc_verify_result *v = &rep->verify;
    int done = 0;
    double diff2 = 0, ref2 = 0;
    int square_exp = 0;
    size_t nf_got = 0, nf_ref = 0, nf_diff = 0, mismatches = 0, count = 0;
    double max_abs = 0, max_rel = 0, ref_ms = 0, timed_fro = -1, timed_max_rel = -1;
    double acc_fro = -1, acc_max_rel = -1;
    for (int r = 0; r < size; r++) {
        const int64_t *f = all + r * F_N;
        if (!f[F_DONE])
            continue;
        done = 1;
        verify_add_squares(&diff2, &ref2, &square_exp, dbl(f[F_DIFF2]), dbl(f[F_REF2]),
                           (int)f[F_SQUARE_EXP]);
        max_abs = fmax(max_abs, dbl(f[F_MAX_ABS]));
        max_rel = fmax(max_rel, dbl(f[F_MAX_REL]));
        nf_got += (size_t)f[F_NF_GOT];
        nf_ref += (size_t)f[F_NF_REF];
        nf_diff += (size_t)f[F_NF_DIFF];
        mismatches += (size_t)f[F_MISMATCH];
        count += (size_t)f[F_COUNT];
        ref_ms = fmax(ref_ms, dbl(f[F_REF_MS]));
        timed_fro = fmax(timed_fro, dbl(f[F_TIMED_FRO]));
        timed_max_rel = fmax(timed_max_rel, dbl(f[F_TIMED_MAX_REL]));
        acc_fro = fmax(acc_fro, dbl(f[F_TIMED_ACC_FRO]));
        acc_max_rel = fmax(acc_max_rel, dbl(f[F_TIMED_ACC_MAX_REL]));
    }
    if (!v->done || !done)
        return;
    v->count = count;
    if (v->exact) {
        v->mismatches = mismatches;
        v->ok = mismatches == 0;
        return;
    }
    v->square_exp = square_exp;
    verify_settle_float(v, max_abs, max_rel, diff2, ref2, nf_got, nf_ref, nf_diff);
    v->ref_ms = ref_ms;
    v->timed_rel_fro = timed_fro;     /* the worst block's */
    v->timed_max_rel = timed_max_rel;
    v->timed_acc_rel_fro = acc_fro;
    v->timed_acc_max_rel = acc_max_rel;
}

/* This rank's block of C into the file at its offsets (C's rows, each
 * the block's columns). */
static int write_block(const struct dist *d, const struct gc_opts *o, int fd, off_t base,
                       const struct gc_tensor *block, const char *name)
{
    struct lines_io j;
    memset(&j, 0, sizeof j);
    j.fd = fd;
    j.writing = 1;
    j.base = base;
    j.buf = block->data;
    j.es = gc_dtypes[block->dtype].size;
    j.line_len = (size_t)d->plan.n;
    j.l0 = (size_t)d->blk.r0;
    j.e0 = (size_t)d->blk.c0;
    j.ne = (size_t)d->blk.cols;
    int err = lines_io_run(&j, (size_t)d->blk.rows, o->threads);
    if (err)
        return gc_fail(GC_EXIT_OUTPUT, "%s: writing rank %d's block: %s", name, d->cl.rank,
                       strerror(err));
    return 0;
}

/* What rank 0 tells the others before the blocks move. */
enum { W_STATUS, W_MODE, W_HEADER, W_PATH, W_N };
enum { MODE_OFFSETS = 1, MODE_GATHER = 2 };

/* Rank 0: the output begun, and for offsets its header written and its
 * length set; for gathering, the whole result allocated. */
static int begin_output(struct dist *d, struct job *j, enum gc_dtype dtype, int64_t *w,
                        struct gc_tensor *whole, void **scratch)
{
    const struct gc_opts *o = j->o;
    if (output_is_stdout(o->output) && io_format_is_binary(j->fmt) && isatty(STDOUT_FILENO))
        return gc_fail(GC_EXIT_USAGE, "<stdout>: a launcher passes standard output on through a "
                       "terminal, which binary data must not cross: write %s to a file (-o "
                       "FILE), or write CSV (--format csv)", gc_formats[j->fmt].name);
    memset(whole, 0, sizeof *whole);
    whole->ndim = d->plan.out_ndim;
    memcpy(whole->shape, d->plan.out_shape, sizeof whole->shape);
    whole->dtype = dtype;
    /* The other ranks open the file by its name. */
    int at_offsets, rc = result_open_rows(j, whole, OUTPUT_NAMED, &at_offsets);
    if (rc)
        return rc;
    if (at_offsets) {
        w[W_MODE] = MODE_OFFSETS;
        w[W_HEADER] = j->at.payload;
        w[W_PATH] = (int64_t)strlen(j->out.file.tmp_path) + 1;
        return 0;
    }
    w[W_MODE] = MODE_GATHER;
    /* The largest block of another rank, for receiving it. */
    size_t most_bytes = 1;
    for (int r = 1; r < d->cl.size; r++) {
        struct dist_block b = dist_block_of(&d->grid, d->plan.m, d->plan.n, r);
        size_t n = (size_t)b.rows * (size_t)b.cols * gc_dtypes[dtype].size;
        most_bytes = n > most_bytes ? n : most_bytes;
    }
    if (gc_tensor_alloc(whole, NULL) || !(*scratch = malloc(most_bytes)))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the whole result on rank 0");
    return 0;
}

/* Gathering: every rank's block to rank 0, into `whole`, through
 * `scratch` (room for the largest). */
static int gather(struct dist *d, const struct gc_tensor *block, struct gc_tensor *whole,
                  unsigned char *scratch)
{
    struct gc_cluster *cl = &d->cl;
    size_t es = gc_dtypes[block->dtype].size;
    if (cl->rank) {
        size_t bytes = (size_t)d->blk.rows * (size_t)d->blk.cols * es;
        return bytes ? cluster_send(cl, block->data, bytes, 0) : 0;
    }
    size_t n = (size_t)d->plan.n;
    for (int r = 0; r < cl->size; r++) {
        struct dist_block b = dist_block_of(&d->grid, d->plan.m, d->plan.n, r);
        size_t bytes = (size_t)b.rows * (size_t)b.cols * es;
        if (!bytes)
            continue;
        const unsigned char *src = block->data;
        if (r) {
            int rc = cluster_recv(cl, scratch, bytes, r);
            if (rc)
                return rc;
            src = scratch;
        }
        for (int64_t i = 0; i < b.rows; i++)
            memcpy((unsigned char *)whole->data + (((size_t)(b.r0 + i)) * n + (size_t)b.c0) * es,
                   src + (size_t)i * (size_t)b.cols * es, (size_t)b.cols * es);
    }
    return 0;
}

int dist_finish(struct dist *d, struct job *j, struct gc_tensor *result, enum gc_dtype dtype)
{
    struct gc_cluster *cl = &d->cl;
    const struct gc_opts *o = j->o;
    int rc = io_to_c_order(result, dtype);
    int64_t mine[F_N];
    fill_record(j, rc, mine);
    /* 1. Every rank's outcome and figures. */
    if ((rc = gather_records(d, mine, F_N)))
        return rc;
    if (cl->rank == 0)
        merge_report(d, j, d->all);
    /* 2. A verification that failed anywhere writes nothing. */
    int verify_ok = 1;
    if (cl->rank == 0 && o->verify && j->rep.verify.done)
        verify_ok = j->rep.verify.ok;
    int64_t w[W_N] = { 0 };
    struct gc_tensor whole;
    memset(&whole, 0, sizeof whole);
    void *scratch = NULL;
    double t0 = now_ms();
    if (cl->rank == 0) {
        if (!verify_ok) {
            w[W_STATUS] = result_refused(j);
        } else {
            progress_phase(&j->progress, "writing %s", gc_display_name(o->output, 1));
            w[W_STATUS] = begin_output(d, j, dtype, w, &whole, &scratch);
        }
    }
    /* 3. Rank 0's word: how the blocks go out, or that nothing does. */
    char *path = NULL;
    if ((rc = cluster_bcast(cl, w, sizeof w, 0)) == 0 && w[W_STATUS] == 0 &&
        w[W_MODE] == MODE_OFFSETS) {
        path = malloc((size_t)w[W_PATH]);
        if (cl->rank == 0 && path)
            memcpy(path, j->out.file.tmp_path, (size_t)w[W_PATH]);
        /* A rank without room for the name still takes part. */
        char small[1];
        rc = cluster_bcast(cl, path ? path : small, path ? (size_t)w[W_PATH] : 0, 0);
        if (!path && !rc)
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory");
    }
    if (rc || w[W_STATUS]) {
        free(path);
        free(scratch);
        gc_tensor_free(&whole);
        d->settled = 1;
        d->failed_rank = rc ? cl->rank : 0;
        return rc ? rc : (int)w[W_STATUS];
    }
    /* 4. The blocks: at their offsets in the one file, or to rank 0. */
    if (w[W_MODE] == MODE_OFFSETS) {
        int fd = cl->rank == 0 ? fileno(j->out.f) : path ? open(path, O_RDWR | O_CLOEXEC) : -1;
        if (path && fd < 0)
            rc = gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(errno));
        if (!rc)
            rc = write_block(d, o, fd, (off_t)w[W_HEADER], result,
                             gc_display_name(o->output, 1));
        if (cl->rank && fd >= 0 && close(fd) != 0 && !rc)
            rc = gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, strerror(errno));
    } else {
        rc = gather(d, result, &whole, scratch);
        if (!rc && cl->rank == 0)
            rc = result_write(j, &whole, dtype);
    }
    free(path);
    free(scratch);
    gc_tensor_free(&whole);
    if ((rc = dist_agree(d, rc)))
        return rc;
    /* 5. Every block is written: rank 0 reports and renames, once. */
    int64_t done = 0;
    if (cl->rank == 0) {
        j->rep.write_ms = now_ms() - t0;
        done = result_commit(j);
    }
    int brc = cluster_bcast(cl, &done, sizeof done, 0);
    d->settled = 1;
    d->failed_rank = done ? 0 : -1;
    return brc ? brc : (int)done;
}

int dist_end(struct dist *d, int rc)
{
    if (!d->joined)
        return rc;
    if (!d->settled && d->all) {
        /* This rank failed before dist_finish: the others learn it in the
         * exchange they are waiting in. */
        int64_t mine[F_N];
        memset(mine, 0, sizeof mine);
        mine[F_STATUS] = rc ? rc : GC_EXIT_GPU;
        int agreed = gather_records(d, mine, F_N);
        rc = rc ? rc : agreed;
    }
    if (rc && d->cl.rank == 0 && d->failed_rank > 0)
        gc_fail(rc, "rank %d of %d failed (its own message says why): nothing written",
                d->failed_rank, d->cl.size);
    cluster_group_free(&d->cl, &d->row);
    cluster_group_free(&d->cl, &d->col);
    cluster_leave(&d->cl);
    for (int i = 0; d->sources && i < 2; i++)
        gc_tensor_free(&d->sources[i].whole);
    free(d->sources);
    d->sources = NULL;
    free(d->all);
    d->all = NULL;
    return rc;
}
