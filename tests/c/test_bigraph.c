#include "partition/cr_bigraph.h"
#include "cr_test.h"

static void test_from_edges_sorted_dedup(void) {
    uint32_t u[] = {0, 0, 1, 0, 2, 1};
    uint32_t v[] = {3, 1, 1, 1, 0, 3};
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(u, v, 6, 0, 0, &e);
    CR_CHECK(g);
    CR_CHECK(g->nu == 3 && g->nv == 4 && g->ne == 5);
    CR_CHECK(g->u_off[1] == 2 && g->u_adj[0] == 1 && g->u_adj[1] == 3);
    CR_CHECK(g->v_off[2] - g->v_off[1] == 2); /* v1 <- u0, u1 */
    CR_CHECK(g->v_off[3] == g->v_off[2]);     /* v2 isolated */
    cr_bigraph_destroy(&g);
    CR_CHECK(g == NULL);
}

static void test_from_edges_range(void) {
    uint32_t u[] = {5}, v[] = {0};
    cr_err e;
    CR_CHECK(cr_bigraph_from_edges(u, v, 1, 3, 0, &e) == NULL);
    CR_CHECK_STR(e.msg, "example id 5 out of range (|U| = 3)");
}

int main(void) {
    CR_RUN(test_from_edges_sorted_dedup);
    CR_RUN(test_from_edges_range);
    return cr_test_done();
}
