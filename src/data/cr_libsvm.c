#include "data/cr_libsvm.h"

#include <string.h>

#include "data/cr_lines.h"
#include "data/cr_out.h"
#include "data/cr_vec.h"

void cr_csr_free(cr_csr *m) {
    free(m->ptr);
    free(m->idx);
    free(m->val);
    free(m->label);
    memset(m, 0, sizeof *m);
}

/* The sample being parsed: ids and values of one line. */
typedef struct row {
    cr_i64v idx;
    cr_f32v val;
    float label;
    int64_t maxid;
} row;

/* The label field: a number, or with CR_LIBSVM_MULTILABEL a comma-separated
 * list of numbers (the first is kept). Returns 0 or -1 with e set. */
static int parse_label(row *r, char **sp, int flags, const char *path, long ln, cr_err *e) {
    char *s = *sp;
    int rc = cr_parse_f32(&s, &r->label);
    if (rc == 0 && *s == ':') return cr_errf_at(e, path, ln, "missing label before features");
    float more;
    while (rc == 0 && (flags & CR_LIBSVM_MULTILABEL) && *s == ',') {
        s++;
        rc = cr_parse_f32(&s, &more);
    }
    if (rc == -2) return cr_errf_at(e, path, ln, "label is NaN or infinite");
    if (rc != 0 || !cr_field_end(*s)) return cr_errf_at(e, path, ln, "label is not a number");
    *sp = s;
    return 0;
}

/* CR_LIBSVM_SORT: r's entries into increasing id order (insertion: lines
 * are short and mostly in order). A repeated id is an error, the same rule
 * as for a file in order: what it would mean (sum? last wins?) is a guess
 * the reader does not make for the user. */
static int sort_line(row *r, const char *path, long ln, cr_err *e) {
    int64_t *id = r->idx.a;
    float *v = r->val.a;
    for (int64_t k = 1; k < r->idx.n; k++) {
        int64_t x = id[k];
        float y = v[k];
        int64_t j = k;
        for (; j > 0 && id[j - 1] > x; j--) id[j] = id[j - 1], v[j] = v[j - 1];
        id[j] = x, v[j] = y;
        if (j > 0 && id[j - 1] == x) return cr_errf_at(e, path, ln, "feature id %lld repeated", (long long)x + 1);
    }
    return 0;
}

/* Parse one sample line (comment already cut) into r. Returns 0 or -1. */
static int parse_line(row *r, char *s, int64_t features, int flags, const char *path, long ln, cr_err *e) {
    if (parse_label(r, &s, flags, path, ln, e) != 0) return -1;
    r->idx.n = r->val.n = 0;
    int64_t last = 0;
    for (;;) {
        s = cr_skip_ws(s);
        if (*s == '\0') break;
        if (!strncmp(s, "qid:", 4)) {
            s += 4;
            int64_t q;
            if (cr_parse_i64(&s, &q) != 0 || !cr_field_end(*s)) return cr_errf_at(e, path, ln, "bad qid");
            continue;
        }
        int64_t id;
        float v;
        char *at = s;
        int rc = cr_parse_i64(&s, &id);
        if (rc == 0 && *s != ':') rc = -1;
        if (rc == -1) return cr_errf_at(e, path, ln, "expected ID:VALUE, got '%.20s'", at);
        if (rc == -2 || id < 1 || id > INT32_MAX)
            return cr_errf_at(e, path, ln, "feature id %.20s out of range 1..2147483647", at);
        if (features > 0 && id > features)
            return cr_errf_at(e, path, ln, "feature id %lld beyond the declared %lld features", (long long)id,
                              (long long)features);
        if (id <= last && !(flags & (CR_LIBSVM_ANY_ORDER | CR_LIBSVM_SORT)))
            return cr_errf_at(e, path, ln, "feature ids must increase (%lld after %lld)", (long long)id,
                              (long long)last);
        s++;
        rc = cr_parse_f32(&s, &v);
        if (rc == -2) return cr_errf_at(e, path, ln, "value of feature %lld is NaN or infinite", (long long)id);
        if (rc != 0 || !cr_field_end(*s))
            return cr_errf_at(e, path, ln, "value of feature %lld is not a number", (long long)id);
        last = id;
        if (id > r->maxid) r->maxid = id;
        cr_i64v_push(&r->idx, id - 1);
        cr_f32v_push(&r->val, v);
    }
    return (flags & CR_LIBSVM_SORT) ? sort_line(r, path, ln, e) : 0;
}

int cr_libsvm_scan(const char *path, int64_t features, int flags, cr_libsvm_row_fn fn, void *ud,
                   int64_t *cols, cr_err *e) {
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    row r;
    memset(&r, 0, sizeof r);
    int64_t rows = 0;
    char *s;
    size_t len;
    int rc;
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        char *hash = memchr(s, '#', len);
        if (hash) *hash = '\0';
        if (*cr_skip_ws(s) == '\0') {
            if (hash || (flags & CR_LIBSVM_SKIP_BLANK)) continue; /* comment-only or skipped blank line */
            rc = cr_errf_at(e, path, cr_lines_lineno(in), "empty line (every sample needs a label)");
            break;
        }
        if ((rc = parse_line(&r, s, features, flags, path, cr_lines_lineno(in), e)) != 0) break;
        if (fn(ud, rows++, r.label, r.idx.a, r.val.a, r.idx.n, e) != 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && rows == 0) rc = cr_errf(e, "%s: empty file (no samples)", path);
    cr_lines_close(&in);
    free(r.idx.a);
    free(r.val.a);
    if (cols) *cols = features > 0 ? features : r.maxid;
    return rc == 0 ? 0 : -1;
}

/* cr_libsvm_load's accumulator: the whole CSR. */
typedef struct acc {
    cr_i64v ptr, idx;
    cr_f32v val, label;
} acc;

static int append_row(void *ud, int64_t rowno, float label, const int64_t *idx, const float *val, int64_t n,
                      cr_err *e) {
    (void)rowno, (void)e;
    acc *a = ud;
    cr_f32v_push(&a->label, label);
    for (int64_t k = 0; k < n; k++) {
        cr_i64v_push(&a->idx, idx[k]);
        cr_f32v_push(&a->val, val[k]);
    }
    cr_i64v_push(&a->ptr, a->idx.n);
    return 0;
}

int cr_libsvm_load(const char *path, int64_t features, cr_csr *m, cr_err *e) {
    memset(m, 0, sizeof *m);
    acc a;
    memset(&a, 0, sizeof a);
    cr_i64v_push(&a.ptr, 0);
    int64_t cols;
    if (cr_libsvm_scan(path, features, 0, append_row, &a, &cols, e) != 0) {
        free(a.ptr.a);
        free(a.idx.a);
        free(a.val.a);
        free(a.label.a);
        return -1;
    }
    m->rows = a.label.n;
    m->cols = cols;
    m->nnz = a.idx.n;
    m->ptr = a.ptr.a;
    m->idx = a.idx.a ? a.idx.a : cr_xmalloc(1);
    m->val = a.val.a ? a.val.a : cr_xmalloc(1);
    m->label = a.label.a;
    return 0;
}

int cr_libsvm_write(const char *path, const cr_csr *m, cr_err *e) {
    cr_out o;
    if (cr_out_open(&o, path, e) != 0) return -1;
    for (int64_t i = 0; i < m->rows; i++) {
        fprintf(o.f, "%.9g", (double)m->label[i]);
        for (int64_t k = m->ptr[i]; k < m->ptr[i + 1]; k++)
            fprintf(o.f, " %lld:%.9g", (long long)m->idx[k] + 1, (double)m->val[k]);
        fputc('\n', o.f);
    }
    return cr_out_commit(&o, e);
}
