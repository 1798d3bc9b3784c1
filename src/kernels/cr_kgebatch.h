#ifndef CR_KGEBATCH_H
#define CR_KGEBATCH_H
/* One worker's share of the training triples of a knowledge graph, and the
 * batches of labelled triples the KGE kernels (cr_kge.h) train on.
 *
 * An epoch walks the positives in a seeded random order, cut into batches of
 * `batch` positives (the last one may be smaller). Each batch yields
 *   - ekeys: the sorted unique entity ids it touches (its positives'
 *     subjects and objects and its negatives), to pull from the entity table;
 *   - rkeys: the sorted unique relation ids of its positives;
 *   - a cr_kge_batch whose s, r, o are row indices into ekeys, rkeys, ekeys
 *     (so into the pulled matrices) with labels y.
 * Positive i of the batch (0-based, in walk order) is triple i * (1 + 2 neg)
 * with label 1; it is followed by `neg` copies whose subject is replaced by a
 * negative entity, then `neg` copies whose object is replaced, all label 0.
 * The negative entities come from the caller (e.g. drawn through the PS
 * sampling API) as 2 neg ids per positive, in that order: for positive i,
 * ids [2 neg i, 2 neg i + neg) replace the subject, the next neg the object.
 * No filtering: a negative may happen to be a true triple.
 *
 * With opts.negrows the negatives are not merged into ekeys: ekeys holds the
 * positives' entities only (ne of them), and the negative at position j of
 * the ids the caller passed is entity row ne + j. The caller then gives the
 * kernel the split matrix [rows of ekeys; rows of the negatives] (cr_kge.h,
 * cr_kge_loss_grad_split): the rows of the negatives can be the ones the
 * sampling API already returned with their keys (a key drawn twice has two
 * rows and two gradients), so nothing is pulled twice.
 *
 * Memory: the triples are copied (3 int64 per positive plus an 8-byte walk
 * order); every buffer a batch needs (O(batch (1 + 2 neg))) is allocated once
 * at creation, so handing out batches allocates nothing. A batch costs
 * O(m log m) for m = its triples (hashing the ids into local rows is O(m);
 * sorting the unique keys is the log factor). */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_rng.h"
#include "kernels/cr_kge.h"

typedef struct cr_kgebatch_opts {
    int64_t entities;  /* entity ids are in [0, entities), >= 1 */
    int64_t relations; /* relation ids are in [0, relations), >= 1 */
    int64_t batch;     /* positives per batch, >= 1 */
    int64_t neg;       /* negatives per side and positive, >= 0 */
    uint64_t seed;     /* walk order of the first epoch (cr_kgebatch_shuffle) */
    int negrows;       /* 1: negatives get rows of their own (see below) */
    int64_t part, parts; /* keep triple i (0-based) iff i % parts == part; parts 0 or 1: all */
} cr_kgebatch_opts;

typedef struct cr_kgebatch cr_kgebatch;

/* A new batcher over the n triples (s[i], r[i], o[i]) (copied; n >= 0; only
 * those of part `part` of `parts` when parts > 1: one worker's share), or
 * NULL with e set: "part P is not in [0, PARTS)", "batch must be >= 1 (got B)", "neg must be >= 0 (got N)",
 * "entities must be >= 1 (got N)", "relations must be >= 1 (got N)",
 * "batch B with neg N makes more than 2^31 triples per batch",
 * "triple I: subject|relation|object X is not in [0, N)" (I 1-based).
 * O(n). Free with cr_kgebatch_destroy. */
cr_kgebatch *cr_kgebatch_new(const int64_t *s, const int64_t *r, const int64_t *o, int64_t n,
                             const cr_kgebatch_opts *opts, cr_err *e);

/* The bytes cr_kgebatch_new(.., n, o, ..) allocates (as a double: any n
 * and options, even those it refuses), so a caller can refuse a size
 * before it is allocated. */
double cr_kgebatch_bytes(int64_t n, const cr_kgebatch_opts *o);

/* Free *kb and set it to NULL; accepts NULL. */
void cr_kgebatch_destroy(cr_kgebatch **kb);

int64_t cr_kgebatch_count(const cr_kgebatch *kb);   /* positives */
int64_t cr_kgebatch_batches(const cr_kgebatch *kb); /* batches per epoch */

/* A new walk order that depends on seed only (not on earlier shuffles), and
 * restart the walk. Also reseeds the generator of cr_kgebatch_next's uniform
 * negatives. O(n). */
void cr_kgebatch_shuffle(cr_kgebatch *kb, uint64_t seed);

/* Restart the walk in the same order. O(1). */
void cr_kgebatch_rewind(cr_kgebatch *kb);

/* Negative entity ids the next batch needs (2 neg times its positives; 0 at
 * the end of the walk). */
int64_t cr_kgebatch_needs(const cr_kgebatch *kb);

/* A batch handed out by cr_kgebatch_next: pointers into kb, valid until the
 * next call of cr_kgebatch_next, shuffle, rewind or destroy. */
typedef struct cr_kgebatch_out {
    int64_t pos;                 /* positives */
    int64_t ne, nr;              /* unique entity and relation keys */
    const int64_t *ekeys, *rkeys; /* sorted ascending, unique */
    cr_kge_batch b;              /* b.n = pos (1 + 2 neg) triples */
    const int64_t *negs;         /* the 2 neg pos negative ids used (given or drawn) */
} cr_kgebatch_out;

/* The next batch of the walk into *out: 1, or 0 at the end of the walk, or
 * -1 with e set when negs is wrong: "negatives: got K ids, the batch needs
 * M" or "negative I: entity X is not in [0, N)" (I 1-based). negs: nneg
 * entity ids laid out as the top of this file says; NULL draws them
 * uniformly from [0, entities) with kb's generator (cr_kgebatch_draw). On an
 * error the walk does not move. */
int cr_kgebatch_next(cr_kgebatch *kb, const int64_t *negs, int64_t nneg, cr_kgebatch_out *out, cr_err *e);

/* n entity ids drawn uniformly from [0, entities) with kb's generator (the
 * one cr_kgebatch_next draws with; seeded by cr_kgebatch_shuffle). */
void cr_kgebatch_uniform(cr_kgebatch *kb, int64_t *out, int64_t n);

/* n entity ids drawn uniformly from [0, entities) with r. O(n). */
void cr_kgebatch_draw(cr_rng *r, int64_t entities, int64_t *out, int64_t n);

#endif
