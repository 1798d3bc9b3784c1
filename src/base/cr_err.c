#include "base/cr_err.h"

#include <stdarg.h>
#include <stdio.h>

int cr_errf(cr_err *e, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int cr_errf_at(cr_err *e, const char *path, long line, const char *fmt, ...) {
    if (e) {
        int n = snprintf(e->msg, sizeof e->msg, "%s:%ld: ", path, line);
        if (n < 0 || (size_t)n >= sizeof e->msg) return -1;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg + n, sizeof e->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void cr_err_clear(cr_err *e) {
    if (e) e->msg[0] = '\0';
}
