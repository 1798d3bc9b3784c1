/* Server-side update rules: each against a hand computation. */
#include <math.h>
#include <string.h>

#include "cr_test.h"
#include "optim/cr_optim.h"

static void test_sgd(void) {
    cr_optim o = {.kind = CR_OPTIM_SGD, .lr = 0.5f};
    float w[3] = {1, 2, 3}, g[3] = {2, -2, 0};
    CR_CHECK(cr_optim_state_dim(&o, 3) == 0);
    cr_optim_apply(&o, w, NULL, g, 3);
    CR_CHECK_NEAR(w[0], 0.0, 1e-7);
    CR_CHECK_NEAR(w[1], 3.0, 1e-7);
    CR_CHECK_NEAR(w[2], 3.0, 1e-7);
}

static void test_adagrad(void) {
    cr_optim o = {.kind = CR_OPTIM_ADAGRAD, .lr = 0.1f, .eps = 1e-6f, .init = 0.5f};
    float w[2] = {1, -1}, h[2], g[2] = {1, 2};
    CR_CHECK(cr_optim_state_dim(&o, 2) == 2);
    cr_optim_init_state(&o, h, 2);
    CR_CHECK_NEAR(h[1], 0.5, 0);
    cr_optim_apply(&o, w, h, g, 2);
    CR_CHECK_NEAR(h[0], 1.5, 1e-6);
    CR_CHECK_NEAR(h[1], 4.5, 1e-6);
    CR_CHECK_NEAR(w[0], 1 - 0.1 * 1 / (sqrt(1.5) + 1e-6), 1e-6);
    CR_CHECK_NEAR(w[1], -1 - 0.1 * 2 / (sqrt(4.5) + 1e-6), 1e-6);
    cr_optim_apply(&o, w, h, g, 2); /* accumulates */
    CR_CHECK_NEAR(h[0], 2.5, 1e-6);
}

static void test_add_assign(void) {
    cr_optim a = {.kind = CR_OPTIM_ADD}, s = {.kind = CR_OPTIM_ASSIGN};
    float w[2] = {1, 1}, g[2] = {0.25f, -3};
    cr_optim_apply(&a, w, NULL, g, 2);
    CR_CHECK_NEAR(w[0], 1.25, 0);
    CR_CHECK_NEAR(w[1], -2, 0);
    cr_optim_apply(&s, w, NULL, g, 2);
    CR_CHECK(w[0] == 0.25f && w[1] == -3);
}

/* dim 19: two blocks of 8 and a remainder of 3 give the element-wise rule. */
static void test_blocks(void) {
    cr_optim sgd = {.kind = CR_OPTIM_SGD, .lr = 0.5f},
             ada = {.kind = CR_OPTIM_ADAGRAD, .lr = 0.1f, .eps = 1e-6f, .init = 0.1f},
             add = {.kind = CR_OPTIM_ADD};
    float w1[19], w2[19], w3[19], h[19], g[19];
    for (int j = 0; j < 19; j++) w1[j] = w2[j] = w3[j] = (float)j, g[j] = (float)(j % 5) - 2, h[j] = 0.1f;
    cr_optim_apply(&sgd, w1, NULL, g, 19);
    cr_optim_apply(&ada, w2, h, g, 19);
    cr_optim_apply(&add, w3, NULL, g, 19);
    for (int j = 0; j < 19; j++) {
        double gj = (j % 5) - 2, hj = 0.1 + gj * gj;
        CR_CHECK_NEAR(w1[j], j - 0.5 * gj, 1e-6);
        CR_CHECK_NEAR(h[j], hj, 1e-6);
        CR_CHECK_NEAR(w2[j], j - 0.1 * gj / (sqrt(hj) + 1e-6), 1e-5);
        CR_CHECK_NEAR(w3[j], j + gj, 0);
    }
}

static void test_parse(void) {
    cr_optim o = {.lr = 0.3f};
    cr_err e;
    CR_CHECK(cr_optim_parse(&o, "adagrad", &e) == 0 && o.kind == CR_OPTIM_ADAGRAD && o.lr == 0.3f);
    CR_CHECK_STR(cr_optim_name(&o), "adagrad");
    CR_CHECK(cr_optim_parse(&o, "adam2", &e) == -1);
    CR_CHECK_STR(e.msg, "unknown optimizer 'adam2' (expected sgd, adagrad, add, assign, ftrl or dbpg)");
    CR_CHECK(cr_optim_parse(&o, "ftrl", &e) == 0 && o.kind == CR_OPTIM_FTRL);
    CR_CHECK_STR(cr_optim_name(&o), "ftrl");
    CR_CHECK(cr_optim_parse(&o, "dbpg", &e) == 0 && o.kind == CR_OPTIM_DBPG);
    CR_CHECK_STR(cr_optim_name(&o), "dbpg");
    cr_optim i32 = {.kind = CR_OPTIM_ADD, .i32 = 1}; /* an i32 table's add: the same rule */
    CR_CHECK_STR(cr_optim_name(&i32), "add");
}

/* FTRL-proximal against McMahan et al. 2013 (Algorithm 1) worked by hand:
 * alpha 0.5, beta 1, l1 0.2, l2 0.1, from z = n = w = 0. */
static void test_ftrl(void) {
    cr_optim o = {.kind = CR_OPTIM_FTRL, .lr = 0.5f, .beta = 1, .l1 = 0.2f, .l2 = 0.1f};
    cr_err e;
    CR_CHECK(cr_optim_check(&o, 2, &e) == 0);
    CR_CHECK(cr_optim_state_dim(&o, 2) == 4);
    float w[2] = {0, 0}, st[4] = {9, 9, 9, 9}, g[2] = {1, 0.1f};
    cr_optim_init_state(&o, st, 2);
    CR_CHECK(st[0] == 0 && st[3] == 0);
    cr_optim_apply(&o, w, st, g, 2);
    /* j=0: sigma = (1 - 0)/0.5 = 2, z = 1 - 2*0 = 1, n = 1,
     * w = -(1 - 0.2) / ((1 + 1)/0.5 + 0.1) = -0.8 / 4.1 */
    CR_CHECK_NEAR(st[0], 1, 1e-7);
    CR_CHECK_NEAR(st[2], 1, 1e-7);
    CR_CHECK_NEAR(w[0], -0.8 / 4.1, 1e-6);
    /* j=1: |z| = 0.1 <= l1: w stays 0 */
    CR_CHECK(w[1] == 0);
    double w0 = -0.8 / 4.1;
    float g2[2] = {-2, 0};
    cr_optim_apply(&o, w, st, g2, 2);
    /* sigma = (sqrt(5) - 1)/0.5, z = 1 - 2 - sigma w0, n = 5 */
    double sigma = (sqrt(5.0) - 1) / 0.5, z = 1 - 2 - sigma * w0;
    double want = fabs(z) <= 0.2 ? 0 : -(z - (z > 0 ? 0.2 : -0.2)) / ((1 + sqrt(5.0)) / 0.5 + 0.1);
    CR_CHECK_NEAR(st[0], z, 1e-6);
    CR_CHECK_NEAR(w[0], want, 1e-6);
    cr_optim bad = o;
    bad.l1 = -1;
    CR_CHECK(cr_optim_check(&bad, 1, &e) == -1 && strstr(e.msg, "l1 must be >= 0"));
}

/* DBPG: two registered pushers; the step only when both pushed, then the
 * soft threshold w = S(w - lr G/U, lr l1/U). */
static void test_dbpg_step(void) {
    cr_optim o = {.kind = CR_OPTIM_DBPG, .lr = 1, .l1 = 0.5f, .delta = -1};
    cr_err e;
    CR_CHECK(cr_optim_check(&o, 2, &e) == 0);
    CR_CHECK(cr_optim_state_dim(&o, 2) == 5);
    float w[2] = {0, 0}, st[5], reg[2] = {0, -1};
    cr_optim_init_state(&o, st, 2);
    cr_optim_apply(&o, w, st, reg, 2);
    cr_optim_apply(&o, w, st, reg, 2);
    CR_CHECK(st[3] == 2 && w[0] == 0);
    float a[2] = {-1.5f, 1}, b[2] = {-0.5f, 1};
    cr_optim_apply(&o, w, st, a, 2);
    CR_CHECK(w[0] == 0 && st[2] == 1); /* waits for the second pusher */
    cr_optim_apply(&o, w, st, b, 2);
    /* G = -2, U = 2: z = 0 + 1 = 1, threshold 0.25: w = 0.75 */
    CR_CHECK_NEAR(w[0], 0.75, 1e-7);
    CR_CHECK(st[0] == 0 && st[1] == 0 && st[2] == 0 && st[4] == 1);
    /* a small gradient on the other side: z = 0.75 - 0.2 = 0.55 -> 0.30 */
    float c[2] = {0.2f, 0.5f}, d[2] = {0.2f, 1.5f};
    cr_optim_apply(&o, w, st, c, 2);
    cr_optim_apply(&o, w, st, d, 2);
    CR_CHECK_NEAR(w[0], 0.75 - 0.4 / 2 - 0.25, 1e-6);
    /* inside the threshold: exactly 0 */
    float f[2] = {-0.1f, 0.5f};
    w[0] = 0.1f;
    cr_optim_apply(&o, w, st, f, 2);
    cr_optim_apply(&o, w, st, f, 2);
    CR_CHECK(w[0] == 0); /* z = 0.1 + 0.2 = 0.3 <= 0.5 */
    /* l2: G += l2 w, U += l2 */
    cr_optim o2 = {.kind = CR_OPTIM_DBPG, .lr = 0.5f, .l1 = 0, .l2 = 1, .delta = -1};
    float w2[2] = {2, 0}, st2[5] = {0}, g2[2] = {1, 3};
    cr_optim_apply(&o2, w2, st2, g2, 2); /* nobody registered: every push steps */
    CR_CHECK_NEAR(w2[0], 2 - 0.5 * (1 + 2) / (3 + 1), 1e-6);
    cr_optim bad = o;
    CR_CHECK(cr_optim_check(&bad, 3, &e) == -1 && strstr(e.msg, "dim must be 2"));
    bad.lr = 0;
    CR_CHECK(cr_optim_check(&bad, 2, &e) == -1 && strstr(e.msg, "lr must be > 0"));
}

/* The KKT filter: w = 0 and |G| <= l1 - delta sets the skip flag, and a
 * skipped row drops later pushes; |G| above the margin steps. */
static void test_dbpg_kkt(void) {
    cr_optim o = {.kind = CR_OPTIM_DBPG, .lr = 1, .l1 = 1, .delta = 0.25f};
    float w[2] = {0, 0}, st[5] = {0}, g[2] = {0.7f, 1};
    cr_optim_apply(&o, w, st, g, 2);
    CR_CHECK(w[0] == 0 && w[1] == -1); /* 0.7 <= 0.75: skipped */
    float big[2] = {-5, 1};
    cr_optim_apply(&o, w, st, big, 2);
    CR_CHECK(w[0] == 0 && st[2] == 0 && st[0] == 0); /* dropped, not summed */
    float w2[2] = {0, 0}, st2[5] = {0}, g2[2] = {0.8f, 1};
    cr_optim_apply(&o, w2, st2, g2, 2);
    CR_CHECK(w2[1] > 0 && w2[0] == 0); /* 0.8 > 0.75: not skipped; |z| = 0.8 <= 1: w stays 0 */
    float w3[2] = {0.5f, 0}, st3[5] = {0}, g3[2] = {0.1f, 1};
    cr_optim_apply(&o, w3, st3, g3, 2);
    CR_CHECK(w3[1] > 0); /* w != 0: never skipped */
    CR_CHECK(w3[0] == 0); /* z = 0.4 <= 1 */
    cr_optim off = o;
    off.delta = -1;
    float w4[2] = {0, 0}, st4[5] = {0}, g4[2] = {0.1f, 1};
    cr_optim_apply(&off, w4, st4, g4, 2);
    CR_CHECK(w4[1] >= 0); /* filter off */
}

/* The trust region: a step is clipped to the radius r (1 in a new row),
 * then r = max(2 |change|, r / 2). */
static void test_dbpg_trust(void) {
    cr_optim o = {.kind = CR_OPTIM_DBPG, .lr = 1, .l1 = 0, .delta = -1};
    float w[2] = {0, 0}, st[5] = {0}, g[2] = {-10, 1};
    cr_optim_apply(&o, w, st, g, 2);
    CR_CHECK(w[0] == 1 && w[1] == 2); /* wanted 10, clipped to 1; r = max(2, 0.5) */
    float small[2] = {-0.1f, 1};
    cr_optim_apply(&o, w, st, small, 2);
    CR_CHECK_NEAR(w[0], 1.1, 1e-6);
    CR_CHECK_NEAR(w[1], 1.0, 1e-6); /* max(0.2, 2 / 2) */
    float w1[1] = {0}, st1[5] = {0}, g1[1] = {-10};
    cr_optim_apply(&o, w1, st1, g1, 1); /* dim 1: no trust region, no curvature: U = 1e-12 */
    CR_CHECK(w1[0] > 1e6);
}

/* AdaDelay: eta = lr / (1 + c sqrt(t + tau)), t = the row's steps so far. */
static void test_dbpg_adadelay(void) {
    cr_optim o = {.kind = CR_OPTIM_DBPG, .lr = 2, .l1 = 0, .delta = -1, .ada_c = 0.5f, .tau = 3};
    cr_err e;
    CR_CHECK(cr_optim_check(&o, 2, &e) == 0);
    float w[2] = {0, 0}, st[5] = {0}, g[2] = {-0.5f, 1};
    cr_optim_apply(&o, w, st, g, 2);
    double eta0 = 2 / (1 + 0.5 * sqrt(0 + 3.0));
    CR_CHECK_NEAR(w[0], 0.5 * eta0, 1e-6);
    cr_optim_apply(&o, w, st, g, 2);
    double eta1 = 2 / (1 + 0.5 * sqrt(1 + 3.0));
    CR_CHECK_NEAR(w[0], 0.5 * eta0 + 0.5 * eta1, 1e-6);
    CR_CHECK(st[4] == 2);
    cr_optim bad = o;
    bad.tau = -1;
    CR_CHECK(cr_optim_check(&bad, 2, &e) == -1 && strstr(e.msg, "tau"));
}

/* Every row's defaults pass its own check; a parameter out of its row's
 * range, a NaN, a kind outside the table and an i32 form a rule lacks are
 * refused with the parameter's name. */
static void test_rows(void) {
    cr_err e;
    char list[256];
    for (int k = 0; k < CR_OPTIM_NKINDS; k++) {
        const cr_optim_rule *r = &cr_optim_rules[k];
        cr_optim o;
        memset(&o, 0, sizeof o);
        o.kind = (cr_optim_kind)k;
        CR_CHECK(r->name && r->params && r->apply && cr_optim_find(r->name) == r);
        CR_CHECK(cr_opt_defaults(r->params, &o, &e) == 0);
        CR_CHECK(cr_optim_check(&o, 2, &e) == 0);
        o.i32 = 1;
        CR_CHECK((cr_optim_check(&o, 2, &e) == 0) == (r->apply_i32 != NULL));
    }
    CR_CHECK_STR(cr_optim_list(list, sizeof list, 1), "add or assign");
    CR_CHECK(cr_optim_find("adam") == NULL);
    cr_optim f = {.kind = CR_OPTIM_FTRL, .lr = 0, .beta = 1};
    CR_CHECK(cr_optim_check(&f, 1, &e) < 0);
    CR_CHECK_STR(e.msg, "optimizer ftrl: alpha must be > 0, got 0");
    f.lr = INFINITY;
    CR_CHECK(cr_optim_check(&f, 1, &e) < 0 && strstr(e.msg, "alpha must be > 0, got inf"));
    cr_optim d = {.kind = CR_OPTIM_DBPG, .lr = 1, .delta = NAN};
    CR_CHECK(cr_optim_check(&d, 2, &e) < 0);
    CR_CHECK_STR(e.msg, "optimizer dbpg: delta must be a number");
    cr_optim bad = {.kind = CR_OPTIM_NKINDS};
    CR_CHECK(cr_optim_check(&bad, 1, &e) < 0 && strstr(e.msg, "unknown optimizer kind"));
    CR_CHECK_STR(cr_optim_name(&bad), "?");
    cr_optim sgd = {.kind = CR_OPTIM_SGD, .lr = 0.1f, .i32 = 1};
    CR_CHECK(cr_optim_check(&sgd, 1, &e) < 0);
    CR_CHECK_STR(e.msg, "optimizer sgd: an i32 table takes add or assign");
}

/* The replica's form: the row as cr_optim_apply leaves it, the change in
 * acc: linear * g for sgd (exactly), new - old for adagrad (value and
 * state), g as int32 for an i32 add. */
static void test_apply_acc(void) {
    cr_optim sgd = {.kind = CR_OPTIM_SGD, .lr = 0.3f}, ada = {.kind = CR_OPTIM_ADAGRAD, .lr = 0.1f, .eps = 1e-6f},
             cnt = {.kind = CR_OPTIM_ADD, .i32 = 1};
    float g[3] = {0.7f, -1.1f, 0.05f}, row[6] = {1, 2, 3, 0.5f, 0.5f, 0.5f}, ref[6], acc[6] = {0}, old[6];
    memcpy(ref, row, sizeof ref);
    cr_optim_apply(&sgd, ref, NULL, g, 3);
    cr_optim_apply_acc(&sgd, row, g, 3, acc, old);
    CR_CHECK(!memcmp(row, ref, 3 * sizeof *row));
    for (int j = 0; j < 3; j++) CR_CHECK(acc[j] == -0.3f * g[j]);
    float arow[6] = {1, 2, 3, 0.5f, 0.5f, 0.5f}, aref[6], aacc[6] = {0};
    memcpy(aref, arow, sizeof aref);
    cr_optim_apply(&ada, aref, aref + 3, g, 3);
    cr_optim_apply_acc(&ada, arow, g, 3, aacc, old);
    CR_CHECK(!memcmp(arow, aref, sizeof arow));
    for (int j = 0; j < 6; j++) CR_CHECK(aacc[j] == aref[j] - (j < 3 ? (float)(j + 1) : 0.5f));
    int32_t w[2] = {INT32_MAX, -5}, d[2] = {1, 7}, c[2] = {3, 3};
    float fw[2], fd[2], fc[2];
    memcpy(fw, w, sizeof fw), memcpy(fd, d, sizeof fd), memcpy(fc, c, sizeof fc);
    cr_optim_apply_acc(&cnt, fw, fd, 2, fc, old);
    memcpy(w, fw, sizeof w), memcpy(c, fc, sizeof c);
    CR_CHECK(w[0] == INT32_MIN && w[1] == 2 && c[0] == 4 && c[1] == 10); /* wraps, exact */
}

int main(void) {
    CR_RUN(test_rows);
    CR_RUN(test_apply_acc);
    CR_RUN(test_sgd);
    CR_RUN(test_adagrad);
    CR_RUN(test_add_assign);
    CR_RUN(test_blocks);
    CR_RUN(test_parse);
    CR_RUN(test_ftrl);
    CR_RUN(test_dbpg_step);
    CR_RUN(test_dbpg_kkt);
    CR_RUN(test_dbpg_trust);
    CR_RUN(test_dbpg_adadelay);
    return cr_test_done();
}
