#include "base/cr_half.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CR_HALF_X86 1
#endif

static inline uint16_t one_from(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or NaN (NaN keeps a quiet payload bit) */
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds above 65504: infinity */
    if (ax < 0x38800000u) {                                    /* below the smallest normal half: subnormal or 0 */
        if (ax < 0x33000000u) return (uint16_t)sign;           /* under half the smallest subnormal: 0 */
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(ax >> 23) ; /* 113 - e + 13 */
        uint32_t v = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (v & 1u))) v++;
        return (uint16_t)(sign | v);
    }
    uint32_t v = ((ax - 0x38000000u) >> 13), rem = ax & 0x1fffu; /* rebias 127 -> 15 */
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) v++;
    return (uint16_t)(sign | v);
}

static inline float one_to(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0x1f) x = sign | 0x7f800000u | (m << 13);
    else if (e) x = sign | ((e + 112u) << 23) | (m << 13);
    else if (!m) x = sign;
    else { /* subnormal: normalise */
        int s = 0;
        while (!(m & 0x400u)) {
            m <<= 1;
            s++;
        }
        x = sign | ((uint32_t)(113 - s) << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

size_t cr_half_from_f32_c(const float *in, uint16_t *out, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = one_from(in[i]);
        bad += (out[i] & 0x7c00u) == 0x7c00u;
    }
    return bad;
}

void cr_half_to_f32_c(const uint16_t *in, float *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = one_to(in[i]);
}

#ifdef CR_HALF_X86
__attribute__((target("avx,f16c"))) static size_t from_f16c(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    const __m128i ex = _mm_set1_epi16(0x7c00);
    __m128i any = _mm_setzero_si128();
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(out + i), h);
        any = _mm_or_si128(any, _mm_cmpeq_epi16(_mm_and_si128(h, ex), ex));
    }
    size_t bad = _mm_movemask_epi8(any) ? 1 : 0; /* at least one: the exact count is not needed */
    return bad + cr_half_from_f32_c(in + i, out + i, n - i);
}

__attribute__((target("avx,f16c"))) static void to_f16c(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    for (; i < n; i++) out[i] = one_to(in[i]);
}

/* libgcc fills the CPU model before main, so this is two loads. */
static int has_f16c(void) { return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx"); }
#endif

size_t cr_half_from_f32(const float *in, uint16_t *out, size_t n) {
#ifdef CR_HALF_X86
    if (has_f16c()) return from_f16c(in, out, n);
#endif
    return cr_half_from_f32_c(in, out, n);
}

void cr_half_to_f32(const uint16_t *in, float *out, size_t n) {
#ifdef CR_HALF_X86
    if (has_f16c()) {
        to_f16c(in, out, n);
        return;
    }
#endif
    cr_half_to_f32_c(in, out, n);
}
