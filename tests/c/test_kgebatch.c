/* KGE batcher: every positive once per epoch, row indices that map back to
 * the global ids, sorted unique keys, negatives that replace exactly one
 * side with label 0, determinism per seed, caller-given negatives and the
 * messages for bad input. */
#include <stdint.h>
#include <stdlib.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "kernels/cr_kgebatch.h"

#define NT 53
#define NE 40
#define NR 5

static int64_t ts[NT], tr[NT], to[NT];

static void make_triples(void) {
    cr_rng g;
    cr_rng_seed(&g, 7);
    for (int i = 0; i < NT; i++) {
        ts[i] = (int64_t)cr_rng_below(&g, NE);
        tr[i] = (int64_t)cr_rng_below(&g, NR);
        to[i] = i % NE;
    }
}

static cr_kgebatch *make(int64_t batch, int64_t neg, uint64_t seed) {
    cr_kgebatch_opts o = {NE, NR, batch, neg, seed, 0, 0, 0};
    cr_err e;
    return cr_kgebatch_new(ts, tr, to, NT, &o, &e);
}

/* Keys strictly ascending and each in range. */
static int sorted_unique(const int64_t *k, int64_t n, int64_t lim) {
    for (int64_t i = 0; i < n; i++)
        if (k[i] < 0 || k[i] >= lim || (i && k[i] <= k[i - 1])) return 0;
    return 1;
}

/* An unseen triple equal to (s, r, o), or -1 (duplicates are matched in turn). */
static int find_triple(int64_t s, int64_t r, int64_t o, int *seen) {
    for (int i = 0; i < NT; i++)
        if (!seen[i] && ts[i] == s && tr[i] == r && to[i] == o) return i;
    return -1;
}

/* One epoch: checks keys, rows and labels of each batch; counts positives. */
static void check_epoch(cr_kgebatch *kb, int64_t neg, int *seen, int *bad) {
    cr_kgebatch_out b;
    cr_err e;
    int64_t w = 1 + 2 * neg;
    while (cr_kgebatch_next(kb, NULL, 0, &b, &e) == 1) {
        if (!sorted_unique(b.ekeys, b.ne, NE) || !sorted_unique(b.rkeys, b.nr, NR) || b.b.n != b.pos * w) {
            *bad = 1;
            return;
        }
        for (int64_t x = 0; x < b.b.n; x++)
            if (b.b.s[x] < 0 || b.b.s[x] >= b.ne || b.b.o[x] < 0 || b.b.o[x] >= b.ne || b.b.r[x] < 0 ||
                b.b.r[x] >= b.nr || b.b.y[x] != (x % w == 0 ? 1.0f : 0.0f))
                *bad = 1;
        for (int64_t i = 0; i < b.pos && !*bad; i++) {
            int64_t p = i * w, s = b.ekeys[b.b.s[p]], r = b.rkeys[b.b.r[p]], o = b.ekeys[b.b.o[p]];
            int t = find_triple(s, r, o, seen);
            if (t < 0) *bad = 1;
            else seen[t]++;
            for (int64_t j = 1; j < w; j++) { /* same relation; subject side then object side */
                int64_t q = p + j;
                if (b.b.r[q] != b.b.r[p]) *bad = 1;
                if (j <= neg && b.b.o[q] != b.b.o[p]) *bad = 1;
                if (j > neg && b.b.s[q] != b.b.s[p]) *bad = 1;
            }
        }
    }
}

static void test_epoch_covers_each_positive_once(void) {
    int64_t cases[][2] = {{1, 0}, {7, 2}, {53, 1}, {100, 3}};
    for (int c = 0; c < 4; c++) {
        cr_kgebatch *kb = make(cases[c][0], cases[c][1], 3);
        CR_CHECK(kb);
        CR_CHECK(cr_kgebatch_count(kb) == NT);
        int64_t B = cases[c][0] < NT ? cases[c][0] : NT;
        CR_CHECK(cr_kgebatch_batches(kb) == (NT + B - 1) / B);
        for (int epoch = 0; epoch < 2; epoch++) {
            int seen[NT] = {0}, bad = 0;
            check_epoch(kb, cases[c][1], seen, &bad);
            CR_CHECK(!bad);
            for (int i = 0; i < NT; i++) CR_CHECK(seen[i] == 1);
            cr_kgebatch_shuffle(kb, (uint64_t)epoch + 10);
        }
        cr_kgebatch_destroy(&kb);
        CR_CHECK(kb == NULL);
    }
}

/* Caller-given negatives land exactly where the layout says, and the ekeys
 * include them. */
static void test_given_negatives(void) {
    cr_kgebatch *kb = make(4, 2, 1);
    CR_CHECK(kb);
    CR_CHECK(cr_kgebatch_needs(kb) == 16);
    int64_t negs[16];
    for (int i = 0; i < 16; i++) negs[i] = (i * 7 + 3) % NE;
    cr_kgebatch_out b;
    cr_err e;
    CR_CHECK(cr_kgebatch_next(kb, negs, 16, &b, &e) == 1);
    CR_CHECK(b.pos == 4 && b.b.n == 20);
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < 2; j++) {
            CR_CHECK(b.ekeys[b.b.s[i * 5 + 1 + j]] == negs[4 * i + j]);
            CR_CHECK(b.ekeys[b.b.o[i * 5 + 3 + j]] == negs[4 * i + 2 + j]);
            CR_CHECK(b.b.y[i * 5 + 1 + j] == 0.0f && b.b.y[i * 5 + 3 + j] == 0.0f);
        }
    cr_kgebatch_destroy(&kb);
}

/* Same seed, same batches (order and uniform negatives); another seed differs. */
static void test_deterministic(void) {
    cr_kgebatch *a = make(6, 1, 42), *b = make(6, 1, 42), *c = make(6, 1, 43);
    CR_CHECK(a && b && c);
    cr_kgebatch_shuffle(b, 99); /* the walk depends on the seed only */
    cr_kgebatch_shuffle(b, 42);
    cr_kgebatch_out x, y, z;
    cr_err e;
    int differ = 0;
    while (cr_kgebatch_next(a, NULL, 0, &x, &e) == 1) {
        CR_CHECK(cr_kgebatch_next(b, NULL, 0, &y, &e) == 1);
        CR_CHECK(cr_kgebatch_next(c, NULL, 0, &z, &e) == 1);
        CR_CHECK(x.ne == y.ne && x.nr == y.nr && x.b.n == y.b.n);
        for (int64_t k = 0; k < x.ne; k++) CR_CHECK(x.ekeys[k] == y.ekeys[k]);
        for (int64_t k = 0; k < x.b.n; k++) CR_CHECK(x.b.s[k] == y.b.s[k] && x.b.o[k] == y.b.o[k]);
        if (x.ne != z.ne || x.ekeys[0] != z.ekeys[0]) differ = 1;
    }
    CR_CHECK(cr_kgebatch_next(b, NULL, 0, &y, &e) == 0);
    CR_CHECK(differ);
    cr_kgebatch_rewind(a);
    CR_CHECK(cr_kgebatch_needs(a) == 12);
    cr_kgebatch_destroy(&a);
    cr_kgebatch_destroy(&b);
    cr_kgebatch_destroy(&c);
}

static void expect_new_error(int64_t n_ent, int64_t n_rel, int64_t batch, int64_t neg, const char *msg) {
    cr_kgebatch_opts o = {n_ent, n_rel, batch, neg, 0, 0, 0, 0};
    cr_err e;
    CR_CHECK(cr_kgebatch_new(ts, tr, to, NT, &o, &e) == NULL);
    CR_CHECK_STR(e.msg, msg);
}

static void test_bad_input(void) {
    expect_new_error(NE, NR, 0, 1, "batch must be >= 1 (got 0)");
    expect_new_error(NE, NR, 4, -1, "neg must be >= 0 (got -1)");
    expect_new_error(0, NR, 4, 1, "entities must be >= 1 (got 0)");
    expect_new_error(NE, 0, 4, 1, "relations must be >= 1 (got 0)");
    expect_new_error(NE, NR, (int64_t)1 << 30, 1, "batch 1073741824 with neg 1 makes more than 2^31 triples per batch");
    int64_t save = ts[5];
    ts[5] = NE;
    expect_new_error(NE, NR, 4, 1, "triple 6: subject 40 is not in [0, 40)");
    ts[5] = save;
    tr[2] = -1;
    expect_new_error(NE, NR, 4, 1, "triple 3: relation -1 is not in [0, 5)");
    tr[2] = 0;
    save = to[NT - 1];
    to[NT - 1] = 1000;
    expect_new_error(NE, NR, 4, 1, "triple 53: object 1000 is not in [0, 40)");
    to[NT - 1] = save;

    cr_kgebatch *kb = make(4, 1, 0);
    CR_CHECK(kb);
    int64_t negs[8] = {0, 1, 2, 3, 4, 5, 6, NE};
    cr_kgebatch_out b;
    cr_err e;
    CR_CHECK(cr_kgebatch_next(kb, negs, 7, &b, &e) == -1);
    CR_CHECK_STR(e.msg, "negatives: got 7 ids, the batch needs 8");
    CR_CHECK(cr_kgebatch_next(kb, negs, 8, &b, &e) == -1);
    CR_CHECK_STR(e.msg, "negative 8: entity 40 is not in [0, 40)");
    negs[7] = 0; /* the walk did not move: the first batch comes next */
    CR_CHECK(cr_kgebatch_next(kb, negs, 8, &b, &e) == 1);
    int64_t n = b.pos;
    while (cr_kgebatch_next(kb, NULL, 0, &b, &e) == 1) n += b.pos;
    CR_CHECK(n == NT);
    cr_kgebatch_destroy(&kb);
    cr_kgebatch_destroy(&kb); /* NULL is fine */
}

/* negrows: ekeys are the positives' entities only; negative j of the ids
 * passed is entity row ne + j, even when its id is also a positive's. */
static void test_negrows(void) {
    cr_kgebatch_opts o = {NE, NR, 4, 2, 1, 1, 0, 0};
    cr_err e;
    cr_kgebatch *kb = cr_kgebatch_new(ts, tr, to, NT, &o, &e);
    CR_CHECK(kb);
    int64_t negs[16], total = 0;
    cr_kgebatch_out b;
    for (;;) {
        int64_t need = cr_kgebatch_needs(kb);
        for (int64_t i = 0; i < need; i++) negs[i] = (i * 11 + total) % NE;
        if (cr_kgebatch_next(kb, negs, need, &b, &e) != 1) break;
        CR_CHECK(b.negs == negs);
        CR_CHECK(sorted_unique(b.ekeys, b.ne, NE));
        for (int64_t i = 0; i < b.pos; i++) {
            int64_t p = i * 5;
            CR_CHECK(b.b.s[p] < b.ne && b.b.o[p] < b.ne); /* positives: rows of ekeys */
            for (int64_t j = 0; j < 2; j++) {
                CR_CHECK(b.b.s[p + 1 + j] == b.ne + 4 * i + j && b.b.o[p + 1 + j] == b.b.o[p]);
                CR_CHECK(b.b.o[p + 3 + j] == b.ne + 4 * i + 2 + j && b.b.s[p + 3 + j] == b.b.s[p]);
            }
        }
        int64_t pe = 0; /* ekeys are exactly the positives' entities */
        for (int64_t k = 0; k < b.ne; k++)
            for (int64_t i = 0; i < b.pos; i++)
                if (b.ekeys[b.b.s[i * 5]] == b.ekeys[k] || b.ekeys[b.b.o[i * 5]] == b.ekeys[k]) {
                    pe++;
                    break;
                }
        CR_CHECK(pe == b.ne);
        total += b.pos;
    }
    CR_CHECK(total == NT);
    cr_kgebatch_destroy(&kb);
}

/* parts: worker w of W keeps triples w, w + W, ...; the parts cover all. */
static void test_parts(void) {
    int seen[NT] = {0};
    for (int64_t w = 0; w < 3; w++) {
        cr_kgebatch_opts o = {NE, NR, 5, 0, 1, 0, w, 3};
        cr_err e;
        cr_kgebatch *kb = cr_kgebatch_new(ts, tr, to, NT, &o, &e);
        CR_CHECK(kb);
        CR_CHECK(cr_kgebatch_count(kb) == (NT - w + 2) / 3);
        int bad = 0;
        check_epoch(kb, 0, seen, &bad);
        CR_CHECK(!bad);
        cr_kgebatch_destroy(&kb);
    }
    for (int i = 0; i < NT; i++) CR_CHECK(seen[i] == 1);
    cr_kgebatch_opts o = {NE, NR, 5, 0, 1, 0, 3, 3};
    cr_err e;
    CR_CHECK(cr_kgebatch_new(ts, tr, to, NT, &o, &e) == NULL);
    CR_CHECK_STR(e.msg, "part 3 is not in [0, 3)");
}

static void test_empty(void) {
    cr_kgebatch_opts o = {NE, NR, 8, 2, 0, 0, 0, 0};
    cr_err e;
    cr_kgebatch *kb = cr_kgebatch_new(ts, tr, to, 0, &o, &e);
    CR_CHECK(kb);
    cr_kgebatch_out b;
    CR_CHECK(cr_kgebatch_batches(kb) == 0 && cr_kgebatch_needs(kb) == 0);
    CR_CHECK(cr_kgebatch_next(kb, NULL, 0, &b, &e) == 0);
    cr_kgebatch_destroy(&kb);
}

int main(void) {
    make_triples();
    CR_RUN(test_epoch_covers_each_positive_once);
    CR_RUN(test_negrows);
    CR_RUN(test_parts);
    CR_RUN(test_given_negatives);
    CR_RUN(test_deterministic);
    CR_RUN(test_bad_input);
    CR_RUN(test_empty);
    return cr_test_done();
}
