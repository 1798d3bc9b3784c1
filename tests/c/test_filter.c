/* Traffic filters (src/net/cr_filter.h, src/ps/cr_pfilter.h): each filter's
 * exact effect on hand-built cases, then on the wire between two nodes in
 * one process: a repeated key list costs header + 12 bytes instead of
 * header + 8n, a zero-removed push its exact encoded size, sigmod holds
 * 0.3 + 0.3 back until it exceeds 0.5, and values stay exact. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/cr_half.h"
#include "cr_test.h"
#include "net/cr_filter.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_node_impl.h"
#include "ps/cr_wclient.h"

/* ---------- key cache ---------- */

static void test_kcache_repeat(void) {
    cr_kcache *snd = cr_kcache_new(1 << 16), *rcv = cr_kcache_new(1 << 16);
    int64_t a[40];
    for (int i = 0; i < 40; i++) a[i] = 1000 + 7 * i;
    cr_kc_out o;
    cr_kcache_send(snd, a, 40, &o);
    CR_CHECK(o.action == CR_KC_STORE && o.serial == 1 && o.reset == 1 && !o.collision);
    int resync;
    const int64_t *k = cr_kcache_store(rcv, a, 40, o.serial, o.reset, &resync);
    CR_CHECK(k && !memcmp(k, a, sizeof a) && !resync);
    cr_kcache_send(snd, a, 40, &o);
    CR_CHECK(o.action == CR_KC_HASH && o.serial == 1 && !o.reset);
    unsigned char f[CR_KC_FRAME];
    cr_kcache_frame(cr_kcache_hash(a, 40), 40, f);
    cr_err e;
    k = cr_kcache_find(rcv, f, 40, o.serial, &e);
    CR_CHECK(k && !memcmp(k, a, sizeof a));
    /* a wrong serial or length is a miss, never another list */
    CR_CHECK(cr_kcache_find(rcv, f, 40, 2, &e) == NULL && strstr(e.msg, "key cache miss"));
    CR_CHECK(cr_kcache_find(rcv, f, 39, 1, &e) == NULL);
    /* one key: 8 bytes are less than a hash frame, sent in full, uncached */
    cr_kcache_send(snd, a, 1, &o);
    CR_CHECK(o.action == CR_KC_FULL);
    CR_CHECK(cr_kcache_count(snd) == 1 && cr_kcache_bytes(snd) == 40 * 8 + CR_KC_ENTRY_BYTES);
    cr_kcache_destroy(&snd);
    cr_kcache_destroy(&rcv);
    CR_CHECK(snd == NULL);
}

/* Two different lists forced under one hash: the sender's memcmp sees
 * it, the second goes out in full and replaces the first on both sides. */
static void test_kcache_collision(void) {
    cr_kcache *snd = cr_kcache_new(1 << 16), *rcv = cr_kcache_new(1 << 16);
    int64_t a[5] = {1, 2, 3, 4, 5}, b[5] = {1, 2, 3, 4, 6};
    uint64_t h = 42;
    cr_kc_out o;
    int resync;
    cr_kcache_send_h(snd, a, 5, h, &o);
    CR_CHECK(o.action == CR_KC_STORE && !o.collision);
    cr_kcache_store(rcv, a, 5, o.serial, o.reset, &resync);
    cr_kcache_send_h(snd, b, 5, h, &o); /* same hash, other keys */
    CR_CHECK(o.action == CR_KC_STORE && o.collision == 1 && o.serial == 2);
    cr_kcache_send_h(snd, b, 5, h, &o); /* now b is the one cached under h */
    CR_CHECK(o.action == CR_KC_HASH && o.serial == 2);
    cr_kcache_send_h(snd, a, 5, h, &o); /* and a collides again: full */
    CR_CHECK(o.action == CR_KC_STORE && o.collision == 1 && o.serial == 3);
    CR_CHECK(cr_kcache_count(snd) == 1);
    /* the receiver, having missed store 2, cannot answer list 2 with list 1 */
    unsigned char f[CR_KC_FRAME];
    cr_kcache_frame(cr_kcache_hash(a, 5), 5, f);
    cr_err e;
    CR_CHECK(cr_kcache_find(rcv, f, 5, 2, &e) == NULL);
    /* a store out of sequence resynchronises: older lists are dropped */
    const int64_t *k = cr_kcache_store(rcv, a, 5, 3, 0, &resync);
    CR_CHECK(k && resync == 1 && cr_kcache_count(rcv) == 1);
    cr_kcache_destroy(&snd);
    cr_kcache_destroy(&rcv);
}

/* Random lists through a small cache (evictions all the time): the
 * receiver, running the same steps, answers every hash with exactly the
 * sender's list, and neither side goes over its cap. */
static void test_kcache_lockstep(void) {
    size_t cap = 4096;
    cr_kcache *snd = cr_kcache_new(cap), *rcv = cr_kcache_new(cap);
    int64_t lists[12][30];
    for (int l = 0; l < 12; l++)
        for (int i = 0; i < 30; i++) lists[l][i] = l * 1000 + i * (l + 1);
    uint64_t r = 7;
    int hashed = 0, stored = 0;
    int64_t evicted = 0;
    for (int step = 0; step < 2000; step++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int l = (int)(r >> 60) % 12, n = 2 + (int)((r >> 40) % 29);
        cr_kc_out o;
        cr_kcache_send(snd, lists[l], n, &o);
        evicted += o.evicted;
        cr_err e;
        int resync;
        const int64_t *k = NULL;
        if (o.action == CR_KC_STORE) {
            k = cr_kcache_store(rcv, lists[l], n, o.serial, o.reset, &resync);
            CR_CHECK(!resync);
            stored++;
        } else {
            unsigned char f[CR_KC_FRAME];
            cr_kcache_frame(cr_kcache_hash(lists[l], n), n, f);
            k = cr_kcache_find(rcv, f, n, o.serial, &e);
            hashed++;
        }
        CR_CHECK(k && !memcmp(k, lists[l], (size_t)n * 8));
        CR_CHECK(cr_kcache_bytes(snd) <= cap && cr_kcache_bytes(rcv) == cr_kcache_bytes(snd));
    }
    printf("  2000 lists: %d as hash, %d stored, %lld evicted\n", hashed, stored, (long long)evicted);
    CR_CHECK(hashed > 100 && evicted > 100);
    cr_kcache_destroy(&snd);
    cr_kcache_destroy(&rcv);
}

/* ---------- zero removal ---------- */

static void test_zeros_exact(void) {
    float v[100];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 10; i++) v[i * 10 + 3] = (float)i - 4.5f;
    v[3] = -0.0f; /* not zero bits: kept */
    uint32_t nanbits = 0x7fc01234u;
    memcpy(&v[99], &nanbits, 4);
    size_t n, nnz;
    void *z = cr_zeros_encode(v, 100, &n, &nnz);
    /* 11 nonzero of 100: bitmap 13 bytes < 44 of positions */
    CR_CHECK(z && nnz == 11 && n == 8 + 13 + 44 && n == cr_zeros_size(100, 11));
    uint32_t kind;
    memcpy(&kind, z, 4);
    CR_CHECK(kind == 1);
    float back[100];
    cr_err e;
    CR_CHECK(cr_zeros_decode(z, n, back, 100, &e) == 0);
    CR_CHECK(!memcmp(back, v, sizeof v)); /* bit-exact, -0 and the NaN payload too */
    /* a corrupt frame is refused with a message */
    ((unsigned char *)z)[8] ^= 0x80; /* one bit more in the bitmap */
    CR_CHECK(cr_zeros_decode(z, n, back, 100, &e) < 0 && strstr(e.msg, "bitmap"));
    CR_CHECK(cr_zeros_decode(z, n - 1, back, 100, &e) < 0);
    free(z);
    /* 3 nonzero of 1000: positions (12 bytes) beat the bitmap (125) */
    float *w = calloc(1000, sizeof *w);
    w[0] = 1, w[500] = 2, w[999] = 3;
    z = cr_zeros_encode(w, 1000, &n, &nnz);
    CR_CHECK(z && n == 8 + 12 + 12);
    memcpy(&kind, z, 4);
    CR_CHECK(kind == 2);
    float *wb = malloc(1000 * sizeof *wb);
    CR_CHECK(cr_zeros_decode(z, n, wb, 1000, &e) == 0 && !memcmp(wb, w, 1000 * sizeof *w));
    uint32_t bad = 1000; /* a position past the end */
    memcpy((char *)z + 16, &bad, 4);
    CR_CHECK(cr_zeros_decode(z, n, wb, 1000, &e) < 0 && strstr(e.msg, "position"));
    free(z);
    free(w);
    free(wb);
    /* 3 nonzero of 4: 8 + 1 + 12 = 21 bytes > 16: left as it is */
    float d[4] = {1, 0, 2, 3};
    CR_CHECK(cr_zeros_encode(d, 4, &n, &nnz) == NULL && nnz == 3);
}

/* ---------- sigmod ---------- */

static void test_sigmod_exact(void) {
    cr_sigmod *s = cr_sigmod_new(1, 0.5f);
    int64_t key = 9, ok[1];
    float g = 0.3f, out[1], ov[1];
    int64_t coords;
    CR_CHECK(cr_filter_rows(cr_sigmod_rule, s, &key, 1, &g, 1, ok, ov, &coords) == 0);
    CR_CHECK(cr_filter_rows(cr_sigmod_rule, s, &key, 1, &g, 1, ok, ov, &coords) == 1);
    CR_CHECK(ok[0] == 9 && ov[0] == 0.3f + 0.3f && coords == 1);
    /* sent: the residual is empty again, nothing to flush */
    int64_t *fk;
    float *fv;
    CR_CHECK(cr_sigmod_flush(s, &fk, &fv) == 0 && fk == NULL);
    g = -0.2f;
    CR_CHECK(cr_sigmod_rule(s, 9, &g, out, 1) == 0 && out[0] == 0);
    CR_CHECK(cr_sigmod_flush(s, &fk, &fv) == 1 && fk[0] == 9 && fv[0] == -0.2f);
    free(fk);
    free(fv);
    CR_CHECK(cr_sigmod_flush(s, &fk, &fv) == 0);
    /* any int64 is a key (a sparse table's hashed ids): -1 too */
    g = 0.25f;
    CR_CHECK(cr_sigmod_rule(s, -1, &g, out, 1) == 0 && cr_sigmod_rule(s, INT64_MIN, &g, out, 1) == 0);
    CR_CHECK(cr_sigmod_rule(s, -1, &g, out, 1) == 0 && cr_sigmod_rule(s, -1, &g, out, 1) == 1 && out[0] == 0.75f);
    CR_CHECK(cr_sigmod_flush(s, &fk, &fv) == 1 && fk[0] == INT64_MIN && fv[0] == 0.25f);
    free(fk);
    free(fv);
    cr_sigmod_destroy(&s);
    /* dim 3: each coordinate on its own; many keys (the map grows) */
    s = cr_sigmod_new(3, 0.5f);
    float g3[3] = {0.6f, 0.1f, -0.7f}, o3[3];
    CR_CHECK(cr_sigmod_rule(s, 1, g3, o3, 3) == 2 && o3[0] == 0.6f && o3[1] == 0 && o3[2] == -0.7f);
    for (int64_t k = 100; k < 5100; k++) cr_sigmod_rule(s, k, g3, o3, 3);
    CR_CHECK(cr_sigmod_rule(s, 1, g3, o3, 3) == 2 && o3[1] == 0);
    int64_t m = cr_sigmod_flush(s, &fk, &fv);
    CR_CHECK(m == 5001 && fk[0] == 1 && fv[1] == 0.2f); /* key 1 holds 0.1 + 0.1 */
    for (int64_t i = 1; i < m; i++) CR_CHECK(fv[i * 3 + 1] == 0.1f && fv[i * 3] == 0);
    free(fk);
    free(fv);
    cr_sigmod_destroy(&s);
}

/* ---------- on the wire, two nodes ---------- */

static long long bytes_out(cr_node *n) { return atomic_load(&n->cnt.bytes_remote); }

#define H ((long long)sizeof(cr_dhdr))

/* Node 0's only worker, on keys 50..89 of node 1 (table 0: key_cache and
 * zeros, dim 1; table 1: sigmod 0.5). Node 1's worker does nothing. Each
 * step checks the bytes node 0 put on the wire (its server is idle). */
static const char *wire(cr_node *n, cr_wclient *w, char *msg, size_t msgn) {
    if (cr_node_id(n) != 0) return "ok";
    cr_shard *s = cr_node_table_at(n, 0, NULL), *sg = cr_node_table_at(n, 1, NULL);
    int64_t keys[40];
    float out[40], g[40];
    for (int i = 0; i < 40; i++) keys[i] = 50 + i, g[i] = i % 4 == 0 ? (float)i + 0.25f : 0;
    cr_err e;
    long long b[8];
    b[0] = bytes_out(n);
    if (cr_wclient_pull_borrow(w, s, keys, 40, out, &e) < 0) return "pull 1";
    b[1] = bytes_out(n);
    if (cr_wclient_pull_borrow(w, s, keys, 40, out, &e) < 0) return "pull 2";
    b[2] = bytes_out(n);
    if (cr_wclient_push_borrow(w, s, keys, 40, g, &e) < 0) return "push";
    b[3] = bytes_out(n);
    if (cr_wclient_pull_borrow(w, s, keys, 40, out, &e) < 0) return "pull 3";
    b[4] = bytes_out(n);
    long long want[4] = {H + 320, H + 12, H + 12 + (8 + 5 + 40), H + 12};
    for (int i = 0; i < 4; i++)
        if (b[i + 1] - b[i] != want[i]) {
            snprintf(msg, msgn, "message %d: %lld bytes, expected %lld", i + 1, b[i + 1] - b[i], want[i]);
            return msg;
        }
    if (memcmp(out, g, sizeof g)) return "values after a filtered push and pull";
    /* sigmod 0.5 on table 1: 0.3 is held, 0.3 more makes 0.6: sent */
    float t = 0.3f, v;
    int64_t k = 60, k2 = 61;
    b[0] = bytes_out(n);
    if (cr_wclient_push_borrow(w, sg, &k, 1, &t, &e) < 0) return "sigmod push 1";
    b[1] = bytes_out(n);
    if (cr_wclient_push_borrow(w, sg, &k, 1, &t, &e) < 0) return "sigmod push 2";
    b[2] = bytes_out(n);
    if (b[1] != b[0] || b[2] - b[1] != H + 8 + 4) return "sigmod bytes";
    if (cr_wclient_pull_borrow(w, sg, &k, 1, &v, &e) < 0 || v != 0.3f + 0.3f) return "sigmod value";
    t = 0.2f;
    if (cr_wclient_push_borrow(w, sg, &k2, 1, &t, &e) < 0 || cr_wclient_pull_borrow(w, sg, &k2, 1, &v, &e) < 0)
        return "sigmod held";
    if (v != 0) return "a held change was applied";
    if (cr_wclient_flush(w, &e) < 0 || cr_wclient_pull_borrow(w, sg, &k2, 1, &v, &e) < 0 || v != 0.2f)
        return "sigmod flush";
    /* the asynchronous forms: copied (0.3 held, then 0.6 sent), taken */
    int64_t k3 = 62;
    uint32_t q;
    t = 0.3f;
    for (int i = 0; i < 2; i++)
        if (cr_wclient_push_copy(w, sg, &k3, 1, &t, &q, &e) < 0 || cr_wclient_wait(w, q, &e) < 0) return "sigmod copy";
    int64_t *tk = malloc(sizeof *tk);
    float *tv = malloc(sizeof *tv);
    *tk = 62, *tv = 0.7f;
    if (cr_wclient_push_take(w, sg, &tk, 1, &tv, &q, &e) < 0 || tk || tv || cr_wclient_wait(w, q, &e) < 0)
        return "sigmod take";
    if (cr_wclient_pull_borrow(w, sg, &k3, 1, &v, &e) < 0 || v != (0.3f + 0.3f) + 0.7f) return "sigmod async value";
    /* half floats on table 2 (dim 16): a push's values frame is 2 bytes a
     * value; eighths in [-4, 4) are exact halves, so they come back exact */
    cr_shard *hs = cr_node_table_at(n, 2, NULL);
    int64_t hk[4] = {50, 51, 52, 77};
    float hg[64], ho[64];
    for (int i = 0; i < 64; i++) hg[i] = (float)(i - 32) * 0.125f;
    b[0] = bytes_out(n);
    if (cr_wclient_push_borrow(w, hs, hk, 4, hg, &e) < 0) return "half push";
    b[1] = bytes_out(n);
    if (b[1] - b[0] != H + 32 + 64 * 2) return "half push bytes";
    if (cr_wclient_pull_borrow(w, hs, hk, 4, ho, &e) < 0 || memcmp(ho, hg, sizeof hg)) return "half values";
    /* 1e6 is beyond the half range: that push goes as floats, and the pull
     * of a row holding it too; both exact */
    int64_t big = 90;
    float row[16] = {0}, got[16];
    row[3] = 1e6f;
    row[5] = 1.0f / 3.0f;
    b[0] = bytes_out(n);
    if (cr_wclient_push_borrow(w, hs, &big, 1, row, &e) < 0) return "half overflow push";
    b[1] = bytes_out(n);
    if (b[1] - b[0] != H + 8 + 16 * 4) return "overflow push bytes";
    if (cr_wclient_pull_borrow(w, hs, &big, 1, got, &e) < 0 || memcmp(got, row, sizeof row)) return "overflow pull";
    /* a third of an exact value rounds to the nearest half: within 2^-11 */
    float third[16];
    for (int i = 0; i < 16; i++) third[i] = (float)(i + 1) / 3.0f;
    int64_t k91 = 91;
    if (cr_wclient_push_borrow(w, hs, &k91, 1, third, &e) < 0 || cr_wclient_pull_borrow(w, hs, &k91, 1, got, &e) < 0)
        return "half rounding";
    int rounded = 0;
    for (int i = 0; i < 16; i++) {
        if (fabsf(got[i] - third[i]) > third[i] * (1.0f / 1024)) return "half rounding error";
        rounded += got[i] != third[i];
    }
    if (rounded < 10) return "thirds came back as floats"; /* 11 of the 16 are not whole numbers */
    /* halves then zlib (table 3, compress = true: frames of 64 KiB and more
     * are deflated): 2048 rows of node 1, both ways, exact */
    cr_shard *hz = cr_node_table_at(n, 3, NULL);
    enum { NZ = 2048 };
    int64_t *zk = malloc(NZ * sizeof *zk);
    float *zv = malloc(NZ * 16 * sizeof *zv), *zo = malloc(NZ * 16 * sizeof *zo);
    for (int i = 0; i < NZ; i++) {
        zk[i] = NZ + i;
        for (int c = 0; c < 16; c++) zv[i * 16 + c] = (float)((i + c) % 16) * 0.125f;
    }
    const char *r = "ok";
    b[0] = bytes_out(n);
    if (cr_wclient_push_borrow(w, hz, zk, NZ, zv, &e) < 0) r = "deflated half push";
    b[1] = bytes_out(n);
    if (!strcmp(r, "ok") && b[1] - b[0] >= H + NZ * 8 + NZ * 16 * 2 / 2) r = "deflated halves are not smaller";
    if (!strcmp(r, "ok") && (cr_wclient_pull_borrow(w, hz, zk, NZ, zo, &e) < 0 || memcmp(zo, zv, NZ * 16 * sizeof *zv)))
        r = "deflated half values";
    free(zk), free(zv), free(zo);
    return r;
}

static void wire_worker(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    char msg[256];
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = w ? wire(n, w, msg, sizeof msg) : "no client";
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
    cr_wclient_destroy(&w);
}

static const cr_node_hooks wire_hooks = {wire_worker};

typedef struct answers {
    int ok;
    char text[4][4096];
    int ntext;
} answers;

static int on_answer(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    answers *a = arg;
    (void)e;
    if (worker < 0 && a->ntext < 4) snprintf(a->text[a->ntext++], sizeof a->text[0], "%.*s", (int)n, data);
    else if (n == 2 && !memcmp(data, "ok", 2)) a->ok++;
    else printf("  worker %d: %.*s\n", worker, (int)n, data);
    return 0;
}

static void table_def(cr_table_def *d, const char *name) {
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->keys = 100;
    d->dim = 1;
    d->optim.kind = CR_OPTIM_ADD;
}

static void test_wire(void) {
    test_nodes t = {.hooks = &wire_hooks, .count = 2};
    cr_job_opts o = {.nodes = 2, .workers = 1, .seed = 1, .on_listen = test_nodes_start, .on_listen_arg = &t,
                     .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    CR_CHECK(j != NULL);
    cr_table_def d;
    table_def(&d, "T");
    d.filters.key_cache = 1;
    d.filters.zeros = 1;
    CR_CHECK(cr_job_table(j, 0, &d, &e) == 0);
    table_def(&d, "S");
    d.filters.sigmod = 0.5;
    CR_CHECK(cr_job_table(j, 1, &d, &e) == 0);
    table_def(&d, "H");
    d.dim = 16;
    d.filters.half = 1;
    CR_CHECK(cr_job_table(j, 2, &d, &e) == 0);
    table_def(&d, "HZ");
    d.keys = 4096;
    d.dim = 16;
    d.filters.half = 1;
    d.compress = 1;
    CR_CHECK(cr_job_table(j, 3, &d, &e) == 0);
    answers a = {0};
    cr_job_cb cb = {.result = on_answer, .arg = &a};
    int rc = cr_job_call(j, "wire", 4, "", 0, &cb, &e);
    if (rc < 0) printf("  worker error: %s\n", cr_job_error(j));
    CR_CHECK(rc == 0);
    CR_CHECK(a.ok == 2);
    CR_CHECK(cr_job_stats(j, &cb, &e) == 0 && a.ntext == 2);
    const char *n0 = strstr(a.text[0], "node=0") ? a.text[0] : a.text[1];
    const char *kc = strstr(n0, "[\"T\"]={key_cache={");
    CR_CHECK(kc != NULL);
    /* 4 lists: 1 stored, 3 as hash; 4 * 320 bytes of keys became 320 + 3 * 12 */
    CR_CHECK(test_field(kc, "hits=") == 3 && test_field(kc, "stored=") == 1);
    CR_CHECK(test_field(kc, "bytes_before=") == 4 * 320 && test_field(kc, "bytes_after=") == 320 + 3 * 12);
    const char *z = strstr(n0, "zeros={");
    CR_CHECK(z && test_field(z, "hits=") == 30 && test_field(z, "bytes_before=") == 160 &&
             test_field(z, "bytes_after=") == 53);
    const char *sg = strstr(n0, "[\"S\"]={sigmod={");
    /* 6 rows offered, 3 held (0.3, 0.2, 0.3), 1 flushed; sent: 0.6, 0.2 (flushed), 0.6, 0.7 */
    CR_CHECK(sg && test_field(sg, "rows=") == 6 && test_field(sg, "rows_dropped=") == 3 &&
             test_field(sg, "rows_flushed=") == 1 && test_field(sg, "bytes_before=") == 6 * 12 &&
             test_field(sg, "bytes_after=") == 4 * 12);
    /* half: node 0 sent 3 pushes as halves (of 4, 1 and 1 rows) and 1 as
     * floats; node 1 answered 3 pulls as halves and 1 as floats */
    const char *n1 = n0 == a.text[0] ? a.text[1] : a.text[0];
    const char *h0 = strstr(n0, "[\"H\"]={half={"), *h1 = strstr(n1, "[\"H\"]={half={");
    CR_CHECK(h0 && test_field(h0, "frames=") == 2 && test_field(h0, "overflows=") == 1 &&
             test_field(h0, "bytes_before=") == 5 * 64 && test_field(h0, "bytes_after=") == 5 * 32);
    CR_CHECK(h1 && test_field(h1, "frames=") == 2 && test_field(h1, "overflows=") == 1 &&
             test_field(h1, "bytes_before=") == 5 * 64 && test_field(h1, "bytes_after=") == 5 * 32);
    /* HZ: one push frame halved and deflated on node 0, one reply on node 1 */
    const char *z0 = strstr(n0, "[\"HZ\"]={half={"), *z1 = strstr(n1, "[\"HZ\"]={half={");
    CR_CHECK(z0 && test_field(z0, "frames=") == 1 && strstr(z0, "compress={hits=1,"));
    CR_CHECK(z1 && test_field(z1, "frames=") == 1 && strstr(z1, "compress={hits=1,"));
    /* the combinations the filter refuses */
    table_def(&d, "bad");
    d.filters.half = 1;
    d.filters.zeros = 1;
    CR_CHECK(cr_job_table(j, 4, &d, &e) < 0 && strstr(e.msg, "filter half needs a float table"));
    d.filters.zeros = 0;
    d.dtype = CR_DTYPE_I32;
    CR_CHECK(cr_job_table(j, 4, &d, &e) < 0 && strstr(e.msg, "filter half needs a float table"));
    cr_job_close(&j);
    test_nodes_join(&t);
}

/* ---------- half floats ---------- */

static uint16_t half_of(float f) {
    uint16_t h;
    cr_half_from_f32_c(&f, &h, 1);
    return h;
}

static float float_of(uint16_t h) {
    float f;
    cr_half_to_f32_c(&h, &f, 1);
    return f;
}

/* Known encodings, rounding to nearest even, the range's ends, and the
 * dispatched (F16C) loops bit for bit equal to the portable ones. */
static void test_half_exact(void) {
    CR_CHECK(half_of(1.0f) == 0x3c00 && half_of(-2.0f) == 0xc000 && half_of(0.0f) == 0 && half_of(-0.0f) == 0x8000);
    CR_CHECK(half_of(65504.0f) == 0x7bff && half_of(65519.0f) == 0x7bff && half_of(65520.0f) == 0x7c00);
    CR_CHECK(half_of(6.103515625e-05f) == 0x0400);           /* the smallest normal */
    CR_CHECK(half_of(5.9604644775390625e-08f) == 0x0001);    /* the smallest subnormal */
    CR_CHECK(half_of(2.98023223876953125e-08f) == 0);         /* half of it: ties to even, 0 */
    CR_CHECK(half_of(1.0f + 1.0f / 2048) == 0x3c00);          /* a tie: to the even 1.0 */
    CR_CHECK(half_of(1.0f + 3.0f / 2048) == 0x3c02);          /* a tie: to the even 1 + 2/1024 */
    CR_CHECK((half_of(NAN) & 0x7c00) == 0x7c00 && (half_of(NAN) & 0x3ff) != 0);
    CR_CHECK(half_of(INFINITY) == 0x7c00 && float_of(0xfc00) == -INFINITY);
    CR_CHECK(float_of(0x0001) == 5.9604644775390625e-08f && float_of(0x3555) == 0.333251953125f);
    float one = 1e5f;
    uint16_t h;
    CR_CHECK(cr_half_from_f32(&one, &h, 1) > 0); /* beyond the range: not finite, reported */
    /* every half widens and narrows back to itself (NaNs stay NaN) */
    for (uint32_t i = 0; i < 65536; i++) {
        float f = float_of((uint16_t)i);
        if (f != f) CR_CHECK(half_of(f) != half_of(f) || (half_of(f) & 0x7c00) == 0x7c00);
        else if (half_of(f) != (uint16_t)i) {
            CR_CHECK(half_of(f) == (uint16_t)i);
            break;
        }
    }
    /* dispatched against portable, on values of every magnitude */
    enum { N = 1 << 16 };
    float *in = malloc(N * sizeof *in), *w1 = malloc(N * sizeof *w1), *w2 = malloc(N * sizeof *w2);
    uint16_t *h1 = malloc(N * sizeof *h1), *h2 = malloc(N * sizeof *h2);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t bits = (uint32_t)x;
        bits = (bits & 0x807fffffu) | ((uint32_t)(100 + (x >> 40) % 50) << 23); /* exponents 2^-27 .. 2^22 */
        memcpy(&in[i], &bits, 4);
    }
    size_t bad1 = cr_half_from_f32(in, h1, N), bad2 = cr_half_from_f32_c(in, h2, N);
    CR_CHECK(!memcmp(h1, h2, N * sizeof *h1) && (bad1 > 0) == (bad2 > 0) && bad2 > 0);
    cr_half_to_f32(h1, w1, N);
    cr_half_to_f32_c(h1, w2, N);
    CR_CHECK(!memcmp(w1, w2, N * sizeof *w1));
    int far = 0;
    for (int i = 0; i < N; i++) {
        float a = fabsf(in[i]);
        if (a >= 6.103515625e-05f && a < 65504.0f && fabsf(w1[i] - in[i]) > a * (1.0f / 2048)) far++;
    }
    CR_CHECK(far == 0);
    free(in), free(w1), free(w2), free(h1), free(h2);
}

int main(void) {
    CR_RUN(test_half_exact);
    CR_RUN(test_kcache_repeat);
    CR_RUN(test_kcache_collision);
    CR_RUN(test_kcache_lockstep);
    CR_RUN(test_zeros_exact);
    CR_RUN(test_sigmod_exact);
    CR_RUN(test_wire);
    return cr_test_done();
}
