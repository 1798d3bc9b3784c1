/* crescent data NAME ...: synthetic generators (zipf-mf, bipartite,
 * zipf-text); the Debian/npm corpus builders are forwarded to cli_corpus.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_time.h"
#include "cli/cli.h"
#include "data/cr_gen.h"
#include "data/cr_graph.h"
#include "data/cr_libsvm.h"
#include "data/cr_mm.h"
#include "data/cr_text.h"

typedef enum { OPT_INT, OPT_NUM, OPT_STR } opt_kind;

typedef struct opt {
    const char *name; /* without the leading "--" */
    opt_kind kind;
    void *dst;        /* int64_t*, double* or const char** */
    int required, seen;
} opt;

static const char *corpus_names[] = {"wordnet", "wordnet-graph", "gcide-text", "gcide-docs",
                                     "brown", "gcide-brown", "wordnet-synonyms"};

static void usage(FILE *f) {
    fprintf(f,
            "usage: crescent data NAME [OPTIONS]\n"
            "  zipf-mf   --rows R --cols C --cells N --rank r [--noise 0.1] [--test-fraction 0.1]\n"
            "            [--exponent 1.1] [--seed S] --out DIR       (DIR/train.mmc, DIR/test.mmc)\n"
            "  bipartite --rows R --cols C (--density d | --sparsity v) [--zipf a] [--seed S]\n"
            "            --out FILE     (FILE.mtx/.mmc: MatrixMarket pattern; otherwise LIBSVM)\n"
            "  zipf-text --tokens T --vocab V [--exponent 1.0] [--line-tokens 100] [--seed S] --out FILE\n"
            "  check FILE [--format mm|libsvm|edges|triples|del|text]\n"
            "            read FILE with crescent's reader, print its shape or the first bad line\n"
            "            (format from the extension: .mmc .mtx .mm / .svm .libsvm / .edges / .del / .tsv / .txt)\n"
            "  wordnet | wordnet-graph | gcide-text | gcide-docs | brown | gcide-brown | wordnet-synonyms\n"
            "            (corpus builders; see crescent data NAME --help)\n");
}

/* Parse "--name value" pairs of argv[2..] into opts. Returns 0 or 2 (usage). */
static int parse_opts(int argc, char **argv, opt *opts, int nopts) {
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        opt *o = NULL;
        for (int k = 0; a[0] == '-' && a[1] == '-' && k < nopts; k++)
            if (!strcmp(a + 2, opts[k].name)) o = &opts[k];
        if (!o) {
            fprintf(stderr, "crescent data %s: unknown option '%s'\n", argv[1], a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "crescent data %s: --%s needs a value\n", argv[1], o->name);
            return 2;
        }
        const char *v = argv[++i];
        char *end;
        errno = 0;
        if (o->kind == OPT_INT) {
            long long x = strtoll(v, &end, 10);
            if (end == v || *end || errno) {
                fprintf(stderr, "crescent data %s: --%s expects an integer, got '%s'\n", argv[1], o->name, v);
                return 2;
            }
            *(int64_t *)o->dst = x;
        } else if (o->kind == OPT_NUM) {
            double x = strtod(v, &end);
            if (end == v || *end || errno || !isfinite(x)) {
                fprintf(stderr, "crescent data %s: --%s expects a number, got '%s'\n", argv[1], o->name, v);
                return 2;
            }
            *(double *)o->dst = x;
        } else {
            *(const char **)o->dst = v;
        }
        o->seen = 1;
    }
    for (int k = 0; k < nopts; k++)
        if (opts[k].required && !opts[k].seen) {
            fprintf(stderr, "crescent data %s: --%s is required\n", argv[1], opts[k].name);
            return 2;
        }
    return 0;
}

static int finish(const char *name, int rc, const cr_err *e) {
    if (rc != 0) {
        fprintf(stderr, "crescent data %s: %s\n", name, e->msg);
        return 1;
    }
    return 0;
}

static int zipf_mf(int argc, char **argv) {
    int64_t rows = 0, cols = 0, cells = 0, rank = 0, seed = 1;
    double noise = 0.1, tf = 0.1, expo = 1.1;
    const char *out = NULL;
    opt opts[] = {{"rows", OPT_INT, &rows, 1, 0},          {"cols", OPT_INT, &cols, 1, 0},
                  {"cells", OPT_INT, &cells, 1, 0},        {"rank", OPT_INT, &rank, 1, 0},
                  {"noise", OPT_NUM, &noise, 0, 0},        {"test-fraction", OPT_NUM, &tf, 0, 0},
                  {"exponent", OPT_NUM, &expo, 0, 0},      {"seed", OPT_INT, &seed, 0, 0},
                  {"out", OPT_STR, &out, 1, 0}};
    int rc = parse_opts(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]));
    if (rc) return rc;
    if (rank < 1 || rank > 100000) {
        fprintf(stderr, "crescent data zipf-mf: --rank must be in 1..100000\n");
        return 2;
    }
    cr_zipf_mf_opts o = {rows, cols, cells, (int)rank, expo, noise, tf, (uint64_t)seed, out};
    cr_gen_stats st;
    cr_err e;
    if (cr_gen_zipf_mf(&o, &st, &e) != 0) return finish("zipf-mf", -1, &e);
    printf("zipf-mf: %lld x %lld, rank %lld, %lld train cells -> %s/train.mmc, %lld test cells -> %s/test.mmc "
           "(%lld draws, %.2f s)\n",
           (long long)rows, (long long)cols, (long long)rank, (long long)st.train, out, (long long)st.test, out,
           (long long)st.draws, st.seconds);
    return 0;
}

static int bipartite(int argc, char **argv) {
    int64_t rows = 0, cols = 0, seed = 1;
    double density = -1, sparsity = -1, zipf = 0;
    const char *out = NULL;
    opt opts[] = {{"rows", OPT_INT, &rows, 1, 0},        {"cols", OPT_INT, &cols, 1, 0},
                  {"density", OPT_NUM, &density, 0, 0},  {"sparsity", OPT_NUM, &sparsity, 0, 0},
                  {"zipf", OPT_NUM, &zipf, 0, 0},        {"seed", OPT_INT, &seed, 0, 0},
                  {"out", OPT_STR, &out, 1, 0}};
    int rc = parse_opts(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]));
    if (rc) return rc;
    if (opts[2].seen == opts[3].seen) {
        fprintf(stderr, "crescent data bipartite: give exactly one of --density (share of ones) "
                        "or --sparsity (share of zeros, paper 000's v)\n");
        return 2;
    }
    cr_bipartite_opts o = {rows, cols, opts[2].seen ? density : 1.0 - sparsity, zipf, (uint64_t)seed, out};
    cr_gen_stats st;
    cr_err e;
    if (cr_gen_bipartite(&o, &st, &e) != 0) return finish("bipartite", -1, &e);
    printf("bipartite: %lld x %lld, %lld nonzeros (density %.4g) -> %s (%.2f s)\n", (long long)rows,
           (long long)cols, (long long)st.train, (double)st.train / ((double)rows * (double)cols), out, st.seconds);
    return 0;
}

static int zipf_text(int argc, char **argv) {
    int64_t tokens = 0, vocab = 0, line = 100, seed = 1;
    double expo = 1.0;
    const char *out = NULL;
    opt opts[] = {{"tokens", OPT_INT, &tokens, 1, 0},    {"vocab", OPT_INT, &vocab, 1, 0},
                  {"exponent", OPT_NUM, &expo, 0, 0},    {"line-tokens", OPT_INT, &line, 0, 0},
                  {"seed", OPT_INT, &seed, 0, 0},        {"out", OPT_STR, &out, 1, 0}};
    int rc = parse_opts(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]));
    if (rc) return rc;
    cr_zipf_text_opts o = {tokens, vocab, expo, line, (uint64_t)seed, out};
    cr_gen_stats st;
    cr_err e;
    if (cr_gen_zipf_text(&o, &st, &e) != 0) return finish("zipf-text", -1, &e);
    printf("zipf-text: %lld tokens over %lld words (zipf %g) -> %s (%.2f s)\n", (long long)st.train,
           (long long)vocab, expo, out, st.seconds);
    return 0;
}

static int has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), k = strlen(suf);
    if (n > 3 && !strcmp(s + n - 3, ".gz")) n -= 3;
    return n >= k && !strncmp(s + n - k, suf, k);
}

static const char *guess_format(const char *path) {
    static const struct { const char *suffix, *format; } ext[] = {
        {".mmc", "mm"}, {".mtx", "mm"}, {".mm", "mm"}, {".svm", "libsvm"}, {".libsvm", "libsvm"},
        {".edges", "edges"}, {".del", "del"}, {".tsv", "triples"}, {".txt", "text"}};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (has_suffix(path, ext[i].suffix)) return ext[i].format;
    return NULL;
}

/* check FILE [--format F]: the readers as a command, for users and tests. */
static int check(int argc, char **argv) {
    const char *format = NULL, *path = NULL;
    char *rest[8]; /* argv without FILE, for parse_opts */
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i >= 2 && !path && argv[i][0] != '-' && strcmp(argv[i - 1], "--format") != 0) path = argv[i];
        else if (n < 8) rest[n++] = argv[i];
        else n = 9;
    }
    opt opts[] = {{"format", OPT_STR, &format, 0, 0}};
    int rc = n > 8 ? 2 : parse_opts(n, rest, opts, 1);
    if (rc) return rc;
    if (!path) {
        fprintf(stderr, "crescent data check: FILE expected\n");
        return 2;
    }
    if (!format) format = guess_format(path);
    if (!format) {
        fprintf(stderr, "crescent data check: cannot tell the format of %s; give --format\n", path);
        return 2;
    }
    cr_err e;
    double t0 = cr_now();
    if (!strcmp(format, "mm")) {
        cr_coo m;
        if ((rc = cr_mm_load(path, CR_MM_NO_CACHE, NULL, NULL, &m, NULL, &e)) == 0) {
            printf("%s: MatrixMarket %lld x %lld, %lld entries", path, (long long)m.rows, (long long)m.cols,
                   (long long)m.nnz);
            cr_coo_free(&m);
        }
    } else if (!strcmp(format, "libsvm")) {
        cr_csr m;
        if ((rc = cr_libsvm_load(path, 0, &m, &e)) == 0) {
            printf("%s: LIBSVM %lld samples, %lld features, %lld nonzeros", path, (long long)m.rows,
                   (long long)m.cols, (long long)m.nnz);
            cr_csr_free(&m);
        }
    } else if (!strcmp(format, "edges")) {
        cr_edges g;
        if ((rc = cr_edges_load(path, &g, &e)) == 0) {
            printf("%s: edge list, %lld nodes, %lld edges", path, (long long)g.n, (long long)g.m);
            cr_edges_free(&g);
        }
    } else if (!strcmp(format, "triples") || !strcmp(format, "del")) {
        cr_triple_cols t;
        cr_dict en, rl;
        cr_dict_init(&en);
        cr_dict_init(&rl);
        rc = !strcmp(format, "del") ? cr_triples_load_del(path, 0, 0, &t, &e) : cr_triples_load(path, &en, &rl, 1, &t, &e);
        if (rc == 0) {
            printf("%s: %lld triples, %lld entities, %lld relations", path, (long long)t.n, (long long)t.n_ent,
                   (long long)t.n_rel);
            cr_triples_free(&t);
        }
        cr_dict_free(&en);
        cr_dict_free(&rl);
    } else if (!strcmp(format, "text")) {
        cr_corpus c;
        cr_dict v;
        cr_dict_init(&v);
        if ((rc = cr_text_load(path, &(cr_text_opts){1, 0, 0}, &c, &v, &e)) == 0) {
            printf("%s: text, %lld tokens, %lld lines, %lld distinct words", path, (long long)c.ntok,
                   (long long)c.nsent, (long long)v.n);
            cr_corpus_free(&c);
        }
        cr_dict_free(&v);
    } else {
        fprintf(stderr, "crescent data check: unknown format '%s' (mm, libsvm, edges, triples, del, text)\n", format);
        return 2;
    }
    if (rc != 0) {
        fprintf(stderr, "crescent data check: %s\n", e.msg);
        return 1;
    }
    printf(" (%.2f s)\n", cr_now() - t0);
    return 0;
}

int cr_cli_data(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof corpus_names / sizeof corpus_names[0]; i++)
        if (!strcmp(argv[1], corpus_names[i])) return cr_cli_corpus(argc, argv);
    if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "zipf-mf")) return zipf_mf(argc, argv);
    if (!strcmp(argv[1], "bipartite")) return bipartite(argc, argv);
    if (!strcmp(argv[1], "zipf-text")) return zipf_text(argc, argv);
    if (!strcmp(argv[1], "check")) return check(argc, argv);
    fprintf(stderr, "crescent data: unknown dataset '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
