/* Cost of relocation (Lapse's localize) between two nodes (node runtimes on
 * loopback tcp in one process, one worker per node). A table of KEYS keys
 * (dim 64, adagrad: 64 floats of optimizer state travel with each row) is
 * split between the two homes. Round after round, node 0's worker localizes
 * every key in batches of B (each batch waited for before the next is
 * asked), then node 1's worker does the same, so every key moves once per
 * half round, both ways and through both paths of the protocol: a key whose
 * home holds it (LOCALIZE to the home, which sends the row) and a key held
 * by the other node (LOCALIZE to the home, GIVE to the holder, ROW).
 *
 * Prints, per batch size, the median over rounds of microseconds per moved
 * row, the relocation messages per moved row (sent by the servers: GIVE,
 * ROW, localize answers; the workers' LOCALIZE requests come on top, one
 * per home and batch) and the data-plane message counts per row (the
 * nodes' messages_remote: a message between two servers counts at both
 * ends), and checks that every key moved each half round (rows_in) and that
 * the values survived (each row holds its key).
 *
 * Then sampled negatives as KGE takes them (examples/kge.lua): both workers
 * at once, rounds of SAMPLES uniform samples of the whole table pulled
 * asynchronously, then localized and waited for (the model's localize of
 * its negatives) and pushed (zero gradients: the rows keep their keys,
 * checked on every pull). Microseconds per sample on the relocating table
 * and on a classic copy of it (same keys, rows fetched), rounds alternating.
 *
 *   build/bench/reloc [B ...]      (default: 1 100 1000) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_time.h"
#include "ps/cr_job.h"
#include "ps/cr_node_impl.h"
#include "ps/cr_wclient.h"
#include "ps/cr_wsample.h"

#include "node_util.h"
#include "stat_util.h"

#define KEYS 20000
#define DIM 64
#define ROUNDS 5
#define SAMPLES 5000
#define SROUNDS 7

static cr_node *nodes[2];
static atomic_int ready;

static void nap(void) { nanosleep(&(struct timespec){0, 200000}, NULL); }
static long long msgs(void) {
    long long m = 0;
    for (int i = 0; i < 2; i++) m += atomic_load(&nodes[i]->cnt.msgs_remote);
    return m;
}

static long long rmsgs(void) {
    long long m = 0;
    for (int i = 0; i < 2; i++) m += atomic_load(&nodes[i]->cnt.reloc_msgs);
    return m;
}

static long long rows_in(void) {
    long long r = 0;
    for (int i = 0; i < 2; i++) r += atomic_load(&nodes[i]->cnt.reloc_in);
    return r;
}

/* Localize nk keys spread over both homes (every KEYS / nk-th) in batches of b, each
 * waited for. Returns the seconds taken, or -1. */
static double move_all(cr_node *n, cr_wclient *w, int64_t nk, int64_t b, char *msg, size_t msgn) {
    cr_shard *s = cr_node_table_at(n, 0, NULL);
    int64_t *keys = malloc((size_t)nk * sizeof *keys);
    cr_err e;
    for (int64_t i = 0; i < nk; i++) keys[i] = (i * 7919) % nk * (KEYS / nk); /* 7919 is prime: a permutation */
    double t0 = cr_now();
    for (int64_t i = 0; i < nk; i += b) {
        uint32_t req;
        int64_t m = nk - i < b ? nk - i : b;
        if (cr_wclient_localize(w, s, keys + i, m, &req, &e) < 0 || cr_wclient_wait(w, req, &e) < 0) {
            snprintf(msg, msgn, "localize: %.200s", e.msg);
            free(keys);
            return -1;
        }
    }
    double t = cr_now() - t0;
    free(keys);
    return t;
}

/* Every row still holds its key in column 0 (pulled through the router). */
static int check_rows(cr_node *n, cr_wclient *w, int64_t nk, char *msg, size_t msgn) {
    cr_shard *s = cr_node_table_at(n, 0, NULL);
    int64_t keys[256];
    float *rows = malloc(sizeof(float) * 256 * DIM);
    cr_err e;
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < nk; i += 256) {
        int64_t m = nk - i < 256 ? nk - i : 256;
        for (int64_t j = 0; j < m; j++) keys[j] = (i + j) * (KEYS / nk);
        if (cr_wclient_pull_borrow(w, s, keys, m, rows, &e) < 0) {
            snprintf(msg, msgn, "pull: %.200s", e.msg);
            rc = -1;
        }
        for (int64_t j = 0; rc == 0 && j < m; j++)
            if (rows[j * DIM] != (float)keys[j]) {
                snprintf(msg, msgn, "key %lld holds %g", (long long)keys[j], rows[j * DIM]);
                rc = -1;
            }
    }
    free(rows);
    return rc;
}

/* Node 0's worker drives; node 1's worker moves keys when node 0 asks it
 * through `turn` (both run in this process). */
static atomic_int turn;      /* 0: nobody, 1: node 1 moves, 2: done, 3: node 1 samples */
static atomic_llong arg_b, arg_n, arg_t;
static cr_wsample *wsamp[2];
static char err1[256];

/* One sampling round on table t: SAMPLES uniform samples pulled
 * asynchronously and waited for, localized (waited), pushed (zeros).
 * Returns the seconds, or -1 with msg. */
static double sample_round(cr_node *n, cr_wclient *w, cr_wsample *ws, int t, char *msg, size_t msgn) {
    cr_shard *s = cr_node_table_at(n, t, NULL);
    int64_t *keys = malloc(SAMPLES * sizeof *keys);
    float *rows = malloc(sizeof(float) * SAMPLES * DIM), *g = calloc((size_t)SAMPLES * DIM, sizeof *g);
    cr_err e;
    cr_shandle h;
    uint32_t pend = 0, loc = 0;
    double t0 = cr_now(), dt = -1;
    if (cr_wsample_prepare(ws, s, t ? "flat" : "uni", SAMPLES, &h, &e) < 0 ||
        cr_wsample_pull(ws, s, h, SAMPLES, keys, rows, &pend, &e) < 0 || (pend && cr_wsample_finish(ws, pend, &e) < 0) ||
        cr_wclient_localize(w, s, keys, SAMPLES, &loc, &e) < 0 || cr_wclient_wait(w, loc, &e) < 0 ||
        cr_wclient_push_borrow(w, s, keys, SAMPLES, g, &e) < 0) {
        snprintf(msg, msgn, "sampling: %.200s", e.msg);
        goto out;
    }
    dt = cr_now() - t0;
    for (int i = 0; i < SAMPLES; i++)
        if (rows[(size_t)i * DIM] != (float)keys[i]) {
            snprintf(msg, msgn, "sampled key %lld came with row %g", (long long)keys[i], rows[(size_t)i * DIM]);
            dt = -1;
            break;
        }
out:
    free(keys);
    free(rows);
    free(g);
    return dt;
}

static int move_bench(cr_node *n, cr_wclient *w, int64_t b, char *msg, size_t msgn) {
    int64_t nk = b == 1 ? 2000 : KEYS; /* batches of 1 are slow: fewer keys */
    double us[ROUNDS], mpr[ROUNDS], rpr[ROUNDS];
    long long moved_all = 0;
    for (int r = -1; r < ROUNDS; r++) { /* round -1 brings every key to node 1: not counted */
        long long m0 = msgs(), q0 = rmsgs(), r0 = rows_in();
        double t = move_all(n, w, nk, b, msg, msgn);
        if (t < 0) return -1;
        long long m1 = msgs(), q1 = rmsgs(), r1 = rows_in();
        atomic_store(&arg_b, b);
        atomic_store(&arg_n, nk);
        atomic_store(&turn, 1);
        while (atomic_load(&turn) == 1) nap();
        if (err1[0]) return snprintf(msg, msgn, "node 1: %.200s", err1), -1;
        long long r2 = rows_in();
        if (r < 0) continue;
        if (r1 - r0 != nk || r2 - r1 != nk)
            return snprintf(msg, msgn, "moved %lld and %lld rows, not %lld each way", r1 - r0, r2 - r1, (long long)nk),
                   -1;
        us[r] = t / (double)(r1 - r0) * 1e6;
        mpr[r] = (double)(m1 - m0) / (double)(r1 - r0);
        rpr[r] = (double)(q1 - q0) / (double)(r1 - r0);
        moved_all += r2 - r0;
    }
    if (check_rows(n, w, nk, msg, msgn) < 0) return -1;
    printf("batch %5lld: %8.2f us per moved row, %6.3f relocation messages and %6.3f data-plane message counts "
           "per row (medians of %d rounds, %lld rows moved)\n",
           (long long)b, st_median(us, ROUNDS), st_median(rpr, ROUNDS), st_median(mpr, ROUNDS), ROUNDS, moved_all);
    fflush(stdout);
    return 0;
}

/* Both workers sample at once, the relocating table and the classic one
 * in alternating rounds; node 0's times. */
static int sample_bench(cr_node *n, cr_wclient *w, char *msg, size_t msgn) {
    double us[2][SROUNDS];
    long long r0 = rows_in();
    for (int r = -1; r < SROUNDS; r++) /* round -1: warm-up, not counted */
        for (int t = 0; t < 2; t++) {
            atomic_store(&arg_t, t);
            atomic_store(&turn, 3);
            double dt = sample_round(n, w, wsamp[0], t, msg, msgn);
            while (atomic_load(&turn) == 3) nap();
            if (dt < 0) return -1;
            if (err1[0]) return snprintf(msg, msgn, "node 1: %.200s", err1), -1;
            if (r >= 0) us[t][r] = dt / SAMPLES * 1e6;
        }
    double a = st_median(us[0], SROUNDS), c = st_median(us[1], SROUNDS);
    printf("sampled negatives (%d per round, both workers): relocating table %.2f us per sample, classic %.2f "
           "(ratio %.2fx; %lld rows moved; medians of %d rounds)\n",
           SAMPLES, a, c, a / c, rows_in() - r0, SROUNDS);
    return 0;
}

static void bench(cr_node *n, cr_wclient *w, int nb, const int64_t *bs) {
    char msg[256] = "";
    int rc = 0;
    for (int k = 0; k < nb && rc == 0; k++) rc = move_bench(n, w, bs[k], msg, sizeof msg);
    if (rc == 0) rc = sample_bench(n, w, msg, sizeof msg);
    if (rc < 0) printf("reloc bench failed: %s\n", msg);
    atomic_store(&turn, 2);
}

static void follower(cr_node *n, cr_wclient *w) {
    int t;
    while ((t = atomic_load(&turn)) != 2) {
        if (t != 1 && t != 3) {
            nap();
            continue;
        }
        int bad = t == 1 ? move_all(n, w, atomic_load(&arg_n), atomic_load(&arg_b), err1, sizeof err1) < 0
                         : sample_round(n, w, wsamp[1], (int)atomic_load(&arg_t), err1, sizeof err1) < 0;
        if (bad) {
            atomic_store(&turn, 2);
            return;
        }
        atomic_store(&turn, 0);
    }
}

static int nbs = 3;
static int64_t bsz[16] = {1, 100, 1000};

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    nodes[cr_node_id(n)] = n;
    wsamp[cr_node_id(n)] = w ? cr_wsample_new(n, lw, w) : NULL;
    atomic_fetch_add(&ready, 1);
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *res = w ? "ok" : "no client";
        while (w && atomic_load(&ready) < 2) nap();
        if (w && cr_node_id(n) == 0) bench(n, w, nbs, bsz);
        else if (w) follower(n, w);
        cr_node_reply(n, lw, !strcmp(res, "ok"), res, strlen(res));
    }
    cr_wsample_destroy(&wsamp[cr_node_id(n)]);
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

/* Table t: row k = (k, 0, ...), set from the job so a lost or swapped row
 * shows; dim 64, adagrad (64 floats of state travel with a moved row). */
static int table(cr_job *j, int t, cr_err *e) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, t ? "fixed" : "moving");
    d.keys = KEYS;
    d.dim = DIM;
    d.optim = (cr_optim){.kind = CR_OPTIM_ADAGRAD, .lr = 0.1f, .init = 0.1f};
    if (cr_job_table(j, t, &d, e) < 0) return -1;
    float *v = calloc((size_t)KEYS * DIM, sizeof *v);
    for (int64_t k = 0; k < KEYS; k++) v[k * DIM] = (float)k;
    int rc = 0;
    for (int node = 0; node < 2 && rc == 0; node++)
        rc = cr_job_set_rows(j, t, node, node * (KEYS / 2), KEYS / 2, DIM, 0, v + (size_t)node * (KEYS / 2) * DIM, NULL,
                             e);
    free(v);
    if (rc == 0) rc = cr_job_distribution(j, t, t ? "flat" : "uni", NULL, 0, e);
    return rc;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        nbs = 0;
        for (int i = 1; i < argc && nbs < 16; i++) {
            bsz[nbs] = atoll(argv[i]);
            if (bsz[nbs] < 1 || bsz[nbs] > KEYS) return printf("reloc: bad batch size '%s'\n", argv[i]), 2;
            nbs++;
        }
    }
    test_nodes t = {.hooks = &hooks, .count = 2};
    cr_job_opts o = {.nodes = 2, .workers = 1, .seed = 1, .spawn = 0, .on_listen = test_nodes_start, .on_listen_arg = &t,
                     .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    if (!j) return printf("%s\n", e.msg), 1;
    int rc = table(j, 0, &e) < 0 || table(j, 1, &e) < 0;
    rc = rc || cr_job_manage(j, 0, 1, NULL, 0, &e) < 0;
    rc = rc || cr_job_call(j, "bench", 5, "", 0, NULL, &e) < 0;
    if (rc) printf("%s\n", e.msg);
    cr_job_close(&j);
    test_nodes_join(&t);
    return rc;
}
