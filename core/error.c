#include "core/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static _Thread_local struct gc_capture *capture;
/* Which process of several speaks ("rank 2 of 4: "); set once, first. */
static char origin[48];

void gc_error_origin(const char *who)
{
    snprintf(origin, sizeof origin, "%s", who ? who : "");
}

void gc_capture_set(struct gc_capture *c)
{
    if (c)
        c->len = 0;
    capture = c;
}

/* All of `n` bytes to descriptor 2, in one write(2) unless the kernel
 * takes less (then the rest follows at once). */
static void write_stderr(const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

void gc_capture_emit(const struct gc_capture *c)
{
    write_stderr(c->text, c->len);
}

/* The length of the UTF-8 sequence at `s` that encodes a printable
 * character (not one of the C1 controls U+0080..U+009F), else 0. */
static size_t utf8_printable(const unsigned char *s)
{
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (s[0] > 0xf4)
        len = 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)
        return 0;
    return len;
}

size_t gc_escape(char *out, size_t cap, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t used = 0;
    while (*s) {
        char piece[8];
        size_t len = 0, take = 1;
        if (*s == '\\') {
            len = (size_t)snprintf(piece, sizeof piece, "\\\\");
        } else if (*s == '\n' || *s == '\t' || *s == '\r') {
            len = (size_t)snprintf(piece, sizeof piece, "\\%c",
                                   *s == '\n' ? 'n' : *s == '\t' ? 't' : 'r');
        } else if (*s < 0x20 || *s == 0x7f) {
            len = (size_t)snprintf(piece, sizeof piece, "\\x%02x", *s);
        } else if (*s < 0x80) {
            piece[0] = (char)*s;
            len = 1;
        } else if ((take = utf8_printable(s)) > 0) {
            memcpy(piece, s, take);
            len = take;
        } else {
            take = 1;
            len = (size_t)snprintf(piece, sizeof piece, "\\x%02x", *s);
        }
        if (used + len + 1 > cap)
            break;
        memcpy(out + used, piece, len);
        used += len;
        s += take;
    }
    if (cap)
        out[used] = '\0';
    return used;
}

/* One message: "gemmcli: <prefix><message>\n", its control characters
 * escaped, to the capture or in one write(2) to stderr, so that the
 * messages of threads failing at once never run together. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
    int saved_errno = errno;
    char body[8192], line[4 * sizeof body];
    vsnprintf(body, sizeof body, fmt, ap);
    int head = snprintf(line, sizeof line, "gemmcli: %s%s", origin, prefix);
    size_t n = (size_t)head + gc_escape(line + head, sizeof line - (size_t)head - 1, body);
    line[n++] = '\n';
    if (!capture) {
        write_stderr(line, n);
    } else {
        size_t room = sizeof capture->text - capture->len;
        n = n > room ? room : n;
        memcpy(capture->text + capture->len, line, n);
        capture->len += n;
    }
    errno = saved_errno;
}

int gc_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
    return status;
}

void gc_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("warning: ", fmt, ap);
    va_end(ap);
}

void gc_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("note: ", fmt, ap);
    va_end(ap);
}

const char *gc_display_name(const char *path, int is_output)
{
    if (strcmp(path, "-") == 0)
        return is_output ? "<stdout>" : "<stdin>";
    return path;
}
