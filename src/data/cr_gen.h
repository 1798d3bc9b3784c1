#ifndef CR_GEN_H
#define CR_GEN_H
/* Synthetic dataset generators (all deterministic for a seed, all writing
 * through temp files that are renamed only when complete).
 *
 *   zipf-mf    NuPS matrix-factorization data: zipf cells, low-rank values
 *   bipartite  0/1 data x parameter matrices (paper 000): uniform density or
 *              zipf column degrees; LIBSVM or MatrixMarket pattern output
 *   zipf-text  tokens from a zipf vocabulary, for word2vec / LDA scale tests */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_rng.h"

/* Sampler for P(k) ∝ 1/(k+1)^s over k = 0..n-1 (inverse CDF, binary search
 * over a table of n doubles). */
typedef struct cr_zipf {
    int64_t n;
    double *cdf; /* owned */
} cr_zipf;

/* Build the table. Returns 0, or -1 (e set) for n < 1, s < 0 or no memory. */
int cr_zipf_init(cr_zipf *z, int64_t n, double s, cr_err *e);
int64_t cr_zipf_draw(const cr_zipf *z, cr_rng *r);
void cr_zipf_free(cr_zipf *z);

typedef struct cr_zipf_mf_opts {
    int64_t rows, cols, cells;
    int rank;
    double exponent;      /* zipf exponent (NuPS: 1.1) */
    double noise;         /* std of the additive Normal noise */
    double test_fraction; /* exact share of cells written to test.mmc */
    uint64_t seed;
    const char *out_dir;  /* created if missing */
} cr_zipf_mf_opts;

typedef struct cr_gen_stats {
    int64_t train, test;  /* cells (or tokens / nonzeros) written per file */
    int64_t draws;        /* samples drawn (duplicates included) */
    double seconds;
} cr_gen_stats;

/* Write OUT/train.mmc and OUT/test.mmc. Errors: bad options, impossible or
 * impractical cell counts (more than rows*cols, or the zipf head saturates so
 * that N unique cells are not found within 50*N + 10^6 draws; the run stops
 * early once the current acceptance rate shows the budget cannot suffice), I/O. */
int cr_gen_zipf_mf(const cr_zipf_mf_opts *o, cr_gen_stats *st, cr_err *e);

typedef struct cr_bipartite_opts {
    int64_t rows, cols;
    double density;   /* share of ones, in (0, 1] */
    double zipf;      /* 0: uniform cells; > 0: column ids zipf(zipf), rows uniform */
    uint64_t seed;
    const char *out;  /* *.mtx / *.mmc: MatrixMarket pattern; else LIBSVM */
} cr_bipartite_opts;

int cr_gen_bipartite(const cr_bipartite_opts *o, cr_gen_stats *st, cr_err *e);

typedef struct cr_zipf_text_opts {
    int64_t tokens, vocab;
    double exponent;
    int64_t line_tokens; /* tokens per line (a sentence / document) */
    uint64_t seed;
    const char *out;
} cr_zipf_text_opts;

/* Words are "w1" (most frequent) .. "wV". */
int cr_gen_zipf_text(const cr_zipf_text_opts *o, cr_gen_stats *st, cr_err *e);

#endif
