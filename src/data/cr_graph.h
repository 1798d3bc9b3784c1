#ifndef CR_GRAPH_H
#define CR_GRAPH_H
/* Edge lists and knowledge-graph triples.
 *
 * Edge list: "A B" per line (blanks or tabs), ids are non-negative integers
 * used as given (n = largest id + 1); '#' starts a comment, and so does '%'
 * at the start of a line (KONECT headers).
 * Triples: "S<TAB>R<TAB>O" per line, either names (mapped through
 * dictionaries) or LibKGE .del integer ids. All readers stream plain or gzip
 * input and stop at the first bad line with "file:line: what is wrong". */

#include <stdint.h>

#include "base/cr_err.h"
#include "data/cr_dict.h"

typedef struct cr_edges {
    int64_t n, m;        /* nodes (max id + 1), edges */
    int64_t *src, *dst;  /* m ids each (malloc'd) */
} cr_edges;

/* Read a whole edge list into *g (arrays malloc'd, free with cr_edges_free).
 * Errors: "file:line: what is wrong" for a missing, non-integer or
 * out-of-range id (0..2^31-1) or an extra field; "file: empty file"; I/O,
 * truncated gzip. */
int cr_edges_load(const char *path, cr_edges *g, cr_err *e);
/* Streaming form: fn(ud, source, target, e) once per edge in file order; a
 * non-zero return stops the scan (fn fills e). With CR_EDGES_EXTRA_FIELDS,
 * fields after the two ids (weights, timestamps) are ignored instead of
 * being an error. Same errors as cr_edges_load. Returns 0 or -1. */
enum { CR_EDGES_EXTRA_FIELDS = 1 };
typedef int (*cr_edge_fn)(void *ud, int64_t src, int64_t dst, cr_err *e);
int cr_edges_scan(const char *path, int flags, cr_edge_fn fn, void *ud, cr_err *e);
int cr_edges_write(const char *path, const cr_edges *g, cr_err *e);
void cr_edges_free(cr_edges *g);

typedef struct cr_triple_cols {
    int64_t n;              /* triples */
    int64_t *s, *r, *o;     /* n ids each (malloc'd) */
    int64_t n_ent, n_rel;   /* id bounds (dictionary sizes or max id + 1) */
} cr_triple_cols;

/* Names TSV. Names go through ents/rels (caller-owned, may be shared by the
 * train/valid/test files); with grow = 0 an unknown name is an error. */
int cr_triples_load(const char *path, cr_dict *ents, cr_dict *rels, int grow, cr_triple_cols *t, cr_err *e);
/* LibKGE .del ids. max_ent / max_rel > 0 bound the ids (else up to 2^31-1). */
int cr_triples_load_del(const char *path, int64_t max_ent, int64_t max_rel, cr_triple_cols *t, cr_err *e);
/* Write names (ents/rels non-NULL) or ids (NULL), tab-separated, atomically. */
int cr_triples_write(const char *path, const cr_triple_cols *t, const cr_dict *ents, const cr_dict *rels,
                     cr_err *e);
void cr_triples_free(cr_triple_cols *t);

#endif
