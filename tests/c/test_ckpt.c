#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "base/cr_err.h"
#include "base/cr_rng.h"
#include "cr_test.h"
#include "file_util.h"
#include "ps/cr_ckpt.h"

static char dir[64];

static const char *tmp_path(const char *name) {
    static char buf[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Deterministic value for (table, key, column): checks compare exactly. */
static float val(int t, int64_t k, int c) { return (float)(t * 1000003 + k * 31 + c) * 0.001f; }
static float sval(int t, int64_t k, int c) { return -val(t, k, c) - 0.5f; }

typedef struct spec {
    const char *name;
    int64_t keys;
    int32_t dim, sd;
    const char *opt;
} spec;

static const spec SPECS[] = {
    {"W", 1000, 7, 7, "adagrad"},
    {"H", 40000, 16, 0, "sgd"},  /* several blocks */
    {"E", 0, 3, 0, ""},          /* empty table */
    {"B", 5, 300000, 1, "adam"}, /* rows bigger than a block */
};
#define NSPECS ((int)(sizeof SPECS / sizeof SPECS[0]))

/* Write the tables of SPECS[0..n) in chunks of `chunk` rows. */
static int write_file(const char *path, int n, int64_t chunk, cr_err *e) {
    cr_ckpt_writer *w = cr_ckpt_writer_open(path, e);
    if (!w) return -1;
    if (cr_ckpt_put_meta(w, "clock", "12", e) || cr_ckpt_put_meta(w, "policy", "ssp:staleness=2", e) ||
        cr_ckpt_put_meta(w, "empty", "", e) || cr_ckpt_put_meta(w, "clock", "13", e))
        goto fail;
    for (int t = 0; t < n; t++) {
        const spec *s = &SPECS[t];
        if (cr_ckpt_put_table(w, s->name, s->keys, s->dim, s->opt, s->sd, e)) goto fail;
        size_t cap = (size_t)(chunk < s->keys ? chunk : s->keys > 0 ? s->keys : 1);
        float *v = malloc(cap * (size_t)s->dim * 4), *st = malloc(cap * (size_t)(s->sd + 1) * 4);
        for (int64_t k0 = 0; k0 < s->keys; k0 += chunk) {
            int64_t m = s->keys - k0 < chunk ? s->keys - k0 : chunk;
            for (int64_t i = 0; i < m; i++) {
                for (int c = 0; c < s->dim; c++) v[i * s->dim + c] = val(t, k0 + i, c);
                for (int c = 0; c < s->sd; c++) st[i * s->sd + c] = sval(t, k0 + i, c);
            }
            if (cr_ckpt_put_rows(w, m, v, s->sd ? st : NULL, e)) {
                free(v);
                free(st);
                goto fail;
            }
        }
        free(v);
        free(st);
    }
    return cr_ckpt_writer_commit(&w, e);
fail:
    cr_ckpt_writer_abort(&w);
    return -1;
}

/* Read everything back in chunks of `chunk` rows and compare. */
static int check_file(const char *path, int n, int64_t chunk) {
    cr_err e = {{0}};
    cr_ckpt_reader *r = cr_ckpt_reader_open(path, &e);
    if (!r) {
        printf("  open: %s\n", e.msg);
        return 0;
    }
    int ok = strcmp(cr_ckpt_get_meta(r, "clock"), "13") == 0 &&
             strcmp(cr_ckpt_get_meta(r, "policy"), "ssp:staleness=2") == 0 &&
             strcmp(cr_ckpt_get_meta(r, "empty"), "") == 0 && cr_ckpt_get_meta(r, "nope") == NULL;
    cr_ckpt_table_info info;
    for (int t = 0; ok && t < n; t++) {
        const spec *s = &SPECS[t];
        ok = cr_ckpt_next_table(r, &info, &e) == 1 && strcmp(info.name, s->name) == 0 &&
             info.keys == s->keys && info.dim == s->dim && info.state_dim == s->sd &&
             strcmp(info.optimizer, s->opt) == 0;
        size_t cap = (size_t)(chunk < s->keys ? chunk : s->keys > 0 ? s->keys : 1);
        float *v = malloc(cap * (size_t)s->dim * 4), *st = malloc(cap * (size_t)(s->sd + 1) * 4);
        for (int64_t k0 = 0; ok && k0 < s->keys; k0 += chunk) {
            int64_t m = s->keys - k0 < chunk ? s->keys - k0 : chunk;
            ok = cr_ckpt_get_rows(r, m, v, st, &e) == 0;
            for (int64_t i = 0; ok && i < m; i++) {
                for (int c = 0; c < s->dim; c++) ok = ok && v[i * s->dim + c] == val(t, k0 + i, c);
                for (int c = 0; c < s->sd; c++) ok = ok && st[i * s->sd + c] == sval(t, k0 + i, c);
            }
        }
        if (ok && s->keys > 0) ok = cr_ckpt_get_rows(r, 1, v, st, &e) == -1; /* no row beyond keys */
        free(v);
        free(st);
    }
    if (ok) ok = cr_ckpt_next_table(r, &info, &e) == 0 && cr_ckpt_next_table(r, &info, &e) == 0;
    cr_ckpt_reader_close(&r);
    return ok && r == NULL;
}

static void test_round_trip(void) {
    cr_err e;
    const char *p = tmp_path("rt.ckpt");
    CR_CHECK(write_file(p, NSPECS, 37, &e) == 0);
    CR_CHECK(check_file(p, NSPECS, 13));
    CR_CHECK(check_file(p, NSPECS, 4096));
    CR_CHECK(write_file(p, NSPECS, 40000, &e) == 0); /* overwrite an existing checkpoint */
    CR_CHECK(check_file(p, NSPECS, 999));
    CR_CHECK(!exists(tmp_path("rt.ckpt.tmp")));
}

static void test_skip_unread_rows(void) {
    cr_err e;
    const char *p = tmp_path("skip.ckpt");
    CR_CHECK(write_file(p, 2, 100, &e) == 0);
    cr_ckpt_reader *r = cr_ckpt_reader_open(p, &e);
    CR_CHECK(r != NULL);
    cr_ckpt_table_info info;
    float v[7 * 3], s[7 * 3];
    CR_CHECK(cr_ckpt_next_table(r, &info, &e) == 1);
    CR_CHECK(cr_ckpt_get_rows(r, 3, v, s, &e) == 0);
    CR_CHECK(v[7] == val(0, 1, 0) && s[8] == sval(0, 1, 1));
    CR_CHECK(cr_ckpt_next_table(r, &info, &e) == 1);
    CR_CHECK_STR(info.name, "H");
    float h[16];
    CR_CHECK(cr_ckpt_get_rows(r, 1, h, NULL, &e) == 0);
    CR_CHECK(h[15] == val(1, 0, 15));
    cr_ckpt_reader_close(&r);
}

static void test_meta_only(void) {
    cr_err e;
    const char *p = tmp_path("meta.ckpt");
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(w != NULL);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CR_CHECK(cr_ckpt_put_meta(w, "rng", "0123456789abcdef 42", &e) == 0);
    CR_CHECK(cr_ckpt_put_meta(w, "curve", big, &e) == 0);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == 0);
    CR_CHECK(w == NULL);
    cr_ckpt_reader *r = cr_ckpt_reader_open(p, &e);
    CR_CHECK(r != NULL);
    CR_CHECK_STR(cr_ckpt_get_meta(r, "rng"), "0123456789abcdef 42");
    CR_CHECK_STR(cr_ckpt_get_meta(r, "curve"), big);
    CR_CHECK(cr_ckpt_meta_count(r) == 2);
    CR_CHECK_STR(cr_ckpt_meta_key(r, 0), "rng");
    CR_CHECK_STR(cr_ckpt_meta_key(r, 1), "curve");
    CR_CHECK(cr_ckpt_meta_key(r, 2) == NULL && cr_ckpt_meta_key(r, -1) == NULL);
    cr_ckpt_table_info info;
    CR_CHECK(cr_ckpt_next_table(r, &info, &e) == 0);
    cr_ckpt_reader_close(&r);
}

/* Copy the first n bytes of src to dst, optionally flipping byte `flip`. */
static long copy_file(const char *src, const char *dst, long n, long flip) {
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    long i = 0;
    int c;
    while ((n < 0 || i < n) && (c = fgetc(in)) != EOF) {
        fputc(i == flip ? c ^ 0x10 : c, out);
        i++;
    }
    fclose(in);
    fclose(out);
    return i;
}

static long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static int refused_with(const char *path, const char *what) {
    cr_err e = {{0}};
    cr_ckpt_reader *r = cr_ckpt_reader_open(path, &e);
    if (r) {
        cr_ckpt_reader_close(&r);
        printf("  %s: accepted, expected '%s'\n", path, what);
        return 0;
    }
    if (strncmp(e.msg, path, strlen(path)) != 0 || !strstr(e.msg, what)) {
        printf("  got '%s', expected '%s'\n", e.msg, what);
        return 0;
    }
    return 1;
}

static void test_truncated(void) {
    cr_err e;
    const char *p = tmp_path("full.ckpt"), *t = tmp_path("trunc.ckpt");
    CR_CHECK(write_file(p, 2, 500, &e) == 0);
    long size = file_size(p);
    long cuts[] = {3, 8, 15, 16, 17, 31, 40, 100, size / 2, size - 17, size - 16, size - 15, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        copy_file(p, t, cuts[i], -1);
        CR_CHECK(refused_with(t, "truncated"));
    }
    copy_file(p, t, 0, -1);
    CR_CHECK(refused_with(t, "not a crescent checkpoint"));
}

static void test_flipped_bytes(void) {
    cr_err e;
    const char *p = tmp_path("small.ckpt"), *t = tmp_path("flip.ckpt");
    CR_CHECK(write_file(p, 1, 64, &e) == 0); /* table W, ~30 kB: flip every byte near the ends, a sample between */
    long size = file_size(p);
    for (long i = 0; i < size; i += (i < 400 || i > size - 400) ? 1 : 61) {
        copy_file(p, t, -1, i);
        cr_ckpt_reader *r = cr_ckpt_reader_open(t, &e);
        if (r) printf("  flip at %ld accepted\n", i);
        cr_ckpt_reader_close(&r);
        CR_CHECK(r == NULL);
    }
    /* a byte inside table W's rows: the block crc names the table */
    copy_file(p, t, -1, size / 2);
    CR_CHECK(refused_with(t, "checksum mismatch in table W"));
    copy_file(p, t, -1, size - 20);
    CR_CHECK(refused_with(t, "checksum mismatch in end block"));
}

static void test_wrong_magic_version_missing(void) {
    cr_err e;
    const char *p = tmp_path("v.ckpt"), *t = tmp_path("v2.ckpt");
    CR_CHECK(write_file(p, 1, 1000, &e) == 0);
    copy_file(p, t, -1, 0);
    CR_CHECK(refused_with(t, "not a crescent checkpoint"));
    FILE *f = fopen(t, "wb");
    fputs("W 1 2 3\nH 4 5 6\n", f);
    fclose(f);
    CR_CHECK(refused_with(t, "not a crescent checkpoint"));
    copy_file(p, t, -1, -1);
    f = fopen(t, "r+b");
    fseek(f, 8, SEEK_SET);
    fputc(CR_CKPT_VERSION + 1, f);
    fclose(f);
    CR_CHECK(refused_with(t, "version 3 not supported (this build reads versions 1 to 2)"));
    CR_CHECK(refused_with(tmp_path("missing.ckpt"), "cannot open: No such file"));
    CR_CHECK(refused_with(dir, "not a regular file"));
}

static void test_commit_and_abort(void) {
    cr_err e;
    const char *p = tmp_path("c.ckpt"), *tmp = tmp_path("c.ckpt.tmp");
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(w != NULL && exists(tmp) && !exists(p));
    cr_ckpt_writer_abort(&w);
    CR_CHECK(w == NULL && !exists(tmp) && !exists(p));
    cr_ckpt_writer_abort(&w); /* idempotent */
    cr_ckpt_writer_abort(NULL);

    CR_CHECK(write_file(p, 1, 10, &e) == 0);
    CR_CHECK(exists(p) && !exists(tmp));
    long size = file_size(p);
    /* a failed commit leaves the old checkpoint alone */
    w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(cr_ckpt_put_table(w, "W", 3, 7, "sgd", 7, &e) == 0);
    float row2[14] = {0}, st2[14] = {0};
    CR_CHECK(cr_ckpt_put_rows(w, 2, row2, st2, &e) == 0);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == -1);
    CR_CHECK(strstr(e.msg, "table 'W' got 2 of 3 rows") != NULL);
    CR_CHECK(w == NULL && !exists(tmp) && file_size(p) == size);
    CR_CHECK(check_file(p, 1, 1000));
}

static void test_misuse(void) {
    cr_err e;
    const char *p = tmp_path("m.ckpt");
    float row[4] = {0};
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(cr_ckpt_put_rows(w, 1, row, NULL, &e) == -1); /* no table yet */
    CR_CHECK(cr_ckpt_put_table(w, "", 1, 1, "", 0, &e) == -1);
    CR_CHECK(cr_ckpt_put_table(w, "T", 1, 0, "", 0, &e) == -1);
    CR_CHECK(cr_ckpt_put_table(w, "T", 2, 4, "", 0, &e) == 0);
    CR_CHECK(cr_ckpt_put_meta(w, "late", "x", &e) == -1);
    CR_CHECK(strstr(e.msg, "after a table") != NULL);
    CR_CHECK(cr_ckpt_put_table(w, "T", 2, 4, "", 0, &e) == -1); /* duplicate name */
    CR_CHECK(cr_ckpt_put_rows(w, 3, row, NULL, &e) == -1);       /* more rows than keys */
    CR_CHECK(strstr(e.msg, "3 rows given, 2 left") != NULL);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == -1); /* writer failed: commit refuses */
    CR_CHECK(!exists(p) && !exists(tmp_path("m.ckpt.tmp")));
    CR_CHECK(cr_ckpt_writer_open("/nonexistent-dir/x.ckpt", &e) == NULL);
    CR_CHECK(strstr(e.msg, "/nonexistent-dir/x.ckpt.tmp: cannot create") != NULL);
}

/* ---- probe defect 3: only a missing PATH or a regular file is replaced */

/* Writer open refuses PATH with exactly the message a user sees, and writes
 * nothing (no PATH.tmp either). */
static int refuses(const char *path, const char *kind) {
    cr_err e;
    char want[512], tmp[300];
    snprintf(want, sizeof want, "%s: not a regular file (%s); refusing to replace it", path, kind);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cr_ckpt_writer *w = cr_ckpt_writer_open(path, &e);
    if (w) {
        cr_ckpt_writer_abort(&w);
        return 0;
    }
    if (strcmp(e.msg, want) != 0) printf("  got \"%s\"\n", e.msg);
    return strcmp(e.msg, want) == 0 && !exists(tmp);
}

static void test_refuse_special_targets(void) {
    CR_CHECK(refuses("/dev/null", "character device"));
    CR_CHECK(is_mode("/dev/null", S_IFCHR));
    const char *target = tmp_path("victim"), *link = tmp_path("link.ckpt");
    put_text(target, "keep");
    CR_CHECK(symlink(target, link) == 0);
    CR_CHECK(refuses(link, "symbolic link"));
    CR_CHECK(is_mode(link, S_IFLNK) && has_text(target, "keep"));
    const char *dangling = tmp_path("dangling.ckpt");
    CR_CHECK(symlink(tmp_path("nowhere"), dangling) == 0);
    CR_CHECK(refuses(dangling, "symbolic link"));
    CR_CHECK(is_mode(dangling, S_IFLNK) && !exists(tmp_path("nowhere")));
    const char *fifo = tmp_path("fifo.ckpt");
    CR_CHECK(mkfifo(fifo, 0600) == 0);
    CR_CHECK(refuses(fifo, "fifo"));
    CR_CHECK(is_mode(fifo, S_IFIFO));
    const char *sub = tmp_path("sub.ckpt");
    CR_CHECK(mkdir(sub, 0700) == 0);
    CR_CHECK(refuses(sub, "directory"));
    CR_CHECK(is_mode(sub, S_IFDIR));
}

/* PATH.tmp is never written through: a symlink there is refused (its target
 * untouched), a hard link to another file is replaced by a new file. */
static void test_tmp_not_followed(void) {
    cr_err e;
    char victim[256], p[256], tmp[256]; /* tmp_path's buffers rotate */
    snprintf(victim, sizeof victim, "%s", tmp_path("victim2"));
    snprintf(p, sizeof p, "%s", tmp_path("t.ckpt"));
    snprintf(tmp, sizeof tmp, "%s", tmp_path("t.ckpt.tmp"));
    put_text(victim, "keep");
    CR_CHECK(symlink(victim, tmp) == 0);
    CR_CHECK(cr_ckpt_writer_open(p, &e) == NULL);
    CR_CHECK(strstr(e.msg, "t.ckpt.tmp: not a regular file (symbolic link); refusing") != NULL);
    CR_CHECK(has_text(victim, "keep") && is_mode(tmp, S_IFLNK) && !exists(p));
    unlink(tmp);
    CR_CHECK(link(victim, tmp) == 0);
    CR_CHECK(write_file(p, 1, 10, &e) == 0);
    CR_CHECK(has_text(victim, "keep") && check_file(p, 1, 1000) && !exists(tmp));
}

/* PATH turning into a symlink while the checkpoint is written: the commit
 * checks again and refuses; the symlink and its target stay as they were. */
static void test_target_swapped_before_commit(void) {
    cr_err e;
    const char *victim = tmp_path("victim3"), *p = tmp_path("swap.ckpt");
    put_text(victim, "keep");
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(w != NULL);
    CR_CHECK(symlink(victim, p) == 0);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == -1 && w == NULL);
    CR_CHECK(strstr(e.msg, "swap.ckpt: not a regular file (symbolic link); refusing to replace it") != NULL);
    CR_CHECK(is_mode(p, S_IFLNK) && has_text(victim, "keep") && !exists(tmp_path("swap.ckpt.tmp")));
}

/* ---- hand-made files: correct crcs, bad structure (what a careless or
 * hostile writer could produce); each must be refused, never crash. */

typedef struct craft {
    unsigned char buf[8192];
    size_t len;
} craft;

static void c_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void c_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void c_start_v(craft *c, uint32_t version) {
    memcpy(c->buf, "CRCKPT\r\n", 8);
    c_u32(c->buf + 8, version);
    c_u32(c->buf + 12, 0);
    c->len = 16;
}

static void c_start(craft *c) { c_start_v(c, 1); }

/* Append a block; claim_raw overrides the stated raw length when >= 0. */
static void c_block(craft *c, uint32_t type, const void *raw, size_t n, long claim_raw) {
    unsigned char comp[4096];
    uLongf clen = sizeof comp;
    compress2(comp, &clen, raw, (uLong)n, 1);
    unsigned char *h = c->buf + c->len;
    c_u32(h, type);
    c_u32(h + 4, claim_raw >= 0 ? (uint32_t)claim_raw : (uint32_t)n);
    c_u32(h + 8, (uint32_t)clen);
    uLong crc = crc32(crc32(0L, h, 12), comp, (uInt)clen);
    c_u32(h + 12, (uint32_t)crc);
    memcpy(h + 16, comp, clen);
    c->len += 16 + clen;
}

static void c_table(craft *c, const char *name, int64_t keys, int32_t dim, int32_t sd) {
    unsigned char t[112] = {0};
    memcpy(t, name, strlen(name));
    c_u64(t + 64, (uint64_t)keys);
    c_u32(t + 72, (uint32_t)dim);
    c_u32(t + 108, (uint32_t)sd);
    c_block(c, 2, t, sizeof t, -1);
}

static void c_rows(craft *c, int64_t first, int64_t n, int32_t width) {
    unsigned char r[2048] = {0};
    c_u64(r, (uint64_t)first);
    c_u64(r + 8, (uint64_t)n);
    c_block(c, 3, r, 16 + (size_t)(n * width * 4), -1);
}

static void c_finish(craft *c, const char *path) {
    c_block(c, 4, "", 0, -1);
    unsigned char *f = c->buf + c->len;
    c_u64(f, c->len);
    c_u32(f + 8, (uint32_t)crc32(0L, c->buf, (uInt)c->len));
    memcpy(f + 12, "CKND", 4);
    c->len += 16;
    FILE *out = fopen(path, "wb");
    fwrite(c->buf, 1, c->len, out);
    fclose(out);
}

/* Open and read everything; 1 if refused somewhere (open, next, get). */
static int refused_anywhere(const char *path) {
    cr_err e;
    cr_ckpt_reader *r = cr_ckpt_reader_open(path, &e);
    if (!r) return 1;
    cr_ckpt_table_info info;
    int rc, bad = 0;
    float buf[64];
    while (!bad && (rc = cr_ckpt_next_table(r, &info, &e)) == 1)
        for (int64_t k = 0; !bad && k < info.keys; k++)
            bad = info.dim > 32 || cr_ckpt_get_rows(r, 1, buf, buf + 32, &e) != 0;
    cr_ckpt_reader_close(&r);
    return bad || rc < 0;
}

static void test_crafted_files(void) {
    const char *p = tmp_path("craft.ckpt");
    craft c;
    c_start(&c); c_table(&c, "T", 2, 2, 0); c_rows(&c, 0, 2, 2); c_finish(&c, p);
    CR_CHECK(!refused_anywhere(p)); /* the generator itself is right */
    c_start(&c); c_table(&c, "T", 2, 0, 0); c_finish(&c, p);
    CR_CHECK(refused_with(p, "corrupt table header")); /* dim 0 */
    c_start(&c); c_table(&c, "T", -5, 2, 0); c_finish(&c, p);
    CR_CHECK(refused_with(p, "corrupt table header")); /* negative keys */
    c_start(&c); c_table(&c, "T", 2, 2, 0); c_rows(&c, 0, 3, 2); c_finish(&c, p);
    CR_CHECK(refused_with(p, "corrupt row block in table T")); /* more rows than keys */
    c_start(&c); c_table(&c, "T", 3, 2, 0); c_rows(&c, 0, 2, 2); c_finish(&c, p);
    CR_CHECK(refused_with(p, "rows missing")); /* fewer rows than keys */
    c_start(&c); c_rows(&c, 0, 1, 2); c_finish(&c, p);
    CR_CHECK(refused_with(p, "rows missing or misplaced")); /* rows before any table */
    c_start(&c); c_table(&c, "T", 1, 2, 0); c_rows(&c, 0, 1, 2);
    c_block(&c, 1, "\1\0\0\0\1\0\0\0kv", 10, -1); c_finish(&c, p);
    CR_CHECK(refused_with(p, "metadata after a table"));
    c_start(&c); c_block(&c, 1, "\5\0\0\0\1\0\0\0kv", 10, -1); c_finish(&c, p);
    CR_CHECK(refused_with(p, "corrupt metadata")); /* key length beyond the block */
    c_start(&c); c_block(&c, 1, "\1\0\0\0\1\0\0\0kv", 10, 9); c_finish(&c, p);
    CR_CHECK(refused_with(p, "corrupt")); /* stated raw length != inflated length */
    c_start(&c); c_block(&c, 9, "", 0, -1); c_finish(&c, p);
    CR_CHECK(refused_with(p, "corrupt block header")); /* unknown block type */
    c_start(&c); c_table(&c, "T", 2, 2, 0); c_rows(&c, 1, 2, 2); c_finish(&c, p);
    CR_CHECK(refused_anywhere(p)); /* rows that start at the wrong key */
    /* a block claiming 200 MiB from a few bytes: more than zlib can inflate
     * them to, refused from the header before anything is allocated */
    c_start(&c); c_table(&c, "T", 1, 2, 0); c_block(&c, 3, "", 0, 200L << 20); c_finish(&c, p);
    CR_CHECK(refused_with(p, "corrupt block header"));
}

/* The inflation bound holds for what the writer makes of the most
 * compressible data there is: 1 MiB blocks of zeros. */
static void test_zero_rows_round_trip(void) {
    cr_err e;
    const char *p = tmp_path("zeros.ckpt");
    const int64_t keys = 20000;
    const int dim = 64;
    float *v = calloc((size_t)keys * dim, sizeof *v);
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(w && cr_ckpt_put_table(w, "Z", keys, dim, "", 0, &e) == 0 && cr_ckpt_put_rows(w, keys, v, NULL, &e) == 0);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == 0);
    cr_ckpt_reader *r = cr_ckpt_reader_open(p, &e);
    if (!r) printf("  %s\n", e.msg);
    cr_ckpt_table_info info;
    v[5] = 1;
    int ok = r && cr_ckpt_next_table(r, &info, &e) == 1 && cr_ckpt_get_rows(r, keys, v, NULL, &e) == 0 && v[5] == 0;
    cr_ckpt_reader_close(&r);
    free(v);
    unlink(p);
    CR_CHECK(ok);
}

/* Files of version 1 (tables and a few metadata, written before the resume
 * state existed) still open, and say so; a newer version is refused before
 * anything else is read. */
static void test_versions(void) {
    cr_err e;
    const char *p = tmp_path("ver.ckpt");
    CR_CHECK(write_file(p, 1, 100, &e) == 0);
    cr_ckpt_reader *r = cr_ckpt_reader_open(p, &e);
    CR_CHECK(r && cr_ckpt_version(r) == CR_CKPT_VERSION && CR_CKPT_VERSION == 2);
    cr_ckpt_reader_close(&r);
    CR_CHECK(cr_ckpt_version(NULL) == 0);
    craft c;
    c_start_v(&c, 1);
    c_block(&c, 1, "\16\0\0\0\1\0\0\0crescent.nodes2", 23, -1);
    c_table(&c, "T", 2, 2, 0);
    c_rows(&c, 0, 2, 2);
    c_finish(&c, p);
    r = cr_ckpt_reader_open(p, &e);
    CR_CHECK(r && cr_ckpt_version(r) == 1);
    CR_CHECK(r && cr_ckpt_get_meta(r, "crescent.nodes") && !strcmp(cr_ckpt_get_meta(r, "crescent.nodes"), "2"));
    cr_ckpt_reader_close(&r);
    CR_CHECK(!refused_anywhere(p));
    c_start_v(&c, 3);
    c_finish(&c, p);
    CR_CHECK(refused_with(p, "checkpoint version 3 not supported (this build reads versions 1 to 2)"));
    c_start_v(&c, 0);
    c_finish(&c, p);
    CR_CHECK(refused_with(p, "checkpoint version 0 not supported"));
}

/* A damaged metadata block (the resume state lives there) is refused at
 * open like a damaged table block, whether the payload or the block header
 * is hit. */
static void test_corrupt_meta(void) {
    cr_err e;
    const char *p = tmp_path("meta_src.ckpt"), *t = tmp_path("meta_bad.ckpt");
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(cr_ckpt_put_meta(w, "crescent.epoch", "12", &e) == 0);
    CR_CHECK(cr_ckpt_put_meta(w, "crescent.curve", "{\"epoch\":1,\"loss\":3.5}\n{\"epoch\":2,\"loss\":2.25}\n", &e) == 0);
    CR_CHECK(cr_ckpt_put_table(w, "W", 3, 2, "sgd", 0, &e) == 0);
    float v[6] = {1, 2, 3, 4, 5, 6};
    CR_CHECK(cr_ckpt_put_rows(w, 3, v, NULL, &e) == 0);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == 0);
    /* block 1 starts at byte 16: header 16 bytes, then its payload */
    copy_file(p, t, -1, 16 + 16 + 3);
    CR_CHECK(refused_with(t, "checksum mismatch in metadata"));
    copy_file(p, t, -1, 16 + 5); /* raw length of block 1 */
    CR_CHECK(refused_with(t, "metadata"));
    cr_ckpt_reader *r = cr_ckpt_reader_open(p, &e);
    CR_CHECK(r && !strcmp(cr_ckpt_get_meta(r, "crescent.epoch"), "12"));
    cr_ckpt_reader_close(&r);
}

/* Random damage (1-4 bytes changed, a cut, or bytes inserted) to a small
 * valid file, 1500 times: never a crash, and a file is accepted only if the
 * damage happened to change nothing. */
static void test_random_damage(void) {
    cr_err e;
    const char *p = tmp_path("rnd_src.ckpt"), *t = tmp_path("rnd.ckpt");
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    float v[3 * 50], st[3 * 50];
    for (int i = 0; i < 150; i++) v[i] = st[i] = (float)i * 0.5f;
    CR_CHECK(w && cr_ckpt_put_meta(w, "clock", "3", &e) == 0 &&
             cr_ckpt_put_table(w, "W", 50, 3, "adagrad", 3, &e) == 0 && cr_ckpt_put_rows(w, 50, v, st, &e) == 0 &&
             cr_ckpt_put_table(w, "b", 7, 1, "sgd", 0, &e) == 0 && cr_ckpt_put_rows(w, 7, v, NULL, &e) == 0 &&
             cr_ckpt_writer_commit(&w, &e) == 0);
    unsigned char orig[4096], buf[4200];
    FILE *f = fopen(p, "rb");
    size_t n = fread(orig, 1, sizeof orig, f);
    fclose(f);
    CR_CHECK(n > 100 && n < sizeof orig);
    cr_rng rng;
    cr_rng_seed(&rng, cr_test_fuzz_seed(12345));
    int accepted_changed = 0;
    for (long it = 0, its = cr_test_fuzz_n(1500); it < its; it++) {
        memcpy(buf, orig, n);
        size_t m = n;
        uint64_t kind = cr_rng_below(&rng, 4);
        if (kind <= 1) { /* change 1-4 bytes */
            for (uint64_t k = 0; k <= cr_rng_below(&rng, 4); k++)
                buf[cr_rng_below(&rng, n)] = (unsigned char)cr_rng_below(&rng, 256);
        } else if (kind == 2) { /* cut */
            m = (size_t)cr_rng_below(&rng, n);
        } else { /* insert 1-8 bytes */
            size_t at = (size_t)cr_rng_below(&rng, n), k = 1 + (size_t)cr_rng_below(&rng, 8);
            memmove(buf + at + k, buf + at, n - at);
            for (size_t i = 0; i < k; i++) buf[at + i] = (unsigned char)cr_rng_below(&rng, 256);
            m = n + k;
        }
        f = fopen(t, "wb");
        fwrite(buf, 1, m, f);
        fclose(f);
        int same = m == n && memcmp(buf, orig, n) == 0;
        if (!refused_anywhere(t) && !same) accepted_changed++;
    }
    CR_CHECK(accepted_changed == 0);
}

static long max_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* An 80 MB table goes through a writer and a reader in 4096-row chunks while
 * the process's peak memory grows by far less than the table. */
static void test_bounded_memory(void) {
    cr_err e;
    const char *p = tmp_path("big.ckpt");
    const int64_t keys = 1000000, chunk = 4096;
    const int dim = 16, sd = 4;
    float *v = malloc((size_t)chunk * dim * 4), *st = malloc((size_t)chunk * sd * 4);
    long before = max_rss_kb();
    cr_ckpt_writer *w = cr_ckpt_writer_open(p, &e);
    CR_CHECK(w && cr_ckpt_put_table(w, "big", keys, dim, "adagrad", sd, &e) == 0);
    for (int64_t k0 = 0; k0 < keys; k0 += chunk) {
        int64_t m = keys - k0 < chunk ? keys - k0 : chunk;
        for (int64_t i = 0; i < m * dim; i++) v[i] = (float)((k0 * dim + i) % 1009) * 0.25f;
        for (int64_t i = 0; i < m * sd; i++) st[i] = (float)(k0 + i / sd);
        CR_CHECK(cr_ckpt_put_rows(w, m, v, st, &e) == 0);
    }
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == 0);
    cr_ckpt_reader *r = cr_ckpt_reader_open(p, &e);
    cr_ckpt_table_info info;
    CR_CHECK(r && cr_ckpt_next_table(r, &info, &e) == 1 && info.keys == keys);
    int ok = 1;
    for (int64_t k0 = 0; ok && k0 < keys; k0 += chunk) {
        int64_t m = keys - k0 < chunk ? keys - k0 : chunk;
        ok = cr_ckpt_get_rows(r, m, v, st, &e) == 0 && v[m * dim - 1] == (float)((k0 * dim + m * dim - 1) % 1009) * 0.25f &&
             st[m * sd - 1] == (float)(k0 + m - 1);
    }
    cr_ckpt_reader_close(&r);
    free(v);
    free(st);
    unlink(p);
    CR_CHECK(ok);
#ifdef __SANITIZE_ADDRESS__
    return; /* ASan's quarantine and shadow memory make peak RSS meaningless here */
#endif
    long grew = max_rss_kb() - before;
    if (getenv("CKPT_VERBOSE") || grew > 12 * 1024) printf("  peak memory grew by %ld kB for an 80 MB table\n", grew);
    CR_CHECK(grew <= 12 * 1024);
}

int main(void) {
    /* tmpfs when there is one: thousands of small files are written, and
     * creating files on a busy disk costs more than the checks themselves */
    snprintf(dir, sizeof dir, "/dev/shm/cr_test_ckpt.XXXXXX");
    if (!mkdtemp(dir)) {
        snprintf(dir, sizeof dir, "/tmp/cr_test_ckpt.XXXXXX");
        if (!mkdtemp(dir)) return 1;
    }
    CR_RUN(test_bounded_memory); /* first: the peak must not include other tests */
    CR_RUN(test_round_trip);
    CR_RUN(test_skip_unread_rows);
    CR_RUN(test_meta_only);
    CR_RUN(test_truncated);
    CR_RUN(test_flipped_bytes);
    CR_RUN(test_wrong_magic_version_missing);
    CR_RUN(test_commit_and_abort);
    CR_RUN(test_misuse);
    CR_RUN(test_refuse_special_targets);
    CR_RUN(test_tmp_not_followed);
    CR_RUN(test_target_swapped_before_commit);
    CR_RUN(test_crafted_files);
    CR_RUN(test_zero_rows_round_trip);
    CR_RUN(test_versions);
    CR_RUN(test_corrupt_meta);
    CR_RUN(test_random_damage);
    if (getenv("CKPT_KEEP")) return cr_test_done();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("could not remove %s\n", dir);
    return cr_test_done();
}
