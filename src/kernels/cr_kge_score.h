#ifndef CR_KGE_SCORE_H
#define CR_KGE_SCORE_H
/* Knowledge-graph embedding scores: the models, their names, the score of
 * one triple and the query vector of a bilinear model. The one definition
 * the trainer (src/kernels/cr_kge.c) and the evaluator
 * (src/eval/cr_linkpred.c) share, so training and evaluation cannot
 * disagree on a score; evaluators use kernels, not the reverse.
 *
 * Layout (d = entity dimension): entity and relation rows are d floats,
 * except RESCAL, whose relation row is a d x d row-major matrix W_r (d*d
 * floats). ComplEx needs an even d: a row is [re | im], the real parts of its
 * d/2 complex numbers, then the imaginary parts (LibKGE's layout).
 *
 * Scores (higher is more plausible):
 *   complex   Re(<e_s, w_r, conj(e_o)>)
 *   distmult  <e_s, w_r, e_o>
 *   transe_l1 -||e_s + w_r - e_o||_1
 *   transe_l2 -||e_s + w_r - e_o||_2
 *   rescal    e_s^T W_r e_o
 *
 * Nothing here allocates; everything runs in the calling thread. */

#include <stdint.h>

#include "base/cr_err.h"

typedef enum {
    CR_KGE_COMPLEX,
    CR_KGE_DISTMULT,
    CR_KGE_TRANSE_L1,
    CR_KGE_TRANSE_L2,
    CR_KGE_RESCAL
} cr_kge_model;

/* Which side of a query is open: TAIL scores (s, r, x), HEAD (x, r, o). */
typedef enum { CR_KGE_TAIL = 0, CR_KGE_HEAD = 1 } cr_kge_dir;

/* "complex", "distmult", "transe" (= transe_l1), "transe_l1", "transe_l2",
 * "rescal" -> *m. Unknown name: -1 with a message listing the names. */
int cr_kge_model_parse(const char *name, cr_kge_model *m, cr_err *e);

/* Score of one triple from its three rows (d = entity dimension; rescal: r
 * is d*d, row-major). O(d), O(d^2) for rescal. ComplEx rows are [re | im]:
 * Re(<s, r, conj(o)>); TransE: -||s + r - o|| (L1 or L2). */
float cr_kge_score(cr_kge_model m, const float *s, const float *r, const float *o, int64_t d);

/* Query vector q (d floats, caller-owned) of a bilinear model (complex,
 * distmult, rescal) such that the score of candidate entity x is q . e_x:
 * for TAIL the anchor a is the subject row and x the object, for HEAD a is
 * the object row and x the subject. O(d), O(d^2) for rescal (cblas_sgemv).
 * TransE is not bilinear: q is left unchanged. */
void cr_kge_score_query(cr_kge_model m, cr_kge_dir dir, const float *a, const float *r, int64_t d, float *q);

#endif
