/* Helpers shared by the data readers' tests: a temp dir, files from strings. */
#ifndef DATA_UTIL_H
#define DATA_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tdir[64];
#define DU_UNUSED __attribute__((unused))

DU_UNUSED static void tdir_make(void) {
    snprintf(tdir, sizeof tdir, "/tmp/cr_test_data.XXXXXX");
    if (!mkdtemp(tdir)) exit(1);
}

DU_UNUSED static int tdir_remove(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdir);
    return system(cmd);
}

DU_UNUSED static const char *tpath(const char *name) {
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tdir, name);
    return p[k];
}

DU_UNUSED static const char *tput(const char *name, const char *text) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "wb");
    fputs(text, f);
    fclose(f);
    return p;
}

/* Write text gzip-compressed, then cut the file to half its size. */
DU_UNUSED static const char *tput_truncated_gz(const char *name, const char *line, int copies) {
    const char *p = tpath(name);
    gzFile g = gzopen(p, "wb");
    for (int i = 0; i < copies; i++) gzprintf(g, line, i + 1);
    gzclose(g);
    struct stat st;
    stat(p, &st);
    if (truncate(p, st.st_size / 2) != 0) exit(1);
    return p;
}
#endif
