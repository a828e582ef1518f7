/* NumPy .npy, versions 1.0, 2.0 and 3.0.
 *
 * The header is a Python dict literal with exactly the keys 'descr',
 * 'fortran_order' and 'shape', in any order, padded with spaces to any
 * length.  It is parsed here by a small strict grammar rather than by
 * pattern matching, so that keys in any order, either quote style, trailing
 * commas and Python 2's "3L" integers all read as NumPy reads them.
 *
 * Shapes: any number of dimensions from 0 (a scalar, np.save of a NumPy
 * scalar or of vector @ vector) to GC_MAX_DIMS, as NumPy writes them; the
 * commands say what they do with a scalar.  Each dimension is at most
 * 2^63 - 1, NumPy's limit.
 *
 * Data is kept in the file's dtype, byte-swapped in place when big-endian,
 * and kept column-major when fortran_order is True, so that np.save(a.T)
 * costs no extra host copy. */
#include "formats/format_impl.h"
#include "formats/payload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy code assumes a little-endian host"
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
/* NumPy pads after the dict so that the first dimension can grow in place
 * to this many digits. */
#define NPY_GROWTH_DIGITS 21
/* Larger headers are refused before anything is allocated for them; a
 * 2-D numeric header needs a few hundred bytes. */
#define NPY_HEADER_MAX ((size_t)1 << 20)

struct npy_header {
    unsigned major, minor;
    size_t prefix_len, header_len;
    enum gc_dtype dtype;
    int big_endian;
    int fortran_order;
    int ndim;
    size_t shape[GC_MAX_DIMS];
};

int npy_probe(const unsigned char *head, size_t n)
{
    return n >= NPY_MAGIC_LEN && memcmp(head, NPY_MAGIC, NPY_MAGIC_LEN) == 0
        ? PROBE_MAGIC : PROBE_NO;
}

struct npy_parser {
    const char *p, *end;
    const char *name;
};

static void npy_skip_space(struct npy_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
                               *ps->p == '\r'))
        ps->p++;
}

static int npy_bad(struct npy_parser *ps, const char *what)
{
    return gc_fail(GC_EXIT_INPUT, "%s: bad .npy header: %s", ps->name, what);
}

/* A quoted string; sets *s and *len to its contents.  Escapes never occur
 * in the keys or dtype codes this reader accepts, so a backslash is an
 * error. */
static int npy_string(struct npy_parser *ps, const char **s, size_t *len)
{
    if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
        return npy_bad(ps, "expected a quoted string");
    char q = *ps->p++;
    const char *start = ps->p;
    while (ps->p < ps->end && *ps->p != q && *ps->p != '\\')
        ps->p++;
    if (ps->p >= ps->end || *ps->p != q)
        return npy_bad(ps, "unterminated or escaped string");
    *s = start;
    *len = (size_t)(ps->p - start);
    ps->p++;
    return 0;
}

static int npy_is_word(struct npy_parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
        return 0;
    const char *after = ps->p + n;
    if (after < ps->end && (*after == '_' || (*after >= 'a' && *after <= 'z') ||
                            (*after >= 'A' && *after <= 'Z') || (*after >= '0' && *after <= '9')))
        return 0;
    ps->p = after;
    return 1;
}

static int npy_parse_descr(struct npy_parser *ps, struct npy_header *h)
{
    const char *s;
    size_t len;
    npy_skip_space(ps);
    if (ps->p < ps->end && *ps->p == '[')
        return gc_fail(GC_EXIT_INPUT, "%s: structured dtypes are not supported; "
                       "need a plain numeric array", ps->name);
    int status = npy_string(ps, &s, &len);
    if (status)
        return status;
    char code[16];
    if (len == 0 || len >= sizeof code)
        return gc_fail(GC_EXIT_INPUT, "%s: unsupported dtype '%.*s'", ps->name,
                       (int)(len < 32 ? len : 32), s);
    memcpy(code, s, len);
    code[len] = 0;
    const char *c = code;
    h->big_endian = 0;
    if (*c == '<' || *c == '=' || *c == '|') {
        c++;
    } else if (*c == '>') {
        h->big_endian = 1;
        c++;
    }
    if (*c == 'c')
        return gc_fail(GC_EXIT_INPUT, "%s: complex dtype '%s' is not supported", ps->name, code);
    if (*c == 'O')
        return gc_fail(GC_EXIT_INPUT, "%s: object arrays are not supported", ps->name);
    for (int i = 0; i < GC_DTYPE_COUNT; i++)
        if (gc_dtypes[i].numpy && strcmp(c, gc_dtypes[i].numpy) == 0) {
            h->dtype = (enum gc_dtype)i;
            if (gc_dtypes[i].size == 1)
                h->big_endian = 0;
            return 0;
        }
    return gc_fail(GC_EXIT_INPUT, "%s: unsupported dtype '%s' (need float16/32/64 or an "
                   "integer type)", ps->name, code);
}

static int npy_parse_shape(struct npy_parser *ps, struct npy_header *h)
{
    int ndim = 0;
    npy_skip_space(ps);
    if (ps->p >= ps->end || *ps->p != '(')
        return npy_bad(ps, "'shape' is not a tuple");
    ps->p++;
    for (;;) {
        npy_skip_space(ps);
        if (ps->p < ps->end && *ps->p == ')')
            break;
        if (ps->p < ps->end && *ps->p == '-')
            return gc_fail(GC_EXIT_INPUT, "%s: negative dimension in 'shape'", ps->name);
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return npy_bad(ps, "'shape' is not a tuple of integers");
        size_t v = 0;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
            if (__builtin_mul_overflow(v, (size_t)10, &v) ||
                __builtin_add_overflow(v, (size_t)(*ps->p - '0'), &v) || v > GC_DIM_MAX)
                return gc_fail(GC_EXIT_INPUT, "%s: a dimension in 'shape' is above NumPy's "
                               "limit of 2^63-1", ps->name);
            ps->p++;
        }
        if (ps->p < ps->end && (*ps->p == 'L' || *ps->p == 'l'))
            ps->p++;
        if (ndim == GC_MAX_DIMS)
            return gc_fail(GC_EXIT_INPUT, "%s: array has more than %d dimensions", ps->name,
                           GC_MAX_DIMS);
        h->shape[ndim++] = v;
        npy_skip_space(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ')') {
            if (ndim == 1)
                return npy_bad(ps, "'shape' (n) lacks the comma of a 1-tuple");
            break;
        }
        return npy_bad(ps, "'shape' is not a tuple of integers");
    }
    ps->p++;
    h->ndim = ndim;
    return 0;
}

static int npy_parse_dict(const char *text, size_t len, const char *name, struct npy_header *h)
{
    struct npy_parser ps = { text, text + len, name };
    static const char *const keys[] = { "descr", "fortran_order", "shape" };
    int seen[3] = { 0, 0, 0 };
    int status;
    npy_skip_space(&ps);
    if (ps.p >= ps.end || *ps.p != '{')
        return npy_bad(&ps, "not a dict");
    ps.p++;
    for (;;) {
        npy_skip_space(&ps);
        if (ps.p < ps.end && *ps.p == '}')
            break;
        const char *k;
        size_t klen;
        if ((status = npy_string(&ps, &k, &klen)))
            return status;
        int key = -1;
        for (int i = 0; i < 3; i++)
            if (strlen(keys[i]) == klen && memcmp(keys[i], k, klen) == 0)
                key = i;
        if (key < 0)
            return gc_fail(GC_EXIT_INPUT, "%s: bad .npy header: unexpected key '%.*s'", name,
                           (int)(klen < 32 ? klen : 32), k);
        if (seen[key]++)
            return gc_fail(GC_EXIT_INPUT, "%s: bad .npy header: key '%s' repeated", name,
                           keys[key]);
        npy_skip_space(&ps);
        if (ps.p >= ps.end || *ps.p != ':')
            return npy_bad(&ps, "expected ':' after a key");
        ps.p++;
        npy_skip_space(&ps);
        if (key == 0) {
            status = npy_parse_descr(&ps, h);
        } else if (key == 1) {
            if (npy_is_word(&ps, "True"))
                h->fortran_order = 1;
            else if (npy_is_word(&ps, "False"))
                h->fortran_order = 0;
            else
                status = npy_bad(&ps, "'fortran_order' is neither True nor False");
        } else {
            status = npy_parse_shape(&ps, h);
        }
        if (status)
            return status;
        npy_skip_space(&ps);
        if (ps.p < ps.end && *ps.p == ',') {
            ps.p++;
            continue;
        }
        if (ps.p < ps.end && *ps.p == '}')
            break;
        return npy_bad(&ps, "expected ',' or '}'");
    }
    ps.p++;
    npy_skip_space(&ps);
    if (ps.p != ps.end)
        return npy_bad(&ps, "text after the dict");
    for (int i = 0; i < 3; i++)
        if (!seen[i])
            return gc_fail(GC_EXIT_INPUT, "%s: bad .npy header: key '%s' missing", name, keys[i]);
    int big = 0;
    for (int d = 0; d < h->ndim; d++)
        big += h->shape[d] > 1;
    if (big < 2)
        h->fortran_order = 0;   /* both orders store the same bytes */
    return 0;
}

static int npy_read_header(struct gc_input *in, struct npy_header *h)
{
    unsigned char pre[12];
    size_t got;
    int status = input_read(in, pre, 8, &got);
    if (status)
        return status;
    if (got < NPY_MAGIC_LEN || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return gc_fail(GC_EXIT_INPUT, "%s: not a .npy file (bad magic)", in->name);
    if (got < 8)
        return gc_fail(GC_EXIT_INPUT, "%s: truncated .npy header", in->name);
    h->major = pre[6];
    h->minor = pre[7];
    if ((h->major < 1 || h->major > 3) || h->minor != 0)
        return gc_fail(GC_EXIT_INPUT, "%s: unsupported .npy version %u.%u (need 1.0, 2.0 or 3.0)",
                       in->name, h->major, h->minor);
    size_t len_bytes = h->major == 1 ? 2 : 4;
    if ((status = input_read(in, pre + 8, len_bytes, &got)))
        return status;
    if (got < len_bytes)
        return gc_fail(GC_EXIT_INPUT, "%s: truncated .npy header", in->name);
    h->header_len = (size_t)pre[8] | (size_t)pre[9] << 8;
    if (h->major > 1)
        h->header_len |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    h->prefix_len = 8 + len_bytes;
    off_t left = input_remaining(in);
    if (left >= 0 && (uint64_t)left < h->header_len)
        return gc_fail(GC_EXIT_INPUT, "%s: header length %zu runs past the end of the file",
                       in->name, h->header_len);
    if (h->header_len > NPY_HEADER_MAX)
        return gc_fail(GC_EXIT_INPUT, "%s: header length %zu exceeds the limit of %zu bytes",
                       in->name, h->header_len, NPY_HEADER_MAX);
    char *text = malloc(h->header_len + 1);
    if (!text)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", in->name);
    status = input_read(in, text, h->header_len, &got);
    if (!status && got < h->header_len)
        status = gc_fail(GC_EXIT_INPUT, "%s: header length %zu runs past the end of the file",
                         in->name, h->header_len);
    if (!status)
        status = npy_parse_dict(text, h->header_len, in->name, h);
    free(text);
    return status;
}

static void npy_describe(const struct npy_header *h, char *buf, size_t n)
{
    char shape[64] = "a scalar (shape ())";
    if (h->ndim > 0) {
        memcpy(shape, "shape ", 6);
        gc_shape_text(h->ndim, h->shape, shape + 6, sizeof shape - 6);
    }
    snprintf(buf, n, "%s of %s%s", shape, h->big_endian ? ">" : "", gc_dtypes[h->dtype].name);
}

static void npy_to_tensor(const struct npy_header *h, struct gc_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->ndim = h->ndim;
    memcpy(t->shape, h->shape, (size_t)h->ndim * sizeof h->shape[0]);
    t->dtype = h->dtype;
    t->fortran_order = h->fortran_order;
}


int npy_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t)
{
    struct npy_header h;
    char what[96];
    int status = npy_read_header(in, &h);
    if (status)
        return status;
    npy_describe(&h, what, sizeof what);
    struct gc_tensor r;
    npy_to_tensor(&h, &r);
    /* Only a payload in this machine's byte order goes to a sink as it is. */
    const struct gc_sink *sink = o && !h.big_endian ? o->sink : NULL;
    if ((status = payload_read_tensor(in, &r, o ? o->alloc : NULL, sink, what)))
        return status;
    if (h.big_endian)
        gc_byteswap(r.data, gc_tensor_count(&r), gc_dtypes[h.dtype].size);
    *t = r;
    return 0;
}

int npy_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    struct npy_header h;
    char what[96];
    size_t bytes;
    (void)o;
    int status = npy_read_header(in, &h);
    if (status)
        return status;
    npy_describe(&h, what, sizeof what);
    struct gc_tensor shape;
    npy_to_tensor(&h, &shape);
    if (!gc_tensor_bytes(&shape, &bytes))
        return gc_fail(GC_EXIT_INPUT, "%s: %s is too large", in->name, what);
    if ((status = payload_check_left(in, bytes, what)))
        return status;
    memset(info, 0, sizeof *info);
    info->format = GC_FMT_NPY;
    info->dtype = h.dtype;
    info->ndim = h.ndim;
    memcpy(info->shape, h.shape, (size_t)h.ndim * sizeof h.shape[0]);
    info->fortran_order = h.fortran_order;
    info->big_endian = h.big_endian;
    info->version_major = h.major;
    info->version_minor = h.minor;
    info->header_bytes = h.prefix_len + h.header_len;
    info->file_bytes = in->is_regular ? in->size : -1;
    return 0;
}

/* The same header bytes as np.save for an array of this dtype, shape and
 * order: NumPy's key order and spacing, the growth padding, 64-byte
 * alignment, version 1.0 while the header fits its 16-bit length. */
int npy_write_header(FILE *f, const char *name, const struct gc_tensor *t)
{
    int fortran = gc_tensor_column_major(t);
    const struct gc_dtype_info *dt = &gc_dtypes[t->dtype];
    if (!dt->numpy)
        return gc_fail(GC_EXIT_USAGE, "%s: .npy has no %s (NumPy has no such dtype); write raw, "
                       "or convert with --dtype f32", name, dt->numpy_name);
    char shape[GC_MAX_DIMS * 22 + 8];
    size_t used = (size_t)snprintf(shape, sizeof shape, "(");
    for (int d = 0; d < t->ndim; d++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%zu", d ? ", " : "",
                                 t->shape[d]);
    snprintf(shape + used, sizeof shape - used, t->ndim == 1 ? ",)" : ")");
    char *text = malloc(sizeof shape + 256);
    if (!text)
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", name);
    /* The dict starts after the longest prefix (version 2.0: 12 bytes). */
    char *dict = text + 12;
    int n = snprintf(dict, sizeof shape + 200, "{'descr': '%c%s', 'fortran_order': %s, 'shape': %s, }",
                     dt->size == 1 ? '|' : '<', dt->numpy, fortran ? "True" : "False", shape);
    /* NumPy pads so that the dimension that grows on append (the first in C
     * order, the last in Fortran order) can take NPY_GROWTH_DIGITS digits. */
    char digits[32];
    int grow = t->ndim == 0 ? 0
             : NPY_GROWTH_DIGITS - snprintf(digits, sizeof digits, "%zu",
                                            t->shape[fortran ? t->ndim - 1 : 0]);
    size_t len = (size_t)n + (size_t)(grow > 0 ? grow : 0) + 1;
    int v2 = len + NPY_ALIGN - (10 + len) % NPY_ALIGN > 65535;
    size_t prefix = v2 ? 12 : 10;
    size_t header_len = len + NPY_ALIGN - (prefix + len) % NPY_ALIGN;
    memset(dict + n, ' ', header_len - 1 - (size_t)n);
    dict[header_len - 1] = '\n';
    char *start = dict - prefix;
    memcpy(start, NPY_MAGIC, NPY_MAGIC_LEN);
    start[6] = v2 ? 2 : 1;
    start[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        start[8 + i] = (char)(header_len >> (8 * i) & 0xff);
    int status = write_all(f, name, start, prefix + header_len);
    free(text);
    return status;
}

int npy_write(FILE *f, const char *name, const struct gc_tensor *t,
              const struct gc_write_opts *o)
{
    size_t bytes;
    if (!gc_tensor_bytes(t, &bytes))
        return gc_fail(GC_EXIT_OUTPUT, "%s: tensor too large", name);
    int status = npy_write_header(f, name, t);
    if (!status)
        status = write_payload(f, name, t->data, bytes, o ? o->threads : 0);
    return status;
}
