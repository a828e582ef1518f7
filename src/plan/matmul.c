#include "src/plan/matmul.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

const char *const matmul_compute_names[COMPUTE_COUNT] = { "auto", "fp32", "fp64", "exact", "f16",
                                                          "bf16", "tf32", "tf32x3", "ozaki",
                                                          "ozaki32" };

int matmul_compute_parse(const char *s)
{
    for (int i = 0; i < COMPUTE_COUNT; i++)
        if (strcmp(s, matmul_compute_names[i]) == 0)
            return i;
    return -1;
}

/* A 1-D operand as the matrix it stands for: A (k,) is 1 x k, B (k,) is
 * k x 1.  Fills rows, cols and the batch axes (all but the last two). */
struct operand_view {
    size_t rows, cols;
    int nbatch;
    const size_t *bshape;
};

static void view_of(const struct gc_tensor *t, int is_b, struct operand_view *v)
{
    if (t->ndim == 1) {
        v->rows = is_b ? t->shape[0] : 1;
        v->cols = is_b ? 1 : t->shape[0];
        v->nbatch = 0;
    } else {
        v->rows = t->shape[t->ndim - 2];
        v->cols = t->shape[t->ndim - 1];
        v->nbatch = t->ndim - 2;
    }
    v->bshape = t->shape;
}

static void shape_text(const struct gc_tensor *t, char *buf, size_t n)
{
    gc_shape_text(t->ndim, t->shape, buf, n);
}

/* Each operand's stride along the broadcast axes, in elements: 0 where it
 * has no such axis or a size-1 one. */
static void batch_strides(const struct operand_view *v, int nbatch, size_t matrix,
                          int64_t *stride)
{
    int64_t s = (int64_t)matrix;
    for (int d = nbatch - 1; d >= 0; d--) {
        int own = d - (nbatch - v->nbatch);
        size_t size = own >= 0 ? v->bshape[own] : 1;
        stride[d] = size == 1 ? 0 : s;
        s *= (int64_t)size;
    }
}

/* 1 when every value of dtype `t` is a value of the 16-bit float `h`:
 * itself, bool, and 8-bit integers (at most 255 in magnitude). */
static int fits_16bit(enum gc_dtype t, enum gc_dtype h)
{
    return t == h || t == GC_BOOL || t == GC_I8 || t == GC_U8;
}

/* 1 when every value of integer dtype `t` is a value of the signed
 * integer of `bytes` bytes. */
static int fits_int(enum gc_dtype t, size_t bytes)
{
    if (t == GC_BOOL)
        return 1;
    if (!gc_dtype_is_integral(t))
        return 0;
    size_t size = gc_dtypes[t].size;
    return gc_dtypes[t].kind == GC_KIND_INT ? size <= bytes : size < bytes;
}

/* The signatures, preferred first, for the result dtype and the mode. */
static int choose_sigs(struct matmul_plan *p, enum gc_dtype a, enum gc_dtype b, int compute,
                       const char *a_name, const char *b_name)
{
    int integral = gc_dtype_is_integral(p->result);
    p->n_sigs = 0;
    p->exact = integral;
    if (compute == COMPUTE_AUTO)
        compute = integral ? COMPUTE_EXACT
                : p->result == GC_F64 ? COMPUTE_FP64 : COMPUTE_FP32;
    if (integral && compute != COMPUTE_EXACT && compute != COMPUTE_FP64)
        return gc_fail(GC_EXIT_USAGE, "%s, %s: an integer product (%s) is computed exactly "
                       "(--compute exact, or fp64); for %s arithmetic, convert the operands to "
                       "floats first", a_name, b_name, gc_dtypes[p->result].numpy_name,
                       matmul_compute_names[compute]);
    switch (compute) {
    case COMPUTE_EXACT:
        if (!integral)
            return gc_fail(GC_EXIT_USAGE, "%s, %s: --compute exact is for integer data; this "
                           "product is %s", a_name, b_name, gc_dtypes[p->result].numpy_name);
        /* A result of W <= 32 bits needs the sums modulo 2^W alone: int8
         * products (int32 sums modulo 2^32) where both operands are int8
         * values, else byte limbs of int16 (W <= 16: sums modulo 2^16) or
         * int32 operands (kernels/igemm/igemm_04_limbs.cu), where their
         * values fit. */
        if (fits_int(a, 1) && fits_int(b, 1) && gc_dtypes[p->result].size <= 4)
            p->sigs[p->n_sigs++] = GEMM_I8;
        else if (fits_int(a, 2) && fits_int(b, 2) && gc_dtypes[p->result].size <= 2)
            p->sigs[p->n_sigs++] = GEMM_I16;
        else if (fits_int(a, 4) && fits_int(b, 4) && gc_dtypes[p->result].size <= 4)
            p->sigs[p->n_sigs++] = GEMM_I32;
        /* FP64 is exact while max|a| * max|b| * k < 2^53, which is checked
         * on the data; int64 always is. */
        p->sigs[p->n_sigs++] = GEMM_F64;
        p->sigs[p->n_sigs++] = GEMM_I64;
        p->needs_bound = 1;
        break;
    case COMPUTE_FP64:
        p->sigs[p->n_sigs++] = GEMM_F64;
        break;
    case COMPUTE_FP32:
        /* 16-bit operands that are exact as they are: the 16-bit kernels
         * accumulate in FP32 too, and they come first. */
        if (fits_16bit(a, GC_F16) && fits_16bit(b, GC_F16) && (a == GC_F16 || b == GC_F16))
            p->sigs[p->n_sigs++] = GEMM_F16;
        if (fits_16bit(a, GC_BF16) && fits_16bit(b, GC_BF16) && (a == GC_BF16 || b == GC_BF16))
            p->sigs[p->n_sigs++] = GEMM_BF16;
        p->sigs[p->n_sigs++] = GEMM_F32;
        break;
    case COMPUTE_F16:
        /* Operands rounded to float16 when they are wider: asked for. */
        p->sigs[p->n_sigs++] = GEMM_F16;
        break;
    case COMPUTE_BF16:
        p->sigs[p->n_sigs++] = GEMM_BF16;
        break;
    case COMPUTE_TF32:
        /* Float operands rounded to TF32 on the tensor cores: asked for. */
        p->sigs[p->n_sigs++] = GEMM_TF32;
        break;
    case COMPUTE_TF32X3:
        p->sigs[p->n_sigs++] = GEMM_TF32X3;
        break;
    case COMPUTE_OZAKI:
        /* FP64 from int8 products: asked for (kernels/reference/ozaki_cpu.c). */
        p->sigs[p->n_sigs++] = GEMM_OZAKI;
        break;
    case COMPUTE_OZAKI32:
        /* FP32-class from fewer int8 products, on float operands: asked for. */
        p->sigs[p->n_sigs++] = GEMM_OZAKI32;
        break;
    }
    return 0;
}

int matmul_plan(const struct gc_tensor *a, const struct gc_tensor *b, int compute,
                const char *a_name, const char *b_name, struct matmul_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    char sa[512], sb[512];
    shape_text(a, sa, sizeof sa);
    shape_text(b, sb, sizeof sb);
    if (a->ndim < 1 || b->ndim < 1)
        return gc_fail(GC_EXIT_INPUT, "%s: matmul: input operand %d does not have enough "
                       "dimensions (has 0, needs at least 1): a 0-d array is a scalar, which "
                       "NumPy's matmul refuses too", a->ndim < 1 ? a_name : b_name,
                       a->ndim < 1 ? 0 : 1);
    struct operand_view va, vb;
    view_of(a, 0, &va);
    view_of(b, 1, &vb);
    if (va.cols != vb.rows)
        return gc_fail(GC_EXIT_INPUT, "%s, %s: inner dimensions differ: A is %s, B is %s (A's "
                       "last axis has %zu, B's %s %zu)", a_name, b_name, sa, sb, va.cols,
                       b->ndim == 1 ? "only axis" : "second-to-last", vb.rows);
    plan->m = (int64_t)va.rows;
    plan->k = (int64_t)va.cols;
    plan->n = (int64_t)vb.cols;
    plan->a_dtype = a->dtype;
    plan->b_dtype = b->dtype;
    plan->a_count = gc_tensor_count(a);
    plan->b_count = gc_tensor_count(b);

    /* Broadcast the stacks, right-aligned. */
    int nbatch = va.nbatch > vb.nbatch ? va.nbatch : vb.nbatch;
    plan->nbatch = nbatch;
    for (int d = 0; d < nbatch; d++) {
        int da = d - (nbatch - va.nbatch), db = d - (nbatch - vb.nbatch);
        size_t x = da >= 0 ? va.bshape[da] : 1, y = db >= 0 ? vb.bshape[db] : 1;
        if (x != y && x != 1 && y != 1)
            return gc_fail(GC_EXIT_INPUT, "%s, %s: the stacks of shapes %s and %s do not "
                           "broadcast (%zu against %zu)", a_name, b_name, sa, sb, x, y);
        plan->bshape[d] = x == 1 ? y : x;
    }
    batch_strides(&va, nbatch, va.rows * va.cols, plan->a_stride);
    batch_strides(&vb, nbatch, vb.rows * vb.cols, plan->b_stride);

    /* NumPy's result shape: the stack, then m and n unless an operand was
     * 1-D. */
    plan->out_ndim = 0;
    for (int d = 0; d < nbatch; d++)
        plan->out_shape[plan->out_ndim++] = plan->bshape[d];
    if (a->ndim > 1)
        plan->out_shape[plan->out_ndim++] = va.rows;
    if (b->ndim > 1)
        plan->out_shape[plan->out_ndim++] = vb.cols;
    size_t count;
    if (!gc_shape_count(plan->out_ndim, plan->out_shape, &count) ||
        !gc_shape_count(nbatch, plan->bshape, &count))
        return gc_fail(GC_EXIT_INPUT, "%s, %s: the product of %s and %s is too large", a_name,
                       b_name, sa, sb);
    plan->batch = (int64_t)count;

    /* Launches: merge inner axes while each operand's strides stay one
     * arithmetic sequence across them. */
    int inner = 0, started = 0;
    int64_t n_inner = 1, sa_i = 0, sb_i = 0;
    for (int d = nbatch - 1; d >= 0; d--, inner++) {
        int64_t size = (int64_t)plan->bshape[d];
        if (size == 1)
            continue;
        if (!started) {
            started = 1;
            sa_i = plan->a_stride[d];
            sb_i = plan->b_stride[d];
        } else if (plan->a_stride[d] != sa_i * n_inner || plan->b_stride[d] != sb_i * n_inner) {
            break;
        }
        n_inner *= size;
    }
    plan->inner_axes = inner;
    plan->inner = n_inner;
    plan->inner_sa = sa_i;
    plan->inner_sb = sb_i;
    plan->outer = n_inner ? plan->batch / n_inner : 0;

    plan->result = gc_result_type(a->dtype, b->dtype);
    plan->alpha_i = 1;
    return choose_sigs(plan, a->dtype, b->dtype, compute, a_name, b_name);
}

void matmul_launch_offsets(const struct matmul_plan *plan, int64_t i, int64_t *a, int64_t *b,
                           int64_t *c)
{
    *a = *b = 0;
    *c = i * plan->inner * plan->m * plan->n;
    int outer_axes = plan->nbatch - plan->inner_axes;
    for (int d = outer_axes - 1; d >= 0; d--) {
        int64_t size = (int64_t)plan->bshape[d];
        int64_t idx = i % size;
        i /= size;
        *a += idx * plan->a_stride[d];
        *b += idx * plan->b_stride[d];
    }
}

void matmul_problem(const struct matmul_plan *plan, enum gemm_sig sig, double alpha,
                    double beta, struct gemm_problem *p)
{
    memset(p, 0, sizeof *p);
    p->sig = sig;
    p->m = plan->m;
    p->n = plan->n;
    p->k = plan->k;
    p->batch = plan->inner;
    gemm_problem_dense(p);
    p->stride_a = plan->inner_sa;
    p->stride_b = plan->inner_sb;
    p->alpha = alpha;
    p->beta = beta;
}

int matmul_c0_check(const struct matmul_plan *plan, const struct gc_tensor *c0,
                    const char *c0_name)
{
    int fits = c0->ndim <= plan->out_ndim;
    for (int d = 0; fits && d < c0->ndim; d++) {
        size_t x = c0->shape[c0->ndim - 1 - d];
        size_t y = plan->out_shape[plan->out_ndim - 1 - d];
        fits = x == y || x == 1;
    }
    if (fits)
        return 0;
    char s[512], r[512];
    shape_text(c0, s, sizeof s);
    struct gc_tensor shape = { .ndim = plan->out_ndim };
    memcpy(shape.shape, plan->out_shape, sizeof plan->out_shape);
    shape_text(&shape, r, sizeof r);
    return gc_fail(GC_EXIT_INPUT, "%s: C0 of shape %s does not broadcast to the product's "
                   "shape %s", c0_name, s, r);
}

int matmul_c0_expand(const struct matmul_plan *plan, const struct gc_tensor *c0,
                     struct gc_tensor *out)
{
    struct gc_tensor conv;
    if (gc_tensor_convert(c0, plan->result, NULL, &conv) != 0)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for C0");
    int same = c0->ndim == plan->out_ndim &&
               memcmp(c0->shape, plan->out_shape, sizeof(size_t) * (size_t)c0->ndim) == 0;
    if (same) {
        *out = conv;
        return 0;
    }
    struct gc_tensor full;
    memset(&full, 0, sizeof full);
    full.ndim = plan->out_ndim;
    memcpy(full.shape, plan->out_shape, sizeof plan->out_shape);
    full.dtype = plan->result;
    if (gc_tensor_alloc(&full, NULL) != 0) {
        gc_tensor_free(&conv);
        return gc_fail(GC_EXIT_INPUT, "out of host memory for C0");
    }
    /* Each element of the full shape reads C0 at its broadcast index. */
    size_t n = gc_tensor_count(&full), es = gc_dtypes[full.dtype].size;
    size_t idx[GC_MAX_DIMS] = { 0 }, stride[GC_MAX_DIMS];
    int off = full.ndim - conv.ndim;
    size_t s = 1;
    for (int d = conv.ndim - 1; d >= 0; d--) {
        stride[d] = conv.shape[d] == 1 ? 0 : s;
        s *= conv.shape[d];
    }
    for (size_t i = 0; i < n; i++) {
        size_t at = 0;
        for (int d = 0; d < conv.ndim; d++)
            at += idx[off + d] * stride[d];
        memcpy((char *)full.data + i * es, (const char *)conv.data + at * es, es);
        for (int d = full.ndim - 1; d >= 0 && ++idx[d] == full.shape[d]; d--)
            idx[d] = 0;
    }
    gc_tensor_free(&conv);
    *out = full;
    return 0;
}

/* The range of an integer dtype, as the magnitudes of its ends: from
 * -*lo_mag to *hi (unsigned and bool: *lo_mag 0). */
static void integer_range(enum gc_dtype t, uint64_t *lo_mag, uint64_t *hi)
{
    unsigned bits = (unsigned)(8 * gc_dtypes[t].size);
    if (t == GC_BOOL) {
        *lo_mag = 0;
        *hi = 1;
    } else if (gc_dtypes[t].kind == GC_KIND_UINT) {
        *lo_mag = 0;
        *hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    } else {
        *lo_mag = (uint64_t)1 << (bits - 1);
        *hi = *lo_mag - 1;
    }
}

/* `text` (--alpha or --beta as given) as an integer of dtype t, exactly,
 * into *out as its 64-bit pattern. */
static int integer_scalar(const char *opt, const char *text, enum gc_dtype t, int64_t *out)
{
    uint64_t lo_mag, hi;
    integer_range(t, &lo_mag, &hi);
    char range[96];
    snprintf(range, sizeof range, "%s%" PRIu64 " to %" PRIu64, lo_mag ? "-" : "", lo_mag, hi);
    const char *name = gc_dtypes[t].numpy_name;
    const char *p = text;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    char *end = (char *)p;
    errno = 0;
    uint64_t mag = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
    if (end == p || *end)
        return gc_fail(GC_EXIT_USAGE, "%s %s: an integer product (%s) takes an integer %s, "
                       "from %s; NumPy would make the product of a float scalar float64 "
                       "(convert the operands to floats for that)", opt, text, name, opt + 2,
                       range);
    if (errno == ERANGE || (neg ? mag > lo_mag : mag > hi))
        return gc_fail(GC_EXIT_USAGE, "%s %s is out of range for the %s product: it takes "
                       "an integer from %s%s", opt, text, name, range,
                       t == GC_BOOL ? " (False or True; NumPy would make a bool product "
                                      "times another integer int64)"
                                    : ", as NumPy 2 takes a Python int against this dtype");
    *out = (int64_t)(neg ? 0 - mag : mag);
    return 0;
}

int matmul_integer_scalars(struct matmul_plan *plan, const char *alpha, const char *beta)
{
    int rc;
    if (!plan->exact)
        return 0;
    if (alpha && (rc = integer_scalar("--alpha", alpha, plan->result, &plan->alpha_i)))
        return rc;
    if (beta && (rc = integer_scalar("--beta", beta, plan->result, &plan->beta_i)))
        return rc;
    return 0;
}

int matmul_check_scalars(const struct matmul_plan *plan, enum gemm_sig sig, double alpha,
                         double beta)
{
    const char *names[2] = { "--alpha", "--beta" };
    double v[2] = { alpha, beta };
    for (int i = 0; i < 2 && !plan->exact; i++)
        if (sig != GEMM_F64 && isinf((float)v[i]))
            return gc_fail(GC_EXIT_USAGE, "%s %g is not finite in float32, the compute "
                           "precision (largest 3.40282e+38)", names[i], v[i]);
    return 0;
}

uint64_t matmul_int_at(const struct gc_tensor *t, size_t i)
{
    /* A long double holds every 64-bit integer exactly. */
    long double v = gc_tensor_get(t, i);
    return v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
}

void matmul_to_i64(const struct gc_tensor *t, int64_t *out)
{
    size_t n = gc_tensor_count(t);
    for (size_t i = 0; i < n; i++)
        out[i] = (int64_t)matmul_int_at(t, i);
}

void matmul_integer_result(const void *acc, enum gc_dtype acc_type, int64_t alpha, int64_t beta,
                           const struct gc_tensor *c0, size_t count, void *out,
                           enum gc_dtype result)
{
    size_t es = gc_dtypes[result].size;
    for (size_t i = 0; i < count; i++) {
        uint64_t v;
        if (acc_type == GC_I32) {
            /* The low 32 bits of the exact sum, sign-extended: the low
             * bits of any result of 32 bits or fewer. */
            v = (uint64_t)(int64_t)((const int32_t *)acc)[i];
        } else if (acc_type == GC_F64) {
            /* Exact integers; beyond int64 (only with --compute fp64) saturate. */
            double d = ((const double *)acc)[i];
            v = d >= 0x1p63 ? (uint64_t)INT64_MAX : d < -0x1p63 ? (uint64_t)INT64_MIN
                : d != d ? 0 : (uint64_t)(int64_t)d;
        } else {
            v = ((const uint64_t *)acc)[i];
        }
        v *= (uint64_t)alpha;
        if (beta != 0 && c0)
            v += (uint64_t)beta * matmul_int_at(c0, i);
        if (result == GC_BOOL)
            v = v != 0;
        /* The low bytes of a little-endian integer are its truncation. */
        memcpy((char *)out + i * es, &v, es);
    }
}
