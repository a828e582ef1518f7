#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

void gc_capture_emit(const struct gc_capture *c)
{
    fwrite(c->text, 1, c->len, stderr);
}

/* One message: "gemmcli: <prefix><message>\n", to the capture or stderr. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
    if (!capture) {
        fprintf(stderr, "gemmcli: %s%s", origin, prefix);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        return;
    }
    char line[sizeof capture->text];
    int head = snprintf(line, sizeof line, "gemmcli: %s%s", origin, prefix);
    int body = vsnprintf(line + head, sizeof line - (size_t)head, fmt, ap);
    size_t n = (size_t)head + (body > 0 ? (size_t)body : 0);
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    size_t room = sizeof capture->text - capture->len;
    if (n > room)
        n = room;
    memcpy(capture->text + capture->len, line, n);
    capture->len += n;
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
