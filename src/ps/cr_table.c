#include "ps/cr_table.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

/* An i32 table counts: its rule has an int32 form (add, assign), and it
 * starts at an integer (zeros, or uniform(c, c): the constant c). */
static int check_i32(const cr_table_def *d, cr_err *e) {
    char list[128];
    if (!cr_optim_rule_of(&d->optim)->apply_i32)
        return cr_errf(e, "table '%s': an i32 table takes the optimizer %s, not %s", d->name,
                       cr_optim_list(list, sizeof list, 1), cr_optim_name(&d->optim));
    int constant = d->init == CR_INIT_UNIFORM && d->init_a == d->init_b && d->init_a == floor(d->init_a) &&
                   d->init_a >= INT32_MIN && d->init_a <= INT32_MAX;
    if (d->init != CR_INIT_ZEROS && !constant)
        return cr_errf(e, "table '%s': an i32 table starts at zeros or a constant integer, not a random init",
                       d->name);
    return 0;
}

/* Traffic filters (docs/filters.md): flags 0 or 1, a finite threshold >= 0
 * only on a float table whose rule adds up what is pushed. */
static int check_filters(const cr_table_def *d, cr_err *e) {
    const cr_filters_def *f = &d->filters;
    if ((f->key_cache | f->zeros | f->half) & ~1 || f->key_cache_bytes < 0)
        return cr_errf(e, "table '%s': bad filters (key_cache, zeros, half: on or off; key_cache_bytes >= 0)",
                       d->name);
    if (f->half && (d->dtype != CR_DTYPE_F32 || f->zeros || f->sigmod > 0))
        return cr_errf(e, "table '%s': filter half needs a float table without the zeros and sigmod filters", d->name);
    if (!(f->sigmod >= 0) || !isfinite(f->sigmod))
        return cr_errf(e, "table '%s': filter sigmod must be a finite threshold >= 0", d->name);
    if (f->sigmod > 0 && (d->dtype != CR_DTYPE_F32 || (cr_optim_rule_of(&d->optim)->flags & CR_OPTIM_OVERWRITES)))
        return cr_errf(e, "table '%s': filter sigmod needs a float table whose rule is not assign", d->name);
    return 0;
}

int cr_table_def_check(const cr_table_def *d, cr_err *e) {
    size_t n = strnlen(d->name, CR_TABLE_NAME_MAX);
    if (n == 0 || n >= CR_TABLE_NAME_MAX)
        return cr_errf(e, "table name must have 1 to %d characters", CR_TABLE_NAME_MAX - 1);
    if (d->sparse && (d->keys != 0 || (d->placement != CR_PLACE_HASH && d->placement != CR_PLACE_RANGE)))
        return cr_errf(e, "table '%s': a sparse table is placed by hash or range", d->name);
    if (d->keys <= 0 && !d->sparse) return cr_errf(e, "table '%s': keys must be positive", d->name);
    if (d->dim <= 0 || d->dim > (1 << 20)) return cr_errf(e, "table '%s': dim must be in [1, 1048576]", d->name);
    if (d->init == CR_INIT_UNIFORM && !(d->init_a <= d->init_b))
        return cr_errf(e, "table '%s': uniform(a, b) needs a <= b", d->name);
    if (d->init == CR_INIT_NORMAL && !(d->init_b >= 0))
        return cr_errf(e, "table '%s': normal(mean, std) needs std >= 0", d->name);
    if (d->init < CR_INIT_ZEROS || d->init > CR_INIT_NORMAL)
        return cr_errf(e, "table '%s': unknown initializer", d->name);
    if (d->placement < CR_PLACE_RANGE || d->placement > CR_PLACE_FILE)
        return cr_errf(e, "table '%s': unknown placement %d", d->name, (int)d->placement);
    if (d->dtype != CR_DTYPE_F32 && d->dtype != CR_DTYPE_I32)
        return cr_errf(e, "table '%s': unknown dtype %d (expected f32 or i32)", d->name, (int)d->dtype);
    cr_err oe;
    if (cr_optim_check(&d->optim, d->dim, &oe) < 0) return cr_errf(e, "table '%s': %s", d->name, oe.msg);
    if (check_filters(d, e) < 0) return -1;
    return d->dtype == CR_DTYPE_I32 ? check_i32(d, e) : 0;
}

const char *cr_dtype_name(int dtype) {
    return dtype == CR_DTYPE_F32 ? "f32" : dtype == CR_DTYPE_I32 ? "i32" : "?";
}

int64_t cr_table_block(int64_t keys, int nodes) {
    int64_t b = (keys + nodes - 1) / nodes;
    return b > 0 ? b : 1;
}

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void cr_table_init_row(const cr_table_def *d, int64_t k, float *out) {
    if (d->init == CR_INIT_ZEROS) {
        memset(out, 0, (size_t)d->dim * sizeof *out);
        return;
    }
    if (d->dtype == CR_DTYPE_I32) { /* checked: the constant init_a == init_b, an int32 */
        int32_t c = (int32_t)d->init_a;
        for (int32_t j = 0; j < d->dim; j++) memcpy(out + j, &c, sizeof c);
        return;
    }
    cr_rng r;
    cr_rng_seed2(&r, d->seed ^ name_hash(d->name), (uint64_t)k);
    for (int32_t j = 0; j < d->dim; j++)
        out[j] = d->init == CR_INIT_UNIFORM
                     ? (float)(d->init_a + (d->init_b - d->init_a) * cr_rng_uniform(&r))
                     : (float)(d->init_a + d->init_b * cr_rng_normal(&r));
}

int cr_shard_need_range(const cr_shard *s, const char *what, cr_err *e) {
    if (s->sp) return cr_errf(e, "table '%s' is sparse: %s needs a dense table placed by range", s->def.name, what);
    if (!s->pl) return 0;
    return cr_errf(e, "table '%s' has placement %s: %s needs placement range", s->def.name,
                   cr_place_kind_name(s->pl->kind), what);
}

cr_shard *cr_shard_new(const cr_table_def *d, int node, int nodes, cr_err *e) {
    return cr_shard_new_placed(d, node, nodes, NULL, e);
}

/* This node's ids [lo, hi) and the ids' block; a placement other than range
 * is kept in s->pl. */
/* The directory of shard s: every home key at home, mode classic. -1 with
 * a message when out of memory. */
static int dir_init(cr_shard *s, cr_err *e) {
    s->dir = cr_xcalloc(1, sizeof *s->dir);
    size_t rows = (size_t)(s->hi - s->lo);
    s->dir->own = malloc(rows * sizeof *s->dir->own + 1); /* checked: the user's table size */
    if (!s->dir->own) {
        free(s->dir);
        s->dir = NULL;
        return cr_errf(e, "table '%s': out of memory for the directory of %zu keys", s->def.name, rows);
    }
    for (size_t i = 0; i < rows; i++) s->dir->own[i] = (uint16_t)((unsigned)s->node | CR_DIR_HERE);
    atomic_init(&s->dir->mode, CR_TECH_CLASSIC);
    return 0;
}

static void dir_free(cr_shard *s) {
    cr_dir *d = s->dir;
    if (!d) return;
    for (int i = 0; i < CR_SHARD_STRIPES; i++) cr_fmap_free(&d->fs[i]);
    free(d->own);
    free(d->repl);
    free(d);
    s->dir = NULL;
}

static int place_shard(cr_shard *s, const uint32_t *owner, cr_err *e) {
    const cr_table_def *d = &s->def;
    if (d->sparse) {
        s->sp = cr_xcalloc(CR_SHARD_STRIPES, sizeof *s->sp);
        return 0;
    }
    if (d->placement == CR_PLACE_RANGE) {
        s->block = cr_table_block(d->keys, s->nodes);
        s->lo = (int64_t)s->node * s->block;
        if (s->lo > d->keys) s->lo = d->keys;
        s->hi = s->lo + s->block < d->keys ? s->lo + s->block : d->keys;
        return 0;
    }
    char what[CR_TABLE_NAME_MAX + 16];
    snprintf(what, sizeof what, "table '%s'", d->name);
    s->pl = cr_place_new(d->keys, s->nodes, d->placement, owner, what, e);
    if (!s->pl) return -1;
    s->block = s->pl->block;
    s->lo = cr_place_lo(s->pl, s->node);
    s->hi = s->lo + s->pl->cnt[s->node];
    return 0;
}

cr_shard *cr_shard_new_placed(const cr_table_def *d, int node, int nodes, const uint32_t *owner, cr_err *e) {
    cr_shard *s = cr_xcalloc(1, sizeof *s);
    s->def = *d;
    s->def.optim.i32 = d->dtype == CR_DTYPE_I32;
    s->node = node;
    s->nodes = nodes;
    if (place_shard(s, owner, e) < 0) {
        free(s);
        return NULL;
    }
    s->sdim = cr_optim_state_dim(&d->optim, d->dim);
    size_t rows = (size_t)(s->hi - s->lo), row_bytes = ((size_t)d->dim + (size_t)s->sdim) * sizeof(float);
    if (rows > (SIZE_MAX - 2) / row_bytes) { /* the byte counts below would wrap */
        cr_place_destroy(&s->pl);
        free(s);
        cr_errf(e, "table '%s': %zu rows of dim %d do not fit in memory", d->name, rows, (int)d->dim);
        return NULL;
    }
    /* checked, not cr_x*: the size is the user's table shape, and a table
     * too large for this machine is an error to report, not a crash */
    s->w = malloc(rows * (size_t)d->dim * sizeof(float) + 1);     /* checked below */
    s->state = malloc(rows * (size_t)s->sdim * sizeof(float) + 1); /* checked below */
    if (!s->w || !s->state) {
        free(s->w);
        free(s->state);
        cr_place_destroy(&s->pl);
        free(s);
        cr_errf(e, "table '%s': out of memory for %zu rows of dim %d", d->name, rows, (int)d->dim);
        return NULL;
    }
    for (int64_t k = s->lo; k < s->hi; k++) {
        cr_table_init_row(d, cr_shard_user_key(s, k), s->w + (size_t)(k - s->lo) * d->dim);
        cr_optim_init_state(&d->optim, s->state + (size_t)(k - s->lo) * s->sdim, d->dim);
    }
    for (int i = 0; i < CR_SHARD_STRIPES; i++) pthread_mutex_init(&s->locks[i], NULL);
    if (dir_init(s, e) < 0) {
        cr_shard_destroy(&s);
        return NULL;
    }
    return s;
}

void cr_shard_destroy(cr_shard **sp) {
    cr_shard *s = sp ? *sp : NULL;
    if (!s) return;
    for (int i = 0; i < CR_SHARD_STRIPES; i++) pthread_mutex_destroy(&s->locks[i]);
    dir_free(s);
    cr_shard_counts_free(s);
    free(s->reloc);
    cr_place_destroy(&s->pl);
    if (s->sp)
        for (int i = 0; i < CR_SHARD_STRIPES; i++) cr_fmap_free(&s->sp[i]);
    free(s->sp);
    free(s->w);
    free(s->state);
    free(s);
    *sp = NULL;
}

void cr_shard_counts_free(cr_shard *s) {
    cr_counts *c = atomic_exchange(&s->counts, NULL);
    if (!c) return;
    for (int i = 0; i < c->nw; i++) cr_sketch_destroy(&c->sk[i]);
    free(c);
}

static inline pthread_mutex_t *lock_of(cr_shard *s, int64_t k) {
    return &s->locks[(uint64_t)k % CR_SHARD_STRIPES];
}

/* Batches take each stripe lock once: key positions are bucketed by stripe
 * (stable counting sort, so repeated keys keep their order) and each bucket
 * is processed under its lock, one stripe at a time. Small batches lock per
 * key. Very large batches whose rows take little work (pulls, updates
 * without optimizer state: memory speed) take every stripe, in order, and
 * walk the keys in their own order: sequential reads of the update rows,
 * and two workers pushing the same rows (MF's W) take turns instead of
 * handing cache lines back and forth (tests/bench/mf.sh, 2 workers: about
 * 1.2x faster than stripe by stripe). Updates with optimizer state
 * (adagrad: about 0.3 us a row of 100) never hold every stripe: a KGE
 * worker's push of its 10,000 negatives' rows would stop the node's other
 * workers for 6 ms a batch (tests/bench/kge.sh: 2 workers ran 1.3x of 1). */
#define BATCH_MIN 128
#define BATCH_ALL 4096

static void lock_all(cr_shard *s) {
    for (int b = 0; b < CR_SHARD_STRIPES; b++) pthread_mutex_lock(&s->locks[b]);
}

static void unlock_all(cr_shard *s) {
    for (int b = CR_SHARD_STRIPES - 1; b >= 0; b--) pthread_mutex_unlock(&s->locks[b]);
}

static uint32_t *by_stripe(const int64_t *keys, int64_t n, int64_t start[CR_SHARD_STRIPES + 1]) {
    uint32_t *order = malloc((size_t)n * sizeof *order); /* checked: NULL means lock key by key */
    if (!order) return NULL;
    int64_t count[CR_SHARD_STRIPES] = {0};
    for (int64_t i = 0; i < n; i++) count[(uint64_t)keys[i] % CR_SHARD_STRIPES]++;
    start[0] = 0;
    for (int b = 0; b < CR_SHARD_STRIPES; b++) start[b + 1] = start[b] + count[b];
    int64_t fill[CR_SHARD_STRIPES];
    memcpy(fill, start, sizeof fill);
    for (int64_t i = 0; i < n; i++) order[fill[(uint64_t)keys[i] % CR_SHARD_STRIPES]++] = (uint32_t)i;
    return order;
}

/* A sparse table's stored row of key (values, then state), or NULL; add:
 * store it first, at its initial value and state, if it is not. The caller
 * holds the key's stripe lock. */
static inline float *sparse_row(cr_shard *s, int64_t key, int add) {
    cr_fmap *f = &s->sp[(uint64_t)key % CR_SHARD_STRIPES];
    float *r = cr_fmap_get(f, key);
    if (r || !add) return r;
    r = cr_fmap_add(f, key, s->def.dim + s->sdim);
    cr_table_init_row(&s->def, key, r);
    cr_optim_init_state(&s->def.optim, r + s->def.dim, s->def.dim);
    atomic_fetch_add_explicit(&s->sp_rows, 1, memory_order_relaxed);
    return r;
}

/* row_op of a sparse table: a pull of a key not stored reads its initial
 * value (nothing is added); a push stores it first. */
static void sparse_op(cr_shard *s, int64_t key, size_t i, float *out, const float *g) {
    size_t dim = (size_t)s->def.dim;
    float *r = sparse_row(s, key, g != NULL);
    if (g) cr_optim_apply(&s->def.optim, r, r + dim, g + i * dim, s->def.dim);
    else if (r) memcpy(out + i * dim, r, dim * sizeof(float));
    else cr_table_init_row(&s->def, key, out + i * dim);
}

/* One row of a pull (g == NULL: copy row `key` out to row i of out) or of a
 * push (apply update row i of g to row `key`). The caller holds the lock.
 * sparse: a constant of the caller's instance (walk_sparse or not). */
static inline __attribute__((always_inline)) void row_op(cr_shard *s, int64_t key, size_t i, float *out,
                                                        const float *g, int sparse) {
    if (sparse) {
        sparse_op(s, key, i, out, g);
        return;
    }
    size_t dim = (size_t)s->def.dim, r = (size_t)(key - s->lo);
    if (g)
        cr_optim_apply(&s->def.optim, s->w + r * dim, s->state + r * (size_t)s->sdim, g + i * dim, s->def.dim);
    else
        memcpy(out + i * dim, s->w + r * dim, dim * sizeof(float));
}

/* Run row_op over the buckets of a batch. Stripes are visited from one
 * that depends on the batch (its first key), and a stripe another thread
 * holds is passed over with a trylock and taken on a later sweep (the
 * third one waits for it): two workers walking large batches through the
 * same shard work on different stripes side by side, not in a convoy. */
static inline __attribute__((always_inline)) void walk_buckets(cr_shard *s, const int64_t *keys, const uint32_t *order,
                                                               const int64_t *start, float *out, const float *g,
                                                               int sparse) {
    int todo[CR_SHARD_STRIPES], ntodo = 0, first = (int)((uint64_t)keys[0] % CR_SHARD_STRIPES);
    for (int i = 0; i < CR_SHARD_STRIPES; i++) {
        int b = (first + i) % CR_SHARD_STRIPES;
        if (start[b] < start[b + 1]) todo[ntodo++] = b;
    }
    for (int sweep = 0; ntodo > 0; sweep++) {
        int left = 0;
        for (int i = 0; i < ntodo; i++) {
            int b = todo[i];
            pthread_mutex_t *m = &s->locks[b];
            if (sweep < 2 ? pthread_mutex_trylock(m) != 0 : pthread_mutex_lock(m) != 0) {
                todo[left++] = b;
                continue;
            }
            for (int64_t j = start[b]; j < start[b + 1]; j++) row_op(s, keys[order[j]], order[j], out, g, sparse);
            pthread_mutex_unlock(m);
        }
        ntodo = left;
    }
}

/* Run row_op over keys under the locking regime the batch calls for (all
 * stripes, stripe by stripe, or key by key). Always inlined, so pull (g a
 * constant NULL) and push each get a loop without the branch. */
static inline __attribute__((always_inline)) void walk(cr_shard *s, const int64_t *keys, int64_t n, float *out,
                                                       const float *g, int sparse) {
    if (n >= BATCH_ALL && !(g && s->sdim > 0)) {
        lock_all(s);
        for (int64_t i = 0; i < n; i++) row_op(s, keys[i], (size_t)i, out, g, sparse);
        unlock_all(s);
        return;
    }
    int64_t start[CR_SHARD_STRIPES + 1];
    uint32_t *order = n >= BATCH_MIN && n <= UINT32_MAX ? by_stripe(keys, n, start) : NULL;
    if (!order) {
        for (int64_t i = 0; i < n; i++) {
            pthread_mutex_t *m = lock_of(s, keys[i]);
            pthread_mutex_lock(m);
            row_op(s, keys[i], (size_t)i, out, g, sparse);
            pthread_mutex_unlock(m);
        }
        return;
    }
    walk_buckets(s, keys, order, start, out, g, sparse);
    free(order);
}

/* The walk of a sparse table: its own instance, so that the dense one has
 * no branch per row. */
static __attribute__((noinline)) void walk_sparse(cr_shard *s, const int64_t *keys, int64_t n, float *out,
                                                  const float *g) {
    walk(s, keys, n, out, g, 1);
}

void cr_shard_pull(cr_shard *s, const int64_t *keys, int64_t n, float *out) {
    if (s->sp) walk_sparse(s, keys, n, out, NULL);
    else walk(s, keys, n, out, NULL, 0);
}

void cr_shard_push(cr_shard *s, const int64_t *keys, int64_t n, const float *g) {
    if (s->sp) walk_sparse(s, keys, n, NULL, g);
    else walk(s, keys, n, NULL, g, 0);
}

void cr_shard_get_rows(cr_shard *s, int64_t lo, int64_t count, float *vals, float *state) {
    size_t dim = (size_t)s->def.dim, sd = (size_t)s->sdim;
    for (int64_t k = lo; k < lo + count; k++) {
        size_t r = (size_t)(k - s->lo), i = (size_t)(k - lo);
        pthread_mutex_t *m = lock_of(s, k);
        pthread_mutex_lock(m);
        memcpy(vals + i * dim, s->w + r * dim, dim * sizeof(float));
        if (state && sd) memcpy(state + i * sd, s->state + r * sd, sd * sizeof(float));
        pthread_mutex_unlock(m);
    }
}

/* A row's state from outside: as it is (load 0: the node's own moves), or
 * through the rule's cr_optim_load_state (load 1: the job's set and load). */
static void put_state(const cr_shard *s, float *dst, const float *src, int load) {
    if (load) cr_optim_load_state(&s->def.optim, dst, src, s->def.dim);
    else memcpy(dst, src, (size_t)s->sdim * sizeof(float));
}

static void set_rows(cr_shard *s, int64_t lo, int64_t count, const float *vals, const float *state, int load) {
    size_t dim = (size_t)s->def.dim, sd = (size_t)s->sdim;
    for (int64_t k = lo; k < lo + count; k++) {
        size_t r = (size_t)(k - s->lo), i = (size_t)(k - lo);
        pthread_mutex_t *m = lock_of(s, k);
        pthread_mutex_lock(m);
        memcpy(s->w + r * dim, vals + i * dim, dim * sizeof(float));
        if (sd) {
            if (state) put_state(s, s->state + r * sd, state + i * sd, load);
            else cr_optim_init_state(&s->def.optim, s->state + r * sd, s->def.dim);
        }
        pthread_mutex_unlock(m);
    }
}

void cr_shard_set_rows(cr_shard *s, int64_t lo, int64_t count, const float *vals, const float *state) {
    set_rows(s, lo, count, vals, state, 0);
}

void cr_shard_load_rows(cr_shard *s, int64_t lo, int64_t count, const float *vals, const float *state) {
    set_rows(s, lo, count, vals, state, 1);
}

void cr_shard_get_keys(cr_shard *s, const int64_t *keys, int64_t n, float *vals, float *state) {
    size_t dim = (size_t)s->def.dim, sd = (size_t)s->sdim;
    for (int64_t i = 0; i < n; i++) {
        pthread_mutex_t *m = lock_of(s, keys[i]);
        pthread_mutex_lock(m);
        float *r = sparse_row(s, keys[i], 0);
        if (r) {
            memcpy(vals + i * dim, r, dim * sizeof(float));
            if (state && sd) memcpy(state + i * sd, r + dim, sd * sizeof(float));
        } else {
            cr_table_init_row(&s->def, keys[i], vals + i * dim);
            if (state && sd) cr_optim_init_state(&s->def.optim, state + i * sd, s->def.dim);
        }
        pthread_mutex_unlock(m);
    }
}

static void set_keys(cr_shard *s, const int64_t *keys, int64_t n, const float *vals, const float *state, int load) {
    size_t dim = (size_t)s->def.dim, sd = (size_t)s->sdim;
    for (int64_t i = 0; i < n; i++) {
        pthread_mutex_t *m = lock_of(s, keys[i]);
        pthread_mutex_lock(m);
        float *r = sparse_row(s, keys[i], 1);
        memcpy(r, vals + i * dim, dim * sizeof(float));
        if (state && sd) put_state(s, r + dim, state + i * sd, load);
        pthread_mutex_unlock(m);
    }
}

void cr_shard_set_keys(cr_shard *s, const int64_t *keys, int64_t n, const float *vals, const float *state) {
    set_keys(s, keys, n, vals, state, 0);
}

void cr_shard_load_keys(cr_shard *s, const int64_t *keys, int64_t n, const float *vals, const float *state) {
    set_keys(s, keys, n, vals, state, 1);
}

int64_t cr_shard_dump(cr_shard *s, uint64_t *cursor, int64_t max, int64_t *keys, float *vals, float *state) {
    size_t dim = (size_t)s->def.dim, sd = (size_t)s->sdim;
    int64_t n = 0;
    uint64_t b = *cursor >> 40, pos = *cursor & (((uint64_t)1 << 40) - 1);
    for (; b < CR_SHARD_STRIPES && n < max; b++, pos = 0) {
        pthread_mutex_lock(&s->locks[b]);
        int64_t k;
        float *r;
        while (n < max && cr_fmap_next(&s->sp[b], &pos, &k, &r)) {
            keys[n] = k;
            memcpy(vals + (size_t)n * dim, r, dim * sizeof(float));
            if (state && sd) memcpy(state + (size_t)n * sd, r + dim, sd * sizeof(float));
            n++;
        }
        pthread_mutex_unlock(&s->locks[b]);
        if (n == max) break; /* this stripe may have more: go on from pos */
    }
    *cursor = b >= CR_SHARD_STRIPES ? CR_SHARD_DUMP_END : (b << 40) | pos;
    return n;
}

size_t cr_shard_sparse_bytes(cr_shard *s) {
    size_t bytes = 0;
    for (int b = 0; s->sp && b < CR_SHARD_STRIPES; b++) {
        pthread_mutex_lock(&s->locks[b]);
        bytes += cr_fmap_bytes(&s->sp[b]);
        pthread_mutex_unlock(&s->locks[b]);
    }
    return bytes;
}

void cr_shard_set_lr(cr_shard *s, float lr) {
    for (int i = 0; i < CR_SHARD_STRIPES; i++) pthread_mutex_lock(&s->locks[i]);
    s->def.optim.lr = lr;
    for (int i = CR_SHARD_STRIPES - 1; i >= 0; i--) pthread_mutex_unlock(&s->locks[i]);
}
