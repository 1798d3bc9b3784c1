#ifndef STAT_UTIL_H
#define STAT_UTIL_H
/* Statistics for the seeded sampling tests: Pearson's chi-square against a
 * distribution and its critical values at the 0.999 level (the tests run at
 * fixed seeds, so a pass is reproducible; a broken sampler fails by orders
 * of magnitude, far beyond these bounds). And the median the benches report
 * (tests/bench). */

#include <math.h>
#include <stdlib.h>

/* Upper 0.001 quantiles of chi-square with df degrees of freedom. */
#define CHI2_999_DF9 27.877
#define CHI2_999_DF19 43.820
#define CHI2_999_DF49 85.351

/* sum over cells of (cnt - N p)^2 / (N p) for N = total; cells with p = 0
 * are skipped, but a count in one makes the statistic infinite. */
static inline double st_chi2(const long *cnt, const double *p, int n, long total) {
    double c = 0;
    for (int k = 0; k < n; k++) {
        if (p[k] <= 0) {
            if (cnt[k]) return INFINITY;
            continue;
        }
        double ex = (double)total * p[k], d = (double)cnt[k] - ex;
        c += d * d / ex;
    }
    return c;
}

/* Total variation distance between counts / total and p. */
static inline double st_tv(const long *cnt, const double *p, int n, long total) {
    double t = 0;
    for (int k = 0; k < n; k++) t += fabs((double)cnt[k] / (double)total - p[k]);
    return t / 2;
}

static inline int st_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), n > 0; sorts v in place (callers read other quantiles
 * from it afterwards). Even n: the mean of the middle two. */
static inline double st_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, st_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
