/* cr_bigraph_load: the partitioners' three input formats, read by the
 * src/data readers (one parser per format, so cr.data.* and the partitioner
 * agree on every file). Only the (u, v) pairs are kept, 8 bytes per edge,
 * until cr_bigraph_from_edges builds CSR in both directions. */
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "data/cr_graph.h"
#include "data/cr_libsvm.h"
#include "data/cr_mm.h"
#include "partition/cr_bigraph.h"

typedef struct edges {
    uint32_t *u, *v;
    uint64_t n, cap;
    uint32_t nu, nv; /* ids seen so far: max + 1 */
    const char *path;
} edges;

static void reserve(edges *es, uint64_t cap) {
    es->cap = cap;
    es->u = cr_xrealloc(es->u, cap * sizeof *es->u);
    es->v = cr_xrealloc(es->v, cap * sizeof *es->v);
}

static void push(edges *es, uint32_t u, uint32_t v) {
    if (es->n == es->cap) reserve(es, es->cap ? es->cap * 2 : 4096);
    es->u[es->n] = u;
    es->v[es->n] = v;
    es->n++;
}

/* LIBSVM sample -> edges (row, feature id); ids are below 2^31 (reader). */
static int libsvm_row(void *ud, int64_t row, float label, const int64_t *idx, const float *val, int64_t n,
                      cr_err *e) {
    (void)label, (void)val;
    edges *es = ud;
    if (row >= UINT32_MAX - 1) return cr_errf(e, "%s: more than 2^32-2 examples", es->path);
    for (int64_t k = 0; k < n; k++) push(es, (uint32_t)row, (uint32_t)idx[k]);
    es->nu = (uint32_t)row + 1;
    return 0;
}

/* Edge-list line -> both directions (a general graph, spec/partitioning.md). */
static int edge(void *ud, int64_t a, int64_t b, cr_err *e) {
    (void)e;
    edges *es = ud;
    push(es, (uint32_t)a, (uint32_t)b);
    if (a != b) push(es, (uint32_t)b, (uint32_t)a);
    uint32_t top = (uint32_t)(a > b ? a : b) + 1;
    if (top > es->nu) es->nu = top;
    return 0;
}

/* MatrixMarket entries in chunks; a symmetric file's mirrored entries too. */
static int load_mm(const char *path, edges *es, cr_err *e) {
    cr_mm_header h;
    cr_mm_reader *r = cr_mm_open_flags(path, CR_MM_SYMMETRIC, &h, e);
    if (!r) return -1;
    enum { CHUNK = 16384 };
    int64_t *row = cr_xmalloc(CHUNK * sizeof *row), *col = cr_xmalloc(CHUNK * sizeof *col);
    float *val = cr_xmalloc(CHUNK * sizeof *val);
    reserve(es, h.nnz ? (uint64_t)h.nnz * (h.symmetric ? 2 : 1) : 1);
    long got;
    while ((got = cr_mm_read(r, row, col, val, CHUNK, e)) > 0) {
        for (long k = 0; k < got; k++) {
            push(es, (uint32_t)row[k], (uint32_t)col[k]);
            if (h.symmetric && row[k] != col[k]) push(es, (uint32_t)col[k], (uint32_t)row[k]);
        }
    }
    free(row), free(col), free(val);
    cr_mm_close(&r);
    es->nu = (uint32_t)h.rows; /* sizes from the size line (below 2^31: reader) */
    es->nv = (uint32_t)h.cols;
    return got < 0 ? -1 : 0;
}

cr_bigraph *cr_bigraph_load(const char *path, cr_bigraph_format fmt, cr_err *e) {
    edges es;
    memset(&es, 0, sizeof es);
    es.path = path;
    int rc;
    if (fmt == CR_BIGRAPH_MM) {
        rc = load_mm(path, &es, e);
    } else if (fmt == CR_BIGRAPH_EDGES) {
        rc = cr_edges_scan(path, CR_EDGES_EXTRA_FIELDS, edge, &es, e);
        es.nv = es.nu;
    } else {
        int64_t cols = 0;
        rc = cr_libsvm_scan(path, 0, CR_LIBSVM_ANY_ORDER | CR_LIBSVM_SKIP_BLANK | CR_LIBSVM_MULTILABEL, libsvm_row,
                            &es, &cols, e);
        es.nv = (uint32_t)cols;
    }
    cr_bigraph *g = rc == 0 ? cr_bigraph_from_edges(es.u, es.v, es.n, es.nu, es.nv, e) : NULL;
    free(es.u);
    free(es.v);
    return g;
}

int cr_bigraph_format_parse(const char *name, cr_bigraph_format *out) {
    if (!strcmp(name, "libsvm")) *out = CR_BIGRAPH_LIBSVM;
    else if (!strcmp(name, "mm") || !strcmp(name, "matrixmarket")) *out = CR_BIGRAPH_MM;
    else if (!strcmp(name, "edges") || !strcmp(name, "edgelist")) *out = CR_BIGRAPH_EDGES;
    else return -1;
    return 0;
}

cr_bigraph_format cr_bigraph_format_guess(const char *path) {
    const char *dot = strrchr(path, '.');
    if (dot && (!strcmp(dot, ".mtx") || !strcmp(dot, ".mm") || !strcmp(dot, ".mmc"))) return CR_BIGRAPH_MM;
    if (dot && (!strcmp(dot, ".edges") || !strcmp(dot, ".el") || !strcmp(dot, ".tsv"))) return CR_BIGRAPH_EDGES;
    return CR_BIGRAPH_LIBSVM;
}
