#include "base/cr_csr.h"
#include "base/cr_rng.h"
#include "cr_test.h"

/* Rows by id, stable within a row, empty rows and an empty last row. */
static void test_pairs_layout(void) {
    uint32_t r[] = {2, 0, 2, 0, 2, 3};
    uint32_t c[] = {10, 11, 12, 13, 14, 15};
    uint64_t *off;
    uint32_t *adj;
    cr_err e;
    CR_CHECK(cr_csr_from_pairs(r, c, 6, 5, &off, &adj, &e) == 0);
    uint64_t want_off[] = {0, 2, 2, 5, 6, 6};
    uint32_t want_adj[] = {11, 13, 10, 12, 14, 15};
    for (int i = 0; i < 6; i++) CR_CHECK(off[i] == want_off[i]);
    for (int i = 0; i < 6; i++) CR_CHECK(adj[i] == want_adj[i]);
    free(off);
    free(adj);
}

static void test_pairs_empty(void) {
    uint64_t *off;
    uint32_t *adj;
    cr_err e;
    CR_CHECK(cr_csr_from_pairs(NULL, NULL, 0, 0, &off, &adj, &e) == 0);
    CR_CHECK(off && adj && off[0] == 0);
    free(off);
    free(adj);
}

static void test_pairs_bad_row(void) {
    uint32_t r[] = {0, 7, 9}, c[] = {1, 2, 3};
    uint64_t *off = (uint64_t *)1;
    uint32_t *adj = (uint32_t *)1;
    cr_err e;
    CR_CHECK(cr_csr_from_pairs(r, c, 3, 4, &off, &adj, &e) == -1);
    CR_CHECK(off == NULL && adj == NULL);
    CR_CHECK_STR(e.msg, "CSR index: row id 7 out of range (4 rows)");
}

/* Against a quadratic reference on random data: every row holds exactly its
 * entries, in input order. */
static void test_pairs_random(void) {
    enum { N = 5000, R = 97 };
    static uint32_t r[N], c[N];
    cr_rng g;
    cr_rng_seed(&g, 7);
    for (int i = 0; i < N; i++) r[i] = (uint32_t)cr_rng_below(&g, R), c[i] = (uint32_t)i;
    uint64_t *off;
    uint32_t *adj;
    cr_err e;
    CR_CHECK(cr_csr_from_pairs(r, c, N, R, &off, &adj, &e) == 0);
    CR_CHECK(off[0] == 0 && off[R] == N);
    for (uint32_t row = 0; row < R; row++) {
        uint64_t k = off[row];
        for (int i = 0; i < N; i++)
            if (r[i] == row) CR_CHECK(adj[k++] == c[i]);
        CR_CHECK(k == off[row + 1]);
    }
    free(off);
    free(adj);
}

/* The builder with an order: rows laid out as listed, dropped rows zeroed. */
static void test_order(void) {
    uint64_t rows[] = {1, 3, 1, 0, 3, 3, 2};
    cr_csr_build b;
    cr_err e;
    CR_CHECK(cr_csr_begin(&b, 4, &e) == 0);
    for (int i = 0; i < 7; i++) cr_csr_count(&b, rows[i]);
    CR_CHECK(*cr_csr_countp(&b, 3) == 3);
    *cr_csr_countp(&b, 0) = 0; /* drop row 0 */
    uint64_t order[] = {3, 2, 1}, *off;
    CR_CHECK(cr_csr_offsets(&b, order, 3, &off, &e) == 0);
    CR_CHECK(off[0] == 0 && off[1] == 3 && off[2] == 4 && off[3] == 6);
    uint64_t slot[7];
    for (int i = 0; i < 7; i++)
        if (rows[i] != 0) slot[i] = cr_csr_slot(&b, rows[i]);
    CR_CHECK(slot[1] == 0 && slot[4] == 1 && slot[5] == 2); /* row 3 first */
    CR_CHECK(slot[6] == 3);                                 /* then row 2 */
    CR_CHECK(slot[0] == 4 && slot[2] == 5);                 /* then row 1 */
    cr_csr_end(&b);
    cr_csr_end(&b); /* idempotent */
    free(off);
}

static void test_order_errors(void) {
    cr_csr_build b;
    cr_err e;
    uint64_t *off = (uint64_t *)1;
    CR_CHECK(cr_csr_begin(&b, 3, &e) == 0);
    cr_csr_count(&b, 0);
    cr_csr_count(&b, 2);
    uint64_t missing[] = {0}, twice[] = {0, 2, 0}, outside[] = {0, 5};
    CR_CHECK(cr_csr_offsets(&b, missing, 1, &off, &e) == -1 && off == NULL);
    CR_CHECK_STR(e.msg, "CSR index: row 2 has entries but is not in the order");
    cr_csr_end(&b);
    CR_CHECK(cr_csr_begin(&b, 3, &e) == 0);
    cr_csr_count(&b, 0);
    CR_CHECK(cr_csr_offsets(&b, twice, 3, &off, &e) == -1);
    CR_CHECK_STR(e.msg, "CSR index: order names row 0 twice");
    cr_csr_end(&b);
    CR_CHECK(cr_csr_begin(&b, 3, &e) == 0);
    CR_CHECK(cr_csr_offsets(&b, outside, 2, &off, &e) == -1);
    CR_CHECK_STR(e.msg, "CSR index: order names row 5 of 3");
    cr_csr_end(&b);
}

static void test_overflow(void) {
    cr_csr_build b;
    cr_err e;
    CR_CHECK(cr_csr_begin(&b, UINT64_MAX, &e) == -1);
    CR_CHECK(b.cnt == NULL);
    CR_CHECK_STR(e.msg, "CSR index: 18446744073709551615 rows do not fit in memory");
    CR_CHECK(cr_csr_array(UINT64_MAX / 2, 8, &e) == NULL);
    CR_CHECK(strstr(e.msg, "do not fit in memory") != NULL);
    void *p = cr_csr_array(0, 8, &e);
    CR_CHECK(p != NULL);
    free(p);
}

/* The callback form: entries generated, not stored; it is called twice. */
typedef struct {
    int calls;
    int extra; /* emit one more entry on the second call */
} gen_ctx;

static void each_gen(void *ctx, cr_csr_emit_fn emit, void *ectx) {
    gen_ctx *g = ctx;
    g->calls++;
    for (uint32_t i = 0; i < 10; i++) emit(ectx, i % 3, i);
    if (g->extra && g->calls == 2) emit(ectx, 0, 99);
}

static void test_fn(void) {
    gen_ctx g = {0, 0};
    uint64_t *off;
    uint32_t *adj;
    cr_err e;
    CR_CHECK(cr_csr_from_fn(3, each_gen, &g, &off, &adj, &e) == 0);
    CR_CHECK(g.calls == 2);
    CR_CHECK(off[0] == 0 && off[1] == 4 && off[2] == 7 && off[3] == 10);
    uint32_t want[] = {0, 3, 6, 9, 1, 4, 7, 2, 5, 8};
    for (int i = 0; i < 10; i++) CR_CHECK(adj[i] == want[i]);
    free(off);
    free(adj);
    /* a callback that emits more the second time is clipped, not written past */
    g = (gen_ctx){0, 1};
    CR_CHECK(cr_csr_from_fn(3, each_gen, &g, &off, &adj, &e) == 0);
    CR_CHECK(off[3] == 10 && adj[3] == 9);
    free(off);
    free(adj);
    CR_CHECK(cr_csr_from_fn(2, each_gen, &g, &off, &adj, &e) == -1);
    CR_CHECK_STR(e.msg, "CSR index: row id 2 out of range (2 rows)");
}

int main(void) {
    CR_RUN(test_pairs_layout);
    CR_RUN(test_pairs_empty);
    CR_RUN(test_pairs_bad_row);
    CR_RUN(test_pairs_random);
    CR_RUN(test_order);
    CR_RUN(test_order_errors);
    CR_RUN(test_overflow);
    CR_RUN(test_fn);
    return cr_test_done();
}
