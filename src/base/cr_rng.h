#ifndef CR_RNG_H
#define CR_RNG_H
/* Deterministic pseudo-random numbers (xoshiro256**, seeded by splitmix64).
 * One cr_rng per thread; never shared. Streams derived with cr_rng_split are
 * independent of thread count, so results depend on the seed only. */

#include <stdint.h>

typedef struct cr_rng {
    uint64_t s[4];
} cr_rng;

void cr_rng_seed(cr_rng *r, uint64_t seed);
/* A generator for sub-stream `stream` of `seed` (e.g. one per key block). */
void cr_rng_seed2(cr_rng *r, uint64_t seed, uint64_t stream);
uint64_t cr_rng_u64(cr_rng *r);
/* The same step inline, for hot loops (the LDA sampler draws several
 * numbers per token). */
static inline uint64_t cr_rng_next(cr_rng *r) {
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5, t = s[1] << 17;
    uint64_t out = ((x << 7) | (x >> 57)) * 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return out;
}
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t cr_rng_below(cr_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double cr_rng_uniform(cr_rng *r);
/* Standard normal (Box-Muller, no cached second value: stateless beyond s). */
double cr_rng_normal(cr_rng *r);
/* Fisher-Yates shuffle of n uint32 / uint64 values. */
void cr_rng_shuffle_u32(cr_rng *r, uint32_t *a, uint64_t n);
void cr_rng_shuffle_u64(cr_rng *r, uint64_t *a, uint64_t n);
/* splitmix64 step: a good 64-bit mixing hash. */
uint64_t cr_mix64(uint64_t x);

#endif
