#include "base/cr_finite.h"

#include <math.h>

/* x * 0 is 0 for a finite x and NaN for a NaN or an infinity; sixteen
 * independent sums let the compiler vectorize the scan (a plain isfinite loop
 * with an early exit costs twice as much). */
int cr_all_finite(const float *v, size_t count) {
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= count; i += 16)
        for (int k = 0; k < 16; k++) acc[k] += v[i + k] * 0.0f;
    for (; i < count; i++) acc[0] += v[i] * 0.0f;
    float sum = 0;
    for (int k = 0; k < 16; k++) sum += acc[k];
    return sum == 0.0f;
}

int cr_check_finite(const float *v, size_t count, const char *what, cr_err *e) {
    if (cr_all_finite(v, count)) return 0;
    for (size_t i = 0; i < count; i++)
        if (!isfinite(v[i])) return cr_errf(e, "%s: value %zu is not finite (%g)", what, i, (double)v[i]);
    return 0;
}
