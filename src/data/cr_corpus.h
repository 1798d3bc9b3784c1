#ifndef CR_CORPUS_H
#define CR_CORPUS_H
/* Shared pieces of the dataset builders (wordnet, gcide, brown): a string
 * dictionary with counts, the tokenizer every text corpus goes through, and
 * output files that appear only when complete.
 *
 * Tokenizer rule (the same for gcide and brown, so gcide-brown is one
 * consistent corpus): a token is a maximal run of ASCII letters, digits and
 * non-ASCII characters (UTF-8 sequences stay whole), lower-cased; everything
 * else separates tokens ("dog's" -> "dog" "s", "term-end" -> "term" "end"),
 * as in the text8 corpus word2vec is usually run on. Unicode punctuation
 * separates too (U+0080..U+00BF but ª µ º, U+00D7, U+00F7, U+2000..U+206F:
 * "market\u2019s" -> "market" "s"). Valid UTF-8 in, valid UTF-8 out (a long
 * token is cut at a character boundary). Outputs go through cr_out
 * (data/cr_out.h): a file appears only when complete. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/cr_err.h"

/* String -> dense id (insertion order) with a count per id. Strings are
 * copied; the dictionary owns them. */
typedef struct cr_cdict cr_cdict;

cr_cdict *cr_cdict_new(void);
void cr_cdict_destroy(cr_cdict **d_p); /* accepts NULL and *d_p == NULL */
/* Id of s[0..n) (added with count 0 if absent). */
uint32_t cr_cdict_intern(cr_cdict *d, const char *s, size_t n);
/* Id of s[0..n), or UINT32_MAX if absent. */
uint32_t cr_cdict_find(const cr_cdict *d, const char *s, size_t n);
uint32_t cr_cdict_size(const cr_cdict *d);
const char *cr_cdict_str(const cr_cdict *d, uint32_t id); /* NUL-terminated, owned by d */
uint64_t *cr_cdict_counts(cr_cdict *d);                   /* counts[id], owned by d */

/* Calls emit(ctx, tok, len) for each token of s[0..n) (see the rule above);
 * tok is lower-cased and NUL-terminated in a scratch buffer valid during the
 * call. Tokens longer than 255 bytes are cut to at most 255 (whole
 * characters). Returns the count. */
typedef void (*cr_corpus_emit_fn)(void *ctx, const char *tok, size_t len);
size_t cr_corpus_tokens(const char *s, size_t n, cr_corpus_emit_fn emit, void *ctx);

/* msg without a leading "path: " (zlib's gzerror repeats the file name). */
const char *cr_corpus_strip_path(const char *msg, const char *path);

/* Creates directory path (one level) if missing. */
int cr_corpus_mkdir(const char *path, cr_err *e);

#endif
