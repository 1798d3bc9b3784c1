#include "base/cr_alias.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

/* Check every weight of [lo, hi) and sum them. Why refuse rather than clamp:
 * a NaN or negative weight is a bug upstream (a count that overflowed, a
 * log taken of zero), and sampling around it would hide it. */
static int check_weights(const double *w, uint64_t lo, uint64_t hi, uint64_t n, double *total, cr_err *e) {
    double sum = 0;
    for (uint64_t k = lo; k < hi; k++) {
        double x = w[k];
        if (isnan(x)) return cr_errf(e, "weight of key %llu is not a number", (unsigned long long)k);
        if (isinf(x)) return cr_errf(e, "weight of key %llu is infinite", (unsigned long long)k);
        if (x < 0) return cr_errf(e, "weight of key %llu is negative (%g)", (unsigned long long)k, x);
        sum += x;
    }
    if (sum == 0) {
        if (lo == 0 && hi == n) return cr_errf(e, "all weights are zero");
        return cr_errf(e, "all weights in keys [%llu, %llu) are zero", (unsigned long long)lo,
                       (unsigned long long)hi);
    }
    if (!isfinite(sum)) return cr_errf(e, "sum of weights is not finite");
    *total = sum;
    return 0;
}

/* Vose's method. prob first holds the scaled weights q[i] = m * p[i]
 * (mean 1); a slot with q < 1 ("small") is topped up from one with q >= 1
 * ("large"), which becomes its alias and gives away 1 - q. Both work lists
 * share one scratch array: small grows up from 0, large down from m; a key
 * is in at most one list, so they never meet. Slots left when one list runs
 * dry are 1 up to rounding and keep themselves (prob 1). */
static void vose(double *prob, uint64_t *alias, uint64_t m, uint64_t *work) {
    uint64_t ns = 0, lb = m;
    for (uint64_t i = 0; i < m; i++) {
        alias[i] = i;
        if (prob[i] < 1.0) work[ns++] = i;
        else work[--lb] = i;
    }
    while (ns > 0 && lb < m) {
        uint64_t s = work[--ns], l = work[lb];
        alias[s] = l;
        prob[l] = (prob[l] + prob[s]) - 1.0;
        if (prob[l] < 1.0) {
            lb++;
            work[ns++] = l;
        }
    }
    while (ns > 0) prob[work[--ns]] = 1.0;
    while (lb < m) prob[work[lb++]] = 1.0;
}

int cr_alias_build_range(cr_alias *a, const double *w, uint64_t n, uint64_t lo, uint64_t hi, cr_err *e) {
    memset(a, 0, sizeof *a);
    if (n == 0) return cr_errf(e, "no keys to sample from (n = 0)");
    if (lo >= hi || hi > n)
        return cr_errf(e, "bad key range [%llu, %llu) for %llu keys", (unsigned long long)lo,
                       (unsigned long long)hi, (unsigned long long)n);
    uint64_t m = hi - lo;
    double total = (double)m;
    if (w && check_weights(w, lo, hi, n, &total, e)) return -1;
    if (w && m > SIZE_MAX / sizeof(double))
        return cr_errf(e, "too many keys for an alias table (%llu)", (unsigned long long)m);
    a->lo = lo;
    a->m = m;
    a->total = total;
    if (!w) return 0;
    a->prob = cr_xmalloc(m * sizeof *a->prob);
    a->alias = cr_xmalloc(m * sizeof *a->alias);
    uint64_t *work = cr_xmalloc(m * sizeof *work);
    for (uint64_t i = 0; i < m; i++) a->prob[i] = w[lo + i] / total * (double)m;
    vose(a->prob, a->alias, m, work);
    free(work);
    return 0;
}

int cr_alias_build(cr_alias *a, const double *w, uint64_t n, cr_err *e) {
    return cr_alias_build_range(a, w, n, 0, n, e);
}

double cr_alias_p(const cr_alias *a, uint64_t k) {
    if (a->m == 0 || k < a->lo || k - a->lo >= a->m) return 0;
    uint64_t i = k - a->lo;
    if (!a->prob) return 1.0 / (double)a->m;
    double p = a->prob[i];
    for (uint64_t j = 0; j < a->m; j++)
        if (j != i && a->alias[j] == i) p += 1.0 - a->prob[j];
    return p / (double)a->m;
}

void cr_alias_free(cr_alias *a) {
    free(a->prob);
    free(a->alias);
    memset(a, 0, sizeof *a);
}
