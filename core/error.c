#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int gc_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gemmcli: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

void gc_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gemmcli: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void gc_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gemmcli: note: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *gc_display_name(const char *path, int is_output)
{
    if (strcmp(path, "-") == 0)
        return is_output ? "<stdout>" : "<stdin>";
    return path;
}
