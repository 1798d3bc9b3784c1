#ifndef CR_LINKPRED_H
#define CR_LINKPRED_H
/* Filtered link-prediction evaluation for knowledge-graph embeddings:
 * MRR, mean rank and Hits@1/3/10 over both directions.
 *
 * For each test triple (s, r, o) two queries are ranked: (s, r, ?) ranks the
 * true object o among all entities, (?, r, o) ranks the true subject s. The
 * ranking is *filtered*: every other entity x for which (s, r, x) (resp.
 * (x, r, o)) is a known true triple -- in any of the filter lists or in the
 * test list itself -- is removed from the candidates before ranking.
 *
 * Ties: an entity whose score equals the true entity's score counts one half
 * (the mean rank of the tied group), rank = 1 + #higher + #equal / 2. MRR is
 * the mean of 1 / rank over all 2n queries, Hits@k the fraction with
 * rank <= k (so a tie for first place is not a hit at 1). A non-finite true
 * score gets the worst rank (the number of unfiltered candidates).
 *
 * Scores (higher is better) are those of src/kernels/cr_kge_score.h, the
 * definition training uses too; the relation matrix of RESCAL holds each
 * d x d W_r as one row of d*d values.
 *
 * The default path scores a block of queries against all entities at once:
 * it forms the query vectors (e.g. e_s * w_r for DistMult) and multiplies the
 * block by the entity matrix with cblas_sgemm; TransE L2 uses
 * ||a - b||^2 = |a|^2 + |b|^2 - 2 a.b, TransE L1 a cache-blocked loop.
 * The naive path (opts.naive) loops per triple and per entity over the score
 * function itself and filters through a hash set; it is the reference for
 * tests and the baseline of the benchmark. Both run in the calling thread;
 * OpenBLAS threading is whatever the process set (tests and benches set
 * OPENBLAS_NUM_THREADS=1). */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_mat.h"
#include "kernels/cr_kge_score.h"

/* n triples as 3n ids (s, r, o, s, r, o, ...), 0-based; caller-owned. */
typedef struct cr_triples {
    const int64_t *spo;
    int64_t n;
} cr_triples;

typedef struct cr_lp_opts {
    int naive;     /* 1: per-triple reference loop */
    int64_t block; /* queries per sgemm block (at most 512); 0: chosen from the entity count */
} cr_lp_opts;

typedef struct cr_lp_result {
    double mrr, mr, hits1, hits3, hits10; /* over all 2n queries */
    double mrr_tail, mrr_head;            /* (s, r, ?) and (?, r, o) alone */
    int64_t queries;                      /* 2n */
} cr_lp_result;

/* Evaluate `test` against entity matrix ent (entities x d) and relation
 * matrix rel (relations x d, or relations x d*d for RESCAL), filtering with
 * the nfilter triple lists in filter (may be NULL when nfilter is 0). If
 * ranks is not NULL it receives 2n ranks: the n tail-query ranks in test
 * order, then the n head-query ranks. All inputs stay owned by the caller.
 * Errors (-1, message in e): wrong dimensions, an empty test set, an id out
 * of range (naming the list and the 1-based triple number). */
int cr_linkpred_eval(cr_kge_model model, const cr_mat *ent, const cr_mat *rel,
                     const cr_triples *test, const cr_triples *filter, int nfilter,
                     const cr_lp_opts *opts, cr_lp_result *out, double *ranks, cr_err *e);

#endif
