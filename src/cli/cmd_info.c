/* gemmcli info: what a matrix file holds (format, dtype, shape, order),
 * read from as little of it as its format allows. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "src/cli/commands.h"
#include "src/job/io.h"
#include "src/job/json.h"

static void info_json(struct json *j, const char *path, int fmt, const struct gc_info *info)
{
    char version[16];
    snprintf(version, sizeof version, "%u.%u", info->version_major, info->version_minor);
    json_object(j, NULL);
    json_string(j, "file", path);
    json_string(j, "format", gc_formats[fmt].name);
    json_string(j, "dtype", gc_dtypes[info->dtype].name);
    json_shape(j, "shape", info->ndim, info->shape);
    json_string(j, "order", info->fortran_order ? "F" : "C");
    json_bool(j, "big_endian", info->big_endian);
    int versioned = format_can(fmt, FORMAT_VERSIONED);
    json_string(j, "npy_version", versioned ? version : NULL);
    if (versioned)
        json_count(j, "header_bytes", info->header_bytes);
    else
        json_null(j, "header_bytes");
    if (info->file_bytes >= 0)
        json_int(j, "file_bytes", info->file_bytes);
    else
        json_null(j, "file_bytes");
    json_end(j);
}

/* One file's line, or with --json its object in the list `j`. */
static int info_one(const struct gc_opts *o, const char *path, struct json *j)
{
    struct gc_input in;
    int rc = input_open(&in, path);
    if (rc)
        return rc;
    int fmt = o->in_format;
    if (fmt < 0)
        rc = format_identify(&in, 0, &fmt);
    struct gc_read_opts ro = io_read_opts(o, 0);
    ro.announce = 0;
    struct gc_info info;
    memset(&info, 0, sizeof info);
    info.file_bytes = -1;
    if (!rc)
        rc = gc_formats[fmt].info(&in, &ro, &info);
    if (!rc) {
        info.format = fmt;
        char shape[GC_MAX_DIMS * 22];
        gc_shape_text(info.ndim, info.shape, shape, sizeof shape);
        if (o->json) {
            info_json(j, path, fmt, &info);
        } else {
            printf("%s: %s", path, gc_formats[fmt].name);
            if (format_can(fmt, FORMAT_VERSIONED))
                printf(" v%u.%u", info.version_major, info.version_minor);
            printf(", %s%s, %s, %s order", gc_dtypes[info.dtype].name,
                   info.big_endian ? " big-endian" : "", shape, info.fortran_order ? "F" : "C");
            if (info.file_bytes >= 0)
                printf(", %lld bytes", (long long)info.file_bytes);
            putchar('\n');
        }
    }
    input_close(&in);
    return rc;
}

int info_check_usage(const struct gc_opts *o)
{
    if (o->n_operands < 1)
        return gc_fail(GC_EXIT_USAGE, "info takes one or more files (see 'gemmcli info --help')");
    return 0;
}

int cmd_info(const struct gc_opts *o)
{
    int worst = 0;
    struct json j;
    json_begin(&j, stdout);
    if (o->json)
        json_list(&j, NULL, 1);
    for (int i = 0; i < o->n_operands; i++) {
        int rc = info_one(o, o->operands[i], &j);
        if (rc && !worst)
            worst = rc;
    }
    if (o->json)
        json_end(&j);
    if (fflush(stdout) != 0 || ferror(stdout))
        return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return worst;
}
