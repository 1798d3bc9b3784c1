/* Counting accesses per key (COUNTS) and the per-key relocation set of
 * MANAGE (docs/management.md: Counters, Choosing the technique), through
 * node threads with C workers (no Lua).
 *
 * - counts: on 2 nodes x 2 workers, every worker pulls and pushes known
 *   batches (a deterministic generator the test replays); node 0's workers
 *   touch only the lower half of the keys. Each node's merged sketch holds
 *   exactly its own workers' accesses on a small table (exact mode) and at
 *   least them on a large one (count-min); counting off: no sketch, and
 *   reading counts is an error; counting on again starts from zero; the
 *   `direct` counter of each node equals its keys pulled and pushed, and
 *   `local` the ones its own shard served (all of node 0's).
 * - mixed tables: localize of a classic key does nothing and is counted
 *   as skipped, of a relocating key moves it; bad relocation lists are
 *   refused naming the table.
 * - the counting model: every worker adds 1 to random batches (localizing
 *   the next batch) while the relocation set changes between commands
 *   (all relocate, a set, a smaller set, a disjoint set, classic); after
 *   every change each worker reads every key through its client and every
 *   key must equal its number of adds: keys leaving the set came home with
 *   their values, no update lost or applied twice. On 2 and 3 nodes.
 * - the COUNTS and MANAGE (relocating keys) codecs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_proto.h"
#include "ps/cr_sketch.h"
#include "ps/cr_wclient.h"

#define WPN 2
#define ROUNDS 30
#define BATCH 40
#define MAXN 3
#define MAXKEYS 200000

/* Key i of round q of worker gw in run r, over [0, keys). */
static int64_t gen_key(int gw, int r, int q, int i, int64_t keys) {
    uint64_t h = cr_mix64(((uint64_t)gw << 48) ^ ((uint64_t)r << 32) ^ ((uint64_t)q << 16) ^ (uint64_t)i);
    return (int64_t)(h % (uint64_t)keys);
}

/* The keys worker gw (on node `node`) accesses in round q of the counting
 * test: node 0 only the lower half. */
static void acc_batch(int gw, int node, int q, int64_t keys, int64_t *out) {
    for (int i = 0; i < BATCH; i++) out[i] = gen_key(gw, 0, q, i, node == 0 ? keys / 2 : keys);
}

/* ---------- the workers ---------- */

typedef struct wctx {
    cr_node *n;
    cr_wclient *w;
    int lw, gw;
    char msg[1024];
} wctx;

/* x->msg := what: why; returns it. */
static const char *failed(wctx *x, const char *what, const char *why) {
    snprintf(x->msg, sizeof x->msg, "%s: %.900s", what, why);
    return x->msg;
}

/* "acc T": pull and push ROUNDS batches of table T. */
static const char *acc(wctx *x, cr_shard *s) {
    int64_t k[BATCH];
    float v[BATCH], g[BATCH];
    cr_err e;
    for (int i = 0; i < BATCH; i++) g[i] = 1;
    for (int q = 0; q < ROUNDS; q++) {
        acc_batch(x->gw, cr_node_id(x->n), q, s->def.keys, k);
        if (cr_wclient_pull_borrow(x->w, s, k, BATCH, v, &e) < 0 || cr_wclient_push_borrow(x->w, s, k, BATCH, g, &e) < 0)
            return failed(x, "acc", e.msg);
    }
    return "ok";
}

/* "add T r": ROUNDS batches of +1, localizing the next batch first. */
static const char *add(wctx *x, cr_shard *s, int r) {
    int64_t k[BATCH], next[BATCH];
    float g[BATCH], v[BATCH];
    cr_err e;
    for (int i = 0; i < BATCH; i++) g[i] = 1, k[i] = gen_key(x->gw, r, 0, i, s->def.keys);
    for (int q = 0; q < ROUNDS; q++) {
        uint32_t loc = 0, push = 0;
        for (int i = 0; i < BATCH; i++) next[i] = gen_key(x->gw, r, q + 1, i, s->def.keys);
        if (cr_wclient_localize(x->w, s, next, BATCH, &loc, &e) < 0 ||
            cr_wclient_push_copy(x->w, s, k, BATCH, g, &push, &e) < 0 ||
            cr_wclient_pull_borrow(x->w, s, k, BATCH, v, &e) < 0 || cr_wclient_wait(x->w, push, &e) < 0 ||
            cr_wclient_wait(x->w, loc, &e) < 0)
            return failed(x, "add", e.msg);
        memcpy(k, next, sizeof k);
    }
    return "ok";
}

/* Every key's adds of runs [0, r] by all W workers. */
static void expected_adds(int W, int r, int64_t keys, float *out) {
    memset(out, 0, (size_t)keys * sizeof *out);
    for (int run = 0; run <= r; run++)
        for (int gw = 0; gw < W; gw++)
            for (int q = 0; q < ROUNDS; q++)
                for (int i = 0; i < BATCH; i++) out[gen_key(gw, run, q, i, keys)] += 1;
}

/* "check T r": read every key through the client; each must hold its adds. */
static const char *check(wctx *x, cr_shard *s, int r) {
    int64_t K = s->def.keys, *k = malloc((size_t)K * sizeof *k);
    float *v = malloc((size_t)K * sizeof *v), *want = malloc((size_t)K * sizeof *want);
    cr_err e;
    const char *res = "ok";
    for (int64_t i = 0; i < K; i++) k[i] = i;
    expected_adds(cr_node_count(x->n) * WPN, r, K, want);
    if (cr_wclient_pull_borrow(x->w, s, k, K, v, &e) < 0) res = failed(x, "check", e.msg);
    for (int64_t i = 0; i < K && res[0] == 'o'; i++)
        if (v[i] != want[i]) {
            char why[128];
            snprintf(why, sizeof why, "worker %d: key %lld holds %g, added %g", x->gw, (long long)i, v[i], want[i]);
            res = failed(x, "check", why);
        }
    free(k), free(v), free(want);
    return res;
}

/* "loc T a b": localize keys [a, b) (worker 0 only: the others would take them back). */
static const char *loc(wctx *x, cr_shard *s, int64_t a, int64_t b) {
    int64_t k[64];
    uint32_t req;
    cr_err e;
    for (int64_t i = a; i < b; i++) k[i - a] = i;
    if (cr_wclient_localize(x->w, s, k, b - a, &req, &e) < 0 || cr_wclient_wait(x->w, req, &e) < 0)
        return failed(x, "loc", e.msg);
    return "ok";
}

static const char *dispatch(wctx *x, const cr_cmd *c) {
    char fn[16] = "", args[64] = "";
    snprintf(fn, sizeof fn, "%.*s", (int)c->n1, c->p1);
    snprintf(args, sizeof args, "%.*s", (int)c->n2, c->p2);
    long long t = 0, a = 0, b = 0;
    sscanf(args, "%lld %lld %lld", &t, &a, &b);
    cr_shard *s = cr_node_table_at(x->n, (int)t, NULL);
    if (!s || !x->w) return "no table or client";
    if (!strcmp(fn, "acc")) return acc(x, s);
    if (!strcmp(fn, "add")) return add(x, s, (int)a);
    if (!strcmp(fn, "check")) return check(x, s, (int)a);
    if (!strcmp(fn, "loc")) return x->gw == 0 ? loc(x, s, a, b) : "ok"; /* node 0's first worker only */
    return "unknown command";
}

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    wctx x = {.n = n, .lw = lw, .gw = cr_node_id(n) * cr_node_workers_per_node(n) + lw};
    x.w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = dispatch(&x, &c);
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
    cr_wclient_destroy(&x.w);
}

static const cr_node_hooks hooks = {worker_main};

/* ---------- the job side ---------- */

typedef struct tally {
    int ok;
    char last[256];
    long long direct[MAXN], skipped[MAXN], held[MAXN], away[MAXN], local[MAXN];
} tally;

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)e;
    tally *t = arg;
    char buf[8192];
    snprintf(buf, sizeof buf, "%.*s", (int)n, data);
    if (worker >= 0) {
        t->ok += !strcmp(buf, "ok");
        if (strcmp(buf, "ok")) snprintf(t->last, sizeof t->last, "%.200s", buf);
        return 0;
    }
    long long node = test_field(buf, "{node=");
    if (node < 0 || node >= MAXN) return 0;
    t->direct[node] = test_field(buf, "direct=");
    t->skipped[node] = test_field(buf, "skipped=");
    t->held[node] = test_field(buf, "held=");
    t->away[node] = test_field(buf, "away=");
    t->local[node] = test_field(buf, "access={[\"local\"]=");
    return 0;
}

static int call(cr_job *j, const char *fn, const char *args, int want) {
    tally t = {0};
    cr_job_cb cb = {.result = on_result, .arg = &t};
    cr_err e;
    int rc = cr_job_call(j, fn, strlen(fn), args, strlen(args), &cb, &e);
    if (rc < 0 || t.ok != want) printf("  %s %s: %s\n", fn, args, rc < 0 ? e.msg : t.last);
    return rc == 0 && t.ok == want ? 0 : -1;
}

static void stats(cr_job *j, tally *t) {
    memset(t, 0, sizeof *t);
    cr_job_cb cb = {.result = on_result, .arg = t};
    cr_err e;
    if (cr_job_stats(j, &cb, &e) < 0) printf("  stats: %s\n", e.msg);
}

static cr_job *start(test_nodes *t, int nodes) {
    t->hooks = &hooks;
    t->count = nodes;
    cr_job_opts o = {.nodes = nodes, .workers = WPN, .seed = 7, .on_listen = test_nodes_start, .on_listen_arg = t,
                     .join_timeout = 10};
    cr_err e;
    return cr_job_start(&o, &e);
}

static int table(cr_job *j, int id, const char *name, int64_t keys) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    d.keys = keys;
    d.dim = 1;
    d.optim.kind = CR_OPTIM_ADD;
    snprintf(d.name, sizeof d.name, "%s", name);
    cr_err e;
    return cr_job_table(j, id, &d, &e);
}

/* ---------- counts ---------- */

typedef struct sketches {
    cr_sketch *sk[MAXN];
    int got;
    char err[256];
} sketches;

static int take_sketch(void *arg, int node, const void *bytes, size_t n, cr_err *e) {
    sketches *k = arg;
    k->sk[node] = cr_sketch_read(bytes, n, e);
    k->got++;
    return k->sk[node] ? 0 : -1;
}

static void sketches_free(sketches *k) {
    for (int i = 0; i < MAXN; i++) cr_sketch_destroy(&k->sk[i]);
}

/* The true counts of node `node` on a table of `keys` keys (pull + push). */
static void true_counts(int node, int64_t keys, uint32_t *out) {
    int64_t k[BATCH];
    memset(out, 0, (size_t)keys * sizeof *out);
    for (int gw = node * WPN; gw < (node + 1) * WPN; gw++)
        for (int q = 0; q < ROUNDS; q++) {
            acc_batch(gw, node, q, keys, k);
            for (int i = 0; i < BATCH; i++) out[k[i]] += 2;
        }
}

/* Every node's sketch of table id against the true counts: exact, or never
 * under (and node 0's sketch empty above half the keys when exact). */
static int check_sketches(cr_job *j, int id, int64_t keys, int exact) {
    sketches k = {0};
    cr_err e;
    uint32_t *want = malloc((size_t)keys * sizeof *want);
    int bad = cr_job_counts(j, id, take_sketch, &k, &e) < 0 || k.got != 2;
    for (int node = 0; node < 2 && !bad; node++) {
        true_counts(node, keys, want);
        bad |= cr_sketch_exact(k.sk[node]) != exact || cr_sketch_total(k.sk[node]) != 2ull * WPN * ROUNDS * BATCH;
        for (int64_t key = 0; key < keys && !bad; key++) {
            uint64_t est = cr_sketch_estimate(k.sk[node], key);
            if (exact ? est != want[key] : est < want[key]) {
                printf("  node %d key %lld: estimate %llu, true %u\n", node, (long long)key, (unsigned long long)est,
                       want[key]);
                bad = 1;
            }
        }
    }
    free(want);
    sketches_free(&k);
    return bad ? -1 : 0;
}

static void test_counts(void) {
    test_nodes t = {0};
    cr_job *j = start(&t, 2);
    CR_CHECK(j != NULL);
    cr_err e;
    sketches k = {0};
    int ok = table(j, 0, "small", 1000) == 0 && table(j, 1, "large", MAXKEYS) == 0;
    ok = ok && cr_job_counts(j, 0, take_sketch, &k, &e) < 0 && strstr(cr_job_error(j), "'small'") &&
         strstr(cr_job_error(j), "not counted"); /* off by default */
    ok = ok && cr_job_count(j, 0, 1, &e) == 0 && cr_job_count(j, 1, 1, &e) == 0;
    ok = ok && call(j, "acc", "0", 2 * WPN) == 0 && call(j, "acc", "1", 2 * WPN) == 0;
    ok = ok && check_sketches(j, 0, 1000, 1) == 0 && check_sketches(j, 1, MAXKEYS, 0) == 0;
    tally s;
    stats(j, &s);
    for (int node = 0; node < 2; node++) ok = ok && s.direct[node] == 2LL * 2 * WPN * ROUNDS * BATCH;
    /* node 0's workers touch only its own half: every access local; node 1's uniform keys: about half */
    printf("  local accesses: node 0 %lld of %lld, node 1 %lld of %lld\n", s.local[0], s.direct[0], s.local[1],
           s.direct[1]);
    ok = ok && s.local[0] == s.direct[0] && s.local[1] > s.direct[1] / 4 && s.local[1] < s.direct[1] * 3 / 4;
    ok = ok && cr_job_count(j, 0, 1, &e) == 0 && cr_job_counts(j, 0, take_sketch, &k, &e) == 0; /* fresh */
    ok = ok && cr_sketch_total(k.sk[0]) == 0 && cr_sketch_total(k.sk[1]) == 0;
    ok = ok && cr_job_count(j, 0, 0, &e) == 0 && call(j, "acc", "0", 2 * WPN) == 0; /* off: nothing counted */
    ok = ok && cr_job_counts(j, 0, take_sketch, &k, &e) < 0 && cr_job_count(j, 9, 1, &e) < 0;
    sketches_free(&k);
    cr_job_close(&j);
    test_nodes_join(&t);
    CR_CHECK(ok);
}

/* ---------- mixed tables ---------- */

static int manage(cr_job *j, int id, int mode, const int64_t *repl, int64_t nrepl, const int64_t *reloc,
                  int64_t nreloc) {
    cr_err e;
    return cr_job_manage_keys(j, id, mode, repl, nrepl, reloc, nreloc, &e);
}

static void test_mixed_localize(void) {
    test_nodes t = {0};
    cr_job *j = start(&t, 2);
    CR_CHECK(j != NULL);
    int64_t set[3] = {10, 12, 14}, out[2] = {3, 20}, twice[3] = {11, 4, 11}, one = 12;
    int ok = table(j, 0, "M", 20) == 0;
    /* bad lists: refused by every node, naming the table; nothing changes */
    ok = ok && manage(j, 0, 0, NULL, 0, out, 2) < 0 && strstr(cr_job_error(j), "key 20 (position 2) out of range") &&
         strstr(cr_job_error(j), "'M'");
    ok = ok && manage(j, 0, 0, NULL, 0, twice, 3) < 0 && strstr(cr_job_error(j), "listed twice for table 'M'");
    ok = ok && manage(j, 0, 0, &one, 1, set, 3) < 0 && strstr(cr_job_error(j), "both replicated and relocating");
    ok = ok && manage(j, 0, 1, NULL, 0, set, 3) < 0 && strstr(cr_job_error(j), "mode classic");
    ok = ok && manage(j, 0, 0, NULL, 0, set, 3) == 0;
    /* node 0's first worker localizes keys 10..19 (node 1's): 3 move, 7 stay */
    ok = ok && call(j, "loc", "0 10 20", 2 * WPN) == 0;
    tally s;
    stats(j, &s);
    printf("  node 0: held %lld, skipped %lld; node 1: away %lld\n", s.held[0], s.skipped[0], s.away[1]);
    ok = ok && s.held[0] == 3 && s.skipped[0] == 7 && s.away[1] == 3;
    ok = ok && manage(j, 0, 0, NULL, 0, set, 2) == 0; /* 14 leaves the set: home (all keys come home) */
    stats(j, &s);
    ok = ok && s.held[0] == 0 && s.away[1] == 0;
    cr_job_close(&j);
    test_nodes_join(&t);
    CR_CHECK(ok);
}

/* The counting model while the relocation set changes. */
static void counting_model(int nodes) {
    test_nodes t = {0};
    cr_job *j = start(&t, nodes);
    CR_CHECK(j != NULL);
    enum { K = 60 };
    int64_t a[K], b[K], c[K];
    int na = 0, nb = 0, nc = 0;
    for (int k = 0; k < K; k++) {
        if (k % 2 == 0) a[na++] = k;           /* half */
        if (k % 6 == 0) b[nb++] = k;           /* a subset of a */
        if (k % 2 == 1 && k % 3) c[nc++] = k;  /* disjoint from a */
    }
    int ok = table(j, 0, "C", K) == 0, r = 0;
    char args[32];
    struct { int mode; const int64_t *keys; int n; } steps[] = {{1, NULL, 0}, {0, a, na}, {0, b, nb}, {0, c, nc},
                                                                 {1, NULL, 0}, {0, b, nb}, {0, NULL, 0}};
    for (size_t i = 0; ok && i < sizeof steps / sizeof steps[0]; i++, r++) {
        ok = manage(j, 0, steps[i].mode, NULL, 0, steps[i].keys, steps[i].n) == 0;
        snprintf(args, sizeof args, "0 %d", r - 1);
        if (r > 0) ok = ok && call(j, "check", args, nodes * WPN) == 0; /* right after the change */
        snprintf(args, sizeof args, "0 %d", r);
        ok = ok && call(j, "add", args, nodes * WPN) == 0 && call(j, "check", args, nodes * WPN) == 0;
        if (!ok) printf("  step %zu failed\n", i);
    }
    tally s;
    stats(j, &s);
    long long skipped = 0;
    for (int n = 0; n < nodes; n++) skipped += s.skipped[n];
    ok = ok && skipped > 0;
    float *want = malloc(K * sizeof *want), v[K], st[K];
    expected_adds(nodes * WPN, r - 1, K, want);
    cr_err e;
    for (int node = 0; ok && node < nodes; node++) { /* the home rows, read by the job */
        int64_t block = (K + nodes - 1) / nodes, lo = node * block, cnt = lo + block > K ? K - lo : block;
        ok = cr_job_get_rows(j, 0, node, lo, cnt, 1, 0, v, st, &e) == 0;
        for (int64_t i = 0; ok && i < cnt; i++) ok = v[i] == want[lo + i];
    }
    free(want);
    cr_job_close(&j);
    test_nodes_join(&t);
    CR_CHECK(ok);
}

static void test_counting_model_2(void) { counting_model(2); }
static void test_counting_model_3(void) { counting_model(3); }

/* ---------- codecs ---------- */

static void test_codecs(void) {
    unsigned char bytes[5] = {1, 2, 3, 4, 5};
    cr_msg_counts c = {.table = 3, .op = CR_COUNTS_DATA, .node = 1, .data = bytes, .n = 5}, out;
    cr_proto_msg m;
    cr_err e;
    CR_CHECK(cr_proto_encode_counts(&c, &m, &e) == 0);
    CR_CHECK(cr_proto_decode_counts(&m, &out, &e) == 0);
    CR_CHECK(out.table == 3 && out.op == CR_COUNTS_DATA && out.node == 1 && out.n == 5 && !memcmp(out.data, bytes, 5));
    c = (cr_msg_counts){.table = 2, .op = CR_COUNTS_READ};
    CR_CHECK(cr_proto_encode_counts(&c, &m, &e) == 0 && cr_proto_decode_counts(&m, &out, &e) == 0);
    CR_CHECK(out.table == 2 && out.op == CR_COUNTS_READ && out.n == 0);
    m.n[0] = 3; /* a request with data */
    CR_CHECK(cr_proto_decode_counts(&m, &out, &e) < 0 && strstr(e.msg, "no data"));
    m.n[0] = 0;
    m.h.a = 9;
    CR_CHECK(cr_proto_decode_counts(&m, &out, &e) < 0 && strstr(e.msg, "op"));
    m.h.a = CR_COUNTS_DATA; /* an answer without its sketch */
    CR_CHECK(cr_proto_decode_counts(&m, &out, &e) < 0);
    m.h.a = CR_COUNTS_ON;
    m.h.table = -1;
    CR_CHECK(cr_proto_decode_counts(&m, &out, &e) < 0);
    m.np = 0;
    CR_CHECK(cr_proto_decode_counts(&m, &out, &e) < 0);

    int64_t repl[1] = {9}, reloc[3] = {5, 0, 7};
    cr_msg_manage g = {.table = 2, .mode = 0, .nrepl = 1, .repl = repl, .nreloc = 3, .reloc = reloc}, go;
    CR_CHECK(cr_proto_encode_manage(&g, &m, &e) == 0 && cr_proto_decode_manage(&m, &go, &e) == 0);
    CR_CHECK(go.nrepl == 1 && go.nreloc == 3 && cr_proto_i64(go.reloc, 2) == 7 && cr_proto_i64(go.repl, 0) == 9);
    m.n[1] = 20; /* not whole keys */
    CR_CHECK(cr_proto_decode_manage(&m, &go, &e) < 0 && strstr(e.msg, "relocating"));
    m.n[1] = 24;
    m.h.a = 1; /* relocate with a list */
    CR_CHECK(cr_proto_decode_manage(&m, &go, &e) < 0 && strstr(e.msg, "mode classic"));
    g.mode = 1;
    CR_CHECK(cr_proto_encode_manage(&g, &m, &e) < 0);

    /* garbage headers and frame sizes: refused, or accepted with sizes that hold */
    static unsigned char junk[4096];
    cr_rng r;
    cr_rng_seed(&r, 5);
    int accepted = 0;
    for (int i = 0; i < 20000; i++) {
        cr_proto_msg x = {.np = (int)cr_rng_below(&r, 4)};
        x.h.type = cr_rng_below(&r, 2) ? CR_M_COUNTS : CR_M_MANAGE;
        x.h.table = (int32_t)cr_rng_below(&r, 5) - 1;
        x.h.a = (int64_t)cr_rng_below(&r, 6) - 1;
        x.h.b = (int64_t)cr_rng_below(&r, 600) - 50;
        for (int f = 0; f < 2; f++) x.p[f] = junk, x.n[f] = (size_t)cr_rng_below(&r, 4096);
        if (x.h.type == CR_M_COUNTS && cr_proto_decode_counts(&x, &out, &e) == 0) {
            accepted++;
            CR_CHECK(out.n == x.n[0] && out.n <= sizeof junk && (out.op == CR_COUNTS_DATA) == (out.n > 0));
        }
        if (x.h.type == CR_M_MANAGE && cr_proto_decode_manage(&x, &go, &e) == 0) {
            accepted++;
            CR_CHECK((size_t)go.nrepl * 8 == x.n[0] && (size_t)go.nreloc * 8 == x.n[1] && (go.mode == 0 || !go.nreloc));
        }
    }
    CR_CHECK(accepted > 0);
}

int main(void) {
    CR_RUN(test_codecs);
    CR_RUN(test_counts);
    CR_RUN(test_mixed_localize);
    CR_RUN(test_counting_model_2);
    CR_RUN(test_counting_model_3);
    return cr_test_done();
}
