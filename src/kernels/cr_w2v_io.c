/* Word vectors in the word2vec text format: see cr_w2v_io.h. */
#include "kernels/cr_w2v_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "data/cr_lines.h"
#include "data/cr_out.h"

int cr_w2v_write_vectors(const char *path, const cr_mat *m, const char *const *words, cr_err *e) {
    for (int64_t i = 0; i < m->rows; i++)
        if (!words[i][0] || strpbrk(words[i], " \t\n\r\v\f"))
            return cr_errf(e, "%s: word %lld ('%s') is empty or holds whitespace", path, (long long)i + 1, words[i]);
    cr_out o;
    if (cr_out_open(&o, path, e) != 0) return -1;
    fprintf(o.f, "%lld %lld\n", (long long)m->rows, (long long)m->cols);
    for (int64_t i = 0; i < m->rows; i++) {
        const float *r = cr_mat_row(m, i);
        fputs(words[i], o.f);
        for (int64_t k = 0; k < m->cols; k++) fprintf(o.f, " %.6g", (double)r[k]);
        fputc('\n', o.f);
    }
    return cr_out_commit(&o, e);
}

/* The header "WORDS DIM" of line 1 into *rows, *cols. */
static int read_header(cr_lines *in, int64_t *rows, int64_t *cols, cr_err *e) {
    const char *path = cr_lines_path(in);
    char *s;
    size_t len;
    int rc = cr_lines_next(in, &s, &len, e);
    if (rc < 0) return -1;
    if (rc == 0) return cr_errf(e, "%s: empty file (no \"WORDS DIM\" header)", path);
    char *p = s;
    if (cr_parse_i64(&p, rows) != 0 || cr_parse_i64(&p, cols) != 0 || *cr_skip_ws(p) != '\0' || *rows < 1 ||
        *cols < 1 || *cols > 100000 || *rows > INT64_MAX / *cols / 4)
        return cr_errf_at(e, path, 1, "expected a header \"WORDS DIM\" with two positive integers");
    long long size = cr_lines_plain_size(in);
    if (size >= 0 && *rows * *cols > size) /* every value takes at least two bytes */
        return cr_errf_at(e, path, 1, "the header says %lld x %lld values, more than the file can hold",
                          (long long)*rows, (long long)*cols);
    return 0;
}

/* One "word v1 .. vd" line into row i. */
static int read_row(cr_lines *in, char *s, float *row, int64_t d, cr_dict *words, cr_err *e) {
    const char *path = cr_lines_path(in);
    long line = cr_lines_lineno(in);
    char *p = cr_skip_ws(s), *w = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (p == w) return cr_errf_at(e, path, line, "empty line, expected a word and %lld values", (long long)d);
    int added;
    cr_dict_add(words, w, (size_t)(p - w), &added);
    if (!added) return cr_errf_at(e, path, line, "word '%.*s' appears twice", (int)(p - w), w);
    for (int64_t k = 0; k < d; k++) {
        int rc = cr_parse_f32(&p, &row[k]);
        if (rc == -2 || (rc == 0 && !cr_field_end(*p)) || rc == -1)
            return cr_errf_at(e, path, line, "value %lld: %s", (long long)k + 1,
                              rc == -1 && !*cr_skip_ws(p) ? "missing (too few values)" : "not a finite number");
    }
    if (*cr_skip_ws(p)) return cr_errf_at(e, path, line, "more than %lld values", (long long)d);
    return 0;
}

int cr_w2v_read_vectors(const char *path, cr_mat *m, cr_dict *words, cr_err *e) {
    memset(m, 0, sizeof *m);
    cr_dict_init(words);
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    int64_t rows, cols;
    int rc = read_header(in, &rows, &cols, e);
    if (rc == 0) {
        m->data = cr_xmalloc((size_t)(rows * cols) * sizeof(float));
        m->rows = rows;
        m->cols = cols;
    }
    char *s;
    size_t len;
    for (int64_t i = 0; rc == 0 && i < rows; i++) {
        int r = cr_lines_next(in, &s, &len, e);
        if (r == 0) rc = cr_errf(e, "%s: %lld word lines, the header says %lld", path, (long long)i, (long long)rows);
        else rc = r < 0 ? -1 : read_row(in, s, cr_mat_row(m, i), cols, words, e);
    }
    int more = rc == 0 ? 1 : 0;
    while (more == 1 && (more = cr_lines_next(in, &s, &len, e)) == 1)
        if (*cr_skip_ws(s))
            more = cr_errf_at(e, path, cr_lines_lineno(in), "more word lines than the header's %lld", (long long)rows);
    if (more < 0) rc = -1;
    cr_lines_close(&in);
    if (rc != 0) {
        free(m->data);
        memset(m, 0, sizeof *m);
        cr_dict_free(words);
        return -1;
    }
    return 0;
}
