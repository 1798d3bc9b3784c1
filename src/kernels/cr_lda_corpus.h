#ifndef CR_LDA_CORPUS_H
#define CR_LDA_CORPUS_H
/* A worker's share of an LDA corpus: its documents as word ids, their token
 * topics z, and the chunks (runs of whole documents) it samples and pushes
 * count deltas for. Document-topic counts are never stored: the sampler
 * derives n_dk of one document at a time from z (src/kernels/cr_lda.h).
 *
 * Memory is O(tokens of this part) (+ O(V) for chunking): the file is read
 * line by line and only this part's documents are kept. */

#include <stdint.h>

#include "base/cr_err.h"
#include "data/cr_dict.h"

enum { CR_LDA_LIBSVM = 0, CR_LDA_TEXT = 1 };

typedef struct cr_lda_load_opts {
    int format;            /* CR_LDA_LIBSVM: "label id:count ...", word = id - 1; CR_LDA_TEXT: words */
    const cr_dict *vocab;  /* CR_LDA_TEXT: word -> id (words not in it are skipped); borrowed */
    int64_t V;             /* vocabulary size; 0: max word id + 1 (libsvm) or the vocab's size (text) */
    int64_t part, parts;   /* keep documents j (0-based within the split) with j % parts == part */
    int64_t heldout_every; /* > 0: document n of the file (0-based) is held out when n % h == h - 1 */
    int test;              /* 1: keep only held-out documents; 0: only the others */
} cr_lda_load_opts;

typedef struct cr_lda_corpus {
    int64_t ndocs, ntokens, V;
    int K;            /* 0 before cr_lda_corpus_init */
    int64_t *doc_off; /* ndocs + 1 token offsets */
    int32_t *word;    /* ntokens word ids in [0, V) */
    int32_t *z;       /* ntokens topics (after init) */
    int64_t maxlen;   /* longest document */
    /* chunks (after cr_lda_corpus_chunks): chunk c holds documents
     * [chunk_doc[c], chunk_doc[c + 1]) and keys key[key_off[c] .. key_off[c + 1])
     * (its distinct word ids, ascending); row[i] is token i's key index in its chunk */
    int64_t nchunks;
    int64_t *chunk_doc, *key_off, *key;
    int32_t *row;
    /* the MH sampler's workspaces, kept between calls (at most the largest
     * chunk's needs): counts of the chunk's rows, alias slots */
    void *ws, *arena;
    size_t ws_cap, arena_cap;
} cr_lda_corpus;

/* Read this part's documents from path (opts as above). Every line is one
 * document (a blank line is an empty document). Returns a new corpus (the
 * caller's, freed with cr_lda_corpus_destroy) or NULL with e set:
 *   "PATH: cannot open: ..."
 *   "PATH:LINE: bad feature 'TOKEN' (expected id:count)"
 *   "PATH:LINE: feature id N must be >= 1"
 *   "PATH:LINE: count N of feature ID must be >= 1"
 *   "PATH:LINE: word id N out of range [0, V)"
 * A corpus with no tokens is not an error here. */
cr_lda_corpus *cr_lda_corpus_load(const char *path, const cr_lda_load_opts *o, cr_err *e);

/* Text vocabulary: the words of path (one document per line, blank-separated)
 * with count >= min_count into d (initialized by the caller), by descending
 * count, ties by byte order. Errors: the file's. */
int cr_lda_vocab(const char *path, int64_t min_count, cr_dict *d, cr_err *e);

void cr_lda_corpus_destroy(cr_lda_corpus **cp);

/* Topics uniformly at random from (seed); K >= 2. Deterministic in
 * (seed, the corpus). Errors: "K must be >= 2". */
int cr_lda_corpus_init(cr_lda_corpus *c, int K, uint64_t seed, cr_err *e);

/* Split the documents, in order, into chunks of whole documents of about
 * tokens_per_chunk tokens (a chunk is closed once it reaches that many;
 * at least 1 chunk; an empty corpus gives one chunk without documents) and
 * compute every chunk's keys and the token rows. O(tokens + V + sorting the
 * keys). Errors: tokens_per_chunk < 1. */
int cr_lda_corpus_chunks(cr_lda_corpus *c, int64_t tokens_per_chunk, cr_err *e);

/* Keys of chunk ch (0-based). */
static inline int64_t cr_lda_chunk_nkeys(const cr_lda_corpus *c, int64_t ch) {
    return c->key_off[ch + 1] - c->key_off[ch];
}

/* dwk (nkeys x K) and dk (K) = the counts of chunk ch's current topics. */
void cr_lda_chunk_counts(const cr_lda_corpus *c, int64_t ch, int32_t *dwk, int32_t *dk);

/* out (ndocs x K, zeroed here) = the documents' topic counts (tests and
 * small corpora: the sampler itself never keeps them). */
void cr_lda_doc_topic_counts(const cr_lda_corpus *c, int32_t *out);

/* out ((hi - lo) x K, zeroed here) = counts of this part's topics of the
 * words in [lo, hi). */
void cr_lda_word_topic_counts(const cr_lda_corpus *c, int64_t lo, int64_t hi, int32_t *out);

#endif
