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

typedef struct acc {
    cr_i64v ptr, idx;
    cr_f32v val, label;
    int64_t maxid;
} acc;

/* Parse one sample line (comment already cut). Returns 0 or -1. */
static int parse_line(acc *a, char *s, int64_t features, const char *path, long ln, cr_err *e) {
    float label;
    int rc = cr_parse_f32(&s, &label);
    if (rc == -2) return cr_errf_at(e, path, ln, "label is NaN or infinite");
    if (rc != 0 || !cr_field_end(*s)) return cr_errf_at(e, path, ln, "label is not a number");
    cr_f32v_push(&a->label, label);
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
        rc = cr_parse_i64(&s, &id);
        if (rc == 0 && *s != ':') rc = -1;
        if (rc == -1) return cr_errf_at(e, path, ln, "expected ID:VALUE, got '%.20s'", at);
        if (rc == -2 || id < 1 || id > INT32_MAX)
            return cr_errf_at(e, path, ln, "feature id %.20s out of range 1..2147483647", at);
        if (features > 0 && id > features)
            return cr_errf_at(e, path, ln, "feature id %lld beyond the declared %lld features", (long long)id,
                              (long long)features);
        if (id <= last)
            return cr_errf_at(e, path, ln, "feature ids must increase (%lld after %lld)", (long long)id,
                              (long long)last);
        s++;
        rc = cr_parse_f32(&s, &v);
        if (rc == -2) return cr_errf_at(e, path, ln, "value of feature %lld is NaN or infinite", (long long)id);
        if (rc != 0 || !cr_field_end(*s))
            return cr_errf_at(e, path, ln, "value of feature %lld is not a number", (long long)id);
        last = id;
        cr_i64v_push(&a->idx, id - 1);
        cr_f32v_push(&a->val, v);
    }
    if (last > a->maxid) a->maxid = last;
    cr_i64v_push(&a->ptr, a->idx.n);
    return 0;
}

int cr_libsvm_load(const char *path, int64_t features, cr_csr *m, cr_err *e) {
    memset(m, 0, sizeof *m);
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    acc a;
    memset(&a, 0, sizeof a);
    cr_i64v_push(&a.ptr, 0);
    char *s;
    size_t len;
    int rc;
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        char *hash = memchr(s, '#', len);
        if (hash) *hash = '\0';
        if (*cr_skip_ws(s) == '\0') {
            if (hash) continue; /* comment-only line */
            rc = cr_errf_at(e, path, cr_lines_lineno(in), "empty line (every sample needs a label)");
            break;
        }
        if ((rc = parse_line(&a, s, features, path, cr_lines_lineno(in), e)) != 0) break;
    }
    if (rc == 0 && a.label.n == 0) rc = cr_errf(e, "%s: empty file (no samples)", path);
    cr_lines_close(&in);
    if (rc != 0) {
        free(a.ptr.a);
        free(a.idx.a);
        free(a.val.a);
        free(a.label.a);
        return -1;
    }
    m->rows = a.label.n;
    m->cols = features > 0 ? features : a.maxid;
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
