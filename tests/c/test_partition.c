/* Every method of part 1 (random, parsa, tsh1, tsh2, metis when libmetis is
 * present) on random and degenerate graphs: complete, in-range, same seed ->
 * same placement. Also the placement file round trip and its errors. */
#include <stdlib.h>
#include <unistd.h>

#include "base/cr_rng.h"
#include "partition/cr_partition.h"
#include "cr_test.h"

static const char *names[] = {"random", "parsa", "tsh1", "tsh2", "metis"};

static int check_graph(const cr_bigraph *g, uint32_t k) {
    for (size_t j = 0; j < sizeof names / sizeof names[0]; j++) {
        int avail;
        cr_part_fn fn = cr_part_method(names[j], &avail);
        if (!avail) continue;
        cr_assign *a = cr_assign_new(k, g->nu, g->nv), *b = cr_assign_new(k, g->nu, g->nv);
        cr_part_opts o;
        cr_part_opts_default(&o);
        o.seed = 9;
        cr_err e;
        int ok = fn(g, k, &o, a, &e) == 0 && fn(g, k, &o, b, &e) == 0;
        for (uint32_t u = 0; ok && u < g->nu; u++) ok = a->u_part[u] < k && a->u_part[u] == b->u_part[u];
        for (uint32_t v = 0; ok && v < g->nv; v++) ok = a->v_part[v] < k && a->v_part[v] == b->v_part[v];
        cr_assign_destroy(&a), cr_assign_destroy(&b);
        if (!ok) {
            printf("  method %s k %u nu %u nv %u: %s\n", names[j], k, g->nu, g->nv, e.msg);
            return 0;
        }
    }
    return 1;
}

static void test_random_graphs(void) {
    cr_rng r;
    cr_rng_seed(&r, 99);
    for (int rep = 0; rep < 20; rep++) {
        uint32_t nu = 1 + (uint32_t)cr_rng_below(&r, 50), nv = 1 + (uint32_t)cr_rng_below(&r, 50);
        uint64_t ne = cr_rng_below(&r, 300);
        uint32_t *u = malloc((ne + 1) * 4), *v = malloc((ne + 1) * 4);
        for (uint64_t i = 0; i < ne; i++) u[i] = (uint32_t)cr_rng_below(&r, nu), v[i] = (uint32_t)cr_rng_below(&r, nv);
        cr_err e;
        cr_bigraph *g = cr_bigraph_from_edges(u, v, ne, nu, nv, &e);
        free(u), free(v);
        int ok = check_graph(g, 1 + (uint32_t)cr_rng_below(&r, 9));
        cr_bigraph_destroy(&g);
        CR_CHECK(ok);
    }
}

static void test_degenerate_graphs(void) {
    /* empty rows (examples 1, 3), isolated parameters (0, 2, 4), duplicates */
    uint32_t u[] = {0, 0, 2, 2, 2}, v[] = {1, 1, 3, 3, 5};
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(u, v, 5, 4, 6, &e);
    int ok = check_graph(g, 1) && check_graph(g, 2) && check_graph(g, 7);
    cr_bigraph_destroy(&g);
    CR_CHECK(ok);
    g = cr_bigraph_from_edges(NULL, NULL, 0, 3, 2, &e); /* no edges at all */
    ok = g && check_graph(g, 2);
    cr_bigraph_destroy(&g);
    CR_CHECK(ok);
}

static void test_placement_file(void) {
    char path[] = "/tmp/cr_test_place_XXXXXX";
    int fd = mkstemp(path);
    CR_CHECK(fd >= 0);
    close(fd);
    cr_assign *p = cr_assign_new(3, 2, 3);
    p->u_part[0] = 2, p->u_part[1] = 0, p->v_part[0] = 1, p->v_part[1] = 1, p->v_part[2] = 0;
    cr_err e;
    int rc = cr_assign_save(path, p, "test", &e);
    cr_assign *q = rc == 0 ? cr_assign_load(path, &e) : NULL;
    int same = q && q->k == 3 && q->nu == 2 && q->nv == 3 && !memcmp(p->u_part, q->u_part, 8) &&
               !memcmp(p->v_part, q->v_part, 12);
    cr_assign_destroy(&p), cr_assign_destroy(&q);
    FILE *f = fopen(path, "w");
    fputs("# crescent placement 1\nk 2\nexamples 2\nkeys 0\nu 0 1\nu 0 1\n", f);
    fclose(f);
    q = cr_assign_load(path, &e);
    char want[128];
    snprintf(want, sizeof want, "%s:6: example 0 assigned twice", path);
    unlink(path);
    CR_CHECK(same);
    CR_CHECK(q == NULL);
    CR_CHECK_STR(e.msg, want);
    /* file errors: the file first, then what failed */
    CR_CHECK(cr_assign_load("/nonexistent/p.txt", &e) == NULL);
    CR_CHECK_STR(e.msg, "/nonexistent/p.txt: cannot open: No such file or directory");
    p = cr_assign_new(2, 1, 1);
    CR_CHECK(cr_assign_save("/nonexistent/p.txt", p, NULL, &e) == -1);
    CR_CHECK_STR(e.msg, "/nonexistent/p.txt: cannot create: No such file or directory");
    cr_assign_destroy(&p);
}

int main(void) {
    CR_RUN(test_random_graphs);
    CR_RUN(test_degenerate_graphs);
    CR_RUN(test_placement_file);
    return cr_test_done();
}
