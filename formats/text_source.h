/* Text from an input, plain or gzip-compressed, a buffer at a time, for
 * the CSV reader (formats/text_source.c).  Private to formats/. */
#ifndef GC_TEXT_SOURCE_H
#define GC_TEXT_SOURCE_H

#include <libdeflate.h>
#include <stdint.h>
#include <zlib.h>

#include "formats/format.h"

/* The gzip header of each member written: FEXTRA holds one subfield,
 * "MS", with the member's whole size in bytes, so that a reader can find
 * every member without inflating and inflate them side by side. */
#define GZ_HEAD_BYTES 20
#define GZ_TAIL_BYTES 8

struct gz_member;
struct inflate_par;

struct text_source {
    struct gc_input *in;
    const char *name;
    int gz;
    /* gzip, regular files up to a size (text_source.c): the whole compressed input */
    unsigned char *comp;
    size_t clen, cpos;
    struct libdeflate_decompressor *ld;
    /* gzip through zlib: a member too large for the text buffer, or input
     * from a pipe, read a chunk at a time */
    z_stream zs;
    int z_ready, in_member;
    unsigned char *zin;
    uint64_t member_at;       /* offset of the current member, for messages */
    uint64_t consumed;        /* compressed bytes consumed before zin's data */
    int in_eof;
    /* members whose headers give their size ("MS"), found on opening: these
     * are inflated side by side on `threads` threads */
    struct gz_member *members;
    size_t n_members, next_member;
    int threads;
    size_t head_len;          /* of the member at cpos, once checked */
    /* a large member of another kind, inflated on `threads` threads by
     * speculative block search (formats/inflate_par.c): the text it gave
     * and has yet to give */
    struct inflate_par *par;
    int small_members;        /* a member ended soon: none is inflated so */
    const unsigned char *par_text;
    size_t par_left;
    uint64_t par_given;
    /* bytes that zlib, inflating a member again, inflates once more */
    uint64_t skip;
};

/* Opens `in` as text (`gz`: gzip members, inflated on up to `threads`
 * threads where their headers give their sizes).  0 or a status after
 * saying why; close it either way. */
int text_source_open(struct text_source *s, struct gc_input *in, int gz, int threads);

/* Fills dst with up to `cap` bytes of text; *got == 0 only at the end.
 * 0 or GC_EXIT_INPUT after saying what is wrong, and where. */
int text_source_fill(struct text_source *s, char *dst, size_t cap, size_t *got);

void text_source_close(struct text_source *s);

#endif
