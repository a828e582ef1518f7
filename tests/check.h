/* The host unit tests' one check: CHECK(cond, fmt, ...) counts a pass, or
 * counts a failure and prints "FAIL file:line: " and the message on
 * stderr.  A test prints its counts last and exits nonzero on a failure. */
#ifndef GC_TESTS_CHECK_H
#define GC_TESTS_CHECK_H

#include <stdint.h>
#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            passed++;                                                        \
        } else {                                                             \
            failed++;                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

/* The tests' random numbers: Marsaglia's xorshift, 64 bits, state *s
 * (not 0). */
static inline uint64_t check_xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
