/* Server-side update rules: each against a hand computation. */
#include <math.h>

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
    CR_CHECK_STR(e.msg, "unknown optimizer 'adam2' (expected sgd, adagrad, add or assign)");
}

int main(void) {
    CR_RUN(test_sgd);
    CR_RUN(test_adagrad);
    CR_RUN(test_add_assign);
    CR_RUN(test_blocks);
    CR_RUN(test_parse);
    return cr_test_done();
}
