/* WordNet builders on a small fake WordNet written here in the real wndb(5)
 * format: a binary tree of nouns (hypernym/hyponym), part/whole pairs,
 * verbs with derivation pointers and verb frames, adjectives with antonyms,
 * satellites and position markers, adverbs with pertainyms. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cr_test.h"
#include "data/cr_corpus_wordnet.h"

#define NN 60 /* nouns */
#define NV 10
#define NA 6
#define NR 3

static char root[256];

static void path_of(char *buf, const char *dir, const char *name) { snprintf(buf, 512, "%.400s/%.100s", dir, name); }

static FILE *open_in(const char *dir, const char *name) {
    char p[512];
    path_of(p, dir, name);
    return fopen(p, "w");
}

static const char *license = "  1 This software and database is being provided to you, the LICENSEE, by  \n"
                             "  2 Princeton University under the following license.  \n";

static void write_fake(const char *dir) {
    mkdir(dir, 0777);
    FILE *f = open_in(dir, "data.noun");
    fputs(license, f);
    for (int i = 1; i <= NN; i++) {
        char ptrs[512] = "";
        int np = 0;
        size_t k = 0;
        if (i > 1) k += (size_t)snprintf(ptrs + k, sizeof ptrs - k, " @ %08d n 0000", 10000000 + i / 2), np++;
        for (int c = 2 * i; c <= 2 * i + 1 && c <= NN; c++)
            k += (size_t)snprintf(ptrs + k, sizeof ptrs - k, " ~ %08d n 0000", 10000000 + c), np++;
        if (i % 5 == 0 && i < NN) k += (size_t)snprintf(ptrs + k, sizeof ptrs - k, " %%p %08d n 0000", 10000001 + i), np++;
        if (i % 5 == 1 && i > 1) k += (size_t)snprintf(ptrs + k, sizeof ptrs - k, " #p %08d n 0000", 9999999 + i), np++;
        if (i <= NV) k += (size_t)snprintf(ptrs + k, sizeof ptrs - k, " + %08d v 0101", 20000000 + i), np++;
        fprintf(f, "%08d 03 n 03 n%da 0 n%db 1 Prop%d 0 %03d%s | gloss of noun %d  \n", 10000000 + i, i, i, i, np,
                ptrs, i);
    }
    fclose(f);
    f = open_in(dir, "data.verb");
    fputs(license, f);
    for (int i = 1; i <= NV; i++) {
        char ptrs[256] = "";
        int np = 1;
        size_t k = (size_t)snprintf(ptrs, sizeof ptrs, " + %08d n 0101", 10000000 + i);
        if (i > 1) k += (size_t)snprintf(ptrs + k, sizeof ptrs - k, " @ %08d v 0000", 20000000 + i / 2), np++;
        for (int c = 2 * i; c <= 2 * i + 1 && c <= NV; c++)
            k += (size_t)snprintf(ptrs + k, sizeof ptrs - k, " ~ %08d v 0000", 20000000 + c), np++;
        fprintf(f, "%08d 29 v 02 v%d 0 v%dx 0 %03d%s 01 + 02 00 | gloss of verb %d  \n", 20000000 + i, i, i, np, ptrs, i);
    }
    fclose(f);
    f = open_in(dir, "data.adj");
    fputs(license, f);
    /* 1 <-> 2 antonyms; 3..6 satellites similar to 1 or 2 */
    fprintf(f, "30000001 00 a 02 a1(p) 0 a1b 0 003 ! 30000002 a 0101 & 30000003 a 0000 & 30000005 a 0000 | good  \n");
    fprintf(f, "30000002 00 a 01 a2 0 003 ! 30000001 a 0101 & 30000004 a 0000 & 30000006 a 0000 | bad  \n");
    fprintf(f, "30000003 00 s 02 a3 0 a3b 0 001 & 30000001 a 0000 | fine  \n");
    fprintf(f, "30000004 00 s 02 a4 0 a4b 0 001 & 30000002 a 0000 | poor  \n");
    fprintf(f, "30000005 00 s 02 a5 0 a5b 0 001 & 30000001 a 0000 | nice  \n");
    fprintf(f, "30000006 00 s 02 a6 0 a6b 0 001 & 30000002 a 0000 | awful  \n");
    fclose(f);
    f = open_in(dir, "data.adv");
    fputs(license, f);
    for (int i = 1; i <= NR; i++)
        fprintf(f, "%08d 02 r 01 r%d 0 001 \\ 30000001 a 0101 | adverb %d  \n", 40000000 + i, i, i);
    fclose(f);
    /* index.noun names the first 3 nouns; everything else gets lemma.pos.offset */
    f = open_in(dir, "index.noun");
    fputs(license, f);
    for (int i = 1; i <= 3; i++) fprintf(f, "n%da n 1 1 @ 1 0 %08d  \n", i, 10000000 + i);
    fclose(f);
}

static char *slurp(const char *dir, const char *name) {
    char p[512];
    path_of(p, dir, name);
    FILE *f = fopen(p, "r");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* Reads a .del file into (s, r, o) triples; returns the count. */
static int read_del(const char *dir, const char *name, unsigned (*t)[3], int max) {
    char p[512];
    path_of(p, dir, name);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    int n = 0;
    while (n < max && fscanf(f, "%u\t%u\t%u\n", &t[n][0], &t[n][1], &t[n][2]) == 3) n++;
    fclose(f);
    return n;
}

static cr_wn *load_fake(void) {
    cr_err e;
    cr_wn *wn = NULL;
    if (cr_wn_load(&wn, root, &e)) printf("  load: %s\n", e.msg);
    return wn;
}

static void test_load(void) {
    cr_wn *wn = load_fake();
    CR_CHECK(wn != NULL);
    CR_CHECK(wn->nsyn == NN + NV + NA + NR);
    CR_CHECK_STR(cr_cdict_str(wn->names, wn->syn[0].name), "n1a.n.01");
    CR_CHECK_STR(cr_cdict_str(wn->names, wn->syn[NN].name), "v1.v.20000001");
    CR_CHECK_STR(cr_cdict_str(wn->names, wn->syn[NN + NV + 2].name), "a3.s.30000003");
    /* lemmas lower-cased, adjective marker stripped */
    CR_CHECK(cr_cdict_find(wn->lemmas, "prop1", 5) != UINT32_MAX);
    CR_CHECK(cr_cdict_find(wn->lemmas, "Prop1", 5) == UINT32_MAX);
    CR_CHECK(wn->proper[wn->syn[0].lem0 + 2] == 1 && wn->proper[wn->syn[0].lem0] == 0);
    CR_CHECK(cr_cdict_find(wn->lemmas, "a1", 2) != UINT32_MAX);
    CR_CHECK(cr_cdict_find(wn->lemmas, "a1(p)", 5) == UINT32_MAX);
    /* 59 hypernym + 59 hyponym + 11 has_part + 11 part_of + 10+10 derivation (noun side and verb side)
     * + 9+9 verb tree + 2 antonyms + 8 similar + 3 pertainyms */
    CR_CHECK(wn->nedges == 59 + 59 + 11 + 11 + 20 + 18 + 2 + 8 + 3);
    cr_wn_destroy(&wn);
    CR_CHECK(wn == NULL);
}

static void kg(const char *sub, uint64_t seed, int rr, cr_wn_kg_stats *st, char *dir) {
    snprintf(dir, 512, "%s/%s", root, sub);
    cr_wn *wn = load_fake();
    cr_err e;
    cr_wn_kg_opts o = {seed, 20, 20, rr};
    if (cr_wn_write_kg(wn, &o, dir, st, &e)) printf("  kg: %s\n", e.msg);
    cr_wn_destroy(&wn);
}

static void test_kg_split(void) {
    char dir[512];
    cr_wn_kg_stats st = {0};
    kg("kg1", 1, 0, &st, dir);
    CR_CHECK(st.train + st.valid + st.test == 59 + 59 + 11 + 11 + 20 + 18 + 2 + 8 + 3);
    CR_CHECK(st.valid == 20 && st.test == 20);
    CR_CHECK(st.entities == NN + NV + NA + NR);
    static unsigned tr[400][3], ho[400][3];
    int ntr = read_del(dir, "train.del", tr, 400);
    CR_CHECK(ntr == (int)st.train);
    char ent[NN + NV + NA + NR] = {0}, rel[64] = {0};
    for (int i = 0; i < ntr; i++) ent[tr[i][0]] = ent[tr[i][2]] = rel[tr[i][1]] = 1;
    const char *held[2] = {"valid.del", "test.del"};
    for (int h = 0; h < 2; h++) {
        int n = read_del(dir, held[h], ho, 400);
        CR_CHECK(n == 20);
        for (int i = 0; i < n; i++) {
            CR_CHECK(ent[ho[i][0]] && ent[ho[i][2]] && rel[ho[i][1]]);
            for (int j = 0; j < ntr; j++) CR_CHECK(memcmp(ho[i], tr[j], sizeof tr[j]) != 0);
        }
    }
    /* names agree with ids: the first train triple in both forms */
    char names[NN + NV + NA + NR][64], rname[3][64], p[512];
    unsigned id;
    path_of(p, dir, "entities.tsv");
    FILE *f = fopen(p, "r");
    CR_CHECK(f != NULL);
    for (int i = 0; i < NN + NV + NA + NR; i++) CR_CHECK(fscanf(f, "%u\t%63s\n", &id, names[i]) == 2 && id == (unsigned)i);
    fclose(f);
    path_of(p, dir, "train.tsv");
    f = fopen(p, "r");
    CR_CHECK(f != NULL);
    CR_CHECK(fscanf(f, "%63s\t%63s\t%63s\n", rname[0], rname[1], rname[2]) == 3);
    fclose(f);
    CR_CHECK_STR(rname[0], names[tr[0][0]]);
    CR_CHECK_STR(rname[2], names[tr[0][2]]);
}

static void test_kg_deterministic(void) {
    char d1[512], d2[512], d3[512];
    cr_wn_kg_stats st;
    kg("det1", 7, 0, &st, d1);
    kg("det2", 7, 0, &st, d2);
    kg("det3", 8, 0, &st, d3);
    const char *files[] = {"train.tsv", "valid.tsv", "test.tsv", "train.del", "entities.tsv", "relations.tsv"};
    for (int i = 0; i < 6; i++) {
        char *a = slurp(d1, files[i]), *b = slurp(d2, files[i]);
        CR_CHECK(a && b && strcmp(a, b) == 0);
        free(a);
        free(b);
    }
    char *a = slurp(d1, "valid.tsv"), *c = slurp(d3, "valid.tsv");
    CR_CHECK(a && c && strcmp(a, c) != 0);
    free(a);
    free(c);
}

static void test_kg_rr(void) {
    char dir[512];
    cr_wn_kg_stats st;
    kg("rr", 1, 1, &st, dir);
    char *rels = slurp(dir, "relations.tsv"), *train = slurp(dir, "train.tsv");
    CR_CHECK(rels && train);
    CR_CHECK(strstr(rels, "_hypernym\n") && strstr(rels, "_has_part\n") && strstr(rels, "_antonym\n"));
    CR_CHECK(!strstr(rels, "_hyponym") && !strstr(rels, "_part_of"));
    CR_CHECK(!strstr(train, "\t_hyponym\t") && !strstr(train, "\t_part_of\t"));
    CR_CHECK(st.relations == 6); /* hypernym has_part derivation antonym similar pertainym */
    CR_CHECK(st.train + st.valid + st.test == 59 + 11 + 20 + 9 + 2 + 8 + 3);
    free(rels);
    free(train);
}

static void test_graph(void) {
    cr_wn *wn = load_fake();
    char p[512];
    snprintf(p, sizeof p, "%s/graph.edges", root);
    uint64_t nodes = 0, edges = 0;
    cr_err e;
    CR_CHECK(cr_wn_write_graph(wn, p, &nodes, &edges, &e) == 0);
    cr_wn_destroy(&wn);
    /* undirected: tree 59 + verb tree 9 + part 11 + derivation 10 + antonym 1 + similar 4 + pertainym 3 */
    CR_CHECK(nodes == NN + NV + NA + NR);
    CR_CHECK(edges == 59 + 9 + 11 + 10 + 1 + 4 + 3);
    FILE *f = fopen(p, "r");
    CR_CHECK(f != NULL);
    char line[256];
    unsigned long a, b, pa = 0, pb = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        CR_CHECK(sscanf(line, "%lu %lu", &a, &b) == 2);
        CR_CHECK(a < b && b < nodes);
        CR_CHECK(n == 0 || a > pa || (a == pa && b > pb));
        pa = a, pb = b, n++;
    }
    fclose(f);
    CR_CHECK(n == edges);
}

static uint32_t lemma(const cr_wn *wn, const char *w) { return cr_cdict_find(wn->lemmas, w, strlen(w)); }

static int same_synset(const cr_wn *wn, const char *a, const char *b) {
    uint32_t la = lemma(wn, a), lb = lemma(wn, b);
    for (uint32_t s = 0; s < wn->nsyn; s++) {
        int ha = 0, hb = 0;
        for (uint32_t i = 0; i < wn->syn[s].nlem; i++) {
            ha |= wn->lemmas_of[wn->syn[s].lem0 + i] == la;
            hb |= wn->lemmas_of[wn->syn[s].lem0 + i] == lb;
        }
        if (ha && hb) return 1;
    }
    return 0;
}

static void test_synonyms(void) {
    cr_wn *wn = load_fake();
    char vp[512], qp[512];
    snprintf(vp, sizeof vp, "%s/vocab.txt", root);
    snprintf(qp, sizeof qp, "%s/syn.tsv", root);
    /* every noun lemma with count 10, except n7b with count 1 (below min count 5) */
    FILE *f = fopen(vp, "w");
    for (int i = 1; i <= NN; i++) fprintf(f, "n%da\t10\nn%db\t%d\nprop%d\t10\n", i, i, i == 7 ? 1 : 10, i);
    fclose(f);
    cr_wn_syn_opts o = {3, 100, 5, vp, NULL};
    uint64_t n = 0;
    cr_err e;
    CR_CHECK(cr_wn_write_synonyms(wn, &o, qp, &n, &e) == 0);
    CR_CHECK(n == NN - 1); /* one per noun synset with two eligible lemmas, distinct targets */
    f = fopen(qp, "r");
    CR_CHECK(f != NULL);
    char w[5][64];
    int ans, lines = 0, pos[5] = {0};
    while (fscanf(f, "%63s\t%63s\t%63s\t%63s\t%63s\t%d\n", w[0], w[1], w[2], w[3], w[4], &ans) == 6) {
        lines++;
        CR_CHECK(ans >= 1 && ans <= 4);
        pos[ans]++;
        for (int c = 1; c <= 4; c++) {
            CR_CHECK(w[c][0] == 'n' && strcmp(w[c], "n7b") != 0); /* vocabulary and min count respected, */
            /* capitalized (proper-noun) senses ("Prop7" in the fixture) never used */
            CR_CHECK(strcmp(w[c], w[0]) != 0);
            CR_CHECK(same_synset(wn, w[0], w[c]) == (c == ans));
        }
    }
    fclose(f);
    CR_CHECK(lines == (int)n);
    CR_CHECK(pos[1] && pos[2] && pos[3] && pos[4]); /* answer position is randomized */
    cr_wn_destroy(&wn);
}

/* The vocabulary from a text corpus, from an "id TAB word" map, and a bad line. */
static void test_synonym_sources(void) {
    cr_wn *wn = load_fake();
    char cp[512], mp[512], bp[512], qp[512];
    snprintf(cp, sizeof cp, "%s/corpus.txt", root);
    snprintf(mp, sizeof mp, "%s/map.tsv", root);
    snprintf(bp, sizeof bp, "%s/badvocab.txt", root);
    snprintf(qp, sizeof qp, "%s/syn2.tsv", root);
    FILE *c = fopen(cp, "w"), *m = fopen(mp, "w"), *b = fopen(bp, "w");
    for (int i = 1; i <= NN; i++) {
        fprintf(c, "n%da n%da n%db%s\n", i, i, i, i == 9 ? "" : " n0 n0");
        fprintf(m, "%d\tn%da\n%d\tn%db\n", 2 * i, i, 2 * i + 1, i);
    }
    fprintf(b, "n1a\t3\nn1b 2 extra\n");
    fclose(c);
    fclose(m);
    fclose(b);
    uint64_t n = 0;
    cr_err e;
    cr_wn_syn_opts o = {5, 100, 2, NULL, cp}; /* n9b and every other n{i}b seen once: only n{i}a pass */
    CR_CHECK(cr_wn_write_synonyms(wn, &o, qp, &n, &e) == 0);
    CR_CHECK(n == 0);
    o.min_count = 1;
    CR_CHECK(cr_wn_write_synonyms(wn, &o, qp, &n, &e) == 0);
    CR_CHECK(n == NN);
    o = (cr_wn_syn_opts){5, 100, 1, mp, NULL};
    CR_CHECK(cr_wn_write_synonyms(wn, &o, qp, &n, &e) == 0);
    CR_CHECK(n == NN);
    o.min_count = 2; /* a map has no counts */
    CR_CHECK(cr_wn_write_synonyms(wn, &o, qp, &n, &e) == -1);
    CR_CHECK(strstr(e.msg, "map.tsv:1: no count for 'n1a'") != NULL);
    o = (cr_wn_syn_opts){5, 100, 1, bp, NULL};
    CR_CHECK(cr_wn_write_synonyms(wn, &o, qp, &n, &e) == -1);
    CR_CHECK(strstr(e.msg, "badvocab.txt:2: expected 'word [count]' or 'id TAB word'") != NULL);
    cr_wn_destroy(&wn);
}

/* Writes a copy of the fake WordNet with line `lineno` of data.noun replaced. */
static int load_with_bad_line(const char *sub, const char *file, int lineno, const char *line, cr_err *e) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", root, sub);
    write_fake(dir);
    char *text = slurp(dir, file);
    FILE *f = open_in(dir, file);
    int ln = 1;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        if (ln == lineno) fprintf(f, "%s\n", line);
        else fwrite(p, 1, len, f);
        p += len;
        ln++;
    }
    fclose(f);
    free(text);
    cr_wn *wn = NULL;
    int rc = cr_wn_load(&wn, dir, e);
    cr_wn_destroy(&wn);
    return rc;
}

static void test_malformed(void) {
    cr_err e;
    char want[600];
    CR_CHECK(load_with_bad_line("bad1", "data.noun", 3, "10000001 03 x 01 dog 0 000 | g", &e) == -1);
    snprintf(want, sizeof want, "%s/bad1/data.noun:3: bad ss_type 'x' (n, v, a, s or r expected)", root);
    CR_CHECK_STR(e.msg, want);
    CR_CHECK(load_with_bad_line("bad2", "data.noun", 4, "10000002 03 n 01 dog 0 001 ?x 10000001 n 0000 | g", &e) == -1);
    snprintf(want, sizeof want, "%s/bad2/data.noun:4: unknown pointer symbol '?x'", root);
    CR_CHECK_STR(e.msg, want);
    CR_CHECK(load_with_bad_line("bad3", "data.verb", 3, "20000001 29 v 01 go 0 000", &e) == -1);
    snprintf(want, sizeof want, "%s/bad3/data.verb:3: missing '|' before the gloss", root);
    CR_CHECK_STR(e.msg, want);
    CR_CHECK(load_with_bad_line("bad4", "data.adv", 3, "40000001 02 r 01 fast 0 001 \\ 39999999 a 0101 | g", &e) == -1);
    snprintf(want, sizeof want, "%s/bad4/data.adv:3: pointer to missing synset 39999999 a", root);
    CR_CHECK_STR(e.msg, want);
    CR_CHECK(load_with_bad_line("bad5", "data.noun", 5, "10000003 03 n 03 cat 0 000 | too few words", &e) == -1);
    CR_CHECK(strstr(e.msg, "/bad5/data.noun:5: ") != NULL);
    CR_CHECK(load_with_bad_line("bad6", "data.noun", 3, "1000x001 03 n 01 dog 0 000 | g", &e) == -1);
    CR_CHECK(strstr(e.msg, "/bad6/data.noun:3: bad synset offset") != NULL);
    cr_wn *wn = NULL;
    CR_CHECK(cr_wn_load(&wn, "/nonexistent-wordnet", &e) == -1 && wn == NULL);
    CR_CHECK(strstr(e.msg, "/nonexistent-wordnet/data.noun: cannot open") != NULL);
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/cr_test_wordnet_XXXXXX");
    if (!mkdtemp(root)) return 1;
    write_fake(root);
    CR_RUN(test_load);
    CR_RUN(test_kg_split);
    CR_RUN(test_kg_deterministic);
    CR_RUN(test_kg_rr);
    CR_RUN(test_graph);
    CR_RUN(test_synonyms);
    CR_RUN(test_synonym_sources);
    CR_RUN(test_malformed);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) printf("could not remove %s\n", root);
    return cr_test_done();
}
