#ifndef CR_WORDVEC_H
#define CR_WORDVEC_H
/* Word-vector tests: word analogy (3CosAdd) and multiple-choice synonyms.
 *
 * Both take a vector matrix (one row per word, caller-owned) and the words
 * of its rows in frequency order (most frequent first, as a vocabulary file
 * lists them), and read a question file given by path, streaming it line by
 * line. Words match case-insensitively (ASCII), like the original
 * compute-accuracy tool, which upper-cases vocabulary and questions; if two
 * vocabulary words fold to the same key the more frequent one is used.
 * Errors (-1, message in e): mismatched sizes, an unreadable file, a bad
 * line ("path:line: what is wrong"). Both run in the calling thread. */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_mat.h"

typedef struct cr_analogy_opts {
    int64_t restrict_n; /* vocabulary prefix used; 0: 30000 (capped at the vocabulary size) */
    int naive;          /* 1: per-question loop instead of the batched sgemm pass */
    int64_t block;      /* questions per sgemm block; 0: chosen from the vocabulary size */
} cr_analogy_opts;

typedef struct cr_analogy_result {
    int64_t sem_total, sem_seen, sem_correct; /* semantic sections (not starting with "gram") */
    int64_t syn_total, syn_seen, syn_correct; /* syntactic sections ("gram...") */
    double sem_acc, syn_acc, acc;             /* correct / seen (0 when nothing was seen) */
    double coverage;                          /* seen / total questions */
} cr_analogy_result;

/* Word analogy over a questions-words.txt style file: lines ": section"
 * start a section, other lines hold four words "a b c d" meaning
 * a : b = c : d. Vectors are unit-normalized; only the restrict_n most
 * frequent words are known (a question with any word outside them is skipped,
 * i.e. not seen) and are the answer candidates. The prediction is the
 * candidate x, other than a, b and c, with the largest cosine to b - a + c
 * (the first, i.e. most frequent, on a tie); correct if x == d. Questions are
 * scored in blocks: Q (block x dim, rows b - a + c) times the normalized
 * vocabulary with cblas_sgemm. */
int cr_analogy_eval(const cr_mat *vecs, const char *const *words, int64_t nwords, const char *path,
                    const cr_analogy_opts *opts, cr_analogy_result *out, cr_err *e);

typedef struct cr_synonym_result {
    int64_t total, covered, correct;
    double accuracy; /* correct / covered (0 when nothing was covered) */
    double coverage; /* covered / total */
} cr_synonym_result;

/* Multiple-choice synonym test: one question per line, TAB-separated
 * "target choice1 choice2 choice3 choice4 answer", answer the 1-based index
 * of the right choice; blank lines are skipped. The prediction is the choice
 * with the largest cosine to the target (the first on a tie; a zero vector
 * has cosine 0). A question with any word outside the restrict_n most
 * frequent words (0: all) is not covered. */
int cr_synonyms_eval(const cr_mat *vecs, const char *const *words, int64_t nwords, const char *path,
                     int64_t restrict_n, cr_synonym_result *out, cr_err *e);

#endif
