/* RMSE, logloss, accuracy, AUC against hand computations and, for AUC, the
 * brute-force pair count (positive above negative = 1, tie = 1/2). */
#include "base/cr_rng.h"
#include "cr_test.h"
#include "eval/cr_pred_metrics.h"

static void test_rmse(void) {
    float p[3] = {1, 2, 3}, t[3] = {1, 4, 0};
    double v;
    cr_err e;
    CR_CHECK(cr_metric_rmse(p, t, 3, &v, &e) == 0);
    CR_CHECK_NEAR(v, sqrt((0 + 4 + 9) / 3.0), 1e-12);
    CR_CHECK(cr_metric_rmse(p, t, 0, &v, &e) == -1);
    CR_CHECK_STR(e.msg, "no values to evaluate (n = 0)");
    t[1] = NAN;
    CR_CHECK(cr_metric_rmse(p, t, 3, &v, &e) == -1);
    CR_CHECK_STR(e.msg, "truth[2] is not a finite number");
}

static void test_logloss_accuracy(void) {
    float p[4] = {0.9f, 0.2f, 0.6f, 0}, y[4] = {1, 0, 0, 1}, pm[4] = {1, -1, -1, 1};
    double v, v2;
    cr_err e;
    CR_CHECK(cr_metric_logloss(p, y, 4, &v, &e) == 0);
    double want = -(log(0.9f) + log(1 - 0.2f) + log(1 - 0.6f) + log(1e-15)) / 4;
    CR_CHECK_NEAR(v, want, 1e-6);
    CR_CHECK(cr_metric_logloss(p, pm, 4, &v2, &e) == 0); /* {-1, +1} labels give the same */
    CR_CHECK_NEAR(v, v2, 0);
    CR_CHECK(cr_metric_accuracy(p, y, 4, 0.5, &v, &e) == 0);
    CR_CHECK_NEAR(v, 0.5, 0); /* right: 0.9 -> 1, 0.2 -> 0 */
    p[0] = 1.5f;
    CR_CHECK(cr_metric_logloss(p, y, 4, &v, &e) == -1);
    CR_CHECK_STR(e.msg, "probability[1] = 1.5 is outside [0, 1]");
}

static double brute_auc(const float *s, const float *y, int n) {
    double good = 0, pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (y[i] > 0 && !(y[j] > 0)) {
                pairs++;
                good += s[i] > s[j] ? 1 : s[i] == s[j] ? 0.5 : 0;
            }
    return good / pairs;
}

static void test_auc(void) {
    float s[6] = {0.1f, 0.2f, 0.3f, 0.7f, 0.8f, 0.9f}, y[6] = {0, 0, 0, 1, 1, 1};
    double v;
    cr_err e;
    CR_CHECK(cr_metric_auc(s, y, 6, &v, &e) == 0);
    CR_CHECK_NEAR(v, 1, 0); /* perfectly separated */
    float yr[6] = {1, 1, 1, 0, 0, 0};
    CR_CHECK(cr_metric_auc(s, yr, 6, &v, &e) == 0);
    CR_CHECK_NEAR(v, 0, 0);
    float flat[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    CR_CHECK(cr_metric_auc(flat, y, 6, &v, &e) == 0);
    CR_CHECK_NEAR(v, 0.5, 0); /* all tied */
    float none[6] = {0};
    CR_CHECK(cr_metric_auc(s, none, 6, &v, &e) == -1);
    CR_CHECK_STR(e.msg, "AUC is undefined: no positive labels");
    cr_rng g;
    cr_rng_seed(&g, 3);
    for (int trial = 0; trial < 20; trial++) {
        enum { N = 300 };
        float rs[N], ry[N];
        for (int i = 0; i < N; i++) {
            ry[i] = cr_rng_uniform(&g) < 0.3 ? 1.0f : -1.0f;
            rs[i] = (float)(int)(cr_rng_uniform(&g) * 20) + (ry[i] > 0 ? 3 : 0); /* many ties */
        }
        CR_CHECK(cr_metric_auc(rs, ry, N, &v, &e) == 0);
        CR_CHECK_NEAR(v, brute_auc(rs, ry, N), 1e-12);
    }
}

int main(void) {
    CR_RUN(test_rmse);
    CR_RUN(test_logloss_accuracy);
    CR_RUN(test_auc);
    return cr_test_done();
}
