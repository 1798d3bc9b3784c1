#ifndef CR_CORPUS_WORDNET_H
#define CR_CORPUS_WORDNET_H
/* WordNet 3.0 database files (package wordnet-base, /usr/share/wordnet) turned
 * into datasets: a WN18-style knowledge graph with a train/valid/test split,
 * the synset graph as an edge list, and a TOEFL-style synonym test.
 *
 * Source format (wndb(5)): data.{noun,verb,adj,adv}, one synset per line
 *   offset lex_filenum ss_type w_cnt(hex) [word lex_id(hex)]... p_cnt
 *   [symbol offset pos source/target(hex)]... [verb frames] | gloss
 * lines starting with a space are the license header. index.POS files give
 * sense numbers for synset names (`dog.n.01`, as NLTK names them: the
 * synset's first lemma and its rank among that lemma's senses); without
 * them a synset is named `lemma.POS.OFFSET`. */

#include <stdint.h>

#include "base/cr_err.h"
#include "data/cr_corpus.h"

typedef struct cr_wn_synset {
    uint32_t offset;
    char pos;      /* file part of speech: n v a r (satellites are 'a') */
    char ss_type;  /* n v a s r */
    uint32_t name; /* id in cr_wn.names */
    uint32_t lem0, nlem; /* lemma ids are lemmas_of[lem0 .. lem0+nlem) */
} cr_wn_synset;

typedef struct cr_wn_edge {
    uint32_t s, r, o; /* synset index, relation index (cr_wn_relations), synset index */
} cr_wn_edge;

typedef struct cr_wn_relation {
    const char *symbol; /* wndb pointer symbol, e.g. "@" */
    const char *name;   /* WN18-style name, e.g. "_hypernym" */
    int rr_drop;        /* 1 if dropped by --rr (the inverse of a kept relation) */
} cr_wn_relation;

/* The pointer symbols known to the parser, in relation-id order. */
extern const cr_wn_relation cr_wn_relations[];
extern const uint32_t cr_wn_nrelations;

typedef struct cr_wn {
    cr_wn_synset *syn;
    uint32_t nsyn;
    cr_wn_edge *edges; /* every pointer, resolved, deduplicated, no self loops; sorted */
    uint64_t nedges;
    uint32_t *lemmas_of; /* lemma ids per synset (see cr_wn_synset) */
    uint8_t *proper;     /* per lemmas_of entry: 1 if written capitalized there (a proper noun) */
    cr_cdict *lemmas;    /* lower-cased lemmas, '_' for spaces, adjective markers removed */
    cr_cdict *names;     /* synset names */
} cr_wn;

/* Reads DIR/data.{noun,verb,adj,adv} (all four required) and DIR/index.* (optional,
 * for names). On success *out is owned by the caller (cr_wn_destroy). Errors:
 * missing file, malformed line or dangling pointer as "FILE:LINE: reason". */
int cr_wn_load(cr_wn **out, const char *dir, cr_err *e);
void cr_wn_destroy(cr_wn **wn_p);

typedef struct cr_wn_kg_opts {
    uint64_t seed;
    uint64_t nvalid, ntest;
    int rr; /* drop inverse-duplicate relations (cr_wn_relation.rr_drop) */
} cr_wn_kg_opts;

typedef struct cr_wn_kg_stats {
    uint64_t entities, relations, train, valid, test;
} cr_wn_kg_stats;

/* Writes the knowledge graph into directory outdir (created if missing):
 * entities.tsv, relations.tsv (id TAB name), {train,valid,test}.tsv (names,
 * s TAB r TAB o) and .del (ids, LibKGE). Every entity and relation of valid and
 * test occurs in train (held-out triples are only taken where that stays
 * true), so valid/test may come out smaller than asked for on tiny graphs. */
int cr_wn_write_kg(const cr_wn *wn, const cr_wn_kg_opts *o, const char *outdir,
                   cr_wn_kg_stats *st, cr_err *e);

/* Writes the undirected synset graph as "a b" lines (ids, a < b, sorted, each
 * pair once) after two "# " comment lines, and the node names as "id TAB name"
 * to path.nodes. Node ids are the synsets with at least one edge. */
int cr_wn_write_graph(const cr_wn *wn, const char *path, uint64_t *nodes, uint64_t *nedges,
                      cr_err *e);

typedef struct cr_wn_syn_opts {
    uint64_t seed;
    uint64_t questions;
    uint64_t min_count;      /* with vocab: words need at least this count */
    const char *vocab_path;  /* vocabulary file (see below), or NULL */
    const char *corpus_path; /* or a whitespace-tokenized text corpus whose words are counted;
                                neither: every single-word lemma is eligible */
} cr_wn_syn_opts;

/* Writes a synonym test: lines "target TAB c1 TAB c2 TAB c3 TAB c4 TAB answer"
 * (answer 1..4). The right choice shares a synset with the target; the three
 * distractors are single-word lemmas of the same part of speech that share no
 * synset with the target or the synonym. Capitalized (proper-noun) senses
 * are not used as question words. Targets are distinct. Words are
 * single tokens (see cr_corpus.h) present in the vocabulary with count >=
 * min_count. The vocabulary file has one word per line, optionally followed
 * by whitespace and its count (needed with min_count > 1), as gcide-docs'
 * FILE.vocab and word2vec's -save-vocab write it; "id TAB word" lines (a
 * LibKGE-style map, no counts) are accepted too. Fewer questions
 * than asked are written when not enough qualify (*written says how many). */
int cr_wn_write_synonyms(const cr_wn *wn, const cr_wn_syn_opts *o, const char *path,
                         uint64_t *written, cr_err *e);

#endif
