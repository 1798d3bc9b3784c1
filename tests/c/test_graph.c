/* Edge lists, triples (names and LibKGE .del) and id<TAB>name dictionaries:
 * contents, round trips, every rejected input. */
#include "cr_test.h"
#include "data/cr_graph.h"
#include "data_util.h"

static const char *edges_err(const char *text) {
    static cr_err e;
    cr_edges g;
    cr_err_clear(&e);
    if (cr_edges_load(tput("bad.edges", text), &g, &e) == 0) cr_edges_free(&g);
    return e.msg;
}

static const char *del_err(const char *text, int64_t ne, int64_t nr) {
    static cr_err e;
    cr_triple_cols t;
    cr_err_clear(&e);
    if (cr_triples_load_del(tput("bad.del", text), ne, nr, &t, &e) == 0) cr_triples_free(&t);
    return e.msg;
}

static void test_edges(void) {
    cr_edges g, b;
    cr_err e;
    CR_CHECK(cr_edges_load(tput("g.txt", "# graph\n0 1\n1\t5  # trailing\n\n3 0\n"), &g, &e) == 0);
    CR_CHECK(g.n == 6 && g.m == 3 && g.src[1] == 1 && g.dst[1] == 5 && g.src[2] == 3);
    CR_CHECK(cr_edges_write(tpath("g2.txt"), &g, &e) == 0);
    CR_CHECK(cr_edges_load(tpath("g2.txt"), &b, &e) == 0);
    CR_CHECK(b.n == g.n && b.m == g.m && !memcmp(b.src, g.src, 24) && !memcmp(b.dst, g.dst, 24));
    cr_edges_free(&b);
    cr_edges_free(&g);
    CR_CHECK(strstr(edges_err("0 1\n2\n"), "bad.edges:2: missing target id"));
    CR_CHECK(strstr(edges_err("0 1\n2 x\n"), "bad.edges:2: target id is not an integer"));
    CR_CHECK(strstr(edges_err("0 1\n-2 1\n"), ":2: source id -2 out of range 0..2147483647"));
    CR_CHECK(strstr(edges_err("0 4294967296\n"), ":1: target id 4294967296 out of range"));
    CR_CHECK(strstr(edges_err("0 1 2\n"), ":1: extra field"));
    CR_CHECK(strstr(edges_err("# none\n"), "bad.edges: empty file"));
    tput_truncated_gz("e.gz", "%d 1\n", 30000);
    CR_CHECK(cr_edges_load(tpath("e.gz"), &g, &e) == -1 && strstr(e.msg, "e.gz: truncated or corrupt gzip: "));
    CR_CHECK(cr_edges_load(tpath("nope"), &g, &e) == -1 && strstr(e.msg, "nope: cannot open: No such file"));
}

static int count_edge(void *ud, int64_t a, int64_t b, cr_err *e) {
    (void)e;
    int64_t *sum = ud;
    sum[0]++;
    sum[1] += a * 10 + b;
    return sum[0] == 3 ? cr_errf(e, "stop at 3") : 0;
}

/* The streaming form: '%' header lines, extra fields only with the flag, and
 * a callback that stops the scan. */
static void test_edges_scan(void) {
    int64_t sum[2] = {0, 0};
    cr_err e;
    const char *p = tput("w.edges", "% sym weighted\n1 2 0.5 99\n3\t4\t1\n");
    CR_CHECK(cr_edges_scan(p, CR_EDGES_EXTRA_FIELDS, count_edge, sum, &e) == 0);
    CR_CHECK(sum[0] == 2 && sum[1] == 12 + 34);
    CR_CHECK(cr_edges_scan(p, 0, count_edge, sum, &e) == -1 && strstr(e.msg, "w.edges:2: extra field"));
    CR_CHECK(strstr(edges_err("% only a header\n"), "bad.edges: empty file"));
    CR_CHECK(strstr(edges_err("0 1\n1 2 %\n"), ":2: extra field")); /* '%' comments whole lines only */
    sum[0] = sum[1] = 0;
    p = tput("s.edges", "0 1\n0 2\n0 3\n0 4\n");
    CR_CHECK(cr_edges_scan(p, 0, count_edge, sum, &e) == -1 && sum[0] == 3 && !strcmp(e.msg, "stop at 3"));
}

/* A NUL byte is found once per block read, so also past the first block
 * (1 MiB) and after the buffer has moved its unread tail to the front. */
static void test_nul_after_first_block(void) {
    const char *p = tpath("nul.edges");
    FILE *f = fopen(p, "wb");
    for (int i = 0; i < 300000; i++) fputs("1 2\n", f);
    fwrite("3 4\n5 \0006\n7 8\n", 1, 14, f);
    fclose(f);
    cr_edges g;
    cr_err e;
    CR_CHECK(cr_edges_load(p, &g, &e) == -1 && strstr(e.msg, "nul.edges:300002: NUL byte in line"));
}

static void test_triples_names(void) {
    cr_dict ents, rels;
    cr_dict_init(&ents);
    cr_dict_init(&rels);
    cr_triple_cols t, v;
    cr_err e;
    CR_CHECK(cr_triples_load(tput("train.txt", "a\tr1\tb\nb\tr2\tc d\na\tr1\tc d\n"), &ents, &rels, 1, &t, &e) == 0);
    CR_CHECK(t.n == 3 && t.n_ent == 3 && t.n_rel == 2 && t.o[1] == 2 && t.r[1] == 1);
    CR_CHECK_STR(cr_dict_name(&ents, 2), "c d");
    /* valid/test share train's dictionaries and may not add names */
    CR_CHECK(cr_triples_load(tput("valid.txt", "b\tr1\ta\n"), &ents, &rels, 0, &v, &e) == 0);
    CR_CHECK(v.n == 1 && v.s[0] == 1 && v.o[0] == 0);
    cr_triples_free(&v);
    CR_CHECK(cr_triples_load(tput("test.txt", "b\tr1\ta\nb\tr9\ta\n"), &ents, &rels, 0, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, "test.txt:2: unknown relation 'r9'"));
    CR_CHECK(cr_triples_load(tput("x.txt", "a\tr1\n"), &ents, &rels, 1, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, "x.txt:1: expected 3 tab-separated fields"));
    CR_CHECK(cr_triples_load(tput("x.txt", "a\tr1\tb\tc\n"), &ents, &rels, 1, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, "x.txt:1: more than 3"));
    CR_CHECK(cr_triples_load(tput("x.txt", "a\t\tb\n"), &ents, &rels, 1, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, "x.txt:1: empty relation name"));
    CR_CHECK(cr_triples_load(tput("x.txt", "\n"), &ents, &rels, 1, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, "x.txt: empty file"));
    /* names round trip, and dictionaries round trip through id<TAB>name files */
    CR_CHECK(cr_triples_write(tpath("t2.txt"), &t, &ents, &rels, &e) == 0);
    CR_CHECK(cr_dict_write(&ents, tpath("entity_ids.del"), &e) == 0);
    CR_CHECK(cr_dict_write(&rels, tpath("relation_ids.del"), &e) == 0);
    cr_dict e2, r2;
    cr_dict_init(&e2);
    cr_dict_init(&r2);
    CR_CHECK(cr_dict_load(&e2, tpath("entity_ids.del"), &e) == 0 && e2.n == 3);
    CR_CHECK(cr_dict_load(&r2, tpath("relation_ids.del"), &e) == 0 && r2.n == 2);
    CR_CHECK(cr_triples_load(tpath("t2.txt"), &e2, &r2, 0, &v, &e) == 0);
    CR_CHECK(v.n == 3 && !memcmp(v.s, t.s, 24) && !memcmp(v.r, t.r, 24) && !memcmp(v.o, t.o, 24));
    cr_triples_free(&v);
    /* ids round trip as .del */
    CR_CHECK(cr_triples_write(tpath("t.del"), &t, NULL, NULL, &e) == 0);
    CR_CHECK(cr_triples_load_del(tpath("t.del"), 3, 2, &v, &e) == 0);
    CR_CHECK(v.n == 3 && !memcmp(v.o, t.o, 24) && v.n_ent == 3 && v.n_rel == 2);
    cr_triples_free(&v);
    cr_triples_free(&t);
    /* map files out of order load by id; gaps and duplicates are errors */
    cr_dict d;
    cr_dict_init(&d);
    CR_CHECK(cr_dict_load(&d, tput("m.del", "1\tb\n0\ta\n"), &e) == 0 && d.n == 2);
    CR_CHECK_STR(cr_dict_name(&d, 0), "a");
    CR_CHECK(cr_dict_load(&d, tput("m.del", "0\ta\n2\tb\n"), &e) == -1 && strstr(e.msg, "m.del: ids must be 0..1"));
    CR_CHECK(cr_dict_load(&d, tput("m.del", "0\ta\n1\ta\n"), &e) == -1 && strstr(e.msg, "m.del:2: duplicate name 'a'"));
    CR_CHECK(cr_dict_load(&d, tput("m.del", "0 a\n"), &e) == -1 && strstr(e.msg, "m.del:1: expected 'ID<TAB>NAME'"));
    cr_dict_free(&d);
    cr_dict_free(&e2);
    cr_dict_free(&r2);
    cr_dict_free(&ents);
    cr_dict_free(&rels);
}

static void test_triples_del(void) {
    CR_CHECK(strstr(del_err("0\t0\t1\n0\t5\t1\n", 3, 2), "bad.del:2: relation id 5 out of range 0..1"));
    CR_CHECK(strstr(del_err("0\t0\t3\n", 3, 2), ":1: object id 3 out of range 0..2"));
    CR_CHECK(strstr(del_err("0\t0\t3000000000\n", 0, 0), ":1: object id 3000000000 out of range"));
    CR_CHECK(strstr(del_err("0\t0\n", 0, 0), ":1: missing object id"));
    CR_CHECK(strstr(del_err("0\tx\t1\n", 0, 0), ":1: relation id is not an integer"));
    CR_CHECK(strstr(del_err("0\t0\t1\t1\n", 0, 0), ":1: extra field"));
    CR_CHECK(strstr(del_err("", 0, 0), "bad.del: empty file"));
    cr_triple_cols t;
    cr_err e;
    CR_CHECK(cr_triples_load_del(tput("ok.del", "0\t1\t4\n2 0 3\n"), 0, 0, &t, &e) == 0);
    CR_CHECK(t.n == 2 && t.n_ent == 5 && t.n_rel == 2);
    cr_triples_free(&t);
}

int main(void) {
    tdir_make();
    CR_RUN(test_edges);
    CR_RUN(test_edges_scan);
    CR_RUN(test_nul_after_first_block);
    CR_RUN(test_triples_names);
    CR_RUN(test_triples_del);
    tdir_remove();
    return cr_test_done();
}
