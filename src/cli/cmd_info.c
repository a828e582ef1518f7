/* gemmcli info: what a matrix file holds (format, dtype, shape, order),
 * read from as little of it as its format allows; an archive's members,
 * each as the .npy it holds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/cli/commands.h"
#include "src/job/io.h"
#include "src/job/json.h"

/* How a file or an archive's member is named: PATH, or PATH:KEY (a new
 * string, or NULL when out of memory). */
static char *info_label(const char *path, const struct gc_info *info)
{
    size_t n = strlen(path) + (info->key ? strlen(info->key) + 1 : 0) + 1;
    char *label = malloc(n);
    if (label)
        snprintf(label, n, "%s%s%s", path, info->key ? ":" : "", info->key ? info->key : "");
    return label;
}

static void info_json(struct json *j, const char *label, const struct gc_info *info)
{
    char version[16];
    int fmt = info->format;
    snprintf(version, sizeof version, "%u.%u", info->version_major, info->version_minor);
    json_object(j, NULL);
    json_string(j, "file", label);
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
    if (info->archive) {
        json_string(j, "archive", info->archive);
        json_string(j, "member", info->member);
        json_string(j, "compression", info->deflated ? "deflate" : "stored");
        json_count(j, "stored_bytes", info->stored_bytes);
    }
    json_end(j);
}

/* One line: the file's, or an archive member's ("stored" or "deflated to
 * N" after its .npy's bytes). */
static void info_text(const char *path, const struct gc_info *info)
{
    char shape[GC_MAX_DIMS * 22];
    int fmt = info->format;
    gc_shape_text(info->ndim, info->shape, shape, sizeof shape);
    printf("%s", path);
    if (info->key) {
        /* A member's name is the archive's bytes: shown escaped. */
        size_t cap = 4 * strlen(info->key) + 1;
        char *shown = malloc(cap);
        if (shown)
            gc_escape(shown, cap, info->key);
        printf(":%s", shown ? shown : "?");
        free(shown);
    }
    printf(": %s", gc_formats[fmt].name);
    if (format_can(fmt, FORMAT_VERSIONED))
        printf(" v%u.%u", info->version_major, info->version_minor);
    printf(", %s%s, %s, %s order", gc_dtypes[info->dtype].name,
           info->big_endian ? " big-endian" : "", shape, info->fortran_order ? "F" : "C");
    if (info->file_bytes >= 0)
        printf(", %lld bytes", (long long)info->file_bytes);
    if (info->archive && info->deflated)
        printf(", deflated to %ju", (uintmax_t)info->stored_bytes);
    else if (info->archive)
        printf(", stored");
    putchar('\n');
}

/* One file's or member's line, or with --json its object in `j`. */
static int info_show(const struct gc_opts *o, const char *path, const struct gc_info *info,
                     struct json *j)
{
    if (!o->json) {
        info_text(path, info);
        return 0;
    }
    char *label = info_label(path, info);
    if (!label)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", path);
    info_json(j, label, info);
    free(label);
    return 0;
}

/* An archive named alone: its line, then each member's as for PATH:NAME;
 * with --json its object, the members' in a list.  Every member's header
 * is read before anything is shown, so that a bad one shows nothing. */
static int info_archive(const struct gc_opts *o, const char *path, struct gc_input *in, int fmt,
                        const struct gc_read_opts *ro, struct json *j)
{
    struct gc_info archive, info;
    int rc = gc_formats[fmt].members(in, &archive);
    for (size_t i = 0; i < archive.members && !rc; i++)
        rc = gc_formats[fmt].member_info(in, ro, i, &info);
    if (rc)
        return rc;
    if (o->json) {
        json_object(j, NULL);
        json_string(j, "file", path);
        json_string(j, "format", gc_formats[fmt].name);
        json_int(j, "file_bytes", archive.file_bytes);
        json_list(j, "members", 1);
    } else {
        printf("%s: %s, %zu array%s, %lld bytes\n", path, gc_formats[fmt].name,
               archive.members, archive.members == 1 ? "" : "s",
               (long long)archive.file_bytes);
    }
    for (size_t i = 0; i < archive.members && !rc; i++)
        if (!(rc = gc_formats[fmt].member_info(in, ro, i, &info)))
            rc = info_show(o, path, &info, j);
    if (o->json) {
        json_end(j);
        json_end(j);
    }
    return rc;
}

/* One file's line, or with --json its object in the list `j`. */
static int info_one(const struct gc_opts *o, const char *path, struct json *j)
{
    struct gc_input in;
    int rc = input_open(&in, path);
    if (rc)
        return rc;
    int fmt = -1;
    rc = format_choose(&in, o->in_format, 0, &fmt);
    struct gc_read_opts ro = io_read_opts(o, 0);
    ro.announce = 0;
    struct gc_info info;
    memset(&info, 0, sizeof info);
    info.file_bytes = -1;
    /* A member named is shown as the file it holds: PATH:KEY. */
    const char *shown = in.member ? in.path : path;
    if (!rc && gc_formats[fmt].members && !in.member) {
        rc = info_archive(o, path, &in, fmt, &ro, j);
    } else if (!rc && !(rc = gc_formats[fmt].info(&in, &ro, &info))) {
        info.format = info.archive ? info.format : fmt;
        rc = info_show(o, info.archive ? shown : path, &info, j);
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
