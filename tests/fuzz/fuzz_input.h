/* What every reader fuzz target shares: the bytes become a regular file
 * (a memfd) and are read twice, once as the file and once as if from a
 * pipe, which takes the streaming code paths.  Both must agree on the
 * status and, on success, on every byte of the tensor.  What was read must
 * then be writable in every format that holds its dimensions (and be
 * refused as a usage error by the others), and a .npy written from it must
 * read back to the same tensor. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "core/tensor.h"
#include "formats/format.h"

static int fuzz_read_once(int fmt, int fd, int as_pipe, const struct gc_read_opts *o,
                          struct gc_tensor *t)
{
    char path[64];
    struct gc_input in;
    lseek(fd, 0, SEEK_SET);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    int status = input_open(&in, path);
    if (status)
        abort();
    if (as_pipe) {
        in.is_regular = 0;
        in.size = -1;
    }
    if (fmt == GC_FMT_AUTO)
        status = format_identify(&in, 0, &fmt);
    if (!status)
        status = gc_formats[fmt].read(&in, o, t);
    input_close(&in);
    return status;
}

/* The same shape, dtype and storage, and the same bytes. */
static void fuzz_same_tensor(const struct gc_tensor *a, const struct gc_tensor *b)
{
    size_t bytes;
    if (a->ndim != b->ndim || a->ndim < 0 || a->ndim > GC_MAX_DIMS || a->dtype != b->dtype ||
        gc_tensor_column_major(a) != gc_tensor_column_major(b) ||
        memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]) != 0 ||
        !gc_tensor_bytes(a, &bytes))
        abort();
    if (bytes && memcmp(a->data, b->data, bytes) != 0)
        abort();
}

/* Writes t as .npy into a memfd and reads it back from there. */
static void fuzz_npy_round_trip(const struct gc_tensor *t)
{
    int fd = memfd_create("fuzz-npy", 0);
    FILE *w = fd < 0 ? NULL : fdopen(dup(fd), "wb");
    if (!w || gc_formats[GC_FMT_NPY].write(w, "out", t, NULL) != 0 || fclose(w) != 0)
        abort();
    struct gc_read_opts o = { .dtype = -1, .delimiter = ',' };
    struct gc_tensor back;
    if (fuzz_read_once(GC_FMT_NPY, fd, 0, &o, &back) != 0)
        abort();
    close(fd);
    fuzz_same_tensor(t, &back);
    gc_tensor_free(&back);
}

static void fuzz_read_both(int fmt, const uint8_t *data, size_t size, const struct gc_read_opts *o)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    struct gc_tensor a, b;
    int sa = fuzz_read_once(fmt, fd, 0, o, &a);
    int sb = fuzz_read_once(fmt, fd, 1, o, &b);
    close(fd);
    if (sa != sb)
        abort();
    if (sa != 0)
        return;
    fuzz_same_tensor(&a, &b);
    if (a.fortran_order != b.fortran_order)
        abort();
    for (int f = 0; f < GC_FMT_COUNT; f++) {
        if (!gc_formats[f].write)
            continue;       /* an archive: read, never written */
        char *out = NULL;
        size_t len = 0;
        FILE *w = open_memstream(&out, &len);
        struct gc_write_opts wo = { 0, ',', 1 };
        /* .npy has no bfloat16; a scalar (0-d) goes to .npy and raw, as
         * np.save and tofile take it, not to CSV, as np.savetxt does not. */
        int csv = gc_formats[f].max_ndim == 2;
        int want = a.ndim >= (csv ? 1 : 0) && a.ndim <= gc_formats[f].max_ndim &&
                   format_holds(f, a.dtype) ? 0 : GC_EXIT_USAGE;
        if (gc_formats[f].write(w, "out", &a, &wo) != want)
            abort();
        fclose(w);
        free(out);
    }
    if (gc_dtypes[a.dtype].numpy)
        fuzz_npy_round_trip(&a);
    gc_tensor_free(&a);
    gc_tensor_free(&b);
}

#endif
