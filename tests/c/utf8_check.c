/* utf8_check FILE...: exit 0 if every file is valid UTF-8, else print
 * "FILE:LINE:COL: not UTF-8 (byte 0xNN)" for the first bad byte of each bad
 * file and exit 1 (2 if a file cannot be read). The integration tests run it
 * on what every text builder of `crescent data` writes. */
#include <stdio.h>
#include <stdlib.h>

#include "base/cr_alloc.h"
#include "base/cr_utf8.h"

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, len = 0, got;
    char *b = cr_xmalloc(cap);
    while ((got = fread(b + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) b = cr_xrealloc(b, cap *= 2);
    }
    fclose(f);
    *n = len;
    return b;
}

static int check(const char *path) {
    size_t n;
    char *b = slurp(path, &n);
    if (!b) {
        fprintf(stderr, "%s: cannot read\n", path);
        return 2;
    }
    size_t bad = cr_utf8_check(b, n);
    if (bad < n) {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < bad; i++) b[i] == '\n' ? (line++, col = 1) : col++;
        printf("%s:%zu:%zu: not UTF-8 (byte 0x%02x at offset %zu)\n", path, line, col, (unsigned char)b[bad], bad);
    }
    free(b);
    return bad < n;
}

int main(int argc, char **argv) {
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int r = check(argv[i]);
        if (r > rc) rc = r;
    }
    if (argc < 2) fprintf(stderr, "usage: utf8_check FILE...\n");
    return argc < 2 ? 2 : rc;
}
