#include "ps/cr_pfilter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_half.h"

struct cr_pfilter {
    int tables, W;
    cr_filter_stats *st;  /* per table */
    cr_kcache **in;       /* [table * W + worker], server thread only; NULL until used */
};

struct cr_pfilter_w {
    int nodes, tables;
    cr_kcache **out;      /* [table * nodes + node]; NULL until used */
    cr_sigmod **sig;      /* per table; NULL until used */
    int64_t *k;           /* scratch of cr_pfilter_sigmod */
    float *v;
    size_t kcap, vcap;
};

static size_t kc_cap(const cr_table_def *d) {
    return d->filters.key_cache_bytes > 0 ? (size_t)d->filters.key_cache_bytes : CR_KC_DEFAULT_CAP;
}

cr_pfilter *cr_pfilter_new(int tables, int W) {
    cr_pfilter *f = cr_xcalloc(1, sizeof *f);
    f->tables = tables;
    f->W = W;
    f->st = cr_xcalloc((size_t)tables, sizeof *f->st);
    f->in = cr_xcalloc((size_t)tables * (size_t)W + 1, sizeof *f->in);
    return f;
}

void cr_pfilter_destroy(cr_pfilter **fp) {
    cr_pfilter *f = fp ? *fp : NULL;
    if (!f) return;
    for (size_t i = 0; i < (size_t)f->tables * (size_t)f->W; i++) cr_kcache_destroy(&f->in[i]);
    free(f->in);
    free(f->st);
    free(f);
    *fp = NULL;
}

cr_filter_stats *cr_pfilter_stats(cr_pfilter *f, int t) { return &f->st[t]; }

#define ROOM_PER_TABLE 1000

size_t cr_pfilter_stats_room(int ntables) { return 32 + (size_t)ntables * (ROOM_PER_TABLE + CR_TABLE_NAME_MAX * 4); }

/* The table name as a Lua string literal body (names are short, but may
 * hold a quote or a backslash). */
static void lua_quote(const char *s, char *out, size_t cap) {
    size_t j = 0;
    for (; *s && j + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') out[j++] = '\\', out[j++] = (char)c;
        else if (c < 32 || c == 127) j += (size_t)snprintf(out + j, cap - j, "\\%03d", c);
        else out[j++] = (char)c;
    }
    out[j] = '\0';
}

size_t cr_pfilter_stats_put(cr_pfilter *f, cr_shard *const *tables, int ntables, char *b, size_t cap) {
    size_t len = 0;
    int r = snprintf(b, cap, ",filters={");
    if (r < 0 || (size_t)r >= cap) return 0;
    len = (size_t)r;
    for (int t = 0; t < ntables && t < f->tables; t++) {
        const cr_table_def *d = &tables[t]->def;
        int kc = d->filters.key_cache, z = d->filters.zeros, sg = d->filters.sigmod > 0, zl = d->compress != 0,
            hf = d->filters.half;
        if (!(kc || z || sg || zl || hf)) continue;
        char name[CR_TABLE_NAME_MAX * 4 + 8];
        lua_quote(d->name, name, sizeof name);
        r = snprintf(b + len, cap - len, "[\"%s\"]={", name);
        if (r < 0 || (size_t)r >= cap - len) break;
        len += (size_t)r;
        r = cr_filter_stats_put(&f->st[t], kc, z, sg, zl, hf, b + len, cap - len);
        if (r < 0 || (size_t)r >= cap - len) break;
        len += (size_t)r;
        r = snprintf(b + len, cap - len, "},");
        if (r < 0 || (size_t)r >= cap - len) break;
        len += (size_t)r;
    }
    r = snprintf(b + len, cap - len, "}");
    if (r > 0 && (size_t)r < cap - len) len += (size_t)r;
    return len;
}

cr_pfilter_w *cr_pfilter_w_new(int nodes, int tables) {
    cr_pfilter_w *w = cr_xcalloc(1, sizeof *w);
    w->nodes = nodes;
    w->tables = tables;
    w->out = cr_xcalloc((size_t)tables * (size_t)nodes + 1, sizeof *w->out);
    w->sig = cr_xcalloc((size_t)tables + 1, sizeof *w->sig);
    return w;
}

void cr_pfilter_w_destroy(cr_pfilter_w **wp) {
    cr_pfilter_w *w = wp ? *wp : NULL;
    if (!w) return;
    for (size_t i = 0; i < (size_t)w->tables * (size_t)w->nodes; i++) cr_kcache_destroy(&w->out[i]);
    for (int t = 0; t < w->tables; t++) cr_sigmod_destroy(&w->sig[t]);
    free(w->out);
    free(w->sig);
    free(w->k);
    free(w->v);
    free(w);
    *wp = NULL;
}

static inline void add(atomic_llong *c, long long v) { atomic_fetch_add_explicit(c, v, memory_order_relaxed); }

int cr_pfilter_keys_out(cr_pfilter_w *w, cr_pfilter *f, const cr_table_def *d, int node, cr_dhdr *h,
                        const int64_t *keys, unsigned char frame[CR_KC_FRAME]) {
    if (!d->filters.key_cache || h->table >= w->tables || node < 0 || node >= w->nodes) return 0;
    cr_kcache **c = &w->out[(size_t)h->table * (size_t)w->nodes + (size_t)node];
    if (!*c) *c = cr_kcache_new(kc_cap(d));
    cr_kc_out o;
    cr_kcache_send(*c, keys, h->nkeys, &o);
    cr_filter_stats *s = &f->st[h->table];
    long long before = h->nkeys * (long long)sizeof(int64_t);
    add(&s->kc_lists, 1);
    add(&s->kc_before, before);
    add(&s->kc_collisions, o.collision);
    add(&s->kc_evicted, o.evicted);
    if (o.action == CR_KC_FULL) {
        add(&s->kc_after, before);
        return 0;
    }
    h->aux = (int32_t)o.serial;
    if (o.action == CR_KC_STORE) {
        h->flags |= CR_D_KSTORE | (o.reset ? CR_D_KRESET : 0);
        add(&s->kc_stored, 1);
        add(&s->kc_after, before);
        return 0;
    }
    h->flags |= CR_D_KHASH;
    cr_kcache_frame(cr_kcache_hash(keys, h->nkeys), h->nkeys, frame);
    add(&s->kc_hashed, 1);
    add(&s->kc_after, CR_KC_FRAME);
    return 1;
}

void *cr_pfilter_vals_out(cr_pfilter *f, const cr_table_def *d, cr_dhdr *h, const void *vals, size_t *vb) {
    if (!d->filters.zeros || !vals || *vb < 8 || h->table >= f->tables) return NULL;
    size_t outn, nnz, n = *vb / sizeof(float);
    void *z = cr_zeros_encode(vals, n, &outn, &nnz);
    cr_filter_stats *s = &f->st[h->table];
    add(&s->z_frames, 1);
    add(&s->z_before, (long long)*vb);
    add(&s->z_zeros, (long long)(n - nnz));
    if (!z) {
        add(&s->z_after, (long long)*vb);
        return NULL;
    }
    add(&s->z_encoded, 1);
    add(&s->z_after, (long long)outn);
    h->flags |= CR_D_ZEROS;
    h->raw_bytes = (int64_t)outn;
    *vb = outn;
    return z;
}

void *cr_pfilter_half_out(cr_pfilter *f, const cr_table_def *d, cr_dhdr *h, const float *vals, size_t *vb) {
    if (!d->filters.half || !vals || h->table >= f->tables) return NULL;
    size_t n = *vb / sizeof(float);
    uint16_t *out = cr_xmalloc(n * sizeof *out + 1);
    cr_filter_stats *s = &f->st[h->table];
    if (cr_half_from_f32(vals, out, n)) { /* a value halves cannot hold: the frame goes as floats */
        free(out);
        add(&s->h_overflows, 1);
        return NULL;
    }
    add(&s->h_frames, 1);
    add(&s->h_before, (long long)*vb);
    add(&s->h_after, (long long)(n * sizeof *out));
    h->flags |= CR_D_HALF;
    *vb = n * sizeof *out;
    h->raw_bytes = (int64_t)*vb;
    return out;
}

void cr_pfilter_count_zlib(cr_pfilter *f, int table, size_t before, size_t after) {
    if (table < 0 || table >= f->tables) return;
    add(&f->st[table].zl_frames, 1);
    add(&f->st[table].zl_before, (long long)before);
    add(&f->st[table].zl_after, (long long)after);
}

const int64_t *cr_pfilter_keys_in(cr_pfilter *f, const cr_table_def *d, const cr_dhdr *h, const void *frame,
                                  size_t fn, cr_err *e) {
    int hashed = (h->flags & CR_D_KHASH) != 0;
    if (h->worker < 0 || h->worker >= f->W || h->table >= f->tables) {
        cr_errf(e, "key cache: unknown worker %d or table %d", h->worker, h->table);
        return NULL;
    }
    if (fn != (hashed ? CR_KC_FRAME : (size_t)h->nkeys * sizeof(int64_t))) {
        cr_errf(e, "malformed request: keys frame of %zu bytes for %lld keys%s", fn, (long long)h->nkeys,
                hashed ? " (a key cache hash)" : "");
        return NULL;
    }
    cr_kcache **c = &f->in[(size_t)h->table * (size_t)f->W + (size_t)h->worker];
    if (!*c) *c = cr_kcache_new(kc_cap(d));
    if (hashed) {
        const int64_t *k = cr_kcache_find(*c, frame, h->nkeys, (uint32_t)h->aux, e);
        if (!k) add(&f->st[h->table].kc_misses, 1);
        return k;
    }
    /* a stored list: cached (aligned copy), then read from the cache */
    int64_t *tmp = NULL;
    const int64_t *keys = frame;
    if ((uintptr_t)frame % sizeof(int64_t)) {
        tmp = cr_xmalloc(fn + 1);
        memcpy(tmp, frame, fn);
        keys = tmp;
    }
    int resync = 0;
    const int64_t *k = cr_kcache_store(*c, keys, h->nkeys, (uint32_t)h->aux, (h->flags & CR_D_KRESET) != 0, &resync);
    free(tmp);
    if (resync) add(&f->st[h->table].kc_misses, 1); /* earlier lists were lost: this one is whole */
    if (!k) cr_errf(e, "key cache: a list of %lld keys cannot be cached (cap %zu bytes)", (long long)h->nkeys, kc_cap(d));
    return k;
}

/* The sigmod rule with rows of local keys passed through unchanged. */
typedef struct sigctx {
    cr_sigmod *sig;
    cr_pfilter_owner local;
    void *ctx;
    int keep;                   /* rows with nothing to send go as zeros */
    int64_t rows, held, empty;
} sigctx;

static int sig_rule(void *arg, int64_t key, const float *g, float *out, int dim) {
    sigctx *c = arg;
    if (c->local(c->ctx, key)) {
        memcpy(out, g, (size_t)dim * sizeof *g);
        return dim;
    }
    c->rows++;
    int kept = cr_sigmod_rule(c->sig, key, g, out, dim);
    c->held += dim - kept;
    c->empty += kept == 0;
    return kept ? kept : c->keep; /* out is all zeros then */
}

static void scratch(cr_pfilter_w *w, int64_t n, int dim) {
    size_t vn = (size_t)n * (size_t)dim;
    if ((size_t)n > w->kcap) {
        free(w->k);
        w->kcap = (size_t)n;
        w->k = cr_xmalloc(w->kcap * sizeof *w->k);
    }
    if (vn > w->vcap) {
        free(w->v);
        w->vcap = vn;
        w->v = cr_xmalloc(w->vcap * sizeof *w->v);
    }
}

int64_t cr_pfilter_sigmod(cr_pfilter_w *w, cr_pfilter *f, const cr_table_def *d, int tid, const int64_t *keys,
                          int64_t n, const float *vals, cr_pfilter_owner local, void *ctx, const int64_t **okeys,
                          const float **ovals) {
    if (!w->sig[tid]) w->sig[tid] = cr_sigmod_new(d->dim, (float)d->filters.sigmod);
    scratch(w, n, d->dim);
    /* with key caching and zero removal on, a row held back whole still goes,
     * as zeros: the push keeps the key list of the pull before it (a cache
     * hit: 12 bytes) and zero removal takes the zeros out (1 bit a value) */
    sigctx c = {.sig = w->sig[tid], .local = local, .ctx = ctx, .keep = d->filters.key_cache && d->filters.zeros};
    int64_t coords, m = cr_filter_rows(sig_rule, &c, keys, n, vals, d->dim, w->k, w->v, &coords);
    long long rowb = (long long)sizeof(int64_t) + d->dim * (long long)sizeof(float);
    int64_t passed = m - (n - c.rows); /* remote rows sent */
    cr_filter_stats *s = &f->st[tid];
    add(&s->sg_rows, c.rows);
    add(&s->sg_dropped, c.empty);
    add(&s->sg_coords_held, c.held);
    add(&s->sg_before, c.rows * rowb);
    add(&s->sg_after, passed * rowb);
    *okeys = w->k;
    *ovals = w->v;
    return m;
}

int64_t cr_pfilter_sigmod_flush(cr_pfilter_w *w, cr_pfilter *f, const cr_table_def *d, int tid, int64_t **keys,
                                float **vals) {
    *keys = NULL;
    *vals = NULL;
    if (tid < 0 || tid >= w->tables || !w->sig[tid]) return 0;
    int64_t m = cr_sigmod_flush(w->sig[tid], keys, vals);
    add(&f->st[tid].sg_flushed, m);
    add(&f->st[tid].sg_after, m * ((long long)sizeof(int64_t) + d->dim * (long long)sizeof(float)));
    return m;
}

int cr_pfilter_sigmod_tables(const cr_pfilter_w *w, int *ids, int cap) {
    int k = 0;
    for (int t = 0; t < w->tables && k < cap; t++)
        if (w->sig[t]) ids[k++] = t;
    return k;
}
