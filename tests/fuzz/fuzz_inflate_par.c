/* The parallel inflater (formats/inflate_par.c) on any bytes, cut into
 * chunks of a few bytes so that every input has several: the first two
 * bytes choose the threads, chunks a round and chunk size, the rest is a
 * deflate stream and its gzip trailer.  What it gives must be what zlib
 * gives: all of it, trailer checked, when it reaches the end, and no byte
 * zlib does not give when it gives up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/inflate_par.h"

#define FUZZ_OUT_MAX ((size_t)64 << 20)

/* zlib's output for the raw deflate stream at data (into *out, *n bytes),
 * and 0 when the stream ends and the 8 bytes after it are its trailer. */
static int fuzz_zlib(const uint8_t *data, size_t size, uint8_t **out, size_t *n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK)
        abort();
    size_t cap = 1 << 16;
    *out = malloc(cap);
    z.next_in = (uint8_t *)data;
    z.avail_in = (uInt)size;
    int r = Z_OK;
    while (r == Z_OK) {
        if (z.total_out == cap) {
            if (cap >= FUZZ_OUT_MAX)
                break;
            cap *= 2;
            *out = realloc(*out, cap);
        }
        z.next_out = *out + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        r = inflate(&z, Z_NO_FLUSH);
        if (r == Z_BUF_ERROR && z.avail_out)
            break;
        if (r == Z_BUF_ERROR)
            r = Z_OK;
    }
    *n = z.total_out;
    size_t used = z.total_in;
    inflateEnd(&z);
    if (r != Z_STREAM_END || size - used < 8)
        return -1;
    const uint8_t *t = data + used;
    uint32_t crc = t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
    uint32_t len = t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 | (uint32_t)t[7] << 24;
    return crc == (uint32_t)crc32(0, *out, (uInt)*n) && len == (uint32_t)*n ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    struct inflate_par_plan plan = { 1 + data[0] % 3, 1 + (data[0] >> 2) % 8,
                                     16 + (size_t)data[1] * 16 };
    data += 2;
    size -= 2;
    uint8_t *ref;
    size_t ref_n, got = 0, used = 0, n;
    int zr = fuzz_zlib(data, size, &ref, &ref_n);
    struct inflate_par *p = inflate_par_open(data, size, &plan);
    if (!p)
        abort();
    const unsigned char *text;
    int r;
    while ((r = inflate_par_next(p, &text, &n, &used)) == 1) {
        if (got + n > ref_n || memcmp(ref + got, text, n) != 0)
            abort();
        got += n;
    }
    inflate_par_close(p);
    /* Where the stream ends, all of it; zlib may be stopped short by
     * FUZZ_OUT_MAX where inflate_par is not. */
    if (r == 0 && (got != ref_n || (zr != 0 && ref_n < FUZZ_OUT_MAX)))
        abort();
    free(ref);
    return 0;
}
