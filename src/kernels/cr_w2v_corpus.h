#ifndef CR_W2V_CORPUS_H
#define CR_W2V_CORPUS_H
/* The word2vec corpus, streamed: a vocabulary pass (cr_w2v_vocab_count) and a
 * per-worker batch reader (cr_w2v_reader) that feeds the kernels of
 * cr_w2v.h without holding the corpus in memory.
 *
 * Text: whitespace-separated tokens (space, tab, \v, \f, \r), one sentence
 * per line, plain or gzip (cr_lines). Words seen fewer than min_count times
 * are not in the vocabulary and are dropped from the token stream, as the
 * original tool does; ids run by descending count (ties: first appearance
 * first), so id 0 is the most frequent word.
 *
 * The reader of worker `part` of `parts` takes the lines with
 * (line number - 1) % parts == part: every worker scans the whole file but
 * tokenizes only its own lines, so each holds one line and one batch at a
 * time. A batch is whole lines until at least `batch` tokens were read (a
 * line longer than max_sentence kept words is cut into several sentences,
 * as the tool cuts at 1000, and a full batch also ends at such a cut, so a
 * corpus on one line still comes in batches); its kept tokens (after subsampling with
 * threshold `sample`, one uniform draw per in-vocabulary token, the tool's
 * rule cr_w2v_keep_prob) are given as rows into the batch's list of
 * distinct words, so the caller pulls those words' rows once and the kernel
 * trains on the copies. */

#include <stdint.h>

#include "base/cr_alias.h"
#include "base/cr_err.h"
#include "base/cr_rng.h"
#include "data/cr_dict.h"

typedef struct cr_w2v_vocab {
    cr_dict words;  /* id -> word, by descending count */
    int64_t *count; /* words.n counts */
    int64_t kept;   /* tokens of vocabulary words (sum of count) */
    int64_t raw;    /* all tokens read */
    int64_t lines;  /* lines read */
} cr_w2v_vocab;

/* Count the words of path into *v (initialized here; free with
 * cr_w2v_vocab_free, also after an error). Errors: the file's ("PATH: cannot
 * open: ..."), "PATH: empty corpus (no words)", "PATH: no word occurs
 * min_count = N times". */
int cr_w2v_vocab_count(const char *path, int64_t min_count, cr_w2v_vocab *v, cr_err *e);
/* A vocabulary from "word count" lines (what cr_w2v_vocab_text writes), ids
 * in line order. Errors "vocab:LINE: ..." (missing count, duplicate word). */
int cr_w2v_vocab_parse(const char *text, size_t len, cr_w2v_vocab *v, cr_err *e);
/* "word count\n" per word, in id order, into a malloc'd string (*len bytes). */
char *cr_w2v_vocab_text(const cr_w2v_vocab *v, size_t *len);
void cr_w2v_vocab_free(cr_w2v_vocab *v);

typedef struct cr_w2v_reader_opts {
    int64_t part, parts;  /* 0 <= part < parts */
    int64_t batch;        /* tokens read per batch (>= 1; a batch ends at a line end) */
    int64_t max_sentence; /* kept words per sentence (>= 1; the tool: 1000) */
    double sample;        /* subsampling threshold t (0: keep every word) */
} cr_w2v_reader_opts;

/* One batch, owned by the reader (valid until its next call). */
typedef struct cr_w2v_rbatch {
    int64_t n;        /* kept tokens */
    const int32_t *row; /* n rows: token i is word keys[row[i]] */
    const int64_t *sent; /* nsent + 1 offsets into row */
    int64_t nsent;
    int64_t nkeys;     /* distinct words of the batch ... */
    const int64_t *keys; /* ... in order of first appearance, then the pool's extra words (cr_w2v_reader_pool) */
    int64_t nextra;
    const int64_t *extra_src; /* nextra pool positions: where extra word x's fetched row is */
    const int32_t *negs; /* pool positions -> rows (cr_w2v_reader_pool) */
    int64_t nnegs;
    int64_t raw;       /* tokens read for this batch (all words) */
    int64_t words;     /* ... of them in the vocabulary (before subsampling) */
} cr_w2v_rbatch;

typedef struct cr_w2v_reader cr_w2v_reader;

/* Reader of path over vocabulary v (borrowed: keep it alive and unchanged).
 * Subsampling draws come from (seed, stream = part). NULL with e on a bad
 * option or an unreadable file. */
cr_w2v_reader *cr_w2v_reader_open(const char *path, const cr_w2v_vocab *v, const cr_w2v_reader_opts *o,
                                  uint64_t seed, cr_err *e);
/* Back to the first line; epoch selects the subsampling draws (rng stream
 * (seed + epoch, part)). */
int cr_w2v_reader_rewind(cr_w2v_reader *r, int64_t epoch, cr_err *e);
/* The next batch into *b: 1, 0 at the end of the file (b->raw = 0), -1 on a
 * read error. A batch may have n = 0 (every word subsampled away). */
int cr_w2v_reader_next(cr_w2v_reader *r, cr_w2v_rbatch *b, cr_err *e);
/* The batch after the current one, read ahead into *b (the reader's second
 * buffer; the current batch stays valid): the next call of
 * cr_w2v_reader_next returns it without reading. Return codes as next's.
 * Peeking twice gives the same batch. */
int cr_w2v_reader_peek(cr_w2v_reader *r, cr_w2v_rbatch *b, cr_err *e);
/* Map a pool of m sampled word ids onto the current batch: a pool word that
 * is a word of the batch gets its row; another gets a new row after them
 * (b->keys[nkeys + x], fetched row at pool position b->extra_src[x], the
 * first that holds it). b->negs[j] is the row of pool entry j. -1 if a key
 * is not a word id. */
int cr_w2v_reader_pool(cr_w2v_reader *r, cr_w2v_rbatch *b, const int64_t *pool, int64_t m, cr_err *e);
/* Scratch of n floats owned by the reader (grown as needed; for the rows
 * before training, to turn them into deltas). */
float *cr_w2v_reader_scratch(cr_w2v_reader *r, int which, int64_t n);
void cr_w2v_reader_close(cr_w2v_reader **r);

#endif
