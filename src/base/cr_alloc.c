#include "base/cr_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n) {
    fprintf(stderr, "crescent: out of memory (requested %zu bytes)\n", n);
    abort();
}

void *cr_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *cr_xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) oom(count * size);
    return p;
}

void *cr_xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *cr_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = cr_xmalloc(n);
    memcpy(p, s, n);
    return p;
}
