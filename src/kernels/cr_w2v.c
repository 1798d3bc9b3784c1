/* word2vec kernels: see cr_w2v.h.
 *
 * Built at -O3 like cr_mf.c: the dim-wide loops (dot, two axpys per target)
 * are the whole cost, and -O2 leaves them scalar.
 *
 * The two training walks are also compiled for AVX2 (target_clones: the
 * loader picks the AVX2 copy on a CPU that has it, the baseline copy
 * elsewhere): 8-float vectors instead of 4 make skip-gram about 1.2x and
 * CBOW 1.4x faster (tests/bench/w2v_kernel). No FMA: without contraction
 * both copies do the same float operations in the same order (the dot's
 * eight partial sums are explicit), so results do not depend on the CPU. */
#pragma GCC optimize("O3")
#include "kernels/cr_w2v.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

/* The walks' helpers are forced inline, so each target clone gets them
 * compiled for its own instruction set. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define W2V_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define W2V_CLONES
#endif
#define W2V_INLINE static inline __attribute__((always_inline))

/* ---- sigmoid ---- */

static float exp_table[CR_W2V_EXP_TABLE + 1];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* The tool's table: entry i is sigma at (i / SIZE * 2 - 1) * MAX_EXP. */
static void build_table(void) {
    for (int i = 0; i <= CR_W2V_EXP_TABLE; i++) {
        double x = exp(((double)i / CR_W2V_EXP_TABLE * 2 - 1) * CR_W2V_MAX_EXP);
        exp_table[i] = (float)(x / (x + 1));
    }
}

static inline float sigm(float f, int exact) {
    if (f >= CR_W2V_MAX_EXP) return 1.0f;
    if (f <= -CR_W2V_MAX_EXP) return 0.0f;
    if (exact) return 1.0f / (1.0f + expf(-f));
    return exp_table[(int)((f + CR_W2V_MAX_EXP) * (CR_W2V_EXP_TABLE / CR_W2V_MAX_EXP / 2))];
}

float cr_w2v_sigmoid(float f, int exact) {
    pthread_once(&table_once, build_table);
    return sigm(f, exact);
}

/* log(1 + e^x), stable both ways */
static inline double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* Why eight partial sums: without -ffast-math GCC keeps a single-sum
 * reduction in order, hence scalar; eight lanes let it use vector registers
 * (about 2x on skip-gram at d = 100). The sum order differs from a plain loop
 * only by rounding. */
W2V_INLINE float dot(const float *a, const float *b, int64_t d) {
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 8 <= d; k += 8)
        for (int j = 0; j < 8; j++) s[j] += a[k + j] * b[k + j];
    float t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
    for (; k < d; k++) t += a[k] * b[k];
    return t;
}

/* ---- walk ---- */

/* The k negatives of the update for center i: a pointer into the caller's
 * rows, or buf (k entries) when drawn or wrapped around the pool. */
static const int32_t *negs_for(cr_w2v_negs *ng, int64_t i, int32_t *buf, cr_rng *rng) {
    if (ng->draw) {
        for (int j = 0; j < ng->k; j++) buf[j] = ng->draw(ng->ctx);
        return buf;
    }
    if (ng->per_position) return ng->rows + i * ng->k;
    if (ng->n == 0) return buf; /* k == 0 (checked) */
    if (ng->pick) {
        for (int j = 0; j < ng->k; j++) buf[j] = ng->rows[cr_rng_below(rng, (uint64_t)ng->n)];
        return buf;
    }
    if (ng->pos >= ng->n) ng->pos %= ng->n;
    if (ng->pos + ng->k <= ng->n) {
        const int32_t *r = ng->rows + ng->pos;
        ng->pos += ng->k;
        return r;
    }
    for (int j = 0; j < ng->k; j++) {
        buf[j] = ng->rows[ng->pos++];
        if (ng->pos == ng->n) ng->pos = 0;
    }
    return buf;
}

/* Sentence bounds [lo, hi) of sentence s. */
static inline void bounds(const cr_w2v_batch *b, int64_t s, int64_t *lo, int64_t *hi) {
    *lo = b->sent ? b->sent[s] : 0;
    *hi = b->sent ? b->sent[s + 1] : b->n;
}

/* Context window of center i in [lo, hi) after the random shrink: [*c0, *c1). */
static inline void window(const cr_w2v_params *p, cr_rng *rng, int64_t i, int64_t lo, int64_t hi, int64_t *c0,
                          int64_t *c1) {
    int64_t w = p->window - (int64_t)cr_rng_below(rng, (uint64_t)p->window);
    *c0 = i - w < lo ? lo : i - w;
    *c1 = i + w + 1 > hi ? hi : i + w + 1;
}

/* One target update (see the header); returns its loss when p->loss. */
W2V_INLINE double target(const float *h, float *v, float *e, int64_t d, float label, const cr_w2v_params *p) {
    float f = dot(h, v, d);
    float g = (label - sigm(f, p->exact)) * p->alpha;
    for (int64_t k = 0; k < d; k++) {
        e[k] += g * v[k];
        v[k] += g * h[k];
    }
    return p->loss ? softplus(label > 0 ? -(double)f : (double)f) : 0.0;
}

/* Positive out row o and the negatives against input h, error into e. */
W2V_INLINE double targets(const float *h, float *e, int32_t o, const int32_t *neg, const cr_w2v_params *p, int k,
                      cr_mat *syn1) {
    const int64_t d = syn1->cols;
    double loss = target(h, cr_mat_row(syn1, o), e, d, 1.0f, p);
    for (int j = 0; j < k; j++)
        if (neg[j] != o) loss += target(h, cr_mat_row(syn1, neg[j]), e, d, 0.0f, p);
    return loss;
}

W2V_CLONES void cr_w2v_sgns(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng, cr_mat *syn0,
                 cr_mat *syn1, cr_w2v_stats *st) {
    pthread_once(&table_once, build_table);
    const int64_t d = syn0->cols;
    float e[d > 0 ? d : 1];
    int32_t buf[CR_W2V_MAX_NEG + 1];
    double loss = 0;
    int64_t pairs = 0, nsent = b->sent ? b->nsent : 1;
    for (int64_t s = 0; s < nsent; s++) {
        int64_t lo, hi, c0, c1;
        bounds(b, s, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            window(p, rng, i, lo, hi, &c0, &c1);
            for (int64_t c = c0; c < c1; c++) {
                if (c == i) continue;
                float *h = cr_mat_row(syn0, b->in[c]);
                memset(e, 0, sizeof e);
                loss += targets(h, e, b->out[i], negs_for(ng, i, buf, rng), p, ng->k, syn1);
                for (int64_t k = 0; k < d; k++) h[k] += e[k];
                pairs++;
            }
        }
    }
    st->loss += loss;
    st->pairs += pairs;
}

/* h = mean of the context rows in [c0, c1) except i; returns their count. */
W2V_INLINE int64_t context_mean(const cr_w2v_batch *b, const cr_mat *syn0, int64_t i, int64_t c0, int64_t c1,
                            float *h) {
    const int64_t d = syn0->cols;
    int64_t cw = 0;
    memset(h, 0, (size_t)d * sizeof *h);
    for (int64_t c = c0; c < c1; c++) {
        if (c == i) continue;
        const float *x = cr_mat_row(syn0, b->in[c]);
        for (int64_t k = 0; k < d; k++) h[k] += x[k];
        cw++;
    }
    if (cw)
        for (int64_t k = 0; k < d; k++) h[k] /= (float)cw;
    return cw;
}

W2V_CLONES void cr_w2v_cbow(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng, cr_mat *syn0,
                 cr_mat *syn1, cr_w2v_stats *st) {
    pthread_once(&table_once, build_table);
    const int64_t d = syn0->cols;
    float h[d > 0 ? d : 1], e[d > 0 ? d : 1];
    int32_t buf[CR_W2V_MAX_NEG + 1];
    double loss = 0;
    int64_t pairs = 0, nsent = b->sent ? b->nsent : 1;
    for (int64_t s = 0; s < nsent; s++) {
        int64_t lo, hi, c0, c1;
        bounds(b, s, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            window(p, rng, i, lo, hi, &c0, &c1);
            if (!context_mean(b, syn0, i, c0, c1, h)) continue;
            memset(e, 0, sizeof e);
            loss += targets(h, e, b->out[i], negs_for(ng, i, buf, rng), p, ng->k, syn1);
            for (int64_t c = c0; c < c1; c++) {
                if (c == i) continue;
                float *x = cr_mat_row(syn0, b->in[c]);
                for (int64_t k = 0; k < d; k++) x[k] += e[k];
            }
            pairs++;
        }
    }
    st->loss += loss;
    st->pairs += pairs;
}

/* ---- loss and gradient (for the checks) ---- */

/* Loss of one target at (h, v) with exact sigma and no clip; dL/dh added
 * into gh (scaled by 1), dL/dv into gv. */
static double target_grad(const float *h, const float *v, float *gh, float *gv, int64_t d, int label) {
    double f = 0;
    for (int64_t k = 0; k < d; k++) f += (double)h[k] * v[k];
    double s = 1.0 / (1.0 + exp(-f)), dl = s - label;
    for (int64_t k = 0; k < d; k++) {
        gh[k] += (float)(dl * v[k]);
        gv[k] += (float)(dl * h[k]);
    }
    return softplus(label ? -f : f);
}

static double targets_grad(const float *h, float *gh, int32_t o, const int32_t *neg, int k, const cr_mat *syn1,
                           cr_mat *g1) {
    const int64_t d = syn1->cols;
    double loss = target_grad(h, cr_mat_row(syn1, o), gh, cr_mat_row(g1, o), d, 1);
    for (int j = 0; j < k; j++)
        if (neg[j] != o) loss += target_grad(h, cr_mat_row(syn1, neg[j]), gh, cr_mat_row(g1, neg[j]), d, 0);
    return loss;
}

double cr_w2v_sgns_loss_grad(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng,
                             const cr_mat *syn0, const cr_mat *syn1, cr_mat *g0, cr_mat *g1) {
    int32_t buf[CR_W2V_MAX_NEG + 1];
    double loss = 0;
    int64_t nsent = b->sent ? b->nsent : 1;
    for (int64_t s = 0; s < nsent; s++) {
        int64_t lo, hi, c0, c1;
        bounds(b, s, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            window(p, rng, i, lo, hi, &c0, &c1);
            for (int64_t c = c0; c < c1; c++)
                if (c != i)
                    loss += targets_grad(cr_mat_row(syn0, b->in[c]), cr_mat_row(g0, b->in[c]), b->out[i],
                                         negs_for(ng, i, buf, rng), ng->k, syn1, g1);
        }
    }
    return loss;
}

double cr_w2v_cbow_loss_grad(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng,
                             const cr_mat *syn0, const cr_mat *syn1, cr_mat *g0, cr_mat *g1) {
    const int64_t d = syn0->cols;
    float h[d > 0 ? d : 1], gh[d > 0 ? d : 1];
    int32_t buf[CR_W2V_MAX_NEG + 1];
    double loss = 0;
    int64_t nsent = b->sent ? b->nsent : 1;
    for (int64_t s = 0; s < nsent; s++) {
        int64_t lo, hi, c0, c1;
        bounds(b, s, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            window(p, rng, i, lo, hi, &c0, &c1);
            int64_t cw = context_mean(b, syn0, i, c0, c1, h);
            if (!cw) continue;
            memset(gh, 0, sizeof gh);
            loss += targets_grad(h, gh, b->out[i], negs_for(ng, i, buf, rng), ng->k, syn1, g1);
            for (int64_t c = c0; c < c1; c++) {
                if (c == i) continue;
                float *g = cr_mat_row(g0, b->in[c]);
                for (int64_t k = 0; k < d; k++) g[k] += gh[k] / (float)cw; /* d mean / d x = 1 / cw */
            }
        }
    }
    return loss;
}

/* ---- checks, subsampling, init ---- */

static int rows_ok(const int32_t *r, int64_t n, int64_t rows) {
    for (int64_t i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= rows) return 0;
    return 1;
}

int cr_w2v_check(const cr_w2v_batch *b, const cr_w2v_negs *ng, int64_t rows0, int64_t rows1, const char **why) {
    *why = NULL;
    if (!rows_ok(b->in, b->n, rows0)) *why = "an input row is out of range";
    else if (!rows_ok(b->out, b->n, rows1)) *why = "an output row is out of range";
    else if (ng->k < 0 || ng->k > CR_W2V_MAX_NEG) *why = "negatives per update must be in [0, 256]";
    else if (!ng->draw && !rows_ok(ng->rows, ng->n, rows1)) *why = "a negative row is out of range";
    else if (!ng->draw && ng->per_position && ng->n < b->n * ng->k) *why = "fewer negatives than tokens * k";
    else if (!ng->draw && !ng->per_position && ng->k > 0 && ng->n == 0) *why = "an empty negative pool";
    else if (b->sent) {
        if (b->nsent < 0 || b->sent[0] != 0 || b->sent[b->nsent] != b->n) *why = "sentence offsets must run 0..n";
        for (int64_t s = 0; !*why && s < b->nsent; s++)
            if (b->sent[s + 1] < b->sent[s]) *why = "sentence offsets must ascend";
    }
    return *why ? -1 : 0;
}

double cr_w2v_keep_prob(uint64_t count, uint64_t total, double t) {
    if (!(t > 0) || count == 0) return 1.0;
    double f = (double)count, tt = t * (double)total;
    double p = (sqrt(f / tt) + 1) * tt / f;
    return p < 1 ? p : 1.0;
}

int64_t cr_w2v_subsample(const int32_t *words, int64_t n, const uint64_t *counts, uint64_t total, double t,
                         cr_rng *rng, int32_t *kept) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t w = words[i];
        if (cr_rng_uniform(rng) < cr_w2v_keep_prob(counts[w], total, t)) kept[m++] = w;
    }
    return m;
}

void cr_w2v_init(cr_mat *syn0, cr_mat *syn1, cr_rng *rng) {
    if (syn0) {
        const int64_t n = syn0->rows * syn0->cols;
        for (int64_t k = 0; k < n; k++) syn0->data[k] = (float)((cr_rng_uniform(rng) - 0.5) / (double)syn0->cols);
    }
    if (syn1) memset(syn1->data, 0, (size_t)(syn1->rows * syn1->cols) * sizeof(float));
}
