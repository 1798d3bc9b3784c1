#ifndef CR_BIGRAPH_H
#define CR_BIGRAPH_H
/* Bipartite graph G(U, V, E): U = examples, V = parameters (keys), stored as
 * CSR in both directions. Built in one streaming pass from LIBSVM,
 * MatrixMarket coordinate or an edge list (spec/partitioning.md, "The model").
 * Duplicate (u, v) entries are merged; adjacency lists are sorted. */

#include <stdint.h>

#include "base/cr_err.h"

typedef struct cr_bigraph {
    uint32_t nu, nv;   /* |U|, |V| */
    uint64_t ne;       /* |E| after merging duplicates */
    uint64_t *u_off;   /* nu+1 offsets into u_adj */
    uint32_t *u_adj;   /* neighbours (parameters) of each example, sorted */
    uint64_t *v_off;   /* nv+1 offsets into v_adj */
    uint32_t *v_adj;   /* neighbours (examples) of each parameter, sorted */
} cr_bigraph;

typedef enum { CR_BIGRAPH_LIBSVM, CR_BIGRAPH_MM, CR_BIGRAPH_EDGES } cr_bigraph_format;

/* Build from n edge pairs (u[i], v[i]); nu/nv of 0 mean "max id + 1".
 * Returns NULL and fills e on error (ids >= a given nu/nv). Caller owns. */
cr_bigraph *cr_bigraph_from_edges(const uint32_t *u, const uint32_t *v, uint64_t n,
                                  uint32_t nu, uint32_t nv, cr_err *e);

/* Read a file, plain or gzip, through the src/data readers (see
 * cr_bigraph_format; EDGES is a general graph "a b" per line, made bipartite
 * with U = V = vertices and both directions added; a symmetric MM file adds
 * mirrored entries). Errors name the file first: "file:line: reason" for a
 * bad line, "file: cannot open: ...", "file: empty file ...". Caller owns
 * the result. */
cr_bigraph *cr_bigraph_load(const char *path, cr_bigraph_format fmt, cr_err *e);

/* Format by name ("libsvm", "mm", "edges"); -1 if unknown. */
int cr_bigraph_format_parse(const char *name, cr_bigraph_format *out);
/* Format from a file name: .mtx/.mm/.mmc -> MM, .edges/.el/.tsv -> EDGES,
 * anything else LIBSVM. */
cr_bigraph_format cr_bigraph_format_guess(const char *path);

/* Free g and set *gp to NULL; accepts NULL. */
void cr_bigraph_destroy(cr_bigraph **gp);

#endif
