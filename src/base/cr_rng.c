#include "base/cr_rng.h"

#include <math.h>

uint64_t cr_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void cr_rng_seed(cr_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        x = cr_mix64(x);
        r->s[i] = x;
    }
}

void cr_rng_seed2(cr_rng *r, uint64_t seed, uint64_t stream) {
    cr_rng_seed(r, cr_mix64(seed) ^ cr_mix64(stream * 0x632be59bd9b4e019ULL + 1));
}


uint64_t cr_rng_u64(cr_rng *r) { return cr_rng_next(r); }

uint64_t cr_rng_below(cr_rng *r, uint64_t n) {
    /* Lemire's multiply-shift with rejection. */
    __uint128_t m = (__uint128_t)cr_rng_u64(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t t = -n % n;
        while (lo < t) {
            m = (__uint128_t)cr_rng_u64(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double cr_rng_uniform(cr_rng *r) { return (double)(cr_rng_u64(r) >> 11) * 0x1.0p-53; }

double cr_rng_normal(cr_rng *r) {
    double u1 = cr_rng_uniform(r), u2 = cr_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void cr_rng_shuffle_u32(cr_rng *r, uint32_t *a, uint64_t n) {
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = cr_rng_below(r, i);
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

void cr_rng_shuffle_u64(cr_rng *r, uint64_t *a, uint64_t n) {
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = cr_rng_below(r, i);
        uint64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}
