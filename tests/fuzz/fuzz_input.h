/* What every reader fuzz target shares: the bytes become a regular file
 * (a memfd) and are read twice, once as the file and once as if from a
 * pipe, which takes the streaming code paths.  Both must agree on the
 * status and, on success, on every byte of the matrix. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/format.h"

static int fuzz_read_once(int fmt, int fd, int as_pipe, const struct gc_read_opts *o,
                          struct gc_matrix *m)
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
        fmt = format_detect(&in, 0);
    status = fmt < 0 ? -1 : gc_formats[fmt].read(&in, o, m);
    input_close(&in);
    return status;
}

static void fuzz_read_both(int fmt, const uint8_t *data, size_t size, const struct gc_read_opts *o)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    struct gc_matrix a, b;
    int sa = fuzz_read_once(fmt, fd, 0, o, &a);
    int sb = fuzz_read_once(fmt, fd, 1, o, &b);
    close(fd);
    if (sa != sb)
        abort();
    if (sa == 0) {
        size_t bytes;
        if (a.rows != b.rows || a.cols != b.cols || a.dtype != b.dtype ||
            a.fortran_order != b.fortran_order || !gc_matrix_bytes(a.rows, a.cols, a.dtype, &bytes))
            abort();
        if (bytes && memcmp(a.data, b.data, bytes) != 0)
            abort();
        /* Writing what was read must work too. */
        for (int f = 0; f < GC_FMT_COUNT; f++) {
            char *out = NULL;
            size_t len = 0;
            FILE *w = open_memstream(&out, &len);
            struct gc_write_opts wo = { 0, ',', 1 };
            if (gc_formats[f].write(w, "out", &a, &wo) != 0)
                abort();
            fclose(w);
            free(out);
        }
        gc_matrix_free(&a);
        gc_matrix_free(&b);
    }
}

#endif
