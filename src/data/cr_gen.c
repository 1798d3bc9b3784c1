#include "data/cr_gen.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "data/cr_mm.h"
#include "data/cr_out.h"

int cr_zipf_init(cr_zipf *z, int64_t n, double s, cr_err *e) {
    z->n = 0;
    z->cdf = NULL;
    if (n < 1) return cr_errf(e, "zipf: size must be >= 1, got %lld", (long long)n);
    if (!(s >= 0) || !isfinite(s)) return cr_errf(e, "zipf: exponent must be >= 0, got %g", s);
    z->cdf = malloc((size_t)n * sizeof *z->cdf);
    if (!z->cdf) return cr_errf(e, "zipf: out of memory for %lld values", (long long)n);
    double sum = 0;
    for (int64_t k = 0; k < n; k++) z->cdf[k] = sum += pow((double)(k + 1), -s);
    for (int64_t k = 0; k < n; k++) z->cdf[k] /= sum;
    z->cdf[n - 1] = 1.0;
    z->n = n;
    return 0;
}

int64_t cr_zipf_draw(const cr_zipf *z, cr_rng *r) {
    double u = cr_rng_uniform(r);
    int64_t lo = 0, hi = z->n - 1; /* first k with cdf[k] > u */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (z->cdf[mid] > u) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

void cr_zipf_free(cr_zipf *z) {
    free(z->cdf);
    z->cdf = NULL;
    z->n = 0;
}

/* Open-addressing set of nonzero uint64 keys with a fixed capacity (a power
 * of two at least twice the number of keys that will be inserted). */
typedef struct uset {
    uint64_t *slot, mask;
} uset;

static int uset_init(uset *s, int64_t max_keys) {
    uint64_t cap = 16;
    while (cap < (uint64_t)max_keys * 2) cap <<= 1;
    s->slot = calloc(cap, sizeof *s->slot);
    s->mask = cap - 1;
    return s->slot ? 0 : -1;
}

/* Insert key (!= 0). Returns 1 if it was new. */
static int uset_add(uset *s, uint64_t key) {
    uint64_t i = cr_mix64(key) & s->mask;
    while (s->slot[i]) {
        if (s->slot[i] == key) return 0;
        i = (i + 1) & s->mask;
    }
    s->slot[i] = key;
    return 1;
}

static int make_dir(const char *dir, cr_err *e) {
    char *p = cr_xstrdup(dir);
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c != '\0') continue;
        char keep = *c;
        *c = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            cr_errf(e, "%s: cannot create directory: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        if (!keep) break;
        *c = keep;
    }
    free(p);
    return 0;
}

static uint32_t *permutation(int64_t n, cr_rng *r) {
    uint32_t *p = cr_xmalloc((size_t)n * sizeof *p);
    for (int64_t i = 0; i < n; i++) p[i] = (uint32_t)i;
    cr_rng_shuffle_u32(r, p, (uint64_t)n);
    return p;
}

static int check_mf_opts(const cr_zipf_mf_opts *o, cr_err *e) {
    if (o->rows < 1 || o->cols < 1 || o->rows > INT32_MAX || o->cols > INT32_MAX)
        return cr_errf(e, "--rows and --cols must be in 1..2147483647");
    if (o->cells < 1) return cr_errf(e, "--cells must be >= 1");
    if (o->rank < 1 || o->rank > 100000) return cr_errf(e, "--rank must be in 1..100000");
    if ((double)o->cells > (double)o->rows * (double)o->cols)
        return cr_errf(e, "--cells %lld is more than rows x cols = %lld x %lld", (long long)o->cells,
                       (long long)o->rows, (long long)o->cols);
    if (!(o->noise >= 0) || !isfinite(o->noise)) return cr_errf(e, "--noise must be >= 0");
    if (!(o->test_fraction >= 0 && o->test_fraction < 1)) return cr_errf(e, "--test-fraction must be in [0, 1)");
    if ((double)(o->rows + o->cols) * o->rank > 1e9)
        return cr_errf(e, "(rows + cols) x rank = %.3g factor values is too many (limit 1e9)",
                       (double)(o->rows + o->cols) * o->rank);
    return 0;
}

static float *normal_factors(int64_t n, int rank, double sd, cr_rng *r) {
    float *f = cr_xmalloc((size_t)n * (size_t)rank * sizeof *f);
    for (int64_t i = 0; i < n * rank; i++) f[i] = (float)(sd * cr_rng_normal(r));
    return f;
}

/* Index ranges of a zipf table: single indices first, then ranges growing
 * by 1% (the probabilities inside one differ by about 1%). Fills lo[] with
 * range starts (lo[nb] = n) and mean[] with the mean probability; returns nb. */
static int64_t buckets(const cr_zipf *z, int64_t *lo, double *mean) {
    int64_t nb = 0, a = 0;
    while (a < z->n) {
        int64_t b = a < 1000 ? a + 1 : a + a / 100;
        if (b > z->n) b = z->n;
        double mass = z->cdf[b - 1] - (a ? z->cdf[a - 1] : 0);
        lo[nb] = a;
        mean[nb++] = mass / (double)(b - a);
        a = b;
    }
    lo[nb] = z->n;
    return nb;
}

/* Expected number of distinct cells after d independent draws of (row, col):
 * sum over cells of 1 - exp(-d p_i q_j), evaluated on the ranges above. By
 * concavity the range means slightly overestimate it, so a "too few" verdict
 * is safe. */
static double expected_distinct(const cr_zipf *zr, const cr_zipf *zc, double d) {
    size_t cap = 4000; /* ranges per axis: 1000 + log(2^31/1000)/log(1.01) < 2500 */
    int64_t *lr = cr_xmalloc(cap * sizeof *lr), *lc = cr_xmalloc(cap * sizeof *lc);
    double *mr = cr_xmalloc(cap * sizeof *mr), *mc = cr_xmalloc(cap * sizeof *mc);
    int64_t nr = buckets(zr, lr, mr), nc = buckets(zc, lc, mc);
    double sum = 0;
    for (int64_t a = 0; a < nr; a++)
        for (int64_t b = 0; b < nc; b++)
            sum += (double)(lr[a + 1] - lr[a]) * (double)(lc[b + 1] - lc[b]) * -expm1(-d * mr[a] * mc[b]);
    free(lr);
    free(lc);
    free(mr);
    free(mc);
    return sum;
}

/* Draw o->cells distinct (row, col) pairs; rows[k], cols[k] in draw order. */
static int draw_cells(const cr_zipf_mf_opts *o, uint32_t *rows, uint32_t *cols, int64_t *draws, cr_err *e) {
    cr_zipf zr, zc;
    if (cr_zipf_init(&zr, o->rows, o->exponent, e) != 0) return -1;
    if (cr_zipf_init(&zc, o->cols, o->exponent, e) != 0) {
        cr_zipf_free(&zr);
        return -1;
    }
    uset set;
    if (uset_init(&set, o->cells) != 0) {
        cr_zipf_free(&zr);
        cr_zipf_free(&zc);
        return cr_errf(e, "out of memory for %lld cells", (long long)o->cells);
    }
    cr_rng rng;
    cr_rng_seed2(&rng, o->seed, 1);
    int64_t got = 0, n = 0, limit = 50 * o->cells + 1000000, window_got = 0;
    double expect = expected_distinct(&zr, &zc, (double)limit);
    if (expect < (double)o->cells) {
        free(set.slot);
        cr_zipf_free(&zr);
        cr_zipf_free(&zc);
        return cr_errf(e,
                       "zipf(%g) over %lld x %lld gives only about %.0f distinct cells in %lld draws; "
                       "lower --cells or raise --rows/--cols",
                       o->exponent, (long long)o->rows, (long long)o->cols, expect, (long long)limit);
    }
    const int64_t window = 1 << 20;
    while (got < o->cells && n < limit) {
        int64_t i = cr_zipf_draw(&zr, &rng), j = cr_zipf_draw(&zc, &rng);
        n++;
        if (uset_add(&set, (uint64_t)i * (uint64_t)o->cols + (uint64_t)j + 1)) {
            rows[got] = (uint32_t)i;
            cols[got] = (uint32_t)j;
            got++;
        }
        /* The acceptance rate only falls, so the draws still needed are at
         * least (cells - got) / (rate of the last window): give up as soon
         * as even that exceeds the budget, rather than at the budget. */
        if (n % window == 0) {
            double rate = (double)(got - window_got) / (double)window;
            if (rate * (double)(limit - n) < (double)(o->cells - got)) break;
            window_got = got;
        }
    }
    free(set.slot);
    cr_zipf_free(&zr);
    cr_zipf_free(&zc);
    *draws = n;
    if (got < o->cells)
        return cr_errf(e,
                       "only %lld distinct cells after %lld zipf(%g) draws over %lld x %lld and too "
                       "few new ones per draw to reach --cells; lower --cells or raise --rows/--cols",
                       (long long)got, (long long)n, o->exponent, (long long)o->rows, (long long)o->cols);
    return 0;
}

int cr_gen_zipf_mf(const cr_zipf_mf_opts *o, cr_gen_stats *st, cr_err *e) {
    double t0 = cr_now();
    memset(st, 0, sizeof *st);
    if (check_mf_opts(o, e) != 0 || make_dir(o->out_dir, e) != 0) return -1;
    uint32_t *ri = malloc((size_t)o->cells * sizeof *ri), *ci = malloc((size_t)o->cells * sizeof *ci);
    if (!ri || !ci) {
        free(ri);
        free(ci);
        return cr_errf(e, "out of memory for %lld cells", (long long)o->cells);
    }
    int rc = -1;
    float *w = NULL, *h = NULL;
    uint32_t *pr = NULL, *pc = NULL;
    cr_mm_writer *train = NULL, *test = NULL;
    if (draw_cells(o, ri, ci, &st->draws, e) != 0) goto done;

    cr_rng rf, rn, rs, rp;
    cr_rng_seed2(&rf, o->seed, 2);
    cr_rng_seed2(&rn, o->seed, 3);
    cr_rng_seed2(&rs, o->seed, 4);
    cr_rng_seed2(&rp, o->seed, 5);
    double sd = 1.0 / sqrt(sqrt((double)o->rank));
    w = normal_factors(o->rows, o->rank, sd, &rf);
    h = normal_factors(o->cols, o->rank, sd, &rf);
    pr = permutation(o->rows, &rp);
    pc = permutation(o->cols, &rp);

    int64_t ntest = (int64_t)llround(o->test_fraction * (double)o->cells);
    size_t plen = strlen(o->out_dir) + 16;
    char *path = cr_xmalloc(plen);
    snprintf(path, plen, "%s/train.mmc", o->out_dir);
    train = cr_mm_writer_open(path, o->rows, o->cols, o->cells - ntest, 0, e);
    snprintf(path, plen, "%s/test.mmc", o->out_dir);
    test = train ? cr_mm_writer_open(path, o->rows, o->cols, ntest, 0, e) : NULL;
    free(path);
    if (!test) goto done;

    int64_t need = ntest; /* selection sampling: exactly ntest test cells */
    for (int64_t k = 0; k < o->cells; k++) {
        const float *a = w + (size_t)ri[k] * o->rank, *b = h + (size_t)ci[k] * o->rank;
        double v = 0;
        for (int d = 0; d < o->rank; d++) v += (double)a[d] * b[d];
        v += o->noise * cr_rng_normal(&rn);
        int to_test = (double)cr_rng_below(&rs, (uint64_t)(o->cells - k)) < (double)need;
        need -= to_test;
        cr_mm_writer_add(to_test ? test : train, pr[ri[k]], pc[ci[k]], (float)v);
    }
    if (cr_mm_writer_commit(&train, e) != 0 || cr_mm_writer_commit(&test, e) != 0) goto done;
    st->train = o->cells - ntest;
    st->test = ntest;
    rc = 0;
done:
    cr_mm_writer_abort(&train);
    cr_mm_writer_abort(&test);
    free(ri);
    free(ci);
    free(w);
    free(h);
    free(pr);
    free(pc);
    st->seconds = cr_now() - t0;
    return rc;
}

/* ---- bipartite ---- */

static int is_mm_path(const char *p) {
    size_t n = strlen(p);
    return n >= 4 && (!strcmp(p + n - 4, ".mtx") || !strcmp(p + n - 4, ".mmc") || !strcmp(p + n - 3, ".mm"));
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The cells as sorted keys row*cols+col. Uniform: geometric gaps over the
 * flattened matrix (exact Bernoulli(density) per cell, O(nnz)). Zipf:
 * round(density*rows*cols) distinct cells, rows uniform, columns zipf. */
static int bipartite_cells(const cr_bipartite_opts *o, uint64_t **out, int64_t *nnz, int64_t *draws,
                           cr_err *e) {
    cr_rng r;
    cr_rng_seed2(&r, o->seed, 11);
    double total = (double)o->rows * (double)o->cols;
    size_t cap = (size_t)(o->density * total * 1.1) + 1024, n = 0;
    uint64_t *k = malloc(cap * sizeof *k);
    if (!k) return cr_errf(e, "out of memory for %.3g cells", o->density * total);
    if (o->zipf <= 0) {
        double lq = log1p(-o->density);
        uint64_t pos = 0, end = (uint64_t)o->rows * (uint64_t)o->cols;
        for (;;) {
            if (o->density < 1) {
                double u = 1.0 - cr_rng_uniform(&r); /* (0, 1] */
                double gap = floor(log(u) / lq);
                if (gap >= (double)(end - pos)) break;
                pos += (uint64_t)gap;
            }
            if (pos >= end) break;
            if (n == cap) k = cr_xrealloc(k, (cap *= 2) * sizeof *k);
            k[n++] = pos++;
            (*draws)++;
        }
    } else {
        int64_t want = (int64_t)llround(o->density * total);
        cr_zipf zc;
        uset set;
        if (cr_zipf_init(&zc, o->cols, o->zipf, e) != 0) {
            free(k);
            return -1;
        }
        if (uset_init(&set, want) != 0) {
            free(k);
            cr_zipf_free(&zc);
            return cr_errf(e, "out of memory for %lld cells", (long long)want);
        }
        int64_t limit = 50 * want + 1000000;
        cr_zipf zr; /* uniform rows, only for the feasibility estimate */
        if (cr_zipf_init(&zr, o->rows, 0, e) != 0) {
            free(k);
            free(set.slot);
            cr_zipf_free(&zc);
            return -1;
        }
        double expect = expected_distinct(&zr, &zc, (double)limit);
        cr_zipf_free(&zr);
        if (expect < (double)want) limit = 0; /* reported below without drawing */
        while ((int64_t)n < want && *draws < limit) {
            uint64_t i = cr_rng_below(&r, (uint64_t)o->rows), j = (uint64_t)cr_zipf_draw(&zc, &r);
            (*draws)++;
            if (uset_add(&set, i * (uint64_t)o->cols + j + 1)) k[n++] = i * (uint64_t)o->cols + j;
        }
        free(set.slot);
        cr_zipf_free(&zc);
        if ((int64_t)n < want) {
            free(k);
            return cr_errf(e, "zipf(%g) columns give only about %.0f of the %lld distinct cells wanted; "
                              "lower --density or --zipf", o->zipf, expect, (long long)want);
        }
        qsort(k, n, sizeof *k, cmp_u64);
    }
    *out = k;
    *nnz = (int64_t)n;
    return 0;
}

static int write_libsvm_rows(const cr_bipartite_opts *o, const uint64_t *k, int64_t nnz, cr_err *e) {
    cr_out out;
    if (cr_out_open(&out, o->out, e) != 0) return -1;
    cr_rng r;
    cr_rng_seed2(&r, o->seed, 12);
    int64_t at = 0;
    for (int64_t i = 0; i < o->rows; i++) {
        fputs(cr_rng_below(&r, 2) ? "+1" : "-1", out.f);
        for (; at < nnz && (int64_t)(k[at] / (uint64_t)o->cols) == i; at++)
            fprintf(out.f, " %llu:1", (unsigned long long)(k[at] % (uint64_t)o->cols) + 1);
        fputc('\n', out.f);
    }
    return cr_out_commit(&out, e);
}

int cr_gen_bipartite(const cr_bipartite_opts *o, cr_gen_stats *st, cr_err *e) {
    double t0 = cr_now();
    memset(st, 0, sizeof *st);
    if (o->rows < 1 || o->cols < 1 || o->rows > INT32_MAX || o->cols > INT32_MAX)
        return cr_errf(e, "--rows and --cols must be in 1..2147483647");
    if (!(o->density > 0 && o->density <= 1)) return cr_errf(e, "density must be in (0, 1]");
    if (!(o->zipf >= 0) || !isfinite(o->zipf)) return cr_errf(e, "--zipf must be >= 0");
    if (o->density * (double)o->rows * (double)o->cols > 2e9)
        return cr_errf(e, "%.3g nonzeros is too many (limit 2e9)", o->density * (double)o->rows * (double)o->cols);
    uint64_t *k = NULL;
    int64_t nnz = 0;
    if (bipartite_cells(o, &k, &nnz, &st->draws, e) != 0) return -1;
    int rc;
    if (is_mm_path(o->out)) {
        cr_mm_writer *w = cr_mm_writer_open(o->out, o->rows, o->cols, nnz, 1, e);
        rc = w ? 0 : -1;
        for (int64_t i = 0; w && i < nnz; i++)
            cr_mm_writer_add(w, (int64_t)(k[i] / (uint64_t)o->cols), (int64_t)(k[i] % (uint64_t)o->cols), 1);
        if (w) rc = cr_mm_writer_commit(&w, e);
    } else {
        rc = write_libsvm_rows(o, k, nnz, e);
    }
    free(k);
    st->train = nnz;
    st->seconds = cr_now() - t0;
    return rc;
}

/* ---- zipf-text ---- */

int cr_gen_zipf_text(const cr_zipf_text_opts *o, cr_gen_stats *st, cr_err *e) {
    double t0 = cr_now();
    memset(st, 0, sizeof *st);
    if (o->tokens < 1) return cr_errf(e, "--tokens must be >= 1");
    if (o->vocab < 1 || o->vocab > INT32_MAX) return cr_errf(e, "--vocab must be in 1..2147483647");
    if (o->line_tokens < 1) return cr_errf(e, "--line-tokens must be >= 1");
    cr_zipf z;
    if (cr_zipf_init(&z, o->vocab, o->exponent, e) != 0) return -1;
    cr_out out;
    if (cr_out_open(&out, o->out, e) != 0) {
        cr_zipf_free(&z);
        return -1;
    }
    cr_rng r;
    cr_rng_seed2(&r, o->seed, 21);
    for (int64_t t = 0; t < o->tokens; t++) {
        int last = (t + 1) % o->line_tokens == 0 || t + 1 == o->tokens;
        fprintf(out.f, "w%lld%c", (long long)cr_zipf_draw(&z, &r) + 1, last ? '\n' : ' ');
    }
    cr_zipf_free(&z);
    st->train = st->draws = o->tokens;
    int rc = cr_out_commit(&out, e);
    st->seconds = cr_now() - t0;
    return rc;
}
