#include "data/cr_mm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "data/cr_lines.h"
#include "data/cr_out.h"

/* Beyond this many declared entries the header is taken as corrupt rather
 * than attempting the allocation. */
#define MAX_NNZ ((int64_t)1 << 34)

struct cr_mm_reader {
    cr_lines *in;
    cr_mm_header h;
    int64_t seen;
    int64_t lim[2];   /* accepted rows, columns: the size line's unless cr_mm_limit narrowed them */
    const char *why;  /* cr_mm_limit's note, or NULL */
};

static int parse_banner(cr_lines *in, char *s, int flags, cr_mm_header *h, cr_err *e) {
    const char *path = cr_lines_path(in);
    char word[5][32];
    int n = sscanf(s, "%31s %31s %31s %31s %31s", word[0], word[1], word[2], word[3], word[4]);
    if (n < 1 || strcasecmp(word[0], "%%MatrixMarket") != 0)
        return cr_errf_at(e, path, 1, "not a MatrixMarket file (expected '%%%%MatrixMarket matrix coordinate real general')");
    if (n != 5 || strcasecmp(word[1], "matrix") != 0)
        return cr_errf_at(e, path, 1, "banner needs 5 words: %%%%MatrixMarket matrix coordinate FIELD SYMMETRY");
    if (strcasecmp(word[2], "coordinate") != 0)
        return cr_errf_at(e, path, 1, "only coordinate format is supported, not '%s'", word[2]);
    if (!strcasecmp(word[3], "pattern")) h->pattern = 1;
    else if (strcasecmp(word[3], "real") && strcasecmp(word[3], "integer") && strcasecmp(word[3], "double"))
        return cr_errf_at(e, path, 1, "field must be real, integer or pattern, not '%s'", word[3]);
    if ((flags & CR_MM_SYMMETRIC) && (!strcasecmp(word[4], "symmetric") || !strcasecmp(word[4], "skew-symmetric")))
        h->symmetric = 1;
    else if (strcasecmp(word[4], "general") != 0)
        return cr_errf_at(e, path, 1, "only 'general' symmetry is supported, not '%s'", word[4]);
    return 0;
}

static int parse_size(cr_lines *in, char *s, cr_mm_header *h, cr_err *e) {
    const char *path = cr_lines_path(in);
    long ln = cr_lines_lineno(in);
    int64_t v[3];
    for (int i = 0; i < 3; i++) {
        int rc = cr_parse_i64(&s, &v[i]);
        if (rc == 0 && !cr_field_end(*s)) rc = -1;
        if (rc != 0 || v[i] < 0)
            return cr_errf_at(e, path, ln, "size line must be 'ROWS COLS ENTRIES' (non-negative integers)");
    }
    if (*cr_skip_ws(s)) return cr_errf_at(e, path, ln, "size line has more than 3 fields");
    if (v[0] > INT32_MAX || v[1] > INT32_MAX)
        return cr_errf_at(e, path, ln, "matrix size %lld x %lld beyond the supported 2^31-1",
                          (long long)v[0], (long long)v[1]);
    if (h->symmetric && v[0] != v[1])
        return cr_errf_at(e, path, ln, "a symmetric matrix must be square, not %lld x %lld", (long long)v[0],
                          (long long)v[1]);
    if (v[2] > MAX_NNZ || v[2] > v[0] * v[1]) /* both <= 2^31: no overflow */
        return cr_errf_at(e, path, ln, "%lld entries cannot fit a %lld x %lld matrix", (long long)v[2],
                          (long long)v[0], (long long)v[1]);
    long long size = cr_lines_plain_size(in); /* each entry takes >= 4 bytes: "i j\n" */
    if (size >= 0 && v[2] > size / 4)
        return cr_errf_at(e, path, ln, "declares %lld entries but the file has only %lld bytes", (long long)v[2],
                          size);
    h->rows = v[0];
    h->cols = v[1];
    h->nnz = v[2];
    return 0;
}

cr_mm_reader *cr_mm_open(const char *path, cr_mm_header *h, cr_err *e) {
    return cr_mm_open_flags(path, 0, h, e);
}

cr_mm_reader *cr_mm_open_flags(const char *path, int flags, cr_mm_header *h, cr_err *e) {
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return NULL;
    memset(h, 0, sizeof *h);
    char *s;
    size_t len;
    int rc = cr_lines_next(in, &s, &len, e);
    if (rc == 0) cr_errf(e, "%s: empty file (expected a MatrixMarket banner)", path);
    if (rc <= 0 || parse_banner(in, s, flags, h, e) != 0) goto fail;
    for (;;) { /* comments, then the size line */
        rc = cr_lines_next(in, &s, &len, e);
        if (rc < 0) goto fail;
        if (rc == 0) {
            cr_errf_at(e, path, cr_lines_lineno(in) + 1, "missing size line 'ROWS COLS ENTRIES'");
            goto fail;
        }
        s = cr_skip_ws(s);
        if (*s == '%' || *s == '\0') continue;
        if (parse_size(in, s, h, e) != 0) goto fail;
        break;
    }
    cr_mm_reader *r = cr_xcalloc(1, sizeof *r);
    r->in = in;
    r->h = *h;
    r->lim[0] = h->rows;
    r->lim[1] = h->cols;
    return r;
fail:
    cr_lines_close(&in);
    return NULL;
}

/* One entry line. Returns 0 or -1 (e set). */
static int parse_entry(cr_mm_reader *r, char *s, int64_t *ri, int64_t *ci, float *v, cr_err *e) {
    const char *path = cr_lines_path(r->in);
    long ln = cr_lines_lineno(r->in);
    static const char *what[2] = {"row", "column"};
    int64_t id[2];
    for (int k = 0; k < 2; k++) {
        int rc = cr_parse_i64(&s, &id[k]);
        if (rc == -1 || (rc == 0 && !cr_field_end(*s))) {
            if (*cr_skip_ws(s) == '\0') return cr_errf_at(e, path, ln, "missing %s index", what[k]);
            return cr_errf_at(e, path, ln, "%s index is not an integer", what[k]);
        }
        int64_t lim = r->lim[k];
        if (rc == -2) return cr_errf_at(e, path, ln, "%s index beyond 64 bits", what[k]);
        if (id[k] < 1 || id[k] > lim) {
            int narrowed = r->why && lim < (k ? r->h.cols : r->h.rows);
            return cr_errf_at(e, path, ln, "%s %lld out of range 1..%lld%s%s%s", what[k], (long long)id[k],
                              (long long)lim, narrowed ? " (" : "", narrowed ? r->why : "", narrowed ? ")" : "");
        }
    }
    *ri = id[0] - 1;
    *ci = id[1] - 1;
    if (r->h.pattern) {
        *v = 1.0f;
    } else {
        int rc = cr_parse_f32(&s, v);
        if (rc == -1 && *cr_skip_ws(s) == '\0') return cr_errf_at(e, path, ln, "missing value");
        if (rc == -1 || (rc == 0 && !cr_field_end(*s))) return cr_errf_at(e, path, ln, "value is not a number");
        if (rc == -2) return cr_errf_at(e, path, ln, "value is NaN or infinite");
    }
    if (*cr_skip_ws(s) != '\0') return cr_errf_at(e, path, ln, "extra field after the entry");
    return 0;
}

void cr_mm_limit(cr_mm_reader *r, int64_t rows, int64_t cols, const char *why) {
    if (rows > 0 && rows < r->h.rows) r->lim[0] = rows;
    if (cols > 0 && cols < r->h.cols) r->lim[1] = cols;
    r->why = why;
}

long cr_mm_read(cr_mm_reader *r, int64_t *row, int64_t *col, float *val, size_t cap, cr_err *e) {
    size_t n = 0;
    char *s;
    size_t len;
    while (n < cap) {
        int rc = cr_lines_next(r->in, &s, &len, e);
        if (rc < 0) return -1;
        if (rc == 0) {
            if (n == 0 && r->seen < r->h.nnz)
                return cr_errf_at(e, cr_lines_path(r->in), cr_lines_lineno(r->in),
                                  "file ends after %lld of %lld declared entries", (long long)r->seen,
                                  (long long)r->h.nnz);
            break;
        }
        s = cr_skip_ws(s);
        if (*s == '\0' || *s == '%') continue;
        if (r->seen == r->h.nnz)
            return cr_errf_at(e, cr_lines_path(r->in), cr_lines_lineno(r->in),
                              "more entries than the %lld declared", (long long)r->h.nnz);
        if (parse_entry(r, s, &row[n], &col[n], &val[n], e) != 0) return -1;
        n++;
        r->seen++;
    }
    return (long)n;
}

void cr_mm_close(cr_mm_reader **rp) {
    if (!rp || !*rp) return;
    cr_lines_close(&(*rp)->in);
    free(*rp);
    *rp = NULL;
}

/* ---- binary cache ---- */

typedef struct cache_head {
    char magic[8];
    uint64_t src_size;
    int64_t mtime_sec, mtime_nsec;
    int64_t rows, cols, nnz;
    uint32_t crc, pad;
} cache_head;

static const char CACHE_MAGIC[8] = {'C', 'R', 'M', 'M', 'B', 'I', 'N', '1'};

char *cr_mm_cache_path(const char *path) {
    const char *dir = getenv("CRESCENT_CACHE_DIR");
    size_t n = strlen(path) + (dir ? strlen(dir) : 0) + 48;
    char *out = cr_xmalloc(n);
    if (dir && *dir) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        char *abs = realpath(path, NULL);
        uint64_t hsh = 1469598103934665603ULL;
        for (const char *c = abs ? abs : path; *c; c++) hsh = (hsh ^ (unsigned char)*c) * 1099511628211ULL;
        free(abs);
        snprintf(out, n, "%s/%s.%016llx.crbin", dir, base, (unsigned long long)hsh);
    } else {
        snprintf(out, n, "%s.crbin", path);
    }
    return out;
}

static uint32_t payload_crc(const cr_coo *m) {
    uLong c = crc32(0L, Z_NULL, 0);
    const unsigned char *parts[3] = {(const void *)m->row, (const void *)m->col, (const void *)m->val};
    size_t sizes[3] = {8, 8, 4};
    for (int k = 0; k < 3; k++) {
        size_t left = (size_t)m->nnz * sizes[k];
        const unsigned char *p = parts[k];
        while (left > 0) {
            uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
            c = crc32(c, p, chunk);
            p += chunk;
            left -= chunk;
        }
    }
    return (uint32_t)c;
}

static int malloc_alloc(void *ud, cr_coo *m, cr_err *e) {
    (void)ud;
    size_t n = (size_t)m->nnz;
    m->row = malloc(n * sizeof *m->row + 1);
    m->col = malloc(n * sizeof *m->col + 1);
    m->val = malloc(n * sizeof *m->val + 1);
    if (!m->row || !m->col || !m->val) {
        cr_coo_free(m);
        return cr_errf(e, "out of memory for %lld entries", (long long)n);
    }
    return 0;
}

void cr_coo_free(cr_coo *m) {
    free(m->row);
    free(m->col);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* Try the cache. Returns 1 if *m was filled from it, 0 if it is missing or
 * stale (the caller parses), -1 if the allocator failed. */
static int cache_read(const char *cpath, const struct stat *st, cr_coo_alloc alloc, void *ud, cr_coo *m,
                      cr_err *e) {
    FILE *f = fopen(cpath, "rb");
    if (!f) return 0;
    cache_head h;
    int ok = fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, CACHE_MAGIC, 8) &&
             h.src_size == (uint64_t)st->st_size && h.mtime_sec == (int64_t)st->st_mtim.tv_sec &&
             h.mtime_nsec == (int64_t)st->st_mtim.tv_nsec && h.nnz >= 0 && h.nnz <= MAX_NNZ &&
             h.rows >= 0 && h.cols >= 0;
    struct stat cst; /* the cache must be exactly header + arrays before anything is allocated */
    ok = ok && fstat(fileno(f), &cst) == 0 && (uint64_t)cst.st_size == sizeof h + (uint64_t)h.nnz * 20;
    if (!ok) {
        fclose(f);
        return 0;
    }
    m->rows = h.rows;
    m->cols = h.cols;
    m->nnz = h.nnz;
    if (alloc(ud, m, e) != 0) {
        fclose(f);
        return -1;
    }
    size_t n = (size_t)h.nnz;
    ok = fread(m->row, 8, n, f) == n && fread(m->col, 8, n, f) == n && fread(m->val, 4, n, f) == n &&
         fgetc(f) == EOF && payload_crc(m) == h.crc;
    fclose(f);
    return ok ? 1 : 0; /* on 0 the caller reuses the arrays already allocated */
}

static void cache_write(const char *cpath, const struct stat *st, const cr_coo *m) {
    cr_out o;
    if (cr_out_open(&o, cpath, NULL) != 0) return;
    cache_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.src_size = (uint64_t)st->st_size;
    h.mtime_sec = st->st_mtim.tv_sec;
    h.mtime_nsec = st->st_mtim.tv_nsec;
    h.rows = m->rows;
    h.cols = m->cols;
    h.nnz = m->nnz;
    h.crc = payload_crc(m);
    size_t n = (size_t)m->nnz;
    if (fwrite(&h, sizeof h, 1, o.f) != 1 || fwrite(m->row, 8, n, o.f) != n || fwrite(m->col, 8, n, o.f) != n ||
        fwrite(m->val, 4, n, o.f) != n) {
        cr_out_abort(&o);
        return;
    }
    cr_out_commit(&o, NULL);
}

static int parse_into(const char *path, cr_coo_alloc alloc, void *ud, cr_coo *m, int allocated, cr_err *e) {
    cr_mm_header h;
    cr_mm_reader *r = cr_mm_open(path, &h, e);
    if (!r) return -1;
    if (allocated && (m->nnz != h.nnz || m->rows != h.rows || m->cols != h.cols)) {
        /* stale cache of another shape: the arrays cannot be reused */
        if (alloc == malloc_alloc) cr_coo_free(m);
        allocated = 0;
    }
    if (!allocated) {
        m->rows = h.rows;
        m->cols = h.cols;
        m->nnz = h.nnz;
        if (alloc(ud, m, e) != 0) {
            cr_mm_close(&r);
            return -1;
        }
    }
    int64_t at = 0, xr, xc;
    float xv;
    for (;;) { /* once all declared entries are in, one more read must find EOF */
        size_t left = (size_t)(h.nnz - at), cap = left < 65536 ? left : 65536;
        long got = left ? cr_mm_read(r, m->row + at, m->col + at, m->val + at, cap, e)
                        : cr_mm_read(r, &xr, &xc, &xv, 1, e);
        if (got < 0) {
            cr_mm_close(&r);
            return -1;
        }
        if (got == 0) break;
        at += got;
    }
    cr_mm_close(&r);
    return 0;
}

int cr_mm_load(const char *path, int flags, cr_coo_alloc alloc, void *ud, cr_coo *m, int *from_cache,
               cr_err *e) {
    memset(m, 0, sizeof *m);
    if (!alloc) alloc = malloc_alloc;
    if (from_cache) *from_cache = 0;
    struct stat st;
    int use_cache = !(flags & CR_MM_NO_CACHE) && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    char *cpath = use_cache ? cr_mm_cache_path(path) : NULL;
    int allocated = 0;
    if (use_cache && !(flags & CR_MM_REBUILD)) {
        int rc = cache_read(cpath, &st, alloc, ud, m, e);
        if (rc < 0) {
            free(cpath);
            return -1;
        }
        if (rc == 1) {
            if (from_cache) *from_cache = 1;
            free(cpath);
            return 0;
        }
        allocated = m->row != NULL;
    }
    if (parse_into(path, alloc, ud, m, allocated, e) != 0) {
        if (alloc == malloc_alloc) cr_coo_free(m);
        free(cpath);
        return -1;
    }
    if (use_cache) cache_write(cpath, &st, m);
    free(cpath);
    return 0;
}

/* ---- writers ---- */

struct cr_mm_writer {
    cr_out o;
    int64_t nnz, added;
    int pattern;
};

cr_mm_writer *cr_mm_writer_open(const char *path, int64_t rows, int64_t cols, int64_t nnz, int pattern,
                                cr_err *e) {
    cr_mm_writer *w = cr_xcalloc(1, sizeof *w);
    if (cr_out_open(&w->o, path, e) != 0) {
        free(w);
        return NULL;
    }
    w->nnz = nnz;
    w->pattern = pattern;
    fprintf(w->o.f, "%%%%MatrixMarket matrix coordinate %s general\n%lld %lld %lld\n",
            pattern ? "pattern" : "real", (long long)rows, (long long)cols, (long long)nnz);
    return w;
}

void cr_mm_writer_add(cr_mm_writer *w, int64_t row, int64_t col, float val) {
    if (w->pattern) fprintf(w->o.f, "%lld %lld\n", (long long)row + 1, (long long)col + 1);
    else fprintf(w->o.f, "%lld %lld %.9g\n", (long long)row + 1, (long long)col + 1, (double)val);
    w->added++;
}

int cr_mm_writer_commit(cr_mm_writer **wp, cr_err *e) {
    cr_mm_writer *w = *wp;
    *wp = NULL;
    int rc;
    if (w->added != w->nnz) {
        rc = cr_errf(e, "%s: %lld entries written, %lld declared", w->o.path, (long long)w->added,
                     (long long)w->nnz);
        cr_out_abort(&w->o);
    } else {
        rc = cr_out_commit(&w->o, e);
    }
    free(w);
    return rc;
}

void cr_mm_writer_abort(cr_mm_writer **wp) {
    if (!wp || !*wp) return;
    cr_out_abort(&(*wp)->o);
    free(*wp);
    *wp = NULL;
}

int cr_mm_write(const char *path, const cr_coo *m, int pattern, cr_err *e) {
    cr_mm_writer *w = cr_mm_writer_open(path, m->rows, m->cols, m->nnz, pattern, e);
    if (!w) return -1;
    for (int64_t i = 0; i < m->nnz; i++) cr_mm_writer_add(w, m->row[i], m->col[i], m->val ? m->val[i] : 1.0f);
    return cr_mm_writer_commit(&w, e);
}
