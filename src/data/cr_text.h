#ifndef CR_TEXT_H
#define CR_TEXT_H
/* Whitespace-tokenized text with a vocabulary, as word2vec and LDA read it.
 * One line is one sentence (or document). Words are counted, words seen
 * fewer than min_count times are dropped (from the vocabulary and the token
 * stream, as the original word2vec does), and ids are assigned by descending
 * count (ties: first appearance first), so id 0 is the most frequent word. */

#include <stdint.h>

#include "base/cr_err.h"
#include "data/cr_dict.h"

typedef struct cr_corpus {
    int64_t ntok;    /* tokens kept */
    int64_t *tok;    /* ntok word ids */
    int64_t nsent;   /* non-empty sentences */
    int64_t *sent;   /* nsent + 1 offsets into tok */
    int64_t raw;     /* tokens read, before min_count */
    int64_t *count;  /* vocab.n counts (descending unless the vocab was fixed) */
} cr_corpus;

typedef struct cr_text_opts {
    int64_t min_count;    /* >= 1 */
    int64_t max_sentence; /* > 0: split longer lines (word2vec: 1000); 0 = never */
    int fixed_vocab;      /* 1: map through the given vocab, unknown words dropped,
                             count = occurrences in this file per vocab id */
} cr_text_opts;

/* Read path (plain or gzip) into *c. vocab is caller-initialized (cr_dict_init):
 * empty, it receives the words of this file; with o->fixed_vocab it is read
 * only (held-out text mapped through the training vocabulary).
 * Errors: missing file, "file: empty file (no words)", nothing left after
 * min_count, I/O, truncated gzip, a line over 256 MiB. */
int cr_text_load(const char *path, const cr_text_opts *o, cr_corpus *c, cr_dict *vocab, cr_err *e);
void cr_corpus_free(cr_corpus *c);
/* Write the kept tokens back as text, one sentence per line (atomically). */
int cr_text_write(const char *path, const cr_corpus *c, const cr_dict *vocab, cr_err *e);

/* The vocabulary rule of word2vec's text readers (cr_text_load and the
 * streamed corpus of kernels/cr_w2v_corpus): of the words of `seen` (ids in order of first
 * appearance, cnt[id] occurrences each), those seen at least min_count times
 * are added to vocab (caller-initialized, normally empty) by descending
 * count, ties by first appearance, so the most frequent word comes first;
 * count[k] gets the count of the k-th word added. count and map (may be NULL)
 * have seen->n entries, caller-owned; map[id] gets the vocab id of seen word
 * id, or -1 if it was dropped. Returns the sum of the kept words' counts.
 * O(n log n) for n = seen->n. */
int64_t cr_vocab_build(const cr_dict *seen, const int64_t *cnt, int64_t min_count, cr_dict *vocab, int64_t *count,
                       int64_t *map);

/* word2vec's negative-sampling table: size slots filled with word ids in
 * proportion to count^power (power 0.75 in word2vec). */
void cr_vocab_unigram_table(const int64_t *count, int64_t nwords, double power, int64_t *table, int64_t size);
/* word2vec's subsampling: probability of keeping each word,
 * min(1, (sqrt(c/(t*total)) + 1) * t*total / c); t <= 0 keeps everything. */
void cr_vocab_keep_prob(const int64_t *count, int64_t nwords, int64_t total, double t, float *keep);

#endif
