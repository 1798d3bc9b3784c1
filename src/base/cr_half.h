#ifndef CR_HALF_H
#define CR_HALF_H
/* IEEE 754 half precision (binary16) conversions for value frames on the
 * wire (docs/filters.md, "Half-precision values"). Round to nearest even;
 * a value beyond the half range (|x| > 65504) becomes an infinity, which a
 * receiver's finiteness check refuses; NaN stays NaN. Uses the F16C
 * instructions when the CPU has them (checked once, at run time), else a
 * portable loop with the same results. */

#include <stddef.h>
#include <stdint.h>

/* n floats to halves; returns 0 when every half is finite, else a positive
 * number (an infinity or NaN in, or a value beyond the half range: the
 * frame must go as floats). */
size_t cr_half_from_f32(const float *in, uint16_t *out, size_t n);
void cr_half_to_f32(const uint16_t *in, float *out, size_t n);
/* The portable loops (tests compare them with the dispatched ones). */
size_t cr_half_from_f32_c(const float *in, uint16_t *out, size_t n);
void cr_half_to_f32_c(const uint16_t *in, float *out, size_t n);

#endif
