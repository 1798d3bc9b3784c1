/* Replication of hot keys (src/ps/cr_replica.h) on 1 to 5 node threads on
 * loopback tcp (the all-reduce's shapes: none, a pair, an extra node, two
 * doubling steps, both), workers written in C calling the replica API
 * directly.
 *
 *  - counting model: every worker adds 1 to random replicated keys many
 *    times; after a final sync every node's replica, and then every home
 *    row, equals the number of adds (no update lost or applied twice),
 *    across two changes of the replicated set (values are kept);
 *  - adagrad: the squared-gradient sums of all nodes are merged, and the
 *    replicas of all nodes are bitwise equal after a final sync;
 *  - nothing is sent while nothing is replicated (the byte counters);
 *  - bad input: out-of-range keys, no such table, the assign rule, keys
 *    that are not replicated, nodes that disagree on the keys, malformed
 *    sync messages from a stranger on a node's data socket. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/cr_time.h"
#include "cr_test.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_node_impl.h"
#include "ps/cr_replica.h"

#define MAXN 5
#define K 300    /* keys of the counting table */
#define DIM 3
#define AK 24    /* keys of the adagrad table, all replicated */
#define ADIM 2
#define ADDS 4000 /* adds per worker per phase */
#define BATCH 7

static int nnodes, wpn = 2;
static cr_replica_stats stats[MAXN];
static float snap[MAXN][AK * ADIM];

static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Replicated keys of table 0 in phase p (1, 2; 3: none): multiples of 3,
 * then multiples of 5 (the multiples of 15 stay replicated). */
static int in_set(int phase, int64_t k) { return phase == 1 ? k % 3 == 0 : phase == 2 ? k % 5 == 0 : 0; }

static int64_t set_keys(int phase, int64_t *out) {
    int64_t n = 0;
    for (int64_t k = K - 1; k >= 0; k--) /* reversed, and one key twice: the set sorts and dedups */
        if (in_set(phase, k)) out[n++] = k;
    if (n) out[n++] = out[0];
    return n;
}

/* The adds of global worker gw in phase p: ADDS keys drawn from the set. */
static void adds_of(int phase, int gw, int64_t *keys) {
    int64_t set[K + 1], n = set_keys(phase, set) - 1;
    uint64_t s = (uint64_t)phase * 1000 + (uint64_t)gw;
    for (int i = 0; i < ADDS; i++) keys[i] = set[next_rand(&s) % (uint64_t)n];
}

/* Expected count of key k after phases 1..upto (every worker's adds). */
static void expected(int upto, double *cnt) {
    int64_t *keys = malloc(ADDS * sizeof *keys);
    memset(cnt, 0, K * sizeof *cnt);
    for (int p = 1; p <= upto && p <= 2; p++)
        for (int gw = 0; gw < nnodes * wpn; gw++) {
            adds_of(p, gw, keys);
            for (int i = 0; i < ADDS; i++) cnt[keys[i]]++;
        }
    free(keys);
}

static const char *do_set(cr_node *n, int table, int phase, char *msg, size_t msgn) {
    cr_err e;
    int64_t keys[K + 1], nk = 0;
    if (table == 0) nk = set_keys(phase, keys);
    else
        for (int64_t k = 0; phase == 1 && k < (table == 1 ? AK : nnodes); k++) keys[nk++] = k;
    if (cr_replicas_set(cr_node_replicas(n), table, keys, nk, &e) < 0) {
        snprintf(msg, msgn, "set: %s", e.msg);
        return msg;
    }
    return NULL;
}

/* Add 1 (table 0) or push gradient 1 (table 1) to this worker's keys, in
 * batches, pulling in between: a worker reads its own adds at once. */
static const char *do_count(cr_node *n, int lw, int table, int phase, char *msg, size_t msgn) {
    cr_replicas *r = cr_node_replicas(n);
    int gw = cr_node_id(n) * wpn + lw;
    int64_t *keys = malloc(ADDS * sizeof *keys);
    float ones[BATCH * DIM], before[DIM], after[DIM];
    for (int i = 0; i < BATCH * DIM; i++) ones[i] = 1;
    if (table == 0) adds_of(phase, gw, keys);
    else
        for (int i = 0; i < ADDS; i++) keys[i] = (gw * 7 + i) % AK;
    cr_err e;
    const char *err = NULL;
    for (int i = 0; i < ADDS && !err; i += BATCH) {
        int m = ADDS - i < BATCH ? ADDS - i : BATCH;
        if (cr_replicas_pull(r, table, keys + i, 1, before, &e) < 0 ||
            cr_replicas_push(r, table, keys + i, m, ones, &e) < 0 || cr_replicas_pull(r, table, keys + i, 1, after, &e) < 0)
            err = e.msg;
        else if (table == 0 && after[0] < before[0] + 1) err = "a worker does not read its own add";
        if (i % (BATCH * 4) == 0) usleep(1000); /* about 0.15 s per phase: timed rounds run meanwhile */
    }
    if (err) snprintf(msg, msgn, "count: %s", err);
    free(keys);
    return err ? msg : NULL;
}

/* After a final sync: every replicated key of table 0 equals its count. */
static const char *do_check(cr_node *n, int phase, char *msg, size_t msgn) {
    double cnt[K];
    expected(phase, cnt);
    float v[DIM];
    cr_err e;
    for (int64_t k = 0; k < K; k++) {
        if (!in_set(phase, k)) continue;
        if (cr_replicas_pull(cr_node_replicas(n), 0, &k, 1, v, &e) < 0) {
            snprintf(msg, msgn, "check: %s", e.msg);
            return msg;
        }
        for (int j = 0; j < DIM; j++)
            if (v[j] != (float)cnt[k]) {
                snprintf(msg, msgn, "node %d: replica of key %lld is %g, expected %g", cr_node_id(n), (long long)k,
                         v[j], cnt[k]);
                return msg;
            }
    }
    return NULL;
}

/* The error message of a call that must fail, checked against `want`. */
static const char *expect_err(int rc, const cr_err *e, const char *want, const char *what, char *msg, size_t msgn) {
    if (rc == 0) snprintf(msg, msgn, "bad input accepted: %s", what);
    else if (!strstr(e->msg, want)) snprintf(msg, msgn, "%s: message '%.200s' lacks '%.100s'", what, e->msg, want);
    else return NULL;
    return msg;
}

static const char *do_bad(cr_node *n, char *msg, size_t msgn) {
    cr_replicas *r = cr_node_replicas(n);
    cr_err e;
    int64_t bad[3] = {1, K, 2}, none = 1, k = 4;
    float g[DIM] = {1, 1, 1};
    const char *err;
    if ((err = expect_err(cr_replicas_set(r, 0, bad, 3, &e), &e,
                          "replicate: key 300 (position 2) out of range [0, 300) of table 'C'", "key out of range", msg,
                          msgn)))
        return err;
    bad[1] = -1;
    if ((err = expect_err(cr_replicas_set(r, 0, bad, 3, &e), &e, "key -1 (position 2) out of range", "negative key",
                          msg, msgn)))
        return err;
    if ((err = expect_err(cr_replicas_set(r, 9, &none, 1, &e), &e, "replicate: no table 9", "no table", msg, msgn)))
        return err;
    if ((err = expect_err(cr_replicas_set(r, 2, &none, 1, &e), &e, "rule 'assign', which cannot be replicated",
                          "assign", msg, msgn)))
        return err;
    /* phase 1 replicates multiples of 3: key 4 is not replicated */
    if ((err = expect_err(cr_replicas_push(r, 0, &k, 1, g, &e), &e, "key 4 (position 1) of table 'C' is not replicated",
                          "push of a key not replicated", msg, msgn)))
        return err;
    k = 3;
    g[1] = NAN;
    if ((err = expect_err(cr_replicas_push(r, 0, &k, 1, g, &e), &e, "replica push refused", "NaN push", msg, msgn)))
        return err;
    /* the nodes disagree: each replicates a different key of table 1 */
    if (cr_node_count(n) == 1) return NULL;
    int64_t mine = cr_node_id(n);
    return expect_err(cr_replicas_set(r, 1, &mine, 1, &e), &e, "the nodes disagree on the replicated keys of table 'A'",
                      "disagreeing nodes", msg, msgn);
}

/* A stranger on node 1's data socket sends malformed sync messages: each
 * is dropped and counted, the replicas go on. Run on node 0. */
static const char *do_stranger(cr_node *n, char *msg, size_t msgn) {
    if (cr_node_id(n) != 0 || cr_node_count(n) < 2) return NULL;
    void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 2000; /* closing must not discard what is queued */
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, n->peers.addrs[1]) < 0) {
        snprintf(msg, msgn, "stranger: cannot connect to %s", n->peers.addrs[1]);
        return msg;
    }
    cr_dhdr d = {.type = CR_D_SYNC};
    char junk[64] = {0};
    struct {
        int64_t round, bytes;
        int32_t from, step, kind, flags, table, nsec;
        uint64_t hash;
    } h = {.round = 0, .bytes = 8, .from = 7, .step = 1, .kind = 1};
    zmq_send(sock, &d, sizeof d, 0); /* header alone */
    zmq_send(sock, &d, sizeof d, ZMQ_SNDMORE);
    zmq_send(sock, junk, 5, ZMQ_SNDMORE); /* a sync header of the wrong size */
    zmq_send(sock, junk, 8, 0);
    zmq_send(sock, &d, sizeof d, ZMQ_SNDMORE);
    zmq_send(sock, &h, sizeof h, ZMQ_SNDMORE); /* from node 7 of 2 */
    zmq_send(sock, junk, 8, 0);
    h.from = 0;
    zmq_send(sock, &d, sizeof d, ZMQ_SNDMORE);
    zmq_send(sock, &h, sizeof h, ZMQ_SNDMORE); /* 8 bytes announced, 3 sent */
    zmq_send(sock, junk, 3, 0);
    h.kind = 9;
    h.bytes = 3;
    zmq_send(sock, &d, sizeof d, ZMQ_SNDMORE);
    zmq_send(sock, &h, sizeof h, ZMQ_SNDMORE); /* an unknown kind */
    zmq_send(sock, junk, 3, 0);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return NULL;
}

static const char *do_snap(cr_node *n, char *msg, size_t msgn) {
    int64_t keys[AK];
    for (int64_t k = 0; k < AK; k++) keys[k] = k;
    cr_err e;
    if (cr_replicas_pull(cr_node_replicas(n), 1, keys, AK, snap[cr_node_id(n)], &e) < 0) {
        snprintf(msg, msgn, "snap: %s", e.msg);
        return msg;
    }
    return NULL;
}

/* ---------- staleness ----------
 * Worker 0 of node j adds 1 to key j of table 3 every ~0.2 ms for STALE_S
 * seconds, recording the node's round count and the time after each add;
 * worker 1 of every node reads all keys all the time. The read
 * of node j's key on node i must hold every add of j tagged <= c - 2, c
 * being i's round count before the read (the logical bound), and the
 * oldest add it lacks must be at most the time bound old. */
#define STALE_S 1.0
#define SYNC_MS 20
#define WMAX 20000
static double wtime[MAXN][WMAX];
static int64_t wtag[MAXN][WMAX];
static atomic_int wcount[MAXN], wdone;
static double max_lag[MAXN];
static int64_t checked[MAXN], lacking[MAXN];

static const char *stale_writer(cr_node *n, char *msg, size_t msgn) {
    cr_replicas *r = cr_node_replicas(n);
    int64_t me = cr_node_id(n);
    float one = 1;
    cr_err e;
    double t0 = cr_now();
    const char *err = NULL;
    for (int i = 0; i < WMAX && cr_now() - t0 < STALE_S; i++) {
        if (cr_replicas_push(r, 3, &me, 1, &one, &e) < 0) {
            snprintf(msg, msgn, "writer: %s", e.msg);
            err = msg;
            break;
        }
        wtag[me][i] = cr_replicas_round(r);
        wtime[me][i] = cr_now(); /* after the add: a writer paused before it does not count as lag */
        atomic_store(&wcount[me], i + 1);
        usleep(200);
    }
    atomic_fetch_add(&wdone, 1);
    return err;
}

/* One read of every node's counter on node `me`; -1 with msg on a breach
 * of the logical bound or a value from nowhere. */
static int stale_read(cr_replicas *r, int me, int64_t *upto, char *msg, size_t msgn) {
    int64_t keys[MAXN];
    int cnt[MAXN];
    float v[MAXN];
    for (int j = 0; j < nnodes; j++) keys[j] = j, cnt[j] = atomic_load(&wcount[j]); /* adds published by now */
    int64_t c = cr_replicas_round(r);
    double t = cr_now();
    cr_err e;
    if (cr_replicas_pull(r, 3, keys, nnodes, v, &e) < 0) return snprintf(msg, msgn, "reader: %s", e.msg), -1;
    for (int j = 0; j < nnodes; j++) {
        if (j == me) continue;
        int64_t got = (int64_t)v[j];
        while (upto[j] < cnt[j] && wtag[j][upto[j]] <= c - 2) upto[j]++;
        if (got < upto[j] || got > atomic_load(&wcount[j]))
            return snprintf(msg, msgn, "node %d at round %lld reads %lld adds of node %d, which made %lld by round %lld",
                            me, (long long)c, (long long)got, j, (long long)upto[j], (long long)(c - 2)), -1;
        if (got < cnt[j] && t - wtime[j][got] > max_lag[me]) max_lag[me] = t - wtime[j][got];
        lacking[me] += got < cnt[j];
        checked[me]++;
    }
    return 0;
}

static const char *stale_reader(cr_node *n, char *msg, size_t msgn) {
    cr_replicas *r = cr_node_replicas(n);
    int me = cr_node_id(n);
    int64_t upto[MAXN] = {0};
    while (atomic_load(&wdone) < nnodes) {
        if (stale_read(r, me, upto, msg, msgn) < 0) return msg;
        usleep(100);
    }
    /* no more adds: two rounds later every replica holds all of them */
    int64_t c = cr_replicas_round(r);
    double t0 = cr_now();
    while (cr_replicas_round(r) < c + 2 && cr_now() - t0 < 5) usleep(1000);
    if (cr_replicas_round(r) < c + 2) return snprintf(msg, msgn, "node %d: no sync round for 5 s", me), msg;
    int64_t keys[MAXN];
    float v[MAXN];
    cr_err e;
    for (int j = 0; j < nnodes; j++) keys[j] = j;
    if (cr_replicas_pull(r, 3, keys, nnodes, v, &e) < 0) return snprintf(msg, msgn, "reader: %s", e.msg), msg;
    for (int j = 0; j < nnodes; j++)
        if (v[j] != (float)atomic_load(&wcount[j]))
            return snprintf(msg, msgn, "node %d: %g adds of node %d two rounds after the last of its %d", me, v[j], j,
                            atomic_load(&wcount[j])), msg;
    return NULL;
}

/* Command p1 (args p2: "table phase"); the set changes and one-per-node
 * steps run on worker 0 only, the others answer at once. */
static const char *run(cr_node *n, int lw, const cr_cmd *c, char *msg, size_t msgn) {
    int table = 0, phase = 0;
    sscanf(c->p2, "%d %d", &table, &phase);
    if (!strcmp(c->p1, "count")) return do_count(n, lw, table, phase, msg, msgn);
    if (!strcmp(c->p1, "stale")) return lw == 0 ? stale_writer(n, msg, msgn) : stale_reader(n, msg, msgn);
    if (!strcmp(c->p1, "period")) {
        if (lw == 0) cr_replicas_set_sync_ms(cr_node_replicas(n), phase);
        return NULL;
    }
    if (lw != 0) return NULL;
    if (!strcmp(c->p1, "set")) return do_set(n, table, phase, msg, msgn);
    if (!strcmp(c->p1, "check")) return do_check(n, phase, msg, msgn);
    if (!strcmp(c->p1, "bad")) return do_bad(n, msg, msgn);
    if (!strcmp(c->p1, "snap")) return do_snap(n, msg, msgn);
    if (!strcmp(c->p1, "stranger")) return do_stranger(n, msg, msgn);
    if (!strcmp(c->p1, "settle")) {
        cr_err e;
        if (cr_replicas_settle(cr_node_replicas(n), &e) == 0) return NULL;
        snprintf(msg, msgn, "settle: %s", e.msg);
        return msg;
    }
    if (!strcmp(c->p1, "stats")) {
        cr_replicas_stats(cr_node_replicas(n), &stats[cr_node_id(n)]);
        return NULL;
    }
    return "unknown command";
}

static void worker_main(cr_node *n, int lw) {
    cr_cmd c;
    char msg[1024];
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = run(n, lw, &c, msg, sizeof msg);
        if (!r) r = "ok";
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
}

static const cr_node_hooks hooks = {worker_main};

static test_nodes threads = {.hooks = &hooks};

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)worker, (void)e;
    if (n == 2 && !memcmp(data, "ok", 2)) (*(int *)arg)++;
    return 0;
}

/* Run command fn with args on every worker; 0 if all answered ok. */
static int call(cr_job *j, const char *fn, const char *args) {
    int ok = 0;
    cr_job_cb cb = {.result = on_result, .arg = &ok};
    cr_err e;
    int rc = cr_job_call(j, fn, strlen(fn), args, strlen(args) + 1, &cb, &e);
    if (rc < 0) printf("  %s %s: %s\n", fn, args, cr_job_error(j));
    return rc == 0 && ok == nnodes * wpn ? 0 : -1;
}

static cr_job *start(int nodes) {
    nnodes = threads.count = nodes;
    cr_job_opts o = {.nodes = nodes, .workers = wpn, .seed = 1, .spawn = 0, .on_listen = test_nodes_start,
                     .on_listen_arg = &threads, .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    if (!j) return NULL;
    const char *names[4] = {"C", "A", "S", "T"};
    int64_t keys[4] = {K, AK, 10, MAXN};
    int32_t dims[4] = {DIM, ADIM, 1, 1};
    cr_optim_kind kinds[4] = {CR_OPTIM_ADD, CR_OPTIM_ADAGRAD, CR_OPTIM_ASSIGN, CR_OPTIM_ADD};
    for (int t = 0; t < 4; t++) {
        cr_table_def d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "%s", names[t]);
        d.keys = keys[t];
        d.dim = dims[t];
        d.optim = (cr_optim){.kind = kinds[t], .lr = 0.1f, .eps = 1e-6f, .init = 0.5f};
        if (cr_job_table(j, t, &d, &e) < 0) {
            cr_job_close(&j);
            return NULL;
        }
    }
    return j;
}

static void stop(cr_job **j) {
    cr_job_close(j);
    test_nodes_join(&threads);
}

static int64_t sent_total(void) {
    int64_t b = 0;
    for (int i = 0; i < nnodes; i++) b += stats[i].bytes_sent + stats[i].msgs_sent + stats[i].bytes_recv;
    return b;
}

/* Home rows of table 0 (every node's range) equal the expected counts. */
static int home_rows_ok(cr_job *j, int upto) {
    double cnt[K];
    expected(upto, cnt);
    int64_t block = cr_table_block(K, nnodes);
    float v[K * DIM];
    cr_err e;
    for (int i = 0; i < nnodes; i++) {
        int64_t lo = i * block, hi = lo + block < K ? lo + block : K;
        if (cr_job_get_rows(j, 0, i, lo, hi - lo, DIM, 0, v, NULL, &e) < 0) return printf("  rows: %s\n", e.msg), -1;
        for (int64_t k = lo; k < hi; k++)
            if (v[(k - lo) * DIM] != (float)cnt[k] || v[(k - lo) * DIM + DIM - 1] != (float)cnt[k])
                return printf("  home row of key %lld is %g, expected %g\n", (long long)k, v[(k - lo) * DIM], cnt[k]), -1;
    }
    return 0;
}

static void counting(int nodes) {
    cr_job *j = start(nodes);
    CR_CHECK(j != NULL);
    /* nothing replicated: the sync threads stay silent */
    usleep(300 * 1000);
    CR_CHECK(call(j, "stats", "0 0") == 0);
    CR_CHECK(sent_total() == 0);
    CR_CHECK(call(j, "set", "0 1") == 0);
    CR_CHECK(call(j, "bad", "0 0") == 0);
    if (nodes > 1) { /* malformed sync messages to node 1: dropped, counted, harmless */
        CR_CHECK(call(j, "stranger", "0 0") == 0);
        for (int i = 0; i < 100 && stats[1].dropped < 5; i++) {
            usleep(10 * 1000);
            CR_CHECK(call(j, "stats", "0 0") == 0);
        }
        printf("  malformed sync messages dropped by node 1: %lld\n", (long long)stats[1].dropped);
        CR_CHECK(stats[1].dropped == 5);
    }
    CR_CHECK(call(j, "count", "0 1") == 0);
    CR_CHECK(call(j, "set", "0 1") == 0); /* the same keys again: a final sync */
    CR_CHECK(call(j, "check", "0 1") == 0);
    CR_CHECK(home_rows_ok(j, 1) == 0);    /* home rows follow the replicas */
    CR_CHECK(call(j, "set", "0 2") == 0); /* a new set: multiples of 15 keep their counts */
    CR_CHECK(call(j, "count", "0 2") == 0);
    CR_CHECK(call(j, "settle", "0 0") == 0); /* the home rows catch up without a change */
    CR_CHECK(home_rows_ok(j, 2) == 0);
    CR_CHECK(call(j, "set", "0 2") == 0);
    CR_CHECK(call(j, "check", "0 2") == 0);
    /* adagrad: gradient 1 each time; the state sums of every node meet */
    CR_CHECK(call(j, "set", "1 1") == 0);
    CR_CHECK(call(j, "count", "1 1") == 0);
    CR_CHECK(call(j, "set", "1 1") == 0);
    CR_CHECK(call(j, "snap", "1 1") == 0);
    for (int i = 1; i < nodes; i++) CR_CHECK(!memcmp(snap[0], snap[i], sizeof snap[0]));
    CR_CHECK(call(j, "stats", "0 0") == 0);
    printf("  %d node(s): node 0 did %lld syncs, sent %lld messages, %lld bytes; %lld reads, %lld updates; "
           "longest round %.1f ms\n",
           nodes, (long long)stats[0].syncs, (long long)stats[0].msgs_sent, (long long)stats[0].bytes_sent,
           (long long)stats[0].reads, (long long)stats[0].updates, stats[0].round_max_s * 1e3);
    /* 7 changes (6 on one node: no disagreement) of 3 rounds each, and timed rounds while the workers counted;
     * one node sends nothing */
    CR_CHECK((stats[0].msgs_sent > 0) == (nodes > 1));
    CR_CHECK(stats[0].syncs > (nodes > 1 ? 7 : 6) * 3 + 5 && stats[0].dropped == 0);
    CR_CHECK(nodes == 1 || stats[1].dropped == 5);
    char txt[512], want[64];
    CR_CHECK(cr_replicas_stats_put(&stats[0], txt, sizeof txt) < (int)sizeof txt);
    snprintf(want, sizeof want, ",replica={keys=%d,reads=7048,updates=24000,syncs=", K / 5 + AK);
    CR_CHECK(strncmp(txt, want, strlen(want)) == 0 && txt[strlen(txt) - 1] == '}');
    CR_CHECK(stats[0].keys == K / 5 + AK);
    CR_CHECK(call(j, "set", "1 3") == 0);
    CR_CHECK(call(j, "set", "0 3") == 0); /* nothing replicated: every count is in the home rows */
    CR_CHECK(home_rows_ok(j, 2) == 0);
    /* adagrad state on the home rows: init + the number of gradients of 1 of every worker */
    float v[AK * ADIM], st[AK * ADIM];
    int64_t ablock = cr_table_block(AK, nodes);
    cr_err e;
    CR_CHECK(cr_job_get_rows(j, 1, 0, 0, ablock, ADIM, ADIM, v, st, &e) == 0);
    double grads[AK] = {0};
    for (int gw = 0; gw < nodes * wpn; gw++)
        for (int i = 0; i < ADDS; i++) grads[(gw * 7 + i) % AK]++;
    for (int64_t k = 0; k < ablock; k++) {
        CR_CHECK_NEAR(st[k * ADIM], 0.5 + grads[k], 0);
        CR_CHECK_NEAR(st[k * ADIM + 1], 0.5 + grads[k], 0);
        CR_CHECK(v[k * ADIM] == snap[0][k * ADIM]);
    }
    /* nothing replicated again: silent again */
    CR_CHECK(call(j, "stats", "0 0") == 0);
    int64_t before = sent_total();
    usleep(300 * 1000);
    CR_CHECK(call(j, "stats", "0 0") == 0);
    CR_CHECK(sent_total() == before);
    stop(&j);
}

static void staleness(int nodes) {
    cr_job *j = start(nodes);
    CR_CHECK(j != NULL);
    char args[32];
    snprintf(args, sizeof args, "0 %d", SYNC_MS);
    CR_CHECK(call(j, "period", args) == 0);
    CR_CHECK(call(j, "set", "3 1") == 0);
    CR_CHECK(call(j, "stale", "3 1") == 0);
    CR_CHECK(call(j, "stats", "0 0") == 0);
    double lag = 0, round_max = 0, gap_max = 0;
    int64_t ck = 0, lk = 0;
    for (int i = 0; i < nodes; i++) {
        lag = max_lag[i] > lag ? max_lag[i] : lag;
        round_max = stats[i].round_max_s > round_max ? stats[i].round_max_s : round_max;
        gap_max = stats[i].gap_max_s > gap_max ? stats[i].gap_max_s : gap_max;
        ck += checked[i];
        lk += lacking[i];
        CR_CHECK(stats[i].sync_ms == SYNC_MS);
    }
    /* the time bound: 2 periods and a round (docs/management.md), the period being sync_ms or what a busy
     * machine let the sync threads keep; 10 ms for the reader's own delays */
    double period = gap_max > SYNC_MS / 1e3 ? gap_max : SYNC_MS / 1e3, bound = 2 * period + round_max + 0.010;
    printf("  %d nodes, sync_ms %d: %lld reads of other nodes' counters, %lld lacking adds; oldest add lacking "
           "%.1f ms (bound %.1f ms); longest period %.1f ms, longest round %.2f ms; %lld syncs\n",
           nodes, SYNC_MS, (long long)ck, (long long)lk, lag * 1e3, bound * 1e3, gap_max * 1e3, round_max * 1e3,
           (long long)stats[0].syncs);
    CR_CHECK(gap_max >= SYNC_MS / 1e3 * 0.9); /* the period is kept, not shortened */
    CR_CHECK(ck > 1000 && lk > 0); /* the readers did see replicas lag, and often */
    CR_CHECK(lag <= bound);
    stop(&j);
}

static void test_staleness_2_nodes(void) { staleness(2); }
static void test_staleness_3_nodes(void) {
    memset(wcount, 0, sizeof wcount);
    atomic_store(&wdone, 0);
    memset(max_lag, 0, sizeof max_lag);
    memset(checked, 0, sizeof checked);
    memset(lacking, 0, sizeof lacking);
    staleness(3);
}

static void test_counting_1_node(void) { counting(1); }
static void test_counting_2_nodes(void) { counting(2); }
static void test_counting_3_nodes(void) { counting(3); }
static void test_counting_4_nodes(void) { counting(4); } /* two doubling steps */
static void test_counting_5_nodes(void) { counting(5); } /* two steps, and node 4 hands its part to node 0 */

int main(void) {
    CR_RUN(test_counting_1_node);
    CR_RUN(test_counting_2_nodes);
    CR_RUN(test_counting_3_nodes);
    CR_RUN(test_counting_4_nodes);
    CR_RUN(test_counting_5_nodes);
    CR_RUN(test_staleness_2_nodes);
    CR_RUN(test_staleness_3_nodes);
    return cr_test_done();
}
