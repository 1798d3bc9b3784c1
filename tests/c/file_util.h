#ifndef FILE_UTIL_H
#define FILE_UTIL_H
/* Helpers shared by the tests of what a writer may replace (test_file.c,
 * test_ckpt.c): the kind of a path, a small file's text, a file from text. */

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* 1 iff PATH itself (not what a link names) is of TYPE (S_IFREG, S_IFLNK, ...). */
static inline int is_mode(const char *path, mode_t type) {
    struct stat st;
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* 1 iff the file at PATH holds exactly TEXT (under 64 bytes). */
static inline int has_text(const char *path, const char *text) {
    char buf[64] = "";
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* Write TEXT to PATH (created or truncated); silent on failure (the checks
 * that follow fail instead). */
static inline void put_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

#endif
