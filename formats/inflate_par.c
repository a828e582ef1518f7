/* One deflate stream inflated on several threads, by speculative
 * block-boundary search, the method of "Rapidgzip: Parallel Decompression
 * and Seeking in Gzip Files Using Cache Prefetching" (Knespel, Brunst,
 * HPDC 2023), in an inflater of its own (RFC 1951).
 *
 * A round cuts the compressed bytes ahead into chunks and inflates them at
 * once, one thread each:
 *   - the first chunk starts where the stream is known to be, at a block
 *     boundary, with the last 32 KiB of output before it: it is inflated
 *     as any inflater would;
 *   - every other chunk looks, from its first bit on, for a bit offset
 *     where a dynamic-Huffman block that is not the last could start (its
 *     header holds valid, complete codes) and inflates from there without
 *     the window before it: a byte copied from that window is written as a
 *     marker, one 16-bit symbol (MARK + where in the window), and once 32
 *     KiB of output hold no marker the chunk goes on in bytes.
 * A chunk stops at the first block boundary at or after the first bit of
 * the next chunk.  Then, in order, a chunk is taken when the chunk before
 * it stopped at exactly the bit where it started, and the window is
 * carried on through it (only its last 32 KiB are resolved in this pass);
 * afterwards the chunks' markers are replaced by the bytes of the window
 * before each, side by side.  Where two chunks disagree (no block found, a
 * fixed or stored block, a false start), the stretch is inflated again
 * from where the previous chunk stopped, window known, on one thread.  So
 * the output is what a sequential inflater gives, bit for bit.  A chunk
 * whose output passes its share of a round by far ends the round at its
 * next block boundary.
 *
 * The CRC-32 of each stretch is taken on its thread and combined, and the
 * trailer's CRC and length are checked.  The inflater takes only what zlib
 * takes (complete codes, as zlib wants them, no distance before the
 * stream's start); on anything else, on a bad trailer, and on one block
 * whose output grows past a bound, the caller is told to inflate the
 * stream sequentially, which says what is wrong in zlib's words.  Whatever
 * the bytes, nothing is read outside data[0, len) and nothing written
 * outside the buffers, which grow to that bound.
 *
 * Checked by tests/test_formats.c (test_inflate_par: zlib the oracle, bits
 * flipped, noise) and fuzzed by tests/fuzz/run.sh 60 inflate_par. */
#include "formats/inflate_par.h"

#include <endian.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/parallel.h"

#define WSIZE 32768u            /* deflate's window */
#define MARK 256u               /* wide symbol MARK + i: byte i of the unknown window */
#define LIT_ROOT 10             /* bits of the first-level literal/length table */
#define DIST_ROOT 8
#define CL_ROOT 7               /* code-length codes are at most 7 bits: one level */
/* Room for the tables' second levels: a complete code of 286 (30) symbols
 * of up to 15 bits needs at most 1332 (402) entries with these roots; a
 * table that would need more is refused. */
#define LIT_CAP 2048u
#define DIST_CAP 1024u
/* Output room kept free past the end: one match, plus an 8-byte copy's overrun. */
#define SLACK (258u + 16u)

#define CHUNK_MIN ((size_t)128 << 10)
#define CHUNK_MAX ((size_t)32 << 20)
/* A chunk stops at a block boundary once its output passes its share of a
 * round (times SOFT_FACTOR, at least SOFT_MIN), and gives up inside a block
 * HARD_EXTRA past that: zlib's blocks hold at most 16384 symbols. */
#define SOFT_FACTOR 2
#define SOFT_MIN ((size_t)4 << 20)
#define HARD_EXTRA ((size_t)8 << 20)

/* --- Huffman tables -------------------------------------------------- */

/* A table entry: code length (or, for a link, the second level's index
 * bits) in bits 0-3, extra bits 4-7, kind 8-10, value 16-31 (a literal, a
 * base, or a link's offset). */
enum { K_LIT, K_BASE, K_EOB, K_LINK, K_BAD };
#define E_LEN(e) ((e) & 15u)
#define E_EXTRA(e) (((e) >> 4) & 15u)
#define E_KIND(e) (((e) >> 8) & 7u)
#define E_VAL(e) ((e) >> 16)
#define ENTRY(kind, extra, val) ((uint32_t)(val) << 16 | (uint32_t)(kind) << 8 | (uint32_t)(extra) << 4)

enum code_kind { CODE_CL, CODE_LIT, CODE_DIST };

static const uint16_t len_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                       15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                       67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t dist_base[30] = { 1,    2,    3,    4,    5,    7,     9,     13,
                                        17,   25,   33,   49,   65,   97,    129,   193,
                                        257,  385,  513,  769,  1025, 1537,  2049,  3073,
                                        4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
static const uint8_t cl_order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                      11, 4,  12, 3, 13, 2, 14, 1, 15 };

static uint32_t sym_entry(enum code_kind kind, unsigned sym)
{
    if (kind == CODE_CL)
        return ENTRY(K_LIT, 0, sym);
    if (kind == CODE_LIT)
        return sym < 256 ? ENTRY(K_LIT, 0, sym)
             : sym == 256 ? ENTRY(K_EOB, 0, 0)
             : sym < 286 ? ENTRY(K_BASE, len_extra[sym - 257], len_base[sym - 257])
             : ENTRY(K_BAD, 0, 0);
    return sym < 30 ? ENTRY(K_BASE, dist_extra[sym], dist_base[sym]) : ENTRY(K_BAD, 0, 0);
}

static unsigned reverse_bits(unsigned code, unsigned len)
{
    unsigned r = 0;
    for (unsigned i = 0; i < len; i++, code >>= 1)
        r = r << 1 | (code & 1);
    return r;
}

/* Fills a two-level table for the code lengths lens[0, n), as zlib's
 * inflate_table judges them: an over-subscribed code is refused, and so is
 * an incomplete one, except a single code of length 1 (literals and
 * distances) and no code at all (distances); their unused entries decode
 * as K_BAD.  0, or -1 for a code zlib refuses. */
static int build_table(uint32_t *table, unsigned cap, unsigned root, const uint8_t *lens,
                       unsigned n, enum code_kind kind)
{
    unsigned count[16] = { 0 }, offs[16], max = 0, codes = 0;
    uint16_t sorted[288];
    for (unsigned s = 0; s < n; s++)
        count[lens[s]]++;
    for (unsigned l = 1; l <= 15; l++)
        if (count[l]) {
            max = l;
            codes += count[l];
        }
    int left = 1;
    for (unsigned l = 1; l <= 15; l++) {
        left = 2 * left - (int)count[l];
        if (left < 0)
            return -1;
    }
    unsigned size = 1u << root;
    if (max == 0 || left > 0) {
        if (kind == CODE_CL || (max != 1 && !(max == 0 && kind == CODE_DIST)))
            return -1;
        for (unsigned j = 0; j < size; j++)
            table[j] = ENTRY(K_BAD, 0, 0) | 1u;
    }
    offs[1] = 0;
    for (unsigned l = 1; l < 15; l++)
        offs[l + 1] = offs[l] + count[l];
    for (unsigned s = 0; s < n; s++)
        if (lens[s])
            sorted[offs[lens[s]]++] = (uint16_t)s;
    unsigned code = 0, len = 0, next = size, sub_prefix = ~0u, sub_off = 0, sub_bits = 0;
    for (unsigned i = 0; i < codes; i++) {
        unsigned s = sorted[i], l = lens[s];
        if (i > 0)
            code = (code + 1) << (l - len);
        len = l;
        unsigned rev = reverse_bits(code, l);
        uint32_t e = sym_entry(kind, s) | l;
        if (l <= root) {
            for (unsigned j = rev; j < size; j += 1u << l)
                table[j] = e;
        } else {
            unsigned prefix = rev & (size - 1);
            if (prefix != sub_prefix) {
                /* As few index bits as the codes under this prefix need. */
                unsigned bits = l - root;
                int room = 1 << bits;
                while (bits + root < max) {
                    room -= (int)count[bits + root];
                    if (room <= 0)
                        break;
                    bits++;
                    room <<= 1;
                }
                if (next + (1u << bits) > cap)
                    return -1;
                sub_prefix = prefix;
                sub_off = next;
                sub_bits = bits;
                next += 1u << bits;
                table[prefix] = ENTRY(K_LINK, 0, sub_off) | bits;
            }
            for (unsigned j = rev >> root; j < (1u << sub_bits); j += 1u << (l - root))
                table[sub_off + j] = e;
        }
        count[l]--;
    }
    return 0;
}

struct tables {
    uint32_t lit[LIT_CAP];
    uint32_t dist[DIST_CAP];
    uint32_t cl[1u << CL_ROOT];
};

/* --- Reading bits ---------------------------------------------------- */

/* Bits are taken from the low end of buf; bits above `left` are either
 * zero or the stream's next bits, so that whole words can be OR-ed in. */
struct bitin {
    const uint8_t *data, *in, *end;
    uint64_t buf;
    unsigned left;
    unsigned over;             /* zero bytes supplied past the end */
};

static void bits_at(struct bitin *b, const uint8_t *data, size_t len, size_t bit)
{
    b->data = data;
    b->end = data + len;
    b->in = data + (bit >> 3 < len ? bit >> 3 : len);
    b->buf = 0;
    b->left = 0;
    b->over = 0;
    if (bit >> 3 < len && (bit & 7)) {
        b->buf = *b->in++ >> (bit & 7);
        b->left = 8 - (unsigned)(bit & 7);
    }
}

static size_t bits_pos(const struct bitin *b)
{
    return (size_t)(b->in - b->data + b->over) * 8 - b->left;
}

/* At least 56 bits in buf: 0, or -1 once bits past the end were needed. */
static inline int refill(struct bitin *b)
{
    if (b->end - b->in >= 8) {
        uint64_t w;
        memcpy(&w, b->in, 8);
        b->buf |= le64toh(w) << b->left;
        b->in += (63 - b->left) >> 3;
        b->left |= 56;
        return 0;
    }
    while (b->left <= 56) {
        if (b->in < b->end)
            b->buf |= (uint64_t)*b->in++ << b->left;
        else if (++b->over > 8)
            return -1;
        b->left += 8;
    }
    return 0;
}

static inline unsigned take(struct bitin *b, unsigned n)
{
    unsigned v = (unsigned)(b->buf & ((1ull << n) - 1));
    b->buf >>= n;
    b->left -= n;
    return v;
}

static inline uint32_t decode(struct bitin *b, const uint32_t *table, unsigned root)
{
    uint32_t e = table[b->buf & ((1u << root) - 1)];
    if (E_KIND(e) == K_LINK)
        e = table[E_VAL(e) + ((b->buf >> root) & ((1u << E_LEN(e)) - 1))];
    b->buf >>= E_LEN(e);
    b->left -= E_LEN(e);
    return e;
}

/* --- Block headers --------------------------------------------------- */

/* A dynamic block's header, after its three first bits, into t: 0, or -1
 * where zlib would refuse it. */
static int read_dynamic(struct bitin *b, struct tables *t)
{
    uint8_t lens[286 + 30], cl[19] = { 0 };
    if (refill(b))
        return -1;
    unsigned nlit = take(b, 5) + 257, ndist = take(b, 5) + 1, ncl = take(b, 4) + 4;
    if (nlit > 286 || ndist > 30)
        return -1;
    for (unsigned i = 0; i < ncl; i++) {
        if (refill(b))
            return -1;
        cl[cl_order[i]] = (uint8_t)take(b, 3);
    }
    if (build_table(t->cl, 1u << CL_ROOT, CL_ROOT, cl, 19, CODE_CL))
        return -1;
    unsigned n = 0, total = nlit + ndist;
    while (n < total) {
        if (refill(b))
            return -1;
        unsigned sym = E_VAL(decode(b, t->cl, CL_ROOT)), rep, val = 0;
        if (sym < 16) {
            lens[n++] = (uint8_t)sym;
            continue;
        }
        if (sym == 16) {
            if (n == 0)
                return -1;
            val = lens[n - 1];
            rep = 3 + take(b, 2);
        } else {
            rep = sym == 17 ? 3 + take(b, 3) : 11 + take(b, 7);
        }
        if (rep > total - n)
            return -1;
        memset(lens + n, (int)val, rep);
        n += rep;
    }
    if (lens[256] == 0)
        return -1;
    return build_table(t->lit, LIT_CAP, LIT_ROOT, lens, nlit, CODE_LIT) ||
                   build_table(t->dist, DIST_CAP, DIST_ROOT, lens + nlit, ndist, CODE_DIST)
               ? -1 : 0;
}

static void read_fixed(struct tables *t)
{
    uint8_t lens[288 + 32];
    memset(lens, 8, 144);
    memset(lens + 144, 9, 112);
    memset(lens + 256, 7, 24);
    memset(lens + 280, 8, 8);
    memset(lens + 288, 5, 32);
    build_table(t->lit, LIT_CAP, LIT_ROOT, lens, 288, CODE_LIT);
    build_table(t->dist, DIST_CAP, DIST_ROOT, lens + 288, 32, CODE_DIST);
}

/* --- Output ---------------------------------------------------------- */

/* What one stretch of the stream inflated to: first `wide` symbols (MARK +
 * i for byte i of the unknown window), then bytes.  Both buffers start
 * with WSIZE elements of window: markers in w, known bytes in n (the last
 * `nwin` of them). */
struct seg {
    size_t from;               /* bit offsets: where a chunk's bytes begin, */
    size_t start, stop, end;   /* where it started, where it was to stop,
                                * where it stopped */
    int final, cut, ok;
    uint16_t *w;
    size_t wlen, wcap;
    uint8_t *n;
    size_t nlen, ncap, nwin;
    uint32_t ncrc, wcrc;       /* of n's output, of w's once resolved */
    /* A taken stretch's markers' bytes: map[v] is symbol v's byte; symbols
     * below MARK + lo stand for bytes before the stream's start. */
    uint8_t *map;
    size_t lo;
    int bad;                   /* such a symbol was found */
};

/* Makes room for SLACK more elements after `used` in a buffer of WSIZE +
 * *cap + SLACK elements, doubling it, up to `hard`.  0 or -1. */
static int grow(void **buf, size_t *cap, size_t used, size_t hard, size_t esize)
{
    if (used + SLACK <= *cap)
        return 0;
    size_t want = *cap ? *cap * 2 : (size_t)1 << 20;
    while (want < used + SLACK)
        want *= 2;
    if (used > hard)
        return -1;
    void *nb = realloc(*buf, (WSIZE + want + SLACK) * esize);
    if (!nb)
        return -1;
    if (!*buf && esize == 2)
        for (unsigned i = 0; i < WSIZE; i++)
            ((uint16_t *)nb)[i] = (uint16_t)(MARK + i);
    *buf = nb;
    *cap = want;
    return 0;
}

/* --- Blocks ---------------------------------------------------------- */

static void copy_bytes(uint8_t *out, unsigned dist, unsigned len)
{
    const uint8_t *src = out - dist;
    if (dist >= 8) {
        for (unsigned i = 0; i < len; i += 8)
            memcpy(out + i, src + i, 8);
    } else if (dist == 1) {
        memset(out, src[0], len);
    } else {
        for (unsigned i = 0; i < len; i++)
            out[i] = src[i];
    }
}

/* One block's symbols in bytes, up to its end-of-block code: 0, or -1 on
 * a bad code, a distance past what is known, or output past `hard`. */
static int block_narrow(struct bitin *bp, const struct tables *t, struct seg *s, size_t hard)
{
    struct bitin b = *bp;
    int status = -1;
    for (;;) {
        if (grow((void **)&s->n, &s->ncap, s->nlen, hard, 1))
            break;
        uint8_t *base = s->n + WSIZE, *out = base + s->nlen, *stop = base + s->ncap;
        while (out < stop) {
            if (refill(&b))
                goto done;
            uint32_t e = decode(&b, t->lit, LIT_ROOT);
            if (E_KIND(e) == K_LIT) {
                *out++ = (uint8_t)E_VAL(e);
                if (b.left >= 15) {
                    e = decode(&b, t->lit, LIT_ROOT);
                    if (E_KIND(e) == K_LIT) {
                        *out++ = (uint8_t)E_VAL(e);
                        continue;
                    }
                    if (refill(&b))
                        goto done;
                } else {
                    continue;
                }
            }
            if (E_KIND(e) != K_BASE) {
                if (E_KIND(e) == K_EOB)
                    status = 0;
                s->nlen = (size_t)(out - base);
                goto done;
            }
            unsigned len = E_VAL(e) + take(&b, E_EXTRA(e));
            e = decode(&b, t->dist, DIST_ROOT);
            if (E_KIND(e) != K_BASE)
                goto done;
            unsigned dist = E_VAL(e) + take(&b, E_EXTRA(e));
            if (dist > (size_t)(out - base) + s->nwin)
                goto done;
            copy_bytes(out, dist, len);
            out += len;
        }
        s->nlen = (size_t)(out - base);
    }
done:
    *bp = b;
    return status;
}

/* Copies len symbols from dist back, 4 at a time where they do not
 * overlap (up to 3 more are written); nonzero when one was a marker. */
static uint64_t copy_wide(uint16_t *out, unsigned dist, unsigned len)
{
    const uint16_t *src = out - dist;
    uint64_t any = 0;
    if (dist >= 4) {
        for (unsigned i = 0; i < len; i += 4) {
            uint64_t v;
            memcpy(&v, src + i, 8);
            memcpy(out + i, &v, 8);
            any |= v;
        }
    } else {
        for (unsigned i = 0; i < len; i++) {
            out[i] = src[i];
            any |= src[i];
        }
    }
    return any & 0xff00ff00ff00ff00ull;
}

/* One block's symbols as 16-bit symbols; *clean: the output index after
 * which no marker was written (markers copy on as they are copied). */
static int block_wide(struct bitin *bp, const struct tables *t, struct seg *s, size_t hard,
                      size_t *clean)
{
    struct bitin b = *bp;
    int status = -1;
    for (;;) {
        if (grow((void **)&s->w, &s->wcap, s->wlen, hard, 2))
            break;
        uint16_t *base = s->w + WSIZE, *out = base + s->wlen, *stop = base + s->wcap;
        while (out < stop) {
            if (refill(&b))
                goto done;
            uint32_t e = decode(&b, t->lit, LIT_ROOT);
            if (E_KIND(e) == K_LIT) {
                *out++ = (uint16_t)E_VAL(e);
                if (b.left >= 15) {
                    e = decode(&b, t->lit, LIT_ROOT);
                    if (E_KIND(e) == K_LIT) {
                        *out++ = (uint16_t)E_VAL(e);
                        continue;
                    }
                    if (refill(&b))
                        goto done;
                } else {
                    continue;
                }
            }
            if (E_KIND(e) != K_BASE) {
                if (E_KIND(e) == K_EOB)
                    status = 0;
                s->wlen = (size_t)(out - base);
                goto done;
            }
            unsigned len = E_VAL(e) + take(&b, E_EXTRA(e));
            e = decode(&b, t->dist, DIST_ROOT);
            if (E_KIND(e) != K_BASE)
                goto done;
            /* At most 32768 back: never before the markers. */
            if (copy_wide(out, E_VAL(e) + take(&b, E_EXTRA(e)), len))
                *clean = (size_t)(out - base) + len;
            out += len;
        }
        s->wlen = (size_t)(out - base);
    }
done:
    *bp = b;
    return status;
}

/* A stored block's bytes, after its header's three bits. */
static int block_stored(struct bitin *b, struct seg *s, int wide, size_t hard)
{
    size_t pos = (bits_pos(b) + 7) / 8, len = (size_t)(b->end - b->data);
    if (pos + 4 > len)
        return -1;
    const uint8_t *p = b->data + pos;
    unsigned n = p[0] | (unsigned)p[1] << 8;
    if ((n ^ 0xffffu) != (p[2] | (unsigned)p[3] << 8) || pos + 4 + n > len)
        return -1;
    for (unsigned done = 0; done < n;) {
        size_t used = wide ? s->wlen : s->nlen;
        if (wide ? grow((void **)&s->w, &s->wcap, used, hard, 2)
                 : grow((void **)&s->n, &s->ncap, used, hard, 1))
            return -1;
        unsigned step = n - done < SLACK ? n - done : SLACK;
        if (wide) {
            for (unsigned i = 0; i < step; i++)
                s->w[WSIZE + used + i] = p[4 + done + i];
            s->wlen += step;
        } else {
            memcpy(s->n + WSIZE + used, p + 4 + done, step);
            s->nlen += step;
        }
        done += step;
    }
    bits_at(b, b->data, len, (pos + 4 + n) * 8);
    return 0;
}

/* --- Stretches ------------------------------------------------------- */

/* Inflates from s->start, a block boundary, to the first block boundary
 * at or after s->stop, or through the last block; `hist` (hist_len bytes)
 * is the output before it, NULL where unknown.  A stretch whose output
 * passes `soft` stops at the next block boundary (s->cut).  s->ok says
 * whether it went well. */
static void inflate_stretch(const uint8_t *data, size_t len, struct seg *s,
                            const uint8_t *hist, size_t hist_len, size_t soft)
{
    struct tables t;
    struct bitin b;
    size_t hard = soft + HARD_EXTRA, clean = 0;
    int wide = hist == NULL;
    s->wlen = s->nlen = 0;
    s->final = s->cut = s->ok = 0;
    s->ncrc = 0;
    if (grow((void **)&s->n, &s->ncap, 0, hard, 1) ||
        (wide && grow((void **)&s->w, &s->wcap, 0, hard, 2)))
        return;
    if (!wide) {
        memcpy(s->n + WSIZE - hist_len, hist, hist_len);
        s->nwin = hist_len;
    }
    bits_at(&b, data, len, s->start);
    for (;;) {
        size_t at = bits_pos(&b);
        if (at > len * 8)
            return;
        if (at >= s->stop || s->wlen + s->nlen >= soft) {
            s->cut = at < s->stop;
            s->end = at;
            break;
        }
        if (wide && s->wlen - clean >= WSIZE) {
            /* No marker in the last 32 KiB: bytes from here on. */
            for (unsigned i = 0; i < WSIZE; i++)
                s->n[i] = (uint8_t)s->w[s->wlen + i];
            s->nwin = WSIZE;
            wide = 0;
        }
        if (refill(&b))
            return;
        unsigned last = take(&b, 1), type = take(&b, 2);
        int status;
        if (type == 0) {
            status = block_stored(&b, s, wide, hard);
        } else if (type == 3) {
            return;
        } else {
            if (type == 1)
                read_fixed(&t);
            else if (read_dynamic(&b, &t))
                return;
            status = wide ? block_wide(&b, &t, s, hard, &clean) : block_narrow(&b, &t, s, hard);
        }
        if (status)
            return;
        if (last) {
            s->end = bits_pos(&b);
            if (s->end > len * 8)
                return;
            s->final = 1;
            break;
        }
    }
    s->ncrc = (uint32_t)libdeflate_crc32(0, s->n + WSIZE, s->nlen);
    s->ok = 1;
}

/* The first bit in [from, to) where a dynamic block that is not the last
 * could start, by its header; SIZE_MAX if none. */
static size_t find_block(const uint8_t *data, size_t len, size_t from, size_t to,
                         struct tables *t)
{
    for (size_t at = from; at < to; at++) {
        size_t byte = at >> 3;
        uint64_t x = 0;
        if (len - byte >= 8) {
            memcpy(&x, data + byte, 8);
            x = le64toh(x);
        } else {
            for (size_t i = byte; i < len; i++)
                x |= (uint64_t)data[i] << (8 * (i - byte));
        }
        x >>= at & 7;
        /* BFINAL 0, BTYPE 2, at most 286 literal/length and 30 distance codes */
        if ((x & 7) != 4 || ((x >> 3) & 31) > 29 || ((x >> 8) & 31) > 29)
            continue;
        /* The first code-length code lengths must not over-subscribe. */
        unsigned ncl = (unsigned)((x >> 13) & 15) + 4, kraft = 0;
        for (unsigned i = 0; i < ncl && i < 13; i++) {
            unsigned l = (unsigned)(x >> (17 + 3 * i)) & 7;
            kraft += l ? 128u >> l : 0;
        }
        if (kraft > 128)
            continue;
        struct bitin b;
        bits_at(&b, data, len, at + 3);
        if (read_dynamic(&b, t) == 0)
            return at;
    }
    return SIZE_MAX;
}

/* --- Rounds ---------------------------------------------------------- */

struct inflate_par {
    const uint8_t *data;
    size_t len;
    struct inflate_par_plan plan;
    size_t chunk;              /* compressed bytes a chunk now */
    size_t pos;                /* bit where the next round starts */
    uint8_t hist[WSIZE];       /* the output's last hist_len bytes */
    size_t hist_len;
    uint32_t crc;
    uint64_t total;
    size_t soft;               /* a stretch's output bound, this round */
    int k;                     /* chunks this round */
    struct seg *segs;          /* two a chunk: the chunk, and a bridge before it */
    struct seg **taken;        /* the round's stretches, in order */
    size_t n_taken, next_piece;
    int ended, failed;
    size_t used;
};

/* One chunk of a round: the first from the known position and window,
 * the others from the first block start found in their bytes. */
static void round_chunks(void *arg, size_t first, size_t last)
{
    struct inflate_par *p = arg;
    struct tables *t = malloc(sizeof *t);
    for (size_t j = first; j < last; j++) {
        struct seg *s = &p->segs[2 * j];
        if (j == 0) {
            s->start = p->pos;
            inflate_stretch(p->data, p->len, s, p->hist, p->hist_len, p->soft);
            continue;
        }
        s->ok = 0;
        size_t at = s->from, to = s->stop < p->len * 8 ? s->stop : p->len * 8;
        while (t && at < to && (at = find_block(p->data, p->len, at, to, t)) != SIZE_MAX) {
            s->start = at++;
            inflate_stretch(p->data, p->len, s, NULL, 0, p->soft);
            if (s->ok)
                break;
        }
    }
    free(t);
}

/* Keeps the last WSIZE bytes of the output in p->hist. */
static void hist_push(struct inflate_par *p, const uint8_t *text, size_t n)
{
    if (n >= WSIZE) {
        memcpy(p->hist, text + n - WSIZE, WSIZE);
        p->hist_len = WSIZE;
        return;
    }
    size_t keep = p->hist_len < WSIZE - n ? p->hist_len : WSIZE - n;
    memmove(p->hist, p->hist + p->hist_len - keep, keep);
    memcpy(p->hist + keep, text, n);
    p->hist_len = keep + n;
}

/* Resolves w's symbols [from, to) into bytes at dst (which may be w's own
 * memory, a byte a symbol: each is read before it is written over). */
static void resolve(struct seg *s, uint8_t *dst, size_t from, size_t to)
{
    const uint16_t *w = s->w + WSIZE;
    if (s->lo == 0) {
        for (size_t i = from; i < to; i++)
            dst[i - from] = s->map[w[i]];
        return;
    }
    for (size_t i = from; i < to; i++) {
        unsigned v = w[i];
        s->bad |= v >= MARK && v - MARK < s->lo;
        dst[i - from] = s->map[v < MARK + WSIZE ? v : 0];
    }
}

/* Takes a stretch that starts where the output stands: what its markers
 * stand for is the window now, and the window becomes its last bytes.
 * 0, or -1 out of memory or for a marker before the stream's start. */
static int take_stretch(struct inflate_par *p, struct seg *s)
{
    s->bad = 0;
    s->lo = WSIZE - p->hist_len;
    if (s->wlen) {
        if (!s->map && !(s->map = malloc(MARK + WSIZE)))
            return -1;
        for (unsigned v = 0; v < MARK; v++)
            s->map[v] = (uint8_t)v;
        memset(s->map + MARK, 0, s->lo);
        memcpy(s->map + MARK + s->lo, p->hist, p->hist_len);
    }
    if (s->nlen < WSIZE && s->wlen) {
        uint8_t tail[WSIZE];
        size_t n = s->wlen < WSIZE - s->nlen ? s->wlen : WSIZE - s->nlen;
        resolve(s, tail, s->wlen - n, s->wlen);
        if (s->bad)
            return -1;
        hist_push(p, tail, n);
    }
    hist_push(p, s->n + WSIZE, s->nlen);
    p->taken[p->n_taken++] = s;
    return 0;
}

/* The taken stretches' markers become bytes, and their CRCs are taken. */
static void round_resolve(void *arg, size_t first, size_t last)
{
    struct inflate_par *p = arg;
    for (size_t i = first; i < last; i++) {
        struct seg *s = p->taken[i];
        if (s->wlen) {
            uint8_t *text = (uint8_t *)(s->w + WSIZE);
            resolve(s, text, 0, s->wlen);
            s->wcrc = (uint32_t)libdeflate_crc32(0, text, s->wlen);
        }
    }
}

/* Inflates from *pos with the window known, into s, to the first block
 * boundary at or after `stop`, and takes it.  0, or -1. */
static int bridge(struct inflate_par *p, struct seg *s, size_t *pos, size_t stop)
{
    s->start = *pos;
    s->stop = stop;
    inflate_stretch(p->data, p->len, s, p->hist, p->hist_len, p->soft);
    if (!s->ok || take_stretch(p, s))
        return -1;
    *pos = s->end;
    return 0;
}

/* Takes the round's chunks in order, inflating again on this thread what
 * does not join up.  2 when the stream ended, 1 when a chunk was cut, 0
 * when the round went through, -1 on a fault. */
static int round_join(struct inflate_par *p)
{
    size_t pos = p->pos;
    for (int j = 0; j < p->k; j++) {
        struct seg *s = &p->segs[2 * j], *br = &p->segs[2 * j + 1];
        int usable = s->ok && s->start >= pos;
        if (usable && s->start > pos) {
            if (bridge(p, br, &pos, s->start))
                return -1;
            if (br->final || br->cut) {
                p->pos = pos;
                return br->final ? 2 : 1;
            }
            usable = pos == s->start;
        }
        if (usable) {
            if (take_stretch(p, s))
                return -1;
            pos = s->end;
        } else if (pos < s->stop) {
            if (bridge(p, s, &pos, s->stop))
                return -1;
        } else {
            continue;
        }
        if (s->final || s->cut) {
            p->pos = pos;
            return s->final ? 2 : 1;
        }
    }
    p->pos = pos;
    return 0;
}

/* The CRC and length of the round's output, in order; -1 when a marker
 * stood for a byte before the stream's start. */
static int round_sum(struct inflate_par *p)
{
    for (size_t i = 0; i < p->n_taken; i++) {
        const struct seg *s = p->taken[i];
        if (s->bad)
            return -1;
        if (s->wlen)
            p->crc = (uint32_t)crc32_combine(p->crc, s->wcrc, (z_off_t)s->wlen);
        if (s->nlen)
            p->crc = (uint32_t)crc32_combine(p->crc, s->ncrc, (z_off_t)s->nlen);
        p->total += s->wlen + s->nlen;
    }
    return 0;
}

/* Checks the trailer after the last block, which ended at bit p->pos. */
static int check_trailer(struct inflate_par *p)
{
    size_t at = (p->pos + 7) / 8;
    if (at + 8 > p->len)
        return -1;
    const uint8_t *q = p->data + at;
    uint32_t crc = q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
    uint32_t size = q[4] | (uint32_t)q[5] << 8 | (uint32_t)q[6] << 16 | (uint32_t)q[7] << 24;
    if (crc != p->crc || size != (uint32_t)p->total)
        return -1;
    p->used = at + 8;
    return 0;
}

/* Lays out a round's chunks from p->pos: chunk j's first bit and the bit
 * it stops at, the last one running to the stream's end when little
 * would be left after it. */
static void round_plan(struct inflate_par *p)
{
    size_t from = p->pos / 8, left = p->len - from, c = p->chunk;
    int k = p->plan.chunks;
    /* Near the end, what is left is shared out evenly. */
    if (!p->plan.chunk_bytes && left < (size_t)k * c + c / 2)
        c = left / (size_t)k > CHUNK_MIN ? left / (size_t)k : CHUNK_MIN;
    k = 1;
    while (k < p->plan.chunks && left > (size_t)k * c + c / 2)
        k++;
    p->k = k;
    for (int j = 0; j < k; j++) {
        struct seg *s = &p->segs[2 * j];
        s->from = s->start = j == 0 ? p->pos : (from + (size_t)j * c) * 8;
        s->stop = j + 1 < k ? (from + (size_t)(j + 1) * c) * 8 : SIZE_MAX;
    }
    if (left > (size_t)k * c + c / 2)
        p->segs[2 * (k - 1)].stop = (from + (size_t)k * c) * 8;
    p->soft = INFLATE_PAR_ROUND / (size_t)k * SOFT_FACTOR;
    if (p->soft < SOFT_MIN)
        p->soft = SOFT_MIN;
}

/* Sizes the chunks for the next round from the ratio of the last. */
static void round_adapt(struct inflate_par *p, size_t bits_in, uint64_t out)
{
    if (p->plan.chunk_bytes || bits_in < 8 * 1024)
        return;   /* too little to go by */
    double ratio = (double)out / (double)(bits_in / 8);
    double c = (double)INFLATE_PAR_ROUND / p->plan.chunks / (ratio > 1 ? ratio : 1);
    p->chunk = c < CHUNK_MIN ? CHUNK_MIN : c > CHUNK_MAX ? CHUNK_MAX : (size_t)c;
}

static int round_run(struct inflate_par *p)
{
    size_t pos = p->pos;
    uint64_t total = p->total;
    p->n_taken = p->next_piece = 0;
    round_plan(p);
    parallel_for(p->plan.threads, (size_t)p->k, 1, round_chunks, p);
    int r = round_join(p);
    if (r < 0)
        return -1;
    parallel_for(p->plan.threads, p->n_taken, 1, round_resolve, p);
    if (round_sum(p))
        return -1;
    if (r == 2) {
        if (check_trailer(p))
            return -1;
        p->ended = 1;
    }
    round_adapt(p, p->pos - pos, p->total - total);
    return 0;
}

struct inflate_par *inflate_par_open(const unsigned char *data, size_t len,
                                     const struct inflate_par_plan *plan)
{
    struct inflate_par *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->data = data;
    p->len = len;
    p->plan = *plan;
    if (p->plan.threads < 1)
        p->plan.threads = 1;
    if (p->plan.chunks < 1)
        p->plan.chunks = p->plan.threads;
    /* Text compresses about 4:1 until the first round says otherwise. */
    p->chunk = p->plan.chunk_bytes;
    if (!p->chunk)
        round_adapt(p, (INFLATE_PAR_ROUND / 4) * 8, INFLATE_PAR_ROUND);
    p->segs = calloc(2 * (size_t)p->plan.chunks, sizeof *p->segs);
    p->taken = calloc(2 * (size_t)p->plan.chunks, sizeof *p->taken);
    if (!p->segs || !p->taken) {
        inflate_par_close(p);
        return NULL;
    }
    return p;
}

int inflate_par_next(struct inflate_par *p, const unsigned char **text, size_t *n, size_t *used)
{
    for (;;) {
        /* Each taken stretch gives two pieces: its resolved symbols, its bytes. */
        while (p->next_piece < 2 * p->n_taken) {
            const struct seg *s = p->taken[p->next_piece / 2];
            int bytes = p->next_piece++ & 1;
            *n = bytes ? s->nlen : s->wlen;
            if (*n) {
                *text = bytes ? s->n + WSIZE : (const uint8_t *)(s->w + WSIZE);
                return 1;
            }
        }
        if (p->ended) {
            *used = p->used;
            return 0;
        }
        if (p->failed || round_run(p)) {
            p->failed = 1;
            return -1;
        }
    }
}

void inflate_par_close(struct inflate_par *p)
{
    if (!p)
        return;
    for (int j = 0; p->segs && j < 2 * p->plan.chunks; j++) {
        free(p->segs[j].w);
        free(p->segs[j].n);
        free(p->segs[j].map);
    }
    free(p->segs);
    free(p->taken);
    free(p);
}
