/* crescent data NAME ...: synthetic generators (zipf-mf, bipartite,
 * zipf-text); the Debian/npm corpus builders are forwarded to cli_corpus.c. */
#include <stddef.h>
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

static const char *corpus_names[] = {"wordnet", "wordnet-graph", "gcide-text", "gcide-docs",
                                     "brown", "gcide-brown", "wordnet-synonyms"};

static void usage(FILE *f) {
    fprintf(f,
            "usage: crescent data NAME [OPTIONS]   (crescent data NAME --help for NAME's options)\n"
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

/* One struct for the generators' options; each generator's table names the
 * fields it takes. */
typedef struct gen_args {
    int64_t rows, cols, cells, rank, seed, tokens, vocab, line;
    double noise, tf, expo, density, sparsity, zipf;
    const char *out, *format;
} gen_args;

#define G(f) offsetof(gen_args, f)
#define REQ CR_OPT_REQUIRED
#define END {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}
#define SEED {"seed", CR_OPT_INT, G(seed), 0, 0, 0, "1", "S", "random seed", NULL, NULL}

static const cr_opt zipf_mf_opts[] = {
    {"rows", CR_OPT_INT, G(rows), REQ, 0, 0, NULL, "R", "rows of the matrix", NULL, NULL},
    {"cols", CR_OPT_INT, G(cols), REQ, 0, 0, NULL, "C", "columns", NULL, NULL},
    {"cells", CR_OPT_INT, G(cells), REQ, 0, 0, NULL, "N", "observed cells (train + test)", NULL, NULL},
    {"rank", CR_OPT_INT, G(rank), REQ | CR_OPT_RANGE, 1, 100000, NULL, "r", "rank of the true factors", NULL, NULL},
    {"noise", CR_OPT_DOUBLE, G(noise), 0, 0, 0, "0.1", "X", "Gaussian noise on each cell", NULL, NULL},
    {"test_fraction", CR_OPT_DOUBLE, G(tf), 0, 0, 0, "0.1", "F", "share of cells held out for test.mmc", NULL, NULL},
    {"exponent", CR_OPT_DOUBLE, G(expo), 0, 0, 0, "1.1", "A", "Zipf exponent of row and column popularity", NULL,
     NULL},
    SEED,
    {"out", CR_OPT_STRING, G(out), REQ, 0, 0, NULL, "DIR", "writes DIR/train.mmc and DIR/test.mmc", NULL, NULL},
    END};

static const cr_opt bipartite_opts[] = {
    {"rows", CR_OPT_INT, G(rows), REQ, 0, 0, NULL, "R", "examples (rows)", NULL, NULL},
    {"cols", CR_OPT_INT, G(cols), REQ, 0, 0, NULL, "C", "features (columns)", NULL, NULL},
    {"density", CR_OPT_DOUBLE, G(density), 0, 0, 0, NULL, "D", "share of ones (or --sparsity)", NULL, NULL},
    {"sparsity", CR_OPT_DOUBLE, G(sparsity), 0, 0, 0, NULL, "V", "share of zeros, paper 000's v (or --density)",
     NULL, NULL},
    {"zipf", CR_OPT_DOUBLE, G(zipf), 0, 0, 0, "0", "A", "Zipf exponent of column popularity (0 = uniform)", NULL,
     NULL},
    SEED,
    {"out", CR_OPT_STRING, G(out), REQ, 0, 0, NULL, "FILE", "FILE.mtx/.mmc: MatrixMarket pattern; else LIBSVM",
     NULL, NULL},
    END};

static const cr_opt zipf_text_opts[] = {
    {"tokens", CR_OPT_INT, G(tokens), REQ, 0, 0, NULL, "T", "tokens to write", NULL, NULL},
    {"vocab", CR_OPT_INT, G(vocab), REQ, 0, 0, NULL, "V", "distinct words", NULL, NULL},
    {"exponent", CR_OPT_DOUBLE, G(expo), 0, 0, 0, "1.0", "A", "Zipf exponent of word frequency", NULL, NULL},
    {"line_tokens", CR_OPT_INT, G(line), 0, 0, 0, "100", "N", "tokens per line", NULL, NULL},
    SEED,
    {"out", CR_OPT_STRING, G(out), REQ, 0, 0, NULL, "FILE", "output text file", NULL, NULL},
    END};


static const cr_opt check_opts[] = {
    {"format", CR_OPT_STRING, G(format), 0, 0, 0, NULL, "F",
     "mm, libsvm, edges, triples, del or text (default: from the extension)", NULL, NULL},
    END};

static const cr_opt_cmd gen_cmds[] = {
    {"crescent data zipf-mf", "--rows R --cols C --cells N --rank r --out DIR [options]",
     "  A synthetic rating matrix with Zipf-distributed rows and columns (train and test).\n", zipf_mf_opts, 0, 0, 0},
    {"crescent data bipartite", "--rows R --cols C (--density D | --sparsity V) --out FILE [options]",
     "  A random bipartite graph (examples x features) for the partitioners.\n", bipartite_opts, 0, 0, 0},
    {"crescent data zipf-text", "--tokens T --vocab V --out FILE [options]",
     "  Random text with Zipf word frequencies.\n", zipf_text_opts, 0, 0, 0},
    {"crescent data check", "FILE [--format F]",
     "  Read FILE with crescent's reader; print its shape or the first bad line (file:line).\n"
     "  Formats by extension: .mmc .mtx .mm / .svm .libsvm / .edges / .del / .tsv / .txt.\n",
     check_opts, 1, 1, 0},
};

/* Parse argv (argv[0] = "data", argv[1] = the generator) with gen_cmds[i].
 * Returns -1 to go on (r filled), else the exit status. */
static int parse_gen(int i, int argc, char **argv, gen_args *a, cr_opt_res *r) {
    *a = (gen_args){.density = -1, .sparsity = -1};
    return cr_cli_parse(&gen_cmds[i], argc - 1, argv + 1, a, r);
}

static int finish(const char *name, int rc, const cr_err *e) {
    if (rc != 0) {
        fprintf(stderr, "crescent data %s: %s\n", name, e->msg);
        return 1;
    }
    return 0;
}

static int zipf_mf(int argc, char **argv) {
    gen_args a;
    cr_opt_res r;
    int rc = parse_gen(0, argc, argv, &a, &r);
    if (rc >= 0) return rc;
    cr_opt_res_free(&r);
    cr_zipf_mf_opts o = {a.rows, a.cols, a.cells, (int)a.rank, a.expo, a.noise, a.tf, (uint64_t)a.seed, a.out};
    cr_gen_stats st;
    cr_err e;
    if (cr_gen_zipf_mf(&o, &st, &e) != 0) return finish("zipf-mf", -1, &e);
    printf("zipf-mf: %lld x %lld, rank %lld, %lld train cells -> %s/train.mmc, %lld test cells -> %s/test.mmc "
           "(%lld draws, %.2f s)\n",
           (long long)a.rows, (long long)a.cols, (long long)a.rank, (long long)st.train, a.out, (long long)st.test,
           a.out, (long long)st.draws, st.seconds);
    return 0;
}

static int bipartite(int argc, char **argv) {
    gen_args a;
    cr_opt_res r;
    int rc = parse_gen(1, argc, argv, &a, &r);
    if (rc >= 0) return rc;
    int density = (int)(r.seen >> 2 & 1), sparsity = (int)(r.seen >> 3 & 1); /* rows 2 and 3 of the table */
    cr_opt_res_free(&r);
    if (density == sparsity) {
        fprintf(stderr, "crescent data bipartite: give exactly one of --density (share of ones) "
                        "or --sparsity (share of zeros, paper 000's v)\n");
        return 2;
    }
    cr_bipartite_opts o = {a.rows, a.cols, density ? a.density : 1.0 - a.sparsity, a.zipf, (uint64_t)a.seed, a.out};
    cr_gen_stats st;
    cr_err e;
    if (cr_gen_bipartite(&o, &st, &e) != 0) return finish("bipartite", -1, &e);
    printf("bipartite: %lld x %lld, %lld nonzeros (density %.4g) -> %s (%.2f s)\n", (long long)a.rows,
           (long long)a.cols, (long long)st.train, (double)st.train / ((double)a.rows * (double)a.cols), a.out,
           st.seconds);
    return 0;
}

static int zipf_text(int argc, char **argv) {
    gen_args a;
    cr_opt_res r;
    int rc = parse_gen(2, argc, argv, &a, &r);
    if (rc >= 0) return rc;
    cr_opt_res_free(&r);
    cr_zipf_text_opts o = {a.tokens, a.vocab, a.expo, a.line, (uint64_t)a.seed, a.out};
    cr_gen_stats st;
    cr_err e;
    if (cr_gen_zipf_text(&o, &st, &e) != 0) return finish("zipf-text", -1, &e);
    printf("zipf-text: %lld tokens over %lld words (zipf %g) -> %s (%.2f s)\n", (long long)st.train,
           (long long)a.vocab, a.expo, a.out, st.seconds);
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
    gen_args a;
    cr_opt_res r;
    int rc = parse_gen(3, argc, argv, &a, &r);
    if (rc >= 0) return rc;
    const char *path = r.pos[0], *format = a.format;
    cr_opt_res_free(&r);
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
    if (!strcmp(argv[1], "zipf-mf")) return zipf_mf(argc, argv);
    if (!strcmp(argv[1], "bipartite")) return bipartite(argc, argv);
    if (!strcmp(argv[1], "zipf-text")) return zipf_text(argc, argv);
    if (!strcmp(argv[1], "check")) return check(argc, argv);
    fprintf(stderr, "crescent data: unknown dataset '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
