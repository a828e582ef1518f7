/* The format table: look-ups by name and extension, detection, and the
 * capabilities the program asks about. */
#include "formats/format_impl.h"

#include <string.h>
#include <strings.h>

#include "core/error.h"

const struct gc_format gc_formats[GC_FMT_COUNT] = {
    [GC_FMT_NPY] = { "npy", ".npy",
                     "NumPy .npy, versions 1.0-3.0, any numeric dtype, C or Fortran order",
                     npy_probe, npy_read, npy_write, npy_info, npy_write_header, GC_MAX_DIMS,
                     FORMAT_BINARY | FORMAT_AT_OFFSETS | FORMAT_VERSIONED,
                     /* NumPy has no bfloat16 */
                     GC_DTYPES_ALL & ~(1u << GC_BF16) },
    [GC_FMT_RAW] = { "raw", ".bin .raw",
                     "raw little-endian elements; --shape, --in-dtype and --order describe them",
                     NULL, raw_read, raw_write, raw_info, raw_write_header, GC_MAX_DIMS,
                     FORMAT_BINARY | FORMAT_AT_OFFSETS, GC_DTYPES_ALL },
    [GC_FMT_CSV] = { "csv", ".csv",
                     "text, one row per line, like numpy.loadtxt/savetxt",
                     csv_probe, csv_read, csv_write, csv_info, NULL, 2, 0, GC_DTYPES_ALL },
    [GC_FMT_CSV_GZ] = { "csv.gz", ".csv.gz .gz",
                        "gzip-compressed CSV (multi-member streams accepted)",
                        csv_gz_probe, csv_gz_read, csv_gz_write, csv_gz_info, NULL, 2,
                        FORMAT_BINARY, GC_DTYPES_ALL, 0, 12, NULL },
    [GC_FMT_CSV_ZST] = { "csv.zst", ".csv.zst",
                         "zstd-compressed CSV (multi-frame streams accepted); needs libzstd",
                         zstd_probe, csv_zst_read, csv_zst_write, csv_zst_info, NULL, 2,
                         FORMAT_BINARY, GC_DTYPES_ALL, ZSTD_LEVEL_MIN, ZSTD_LEVEL_MAX,
                         zstd_ready },
    [GC_FMT_NPY_ZST] = { "npy.zst", ".npy.zst",
                         "zstd-compressed .npy (multi-frame streams accepted); needs libzstd",
                         zstd_probe, npy_zst_read, npy_zst_write, npy_zst_info, NULL,
                         GC_MAX_DIMS, FORMAT_BINARY | FORMAT_VERSIONED,
                         GC_DTYPES_ALL & ~(1u << GC_BF16), ZSTD_LEVEL_MIN, ZSTD_LEVEL_MAX,
                         zstd_ready },
    [GC_FMT_NPZ] = { "npz", ".npz",
                     "NumPy .npz (np.savez, np.savez_compressed), read only: FILE:NAME reads "
                     "array NAME",
                     npz_probe, npz_read, NULL, npz_info, NULL, 0,
                     FORMAT_BINARY | FORMAT_ARCHIVE, GC_DTYPES_ALL & ~(1u << GC_BF16), 0, 0,
                     NULL, npz_members, npz_member_info },
};

int format_can(int format, unsigned caps)
{
    return format >= 0 && format < GC_FMT_COUNT && (gc_formats[format].caps & caps) == caps;
}

int format_holds(int format, enum gc_dtype dtype)
{
    return format >= 0 && format < GC_FMT_COUNT && (gc_formats[format].dtypes >> dtype & 1u);
}

static const struct { const char *name; enum gc_format_id id; } format_aliases[] = {
    { "bin", GC_FMT_RAW }, { "gz", GC_FMT_CSV_GZ }, { "csvgz", GC_FMT_CSV_GZ },
};

int format_by_name(const char *name)
{
    if (name[0] == '.')
        name++;
    for (int i = 0; i < GC_FMT_COUNT; i++)
        if (strcasecmp(name, gc_formats[i].name) == 0)
            return i;
    for (size_t i = 0; i < sizeof format_aliases / sizeof format_aliases[0]; i++)
        if (strcasecmp(name, format_aliases[i].name) == 0)
            return (int)format_aliases[i].id;
    return -1;
}

/* The longest matching extension wins: "x.csv.gz" is gzip CSV, not just
 * something ending in ".gz". */
int format_by_extension(const char *path)
{
    size_t plen = strlen(path), best_len = 0;
    int best = -1;
    for (int i = 0; i < GC_FMT_COUNT; i++) {
        const char *e = gc_formats[i].extensions;
        while (*e) {
            size_t elen = strcspn(e, " ");
            if (elen <= plen && elen > best_len && strncasecmp(path + plen - elen, e, elen) == 0) {
                best = i;
                best_len = elen;
            }
            e += elen;
            e += strspn(e, " ");
        }
    }
    return best;
}

/* What the bytes at the start of `in` look like, for stdin or a name
 * that says nothing: the best probe short of a long magic (a short magic
 * over text), else raw. */
static int format_by_looks(const unsigned char *head, size_t n, const char **why)
{
    int fmt = GC_FMT_RAW, best = PROBE_NO;
    for (int i = 0; i < GC_FMT_COUNT; i++) {
        int p = gc_formats[i].probe ? gc_formats[i].probe(head, n) : PROBE_NO;
        if (p > best && p < PROBE_MAGIC) {
            best = p;
            fmt = i;
        }
    }
    *why = fmt == GC_FMT_CSV_GZ ? "gzip magic bytes" : fmt == GC_FMT_CSV_ZST ? "zstd magic bytes"
         : fmt == GC_FMT_NPZ ? "zip magic bytes" : fmt == GC_FMT_CSV ? "text"
         : "neither gzip, zstd, zip nor text";
    return fmt;
}

int format_identify(struct gc_input *in, int announce, int *format)
{
    const unsigned char *head;
    size_t n;
    if (in->member) {
        *format = GC_FMT_NPZ;
        return 0;
    }
    int status = input_peek(in, 512, &head, &n);
    if (status)
        return status;
    /* Only a long magic decides before the name: gzip's three bytes and
     * zstd's four are also the first float of some raw files. */
    for (int i = 0; i < GC_FMT_COUNT; i++)
        if (gc_formats[i].probe && gc_formats[i].probe(head, n) == PROBE_MAGIC) {
            *format = i;
            return 0;
        }
    int named = strcmp(in->path, "-") != 0 ? format_by_extension(in->path) : -1;
    const char *why = NULL;
    int fmt = named >= 0 ? named : format_by_looks(head, n, &why);
    /* zstd holds .npy or CSV: a .npy's magic inside decides, as outside. */
    if (fmt == GC_FMT_CSV_ZST || fmt == GC_FMT_NPY_ZST) {
        int npy;
        if ((status = zstd_peek_npy(in, &npy)))
            return status;
        if (npy > 0)
            fmt = GC_FMT_NPY_ZST;
        if (named < 0 && npy >= 0)
            why = npy ? "zstd magic bytes, then .npy's" : "zstd magic bytes, no .npy inside";
    }
    if (why && announce)
        gc_note("%s: read as %s (%s; %s); --in-format chooses", in->name, gc_formats[fmt].name,
                why, strcmp(in->path, "-") == 0 ? "no file name to go by"
                                                : "no extension gemmcli knows");
    *format = fmt;
    return 0;
}

int format_choose(struct gc_input *in, int fmt, int announce, int *format)
{
    if (fmt == GC_FMT_AUTO)
        return format_identify(in, announce, format);
    if (in->member && !format_can(fmt, FORMAT_ARCHIVE))
        return gc_fail(GC_EXIT_USAGE, "%s:%s: a member of an archive is read as npz, not as "
                       "--in-format %s", in->name, in->member, gc_formats[fmt].name);
    *format = fmt;
    return 0;
}

int format_read_path(const char *path, int fmt, const struct gc_read_opts *o,
                     struct gc_tensor *t, int *read_as)
{
    struct gc_input in;
    int status = input_open(&in, path);
    if (status)
        return status;
    in.threads = o ? o->threads : 0;
    status = format_choose(&in, fmt, o && o->announce, &fmt);
    if (!status && fmt >= GC_FMT_COUNT)
        status = gc_fail(GC_EXIT_INPUT, "%s: unknown format", in.name);
    if (!status)
        status = gc_formats[fmt].read(&in, o, t);
    if (read_as)
        *read_as = fmt;
    input_close(&in);
    return status;
}
