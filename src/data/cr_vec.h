#ifndef CR_VEC_H
#define CR_VEC_H
/* Growable arrays used while a reader does not yet know the final size.
 * Growth doubles, so appends are amortized O(1); the reader hands the final
 * array to its caller (who frees it) or frees it on error. */

#include <stdint.h>
#include <stdlib.h>

#include "base/cr_alloc.h"

typedef struct cr_i64v { int64_t *a; int64_t n, cap; } cr_i64v;
typedef struct cr_f32v { float *a; int64_t n, cap; } cr_f32v;

static inline void cr_i64v_push(cr_i64v *v, int64_t x) {
    if (v->n == v->cap) v->a = cr_xrealloc(v->a, (size_t)(v->cap = v->cap ? v->cap * 2 : 1024) * sizeof *v->a);
    v->a[v->n++] = x;
}
static inline void cr_f32v_push(cr_f32v *v, float x) {
    if (v->n == v->cap) v->a = cr_xrealloc(v->a, (size_t)(v->cap = v->cap ? v->cap * 2 : 1024) * sizeof *v->a);
    v->a[v->n++] = x;
}

#endif
