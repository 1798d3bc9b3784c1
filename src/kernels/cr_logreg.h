#ifndef CR_LOGREG_H
#define CR_LOGREG_H
/* Sparse logistic regression kernels (lua/models/logreg.lua, thesis ch. 6).
 *
 * Data: examples of a LIBSVM file ("LABEL ID:VALUE ...", label > 0 is the
 * positive class y = +1, anything else y = -1), in CSR with the table's key
 * of each feature: feature id f (1-based in the file) is key f - 1, the
 * numbering `crescent partition` uses for the file (partition/cr_bigraph_io.c:
 * same reader, same flags for blank lines, so example i is the i-th sample
 * of the file, blank lines not counted). Feature ids may come in any order
 * (hashed features): each example's entries are sorted by key; a repeated
 * id is an error, as in every LIBSVM reader (cr_libsvm.h's CR_LIBSVM_SORT).
 * Each example keeps its margin
 * m_i = <x_i, w> so that a block-coordinate method updates it in place.
 *
 * Loss of example i: log(1 + exp(-y_i m_i)); its derivative in m_i is
 * d_i = -y_i sigma(-y_i m_i), its curvature p_i (1 - p_i) with p_i =
 * sigma(m_i).
 *
 * Two layouts on top of the CSR, built on demand:
 *   batches  (minibatch optimizers: ftrl, adagrad): consecutive examples,
 *            each batch with its sorted distinct keys and, per entry, the
 *            position of its key in that list;
 *   blocks   (DBPG): the distinct keys of the examples, sorted, cut into
 *            blocks of the key space ([b F / B, (b+1) F / B)), with the
 *            entries transposed per key (CSC) so that a block's gradient
 *            and curvature bound are one pass over its entries, and a local
 *            copy of each key's weight (what the margins were built with).
 * Core code: no printing; allocation through cr_x* (aborts when out of
 * memory). */

#include <stdint.h>

#include "base/cr_err.h"

enum { CR_LOGREG_TRAIN = 0, CR_LOGREG_TEST = 1, CR_LOGREG_ALL = 2 };

typedef struct cr_logreg_load_opts {
    int64_t features;      /* the table's keys: a larger feature id is an error (file:line); 0: infer */
    double heldout;        /* fraction of the file's examples held out as the test split, [0, 1) */
    uint64_t seed;         /* of the held-out draw (example i is held out by a hash of (seed, i)) */
    int split;             /* CR_LOGREG_TRAIN | _TEST | _ALL */
    int64_t part, parts;   /* the kept training examples are dealt round robin: k-th kept -> part k % parts */
    const char *placement; /* NULL, or a placement file (data/cr_assign.h): its u lines */
    int64_t node, nodes;   /* with a placement: keep the examples placed on `node`; the file's k = nodes */
} cr_logreg_load_opts;

typedef struct cr_logreg_data {
    int64_t n, nnz;          /* examples kept, their entries */
    int64_t features;        /* features of the file (largest id), or the declared count */
    int64_t file_examples;   /* samples in the file */
    int64_t *ptr;            /* n + 1 */
    int64_t *key;            /* nnz keys (feature id - 1) */
    float *val;              /* nnz values */
    float *y;                /* n labels, +1 / -1 */
    double *margin;          /* n margins <x_i, w> (zero after loading) */
    float *tex;              /* n: expf(-|margin|), with blocks (cr_logreg_blocks); kept with the margins */
    int64_t *fcount;         /* entries of each feature over every line of the file (nfcount) */
    int64_t nfcount;         /* the largest feature id seen */
    /* batches (cr_logreg_batches) */
    int64_t nbatches;
    int64_t *bat_ex;         /* nbatches + 1 example offsets */
    int64_t *bat_koff;       /* nbatches + 1 offsets into bat_key */
    int64_t *bat_key;        /* each batch's distinct keys, sorted */
    int32_t *pos;            /* nnz: position of the entry's key in its batch's list */
    /* blocks (cr_logreg_blocks) */
    int64_t nu;              /* distinct keys of the examples */
    int64_t *ukey;           /* nu keys, sorted */
    int64_t *cptr;           /* nu + 1 offsets of each key's entries */
    int64_t *crow;           /* nnz examples, by key */
    float *cval;             /* nnz values, by key */
    float *cs;               /* nnz: sum_{k in the key's block} |x_ik| of the entry's example */
    float *wloc;             /* nu: the weight the margins hold for each key */
    float *trust;            /* nu: each key's trust radius, as last pulled (1 at first) */
    int64_t nblocks;
    int64_t *bkey;           /* nblocks + 1: block b holds keys [bkey[b], bkey[b+1]) */
    int64_t *boff;           /* nblocks + 1 offsets into ukey */
    int64_t *act;            /* indices into ukey of the active keys, block by block from boff[b] */
    int64_t *nact;           /* nblocks: active keys of each block */
} cr_logreg_data;

/* Read a LIBSVM file (streamed) into a new data set. Errors "file:line:
 * what" from the reader (malformed line, feature id past opts->features),
 * "placement: file has N examples, data file has M" and the like for a
 * placement file that does not fit the data or the nodes. Returns NULL with
 * e set. Caller frees with cr_logreg_destroy. */
cr_logreg_data *cr_logreg_load(const char *path, const cr_logreg_load_opts *o, cr_err *e);
void cr_logreg_destroy(cr_logreg_data **d);

/* Write the examples as a LIBSVM file (labels +1 / -1, feature id = key +
 * 1), atomically. For the peers of the benchmark (the same split). */
int cr_logreg_save(const cr_logreg_data *d, const char *path, cr_err *e);

/* log(1 + exp(-z)), stable for any z. */
double cr_logreg_loss1(double z);

/* Sum of the losses at the current margins. */
double cr_logreg_loss(const cr_logreg_data *d);

/* Margins from full weights: m_i = sum_k w[key_k * stride] x_ik, for w of
 * nkeys rows of `stride` floats (the first is the weight). A key >= nkeys
 * counts 0. Writes d->margin. */
void cr_logreg_margins(cr_logreg_data *d, const float *w, int64_t nkeys, int64_t stride);

/* The distinct keys of the examples, sorted, into d->ukey / d->nu (once). */
void cr_logreg_keys(cr_logreg_data *d);

/* Margins from the weights of the distinct keys (w: nu rows of `stride`
 * floats, in d->ukey's order). */
void cr_logreg_margins_keys(cr_logreg_data *d, const float *w, int64_t stride);

/* Cut the examples into batches of about `size` examples (>= 1). */
void cr_logreg_batches(cr_logreg_data *d, int64_t size);

/* Batch b: margins from w (one row of `stride` floats per key of the
 * batch's list, first value the weight), the loss gradient summed over the
 * batch into g (one float per key of the list, zeroed here) plus l2 w;
 * returns the batch's loss sum (without the regularizer). */
double cr_logreg_batch_grad(cr_logreg_data *d, int64_t b, const float *w, int64_t stride, double l2, float *g);

/* Build the blocks: nblocks ranges of the key space, block b = keys
 * [bounds[b], bounds[b+1]) with bounds[0] = 0 and bounds[nblocks] >= every
 * key (increasing); bounds NULL: equal ranges of [0, features) (features 0:
 * d->features). Every key starts active, local weights 0, trust radius 1
 * (margins are left as they are: call after loading). */
void cr_logreg_blocks(cr_logreg_data *d, int64_t nblocks, int64_t features, const int64_t *bounds);

/* At most nblocks + 1 block bounds into bounds (nblocks + 1 slots) such that
 * the blocks hold about equal shares of the file's entries (every line's,
 * from the load: the same on every process that read the file): frequent
 * features get small blocks, so that fewer keys that share examples move
 * together. Returns the number of blocks (fewer when a feature alone holds
 * more than a share). */
int64_t cr_logreg_balanced(const cr_logreg_data *d, int64_t nblocks, int64_t *bounds);

/* Block b's active keys: *keys points at nact[b] indices into ukey. */
static inline const int64_t *cr_logreg_block_act(const cr_logreg_data *d, int64_t b) {
    return d->act + d->boff[b];
}

/* DBPG's push of block b: for each active key j (in order), out[2q] = g_j =
 * sum_i d_i x_ij and out[2q + 1] = u_j, a curvature of the loss in w_j that
 * holds within the key's trust radius r_j (Genkin et al.'s BBR, 2007): with
 * c_i = max sigma'(m) over |m - m_i| <= r_j |x_ij| and s_i the example's sum
 * of |x| over the block,
 *   u_j = sum_i c_i |x_ij| ((1 - rho) |x_ij| + rho s_i),  rho in [0, 1].
 * rho = 0: a bound of the loss along w_j alone (the keys of one block move
 * together, a Jacobi step, and may overshoot where they share examples);
 * rho = 1: by Gershgorin's theorem diag(u) bounds the block's Hessian. */
void cr_logreg_block_grad(const cr_logreg_data *d, int64_t b, double rho, float *out);

/* After the pull of block b's active keys (rows of `stride` floats: weight,
 * then, with stride >= 2, the rule's r: optim/cr_optim.h): margins += x_j
 * (w_j - wloc_j), wloc_j = w_j; r > 0 is the key's new trust radius; keys
 * with r < 0 (skipped by the KKT filter) leave the active list (their weight
 * is 0 and stays so: the server drops their pushes). Returns the keys
 * dropped. */
int64_t cr_logreg_block_update(cr_logreg_data *d, int64_t b, const float *w, int64_t stride);

/* Keys left out of the active lists (skipped by the KKT filter). */
int64_t cr_logreg_skipped(const cr_logreg_data *d);

#endif
