#ifndef GRAD_UTIL_H
#define GRAD_UTIL_H
/* The finite-difference gradient check every kernel test uses (STYLE.md:
 * "a gradient check for every kernel", as Torch's nn.Jacobian). */
#include <math.h>
#include <stdint.h>

/* The loss at the parameters as they are now (ctx: the test's state). */
typedef double (*fd_loss_fn)(void *ctx);

/* Central differences (L(p+h) - L(p-h)) / 2h for each of the n parameters
 * at p against the analytic gradient g; each parameter is restored. Returns
 * the worst relative error |fd - g| / (1 + |g|) and adds sum |g| to *norm
 * (norm may be NULL). */
static inline double fd_worst(float *p, const float *g, int64_t n, float h, fd_loss_fn loss, void *ctx,
                              double *norm) {
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        float keep = p[k];
        p[k] = keep + h;
        double lp = loss(ctx);
        p[k] = keep - h;
        double lm = loss(ctx);
        p[k] = keep;
        double fd = (lp - lm) / (2.0 * h), err = fabs(fd - g[k]) / (1.0 + fabs(g[k]));
        if (err > worst) worst = err;
        if (norm) *norm += fabs(g[k]);
    }
    return worst;
}

#endif
