#ifndef CR_W2V_IO_H
#define CR_W2V_IO_H
/* Word vectors in the word2vec text format, which gensim
 * (KeyedVectors.load_word2vec_format), fastText (.vec) and the original
 * tool read and write: a header line "WORDS DIM", then one line per word,
 * "word v1 ... vDIM" separated by single spaces, in row order. */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_mat.h"
#include "data/cr_dict.h"

/* Write m (one row per word) with words[i] for row i, atomically (cr_out:
 * a temporary file renamed when complete). A word must be non-empty and
 * hold no whitespace. Values with 6 significant digits. */
int cr_w2v_write_vectors(const char *path, const cr_mat *m, const char *const *words, cr_err *e);

/* Read path (plain or gzip): *m gets malloc'd data (rows = words, free
 * m->data), words (initialized here, free with cr_dict_free) the words in
 * row order. Errors name the file and line: a bad header, a line with the
 * wrong number of values or a bad number, a repeated word, fewer lines than
 * the header says, more lines. */
int cr_w2v_read_vectors(const char *path, cr_mat *m, cr_dict *words, cr_err *e);

#endif
