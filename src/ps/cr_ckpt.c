#include "ps/cr_ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cr_alloc.h"
#include "base/cr_file.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cr_ckpt stores floats as little-endian binary32: port the row copies first"
#endif

static const unsigned char MAGIC[8] = {'C', 'R', 'C', 'K', 'P', 'T', '\r', '\n'};
static const unsigned char FOOT_MAGIC[4] = {'C', 'K', 'N', 'D'};

enum { B_META = 1, B_TABLE = 2, B_ROWS = 3, B_END = 4 };
/* TABLE_RAW: a table header; TABLE_RAW_DT: one with the dtype field after
 * it (written for i32 tables only, so files of f32 tables are unchanged). */
enum { HDR = 16, BLK_HDR = 16, FOOT = 16, ROWS_HDR = 16, TABLE_RAW = 64 + 8 + 4 + 32 + 4, TABLE_RAW_DT = TABLE_RAW + 4 };
#define BLOCK_TARGET (1u << 20)     /* raw bytes of rows per block */
#define MAX_ROW_BYTES (256u << 20)  /* one row of values+state */
#define MAX_RAW (MAX_ROW_BYTES + BLOCK_TARGET + ROWS_HDR)
#define MAX_KEY 255
#define MAX_VALUE (16u << 20)

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* crc32 over a block: its header fields, then the compressed payload. */
static uint32_t block_crc(const unsigned char *hdr12, const unsigned char *comp, uint32_t clen) {
    uLong c = crc32(0L, hdr12, 12);
    return (uint32_t)crc32(c, comp, clen);
}

/* ------------------------------------------------------------------ writer */

struct cr_ckpt_writer {
    FILE *f;
    char *path, *tmp;
    uLong crc;        /* over everything written so far */
    uint64_t len;
    int failed;       /* a put failed: only abort is allowed */
    int ntables;
    char (*names)[64];
    /* current table */
    int in_table;
    char name[64];
    int64_t keys, done;
    int32_t dim, sd;
    /* buffered rows of the current table, flushed as one ROWS block */
    float *vbuf, *sbuf;
    int64_t buf_rows, rows_per_block;
    unsigned char *raw, *comp;
    size_t raw_cap, comp_cap;
};

static int wfail(cr_ckpt_writer *w, cr_err *e, const char *what) {
    w->failed = 1;
    return cr_errf(e, "%s: %s: %s", w->tmp, what, strerror(errno));
}

static int wbytes(cr_ckpt_writer *w, const void *p, size_t n, cr_err *e) {
    if (n && fwrite(p, 1, n, w->f) != n) return wfail(w, e, "write failed");
    w->crc = crc32(w->crc, p, (uInt)n);
    w->len += n;
    return 0;
}

static void grow(unsigned char **buf, size_t *cap, size_t need) {
    if (*cap >= need) return;
    *buf = cr_xrealloc(*buf, need);
    *cap = need;
}

/* Compress raw[0..n) and append it as one block of `type`. */
static int write_block(cr_ckpt_writer *w, uint32_t type, const unsigned char *raw, size_t n,
                       cr_err *e) {
    uLongf clen = compressBound((uLong)n);
    grow(&w->comp, &w->comp_cap, clen);
    if (compress2(w->comp, &clen, raw, (uLong)n, 1) != Z_OK) {
        w->failed = 1;
        return cr_errf(e, "%s: compression failed", w->tmp);
    }
    unsigned char hdr[BLK_HDR];
    put_u32(hdr, type);
    put_u32(hdr + 4, (uint32_t)n);
    put_u32(hdr + 8, (uint32_t)clen);
    put_u32(hdr + 12, block_crc(hdr, w->comp, (uint32_t)clen));
    if (wbytes(w, hdr, sizeof hdr, e) != 0) return -1;
    return wbytes(w, w->comp, clen, e);
}

cr_ckpt_writer *cr_ckpt_writer_open(const char *path, cr_err *e) {
    cr_ckpt_writer *w = cr_xcalloc(1, sizeof *w);
    w->path = cr_xstrdup(path);
    w->tmp = cr_xmalloc(strlen(path) + 5);
    sprintf(w->tmp, "%s.tmp", path);
    w->crc = crc32(0L, Z_NULL, 0);
    /* refuse a device, fifo, symlink or directory at PATH before writing anything */
    int fd = cr_file_check_replace(path, e) == 0 ? cr_file_create_tmp(w->tmp, 0666, e) : -1;
    if (fd >= 0 && !(w->f = fdopen(fd, "wb"))) {
        cr_errf(e, "%s: cannot create: %s", w->tmp, strerror(errno));
        close(fd);
        unlink(w->tmp);
    }
    if (!w->f) {
        free(w->path);
        free(w->tmp);
        free(w);
        return NULL;
    }
    cr_file_pending_add(w->tmp); /* removed even if the process ends mid-write (a lost node) */
    unsigned char hdr[HDR];
    memcpy(hdr, MAGIC, 8);
    put_u32(hdr + 8, CR_CKPT_VERSION);
    put_u32(hdr + 12, 0);
    if (wbytes(w, hdr, sizeof hdr, e) != 0) {
        cr_ckpt_writer_abort(&w);
        return NULL;
    }
    return w;
}

static int usable(cr_ckpt_writer *w, cr_err *e) {
    if (!w) return cr_errf(e, "checkpoint writer is NULL");
    if (w->failed) return cr_errf(e, "%s: writer failed earlier; abort it", w->tmp);
    return 0;
}

int cr_ckpt_put_meta(cr_ckpt_writer *w, const char *key, const char *value, cr_err *e) {
    if (usable(w, e) != 0) return -1;
    if (w->ntables > 0) return cr_errf(e, "%s: metadata '%s' after a table", w->tmp, key);
    size_t kl = key ? strlen(key) : 0, vl = value ? strlen(value) : 0;
    if (kl == 0 || kl > MAX_KEY) return cr_errf(e, "%s: metadata key must be 1..%d bytes", w->tmp, MAX_KEY);
    if (vl > MAX_VALUE) return cr_errf(e, "%s: metadata '%s' longer than 16 MiB", w->tmp, key);
    size_t n = 8 + kl + vl;
    grow(&w->raw, &w->raw_cap, n);
    put_u32(w->raw, (uint32_t)kl);
    put_u32(w->raw + 4, (uint32_t)vl);
    memcpy(w->raw + 8, key, kl);
    if (vl) memcpy(w->raw + 8 + kl, value, vl);
    return write_block(w, B_META, w->raw, n, e);
}

/* Write the buffered rows as one ROWS block. */
static int flush_rows(cr_ckpt_writer *w, cr_err *e) {
    if (w->buf_rows == 0) return 0;
    size_t nv = (size_t)w->buf_rows * (size_t)w->dim * 4, ns = (size_t)w->buf_rows * (size_t)w->sd * 4;
    size_t n = ROWS_HDR + nv + ns;
    grow(&w->raw, &w->raw_cap, n);
    put_u64(w->raw, (uint64_t)(w->done - w->buf_rows));
    put_u64(w->raw + 8, (uint64_t)w->buf_rows);
    memcpy(w->raw + ROWS_HDR, w->vbuf, nv);
    if (ns) memcpy(w->raw + ROWS_HDR + nv, w->sbuf, ns);
    w->buf_rows = 0;
    return write_block(w, B_ROWS, w->raw, n, e);
}

static int finish_table(cr_ckpt_writer *w, cr_err *e) {
    if (!w->in_table) return 0;
    if (flush_rows(w, e) != 0) return -1;
    if (w->done != w->keys) {
        w->failed = 1;
        return cr_errf(e, "%s: table '%s' got %lld of %lld rows", w->tmp, w->name,
                       (long long)w->done, (long long)w->keys);
    }
    w->in_table = 0;
    return 0;
}

int cr_ckpt_put_table(cr_ckpt_writer *w, const char *name, int64_t keys, int32_t dim,
                      const char *optimizer, int32_t state_dim, cr_err *e) {
    return cr_ckpt_put_table_typed(w, name, keys, dim, optimizer, state_dim, CR_CKPT_F32, e);
}

int cr_ckpt_put_table_typed(cr_ckpt_writer *w, const char *name, int64_t keys, int32_t dim,
                            const char *optimizer, int32_t state_dim, int32_t dtype, cr_err *e) {
    if (usable(w, e) != 0) return -1;
    int32_t vt = dtype & ~CR_CKPT_SPARSE;
    if ((vt != CR_CKPT_F32 && vt != CR_CKPT_I32) || ((dtype & CR_CKPT_SPARSE) && state_dim < 2))
        return cr_errf(e, "%s: unknown dtype %d", w->tmp, (int)dtype);
    if (!optimizer) optimizer = "";
    size_t nl = name ? strlen(name) : 0;
    if (nl == 0 || nl > 63) return cr_errf(e, "%s: table name must be 1..63 bytes", w->tmp);
    if (strlen(optimizer) > 31) return cr_errf(e, "%s: optimizer name longer than 31 bytes", w->tmp);
    if (keys < 0 || dim < 1 || state_dim < 0)
        return cr_errf(e, "%s: table '%s': bad shape keys=%lld dim=%d state_dim=%d", w->tmp, name,
                       (long long)keys, dim, state_dim);
    uint64_t row = ((uint64_t)dim + (uint64_t)state_dim) * 4;
    if (row > MAX_ROW_BYTES) return cr_errf(e, "%s: table '%s': rows larger than 256 MiB", w->tmp, name);
    for (int i = 0; i < w->ntables; i++)
        if (strcmp(w->names[i], name) == 0) return cr_errf(e, "%s: table '%s' written twice", w->tmp, name);
    if (finish_table(w, e) != 0) return -1;

    unsigned char raw[TABLE_RAW_DT] = {0};
    memcpy(raw, name, nl);
    put_u64(raw + 64, (uint64_t)keys);
    put_u32(raw + 72, (uint32_t)dim);
    memcpy(raw + 76, optimizer, strlen(optimizer));
    put_u32(raw + 108, (uint32_t)state_dim);
    put_u32(raw + 112, (uint32_t)dtype);
    if (write_block(w, B_TABLE, raw, dtype == CR_CKPT_F32 ? TABLE_RAW : TABLE_RAW_DT, e) != 0) return -1;

    w->names = cr_xrealloc(w->names, (size_t)(w->ntables + 1) * sizeof *w->names);
    memcpy(w->names[w->ntables++], raw, 64);
    memcpy(w->name, raw, 64);
    w->in_table = 1;
    w->keys = keys;
    w->done = 0;
    w->dim = dim;
    w->sd = state_dim;
    w->rows_per_block = (int64_t)(BLOCK_TARGET / row);
    if (w->rows_per_block < 1) w->rows_per_block = 1;
    if (w->rows_per_block > keys && keys > 0) w->rows_per_block = keys;
    free(w->vbuf);
    free(w->sbuf);
    w->vbuf = cr_xmalloc((size_t)w->rows_per_block * (size_t)dim * 4);
    w->sbuf = state_dim ? cr_xmalloc((size_t)w->rows_per_block * (size_t)state_dim * 4) : NULL;
    w->buf_rows = 0;
    return 0;
}

int cr_ckpt_put_rows(cr_ckpt_writer *w, int64_t count, const float *values, const float *state,
                     cr_err *e) {
    if (usable(w, e) != 0) return -1;
    if (!w->in_table) return cr_errf(e, "%s: rows before any table", w->tmp);
    if (count < 0 || count > w->keys - w->done) {
        w->failed = 1;
        return cr_errf(e, "%s: table '%s': %lld rows given, %lld left", w->tmp, w->name,
                       (long long)count, (long long)(w->keys - w->done));
    }
    if (count > 0 && (!values || (w->sd > 0 && !state)))
        return cr_errf(e, "%s: table '%s': values%s missing", w->tmp, w->name, w->sd ? " or state" : "");
    while (count > 0) {
        int64_t n = w->rows_per_block - w->buf_rows;
        if (n > count) n = count;
        memcpy(w->vbuf + w->buf_rows * w->dim, values, (size_t)n * (size_t)w->dim * 4);
        values += n * w->dim;
        if (w->sd) {
            memcpy(w->sbuf + w->buf_rows * w->sd, state, (size_t)n * (size_t)w->sd * 4);
            state += n * w->sd;
        }
        w->buf_rows += n;
        w->done += n;
        count -= n;
        if (w->buf_rows == w->rows_per_block && flush_rows(w, e) != 0) return -1;
    }
    return 0;
}

static void writer_free(cr_ckpt_writer *w) {
    free(w->path);
    free(w->tmp);
    free(w->names);
    free(w->vbuf);
    free(w->sbuf);
    free(w->raw);
    free(w->comp);
    free(w);
}

void cr_ckpt_writer_abort(cr_ckpt_writer **wp) {
    if (!wp || !*wp) return;
    cr_ckpt_writer *w = *wp;
    if (w->f) fclose(w->f);
    unlink(w->tmp);
    cr_file_pending_drop(w->tmp);
    writer_free(w);
    *wp = NULL;
}

/* fsync the directory holding path, so the rename itself is durable. */
static int sync_dir(const char *path, cr_err *e) {
    char *copy = cr_xstrdup(path);
    const char *dir = dirname(copy);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int rc = 0;
    if (fd < 0 || fsync(fd) != 0) rc = cr_errf(e, "%s: cannot sync directory: %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    free(copy);
    return rc;
}

int cr_ckpt_writer_commit(cr_ckpt_writer **wp, cr_err *e) {
    if (!wp || !*wp) return cr_errf(e, "checkpoint writer is NULL");
    cr_ckpt_writer *w = *wp;
    if (usable(w, e) != 0 || finish_table(w, e) != 0 || write_block(w, B_END, NULL, 0, e) != 0) {
        cr_ckpt_writer_abort(wp);
        return -1;
    }
    unsigned char foot[FOOT];
    put_u64(foot, w->len);
    put_u32(foot + 8, (uint32_t)w->crc);
    memcpy(foot + 12, FOOT_MAGIC, 4);
    int rc = wbytes(w, foot, sizeof foot, e);
    if (rc == 0 && fflush(w->f) != 0) rc = wfail(w, e, "write failed");
    if (rc == 0 && fsync(fileno(w->f)) != 0) rc = wfail(w, e, "fsync failed");
    if (rc == 0) {
        int c = fclose(w->f);
        w->f = NULL;
        if (c != 0) rc = wfail(w, e, "close failed");
    }
    if (rc == 0) rc = cr_file_check_replace(w->path, e); /* again: PATH may have changed meanwhile */
    if (rc == 0 && rename(w->tmp, w->path) != 0)
        rc = cr_errf(e, "%s: cannot rename to %s: %s", w->tmp, w->path, strerror(errno));
    if (rc != 0) {
        cr_ckpt_writer_abort(wp);
        return -1;
    }
    cr_file_pending_drop(w->tmp);
    rc = sync_dir(w->path, e);
    writer_free(w);
    *wp = NULL;
    return rc;
}

/* ------------------------------------------------------------------ reader */

struct cr_ckpt_reader {
    FILE *f;
    char *path;
    int version;
    int nmeta;
    char **mkeys, **mvals;
    long first_table; /* offset of the first TABLE (or END) block */
    int at_end;
    /* current table */
    int in_table;
    cr_ckpt_table_info info;
    int64_t left;           /* rows of the table not yet returned */
    int64_t blk_n, blk_used; /* rows in the decoded block, rows returned from it */
    unsigned char *raw, *comp;
    size_t raw_cap, comp_cap;
};

typedef struct blk {
    uint32_t type, raw_len, comp_len, crc;
    unsigned char hdr[BLK_HDR];
} blk;

static int rerr(cr_ckpt_reader *r, cr_err *e, const char *what) {
    return cr_errf(e, "%s: %s", r->path, what);
}

static int read_hdr(cr_ckpt_reader *r, blk *b) {
    if (fread(b->hdr, 1, BLK_HDR, r->f) != BLK_HDR) return -1;
    b->type = get_u32(b->hdr);
    b->raw_len = get_u32(b->hdr + 4);
    b->comp_len = get_u32(b->hdr + 8);
    b->crc = get_u32(b->hdr + 12);
    return 0;
}

/* Sizes read from the file, checked before anything is allocated for them:
 * raw_len is capped, and no more than zlib's best ratio (deflate expands at
 * most about 1032:1) allows from comp_len, which the caller checks against
 * the file size. So a block's buffers stay proportional to the file. */
#define MAX_RATIO 1032u
static int sane_hdr(const blk *b) {
    if (b->type < B_META || b->type > B_END || b->raw_len > MAX_RAW) return 0;
    if ((uint64_t)b->raw_len > (uint64_t)b->comp_len * MAX_RATIO + MAX_RATIO) return 0;
    return b->comp_len <= compressBound(b->raw_len);
}

/* Grow a reader buffer to a size that came from the file (checked, not
 * cr_x*: a machine short of memory refuses the file instead of aborting). */
static int rgrow(cr_ckpt_reader *r, unsigned char **buf, size_t *cap, size_t need, cr_err *e) {
    if (need == 0) need = 1;
    if (*cap >= need) return 0;
    unsigned char *p = realloc(*buf, need); /* checked */
    if (!p) return cr_errf(e, "%s: out of memory for a block of %zu bytes", r->path, need);
    *buf = p;
    *cap = need;
    return 0;
}

/* Inflate the block payload in r->comp into r->raw. */
static int inflate_block(cr_ckpt_reader *r, const blk *b, const char *where, cr_err *e) {
    if (rgrow(r, &r->raw, &r->raw_cap, b->raw_len, e) != 0) return -1;
    uLongf n = b->raw_len;
    if (uncompress(r->raw, &n, r->comp, b->comp_len) != Z_OK || n != b->raw_len)
        return cr_errf(e, "%s: corrupt data in %s", r->path, where);
    return 0;
}

static int parse_table(cr_ckpt_reader *r, const blk *b, cr_ckpt_table_info *t, cr_err *e) {
    if ((b->raw_len != TABLE_RAW && b->raw_len != TABLE_RAW_DT) || inflate_block(r, b, "table header", e) != 0)
        return rerr(r, e, "corrupt table header");
    t->dtype = b->raw_len == TABLE_RAW_DT ? (int32_t)get_u32(r->raw + 112) : CR_CKPT_F32;
    int32_t vt = t->dtype & ~CR_CKPT_SPARSE;
    if (vt != CR_CKPT_F32 && vt != CR_CKPT_I32) return rerr(r, e, "corrupt table header");
    memcpy(t->name, r->raw, 64);
    t->keys = (int64_t)get_u64(r->raw + 64);
    t->dim = (int32_t)get_u32(r->raw + 72);
    memcpy(t->optimizer, r->raw + 76, 32);
    t->state_dim = (int32_t)get_u32(r->raw + 108);
    if (t->name[63] || t->optimizer[31] || !t->name[0] || t->keys < 0 || t->dim < 1 || t->state_dim < 0 ||
        ((uint64_t)t->dim + (uint64_t)t->state_dim) * 4 > MAX_ROW_BYTES)
        return rerr(r, e, "corrupt table header");
    return 0;
}

static void add_meta(cr_ckpt_reader *r, const unsigned char *raw, uint32_t kl, uint32_t vl) {
    r->mkeys = cr_xrealloc(r->mkeys, (size_t)(r->nmeta + 1) * sizeof *r->mkeys);
    r->mvals = cr_xrealloc(r->mvals, (size_t)(r->nmeta + 1) * sizeof *r->mvals);
    char *k = cr_xmalloc(kl + 1), *v = cr_xmalloc(vl + 1);
    memcpy(k, raw + 8, kl);
    k[kl] = '\0';
    memcpy(v, raw + 8 + kl, vl);
    v[vl] = '\0';
    r->mkeys[r->nmeta] = k;
    r->mvals[r->nmeta++] = v;
}

static int parse_meta(cr_ckpt_reader *r, const blk *b, cr_err *e) {
    if (b->raw_len < 8 || inflate_block(r, b, "metadata", e) != 0) return rerr(r, e, "corrupt metadata");
    uint32_t kl = get_u32(r->raw), vl = get_u32(r->raw + 4);
    if (kl == 0 || kl > MAX_KEY || vl > MAX_VALUE || (uint64_t)kl + vl + 8 != b->raw_len)
        return rerr(r, e, "corrupt metadata");
    add_meta(r, r->raw, kl, vl);
    return 0;
}

/* One pass over the whole file: structure, block crcs, whole-file crc,
 * metadata. size is the file size; footer_ok says whether the last 16 bytes
 * are a footer matching that size (if not, a block running past the end
 * means the file was truncated rather than corrupted). */
static int validate(cr_ckpt_reader *r, long size, int footer_ok, const unsigned char *hdr, cr_err *e) {
    uLong crc = crc32(crc32(0L, Z_NULL, 0), hdr, HDR);
    long off = HDR;
    int ntables = 0;
    cr_ckpt_table_info t = {{0}, 0, 0, {0}, 0, 0};
    int64_t rows = 0;
    char where[128] = "metadata";
    r->first_table = -1;
    for (;;) {
        blk b;
        if (off + BLK_HDR > size || read_hdr(r, &b) != 0) return rerr(r, e, "truncated");
        if (!sane_hdr(&b))
            return cr_errf(e, "%s: corrupt block header at byte %ld (in %s)", r->path, off, where);
        if (off + BLK_HDR + (long)b.comp_len > size)
            return footer_ok ? cr_errf(e, "%s: corrupt block length at byte %ld (in %s)", r->path, off, where)
                             : rerr(r, e, "truncated");
        if (rgrow(r, &r->comp, &r->comp_cap, b.comp_len, e) != 0) return -1;
        if (fread(r->comp, 1, b.comp_len, r->f) != b.comp_len) return rerr(r, e, "truncated");
        if (b.type == B_TABLE) {
            char prev[sizeof where];
            memcpy(prev, where, sizeof where);
            snprintf(where, sizeof where, "table header after %.80s", prev);
        }
        if (block_crc(b.hdr, r->comp, b.comp_len) != b.crc)
            return cr_errf(e, "%s: checksum mismatch in %s", r->path, b.type == B_END ? "end block" : where);
        crc = crc32(crc32(crc, b.hdr, BLK_HDR), r->comp, b.comp_len);
        if ((b.type != B_ROWS && ntables > 0 && rows != t.keys) || (b.type == B_ROWS && ntables == 0))
            return cr_errf(e, "%s: corrupt: rows missing or misplaced in %s", r->path, where);
        if (b.type == B_META) {
            if (ntables > 0) return rerr(r, e, "corrupt: metadata after a table");
            if (parse_meta(r, &b, e) != 0) return -1;
        } else if (b.type == B_TABLE) {
            if (parse_table(r, &b, &t, e) != 0) return -1;
            if (r->first_table < 0) r->first_table = off;
            ntables++;
            rows = 0;
            snprintf(where, sizeof where, "table %s", t.name);
        } else if (b.type == B_ROWS) {
            uint64_t rb = ((uint64_t)t.dim + (uint64_t)t.state_dim) * 4;
            if (b.raw_len < ROWS_HDR + rb || (b.raw_len - ROWS_HDR) % rb != 0 ||
                (int64_t)((b.raw_len - ROWS_HDR) / rb) > t.keys - rows)
                return cr_errf(e, "%s: corrupt row block in %s", r->path, where);
            rows += (int64_t)((b.raw_len - ROWS_HDR) / rb);
        } else {
            if (r->first_table < 0) r->first_table = off;
            off += BLK_HDR + (long)b.comp_len;
            break;
        }
        off += BLK_HDR + (long)b.comp_len;
    }
    if (size - off < FOOT) return rerr(r, e, "truncated");
    if (size - off > FOOT) return rerr(r, e, "unexpected data after the end block");
    if (!footer_ok) return rerr(r, e, "corrupt footer");
    unsigned char foot[FOOT];
    if (fseek(r->f, off, SEEK_SET) != 0 || fread(foot, 1, FOOT, r->f) != FOOT) return rerr(r, e, "truncated");
    if (get_u32(foot + 8) != (uint32_t)crc) return rerr(r, e, "checksum mismatch (whole file)");
    return 0;
}

static cr_ckpt_reader *open_fail(cr_ckpt_reader *r) {
    cr_ckpt_reader_close(&r);
    return NULL;
}

cr_ckpt_reader *cr_ckpt_reader_open(const char *path, cr_err *e) {
    cr_ckpt_reader *r = cr_xcalloc(1, sizeof *r);
    r->path = cr_xstrdup(path);
    r->f = fopen(path, "rb");
    if (!r->f) {
        cr_errf(e, "%s: cannot open: %s", path, strerror(errno));
        return open_fail(r);
    }
    struct stat st;
    if (fstat(fileno(r->f), &st) != 0 || !S_ISREG(st.st_mode)) {
        cr_errf(e, "%s: not a regular file", path);
        return open_fail(r);
    }
    long size = (long)st.st_size;
    unsigned char hdr[HDR];
    size_t got = fread(hdr, 1, HDR, r->f);
    if (memcmp(hdr, MAGIC, got < 8 ? got : 8) != 0 || got == 0) {
        cr_errf(e, "%s: not a crescent checkpoint", path);
        return open_fail(r);
    }
    if (got < HDR) {
        cr_errf(e, "%s: truncated", path);
        return open_fail(r);
    }
    uint32_t version = get_u32(hdr + 8);
    if (version < CR_CKPT_VERSION_MIN || version > CR_CKPT_VERSION) {
        cr_errf(e, "%s: checkpoint version %u not supported (this build reads versions %d to %d)", path,
                version, CR_CKPT_VERSION_MIN, CR_CKPT_VERSION);
        return open_fail(r);
    }
    r->version = (int)version;
    if (get_u32(hdr + 12) != 0) {
        cr_errf(e, "%s: unsupported checkpoint flags 0x%x", path, get_u32(hdr + 12));
        return open_fail(r);
    }
    int footer_ok = 0;
    unsigned char foot[FOOT];
    if (size >= HDR + BLK_HDR + FOOT && fseek(r->f, size - FOOT, SEEK_SET) == 0 &&
        fread(foot, 1, FOOT, r->f) == FOOT)
        footer_ok = memcmp(foot + 12, FOOT_MAGIC, 4) == 0 && get_u64(foot) == (uint64_t)(size - FOOT);
    if (fseek(r->f, HDR, SEEK_SET) != 0 || validate(r, size, footer_ok, hdr, e) != 0) return open_fail(r);
    if (fseek(r->f, r->first_table, SEEK_SET) != 0) {
        cr_errf(e, "%s: seek failed: %s", path, strerror(errno));
        return open_fail(r);
    }
    return r;
}

/* Read the next block's header and payload (second pass: the file was
 * validated, so failures here mean it changed under us). */
static int next_block(cr_ckpt_reader *r, blk *b, cr_err *e) {
    if (read_hdr(r, b) != 0 || !sane_hdr(b)) return rerr(r, e, "changed while reading");
    if (rgrow(r, &r->comp, &r->comp_cap, b->comp_len, e) != 0) return -1;
    if (fread(r->comp, 1, b->comp_len, r->f) != b->comp_len || block_crc(b->hdr, r->comp, b->comp_len) != b->crc)
        return rerr(r, e, "changed while reading");
    return 0;
}

int cr_ckpt_next_table(cr_ckpt_reader *r, cr_ckpt_table_info *info, cr_err *e) {
    if (!r) return cr_errf(e, "checkpoint reader is NULL");
    if (r->at_end) return 0;
    blk b;
    do {
        if (next_block(r, &b, e) != 0) return -1;
    } while (b.type == B_ROWS); /* skip what the caller did not read */
    r->in_table = 0;
    r->blk_n = r->blk_used = 0;
    if (b.type == B_END) {
        r->at_end = 1;
        return 0;
    }
    if (b.type != B_TABLE || parse_table(r, &b, &r->info, e) != 0) return rerr(r, e, "changed while reading");
    r->in_table = 1;
    r->left = r->info.keys;
    if (info) *info = r->info;
    return 1;
}

int cr_ckpt_get_rows(cr_ckpt_reader *r, int64_t count, float *values, float *state, cr_err *e) {
    if (!r) return cr_errf(e, "checkpoint reader is NULL");
    if (!r->in_table) return rerr(r, e, "rows requested outside a table");
    if (count < 0 || count > r->left)
        return cr_errf(e, "%s: table %s: %lld rows requested, %lld left", r->path, r->info.name,
                       (long long)count, (long long)r->left);
    if (count > 0 && !values) return rerr(r, e, "get_rows: values buffer is NULL");
    const int64_t dim = r->info.dim, sd = r->info.state_dim;
    while (count > 0) {
        if (r->blk_used == r->blk_n) {
            blk b;
            if (next_block(r, &b, e) != 0) return -1;
            char where[80];
            snprintf(where, sizeof where, "table %s", r->info.name);
            if (b.type != B_ROWS || inflate_block(r, &b, where, e) != 0) return -1;
            uint64_t first = get_u64(r->raw), n = get_u64(r->raw + 8);
            if ((int64_t)first != r->info.keys - r->left || n * (uint64_t)(dim + sd) * 4 + ROWS_HDR != b.raw_len)
                return cr_errf(e, "%s: corrupt row block in table %s", r->path, r->info.name);
            r->blk_n = (int64_t)n;
            r->blk_used = 0;
        }
        int64_t n = r->blk_n - r->blk_used;
        if (n > count) n = count;
        const unsigned char *v = r->raw + ROWS_HDR + (size_t)(r->blk_used * dim * 4);
        memcpy(values, v, (size_t)(n * dim * 4));
        values += n * dim;
        if (sd && state) {
            const unsigned char *s = r->raw + ROWS_HDR + (size_t)(r->blk_n * dim * 4) + (size_t)(r->blk_used * sd * 4);
            memcpy(state, s, (size_t)(n * sd * 4));
            state += n * sd;
        }
        r->blk_used += n;
        r->left -= n;
        count -= n;
    }
    return 0;
}

const char *cr_ckpt_get_meta(cr_ckpt_reader *r, const char *key) {
    if (!r || !key) return NULL;
    for (int i = r->nmeta - 1; i >= 0; i--)
        if (strcmp(r->mkeys[i], key) == 0) return r->mvals[i];
    return NULL;
}

int cr_ckpt_version(const cr_ckpt_reader *r) { return r ? r->version : 0; }

int cr_ckpt_meta_count(const cr_ckpt_reader *r) { return r ? r->nmeta : 0; }

const char *cr_ckpt_meta_key(const cr_ckpt_reader *r, int i) {
    return r && i >= 0 && i < r->nmeta ? r->mkeys[i] : NULL;
}

void cr_ckpt_reader_close(cr_ckpt_reader **rp) {
    if (!rp || !*rp) return;
    cr_ckpt_reader *r = *rp;
    if (r->f) fclose(r->f);
    for (int i = 0; i < r->nmeta; i++) {
        free(r->mkeys[i]);
        free(r->mvals[i]);
    }
    free(r->mkeys);
    free(r->mvals);
    free(r->raw);
    free(r->comp);
    free(r->path);
    free(r);
    *rp = NULL;
}
