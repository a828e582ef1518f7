/* One deflate stream (a gzip member's) inflated on several threads,
 * although nothing in it says where its blocks start (formats/inflate_par.c).
 * Private to formats/. */
#ifndef GC_INFLATE_PAR_H
#define GC_INFLATE_PAR_H

#include <stddef.h>
#include <stdint.h>

struct inflate_par;

/* How the compressed bytes are shared out: `chunks` pieces of
 * `chunk_bytes` each are inflated at once on `threads` threads, a round
 * at a time.  chunk_bytes 0: sized from the compression ratio, so that a
 * round gives about INFLATE_PAR_ROUND bytes of output. */
struct inflate_par_plan {
    int threads;
    int chunks;
    size_t chunk_bytes;
};

#define INFLATE_PAR_ROUND ((size_t)64 << 20)

/* Starts on the deflate stream at data[0]; data[0, len) also holds the
 * gzip trailer after it and whatever follows (read, never written).  NULL
 * when out of memory. */
struct inflate_par *inflate_par_open(const unsigned char *data, size_t len,
                                     const struct inflate_par_plan *plan);

/* The next stretch of output: 1 with [*text, *text + *n) (valid until the
 * next call), 0 at the end of the stream, once the trailer's CRC and
 * length have matched (*used: the bytes of data the stream and its
 * trailer took), -1 when it cannot go on (corrupt, truncated or too
 * strange data: the bytes given so far are still right, and a sequential
 * inflater, started again from the beginning, says what is wrong). */
int inflate_par_next(struct inflate_par *p, const unsigned char **text, size_t *n, size_t *used);

void inflate_par_close(struct inflate_par *p);

#endif
