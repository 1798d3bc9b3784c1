#ifndef CR_MAT_H
#define CR_MAT_H
/* A dense float32 matrix, row-major, rows x cols, contiguous. The currency
 * between tables, kernels and evaluators: T:pull returns one, kernels and
 * evaluators take them. In Lua it is the userdata "crescent.Matrix"
 * (src/lua/l_util.c: cr_lmat_new / cr_lmat_check). */

#include <stddef.h>
#include <stdint.h>

typedef struct cr_mat {
    int64_t rows, cols;
    float *data; /* rows*cols floats; owned by whoever created the cr_mat */
} cr_mat;

static inline float *cr_mat_row(const cr_mat *m, int64_t i) { return m->data + i * m->cols; }

#endif
