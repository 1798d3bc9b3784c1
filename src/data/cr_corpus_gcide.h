#ifndef CR_CORPUS_GCIDE_H
#define CR_CORPUS_GCIDE_H
/* GCIDE (package dict-gcide): /usr/share/dictd/gcide.dict.dz, a dictzip
 * (gzip-compatible) file of entries, and gcide.index, lines
 * "headword TAB offset TAB length" with offset/length in dictd's base64
 * (A-Z a-z 0-9 + /, most significant digit first) into the uncompressed text.
 * Several index lines may point at one entry; entries are visited once each,
 * in file order, streaming (gzread), skipping the "00-..." database-info
 * entries.
 *
 * Markup handled by cr_gcide_clean:
 *   first line  "Dog \Dog\ (d[add]g or d[o^]g), n. [AS. docga; ...]": the
 *               headword is kept; pronunciation \...\ (may span lines), the
 *               parenthesized pronunciation, the part of speech and the rest
 *               of that line (with any [...] it opens) are dropped; the part of
 *               speech gives the noun flag ("n." or "n").
 *   [...]       notes, etymologies, sources ("[1913 Webster]", "[Obs.]") are
 *               dropped, nesting included, except accent codes written against
 *               a word ("caf[e']", "[ae]sop"): those become their letter(s).
 *   {...}       cross references: braces dropped, words kept.
 *   * " `       syllable and stress marks between letters are removed.
 * Tokens then follow cr_corpus_tokens. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/cr_err.h"

/* Cleans one raw entry src[0..n) into dst (capacity >= n + 1; NUL-terminated),
 * returns the cleaned length. headword (capacity hwcap) receives the cleaned
 * headword, *is_noun the part-of-speech flag. Never fails. */
size_t cr_gcide_clean(const char *src, size_t n, char *dst, char *headword, size_t hwcap, int *is_noun);

/* Called once per entry with the cleaned text; a non-zero return stops the
 * walk and is returned by cr_gcide_each (e should then be set by fn). */
typedef int (*cr_gcide_fn)(void *ctx, const char *clean, size_t n, const char *headword, int is_noun,
                           cr_err *e);

/* Streams the entries of dict (gzip or plain) in file order using index.
 * Each entry is made UTF-8 first (cr_utf8_from_cp1252: GCIDE has a few raw
 * Windows-1252 bytes, e.g. a 0x92 apostrophe), so clean text is UTF-8.
 * Errors: missing files, malformed index lines ("index:line: reason"),
 * overlapping entries, entries past the end of the text (truncated dict). */
int cr_gcide_each(const char *dict, const char *index, cr_gcide_fn fn, void *ctx, cr_err *e);

typedef struct cr_gcide_stats {
    uint64_t entries, tokens, vocab; /* vocab: distinct tokens written */
    uint64_t nouns, features, nonzeros; /* docs only */
} cr_gcide_stats;

/* Appends one line of tokens per entry to f (gcide-text). st->vocab counts
 * distinct tokens over this call. */
int cr_gcide_write_text(const char *dict, const char *index, FILE *f, cr_gcide_stats *st, cr_err *e);

/* gcide-docs: one LIBSVM line per entry, "+1" (noun) or "-1", then
 * "id:count" pairs with ascending 1-based ids, to path; the vocabulary to
 * path.vocab as "word TAB count" lines, line k = feature id k. Words are
 * those with total count >= min_count, ordered by count (descending), then
 * bytewise. Two streaming passes over the dictionary. */
int cr_gcide_write_docs(const char *dict, const char *index, const char *path, uint64_t min_count,
                        cr_gcide_stats *st, cr_err *e);

#endif
