/* Sampling from a relocating table (docs/management.md, cr_wsample.c): two
 * node threads, two C workers each; table T (row k = {k, k}) is managed by
 * relocation and only node 0's workers sample from it, at levels 1, 2 and
 * 3 (every key home again before each level). Checked per level: every
 * pulled row matches its key (blocking and asynchronous pulls, through the
 * router) and the draws pass chi-square against pi. At levels 2 and 3 the
 * pools' fetches localize node 1's keys (the sampler's `remote` equals its
 * `localized`) and the later rounds fetch nothing (the keys are held on
 * node 0 now); at level 1 a handle's fetch copies rows (nothing localized,
 * fetches all along). job:stats shows node 0's rows_in and localized. */
#include <pthread.h>
#include <stdlib.h>

#include "cr_test.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_wclient.h"
#include "ps/cr_wsample.h"
#include "stat_util.h"

#define K 60
#define DIM 2
#define ROUNDS 20
#define PER 200
#define BINS 20 /* chi-square over key % 20: 19 degrees of freedom */

static double weight(int64_t k) { return 1 + k % 4; }

/* Pull handle h to the end in portions of 7, alternating blocking and
 * asynchronous pulls; check every row, count keys into cnt. */
static const char *drain(cr_wsample *ws, cr_shard *s, cr_shandle h, long *cnt, char *msg, size_t msgn) {
    cr_err e;
    int64_t keys[7], left;
    float rows[7 * DIM];
    for (int turn = 0; (left = cr_wsample_left(ws, h)) > 0; turn++) {
        int64_t m = left < 7 ? left : 7;
        uint32_t pend = 0;
        if (cr_wsample_pull(ws, s, h, m, keys, rows, turn % 2 ? &pend : NULL, &e) < 0 ||
            (pend && cr_wsample_finish(ws, pend, &e) < 0)) {
            snprintf(msg, msgn, "pull: %.200s", e.msg);
            return msg;
        }
        for (int64_t i = 0; i < m; i++) {
            if (rows[i * DIM] != (float)keys[i] || rows[i * DIM + 1] != (float)keys[i]) {
                snprintf(msg, msgn, "key %lld came with row %g", (long long)keys[i], rows[i * DIM]);
                return msg;
            }
            cnt[keys[i] % BINS]++;
        }
    }
    return "ok";
}

static const char *draw(cr_node *n, cr_wsample *ws, int level, char *msg, size_t msgn) {
    if (cr_node_id(n) != 0) return "ok";
    cr_shard *s = cr_node_table_at(n, 0, NULL);
    cr_sampling_stats a, b, z;
    long cnt[BINS] = {0};
    cr_err e;
    cr_wsample_stats(ws, &z);
    for (int r = 0; r < ROUNDS; r++) {
        cr_shandle h;
        if (cr_wsample_prepare(ws, s, "pi", PER, &h, &e) < 0) return "prepare";
        const char *err = drain(ws, s, h, cnt, msg, msgn);
        if (strcmp(err, "ok")) return err;
        if (r == ROUNDS / 2 - 1) cr_wsample_stats(ws, &a);
    }
    cr_wsample_stats(ws, &b);
    unsigned long long first = a.remote - z.remote, later = b.remote - a.remote;
    double p[BINS] = {0}, tot = 0;
    for (int64_t k = 0; k < K; k++) p[k % BINS] += weight(k), tot += weight(k);
    for (int i = 0; i < BINS; i++) p[i] /= tot;
    double chi2 = st_chi2(cnt, p, BINS, (long)ROUNDS * PER);
    snprintf(msg, msgn, "fetched %llu keys in the first %d rounds (%llu localized), %llu in the last %d; chi2 %.1f",
             first, ROUNDS / 2, (unsigned long long)(a.localized - z.localized), later, ROUNDS / 2, chi2);
    printf("  worker: %s\n", msg);
    if (first == 0) return msg;
    if (level == 1 && (b.localized != z.localized || later == 0)) return msg; /* copies */
    if (level > 1 && (a.localized - z.localized != first || later != 0 || b.local - a.local == 0)) return msg;
    if (!(chi2 < CHI2_999_DF19)) return msg;
    return "ok";
}

typedef struct wstate {
    cr_wsample *ws;
    char msg[256];
} wstate;

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    wstate st = {.ws = w ? cr_wsample_new(n, lw, w) : NULL};
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = !st.ws                                 ? "no client"
                        : c.n1 == 4 && !memcmp(c.p1, "fill", 4) ? test_fill_rows(n, w, lw, DIM)
                                                                : draw(n, st.ws, c.n2 ? c.p2[0] - '0' : 1, st.msg,
                                                                       sizeof st.msg);
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
    cr_wsample_destroy(&st.ws);
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

typedef struct tally {
    int ok;
    long long rows_in[2], localized[2];
    int nstats;
} tally;

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)e;
    tally *t = arg;
    char buf[8192];
    snprintf(buf, sizeof buf, "%.*s", (int)n, data);
    long long node = test_field(buf, "{node=");
    if (worker < 0 && node >= 0 && node < 2) {
        const char *last = NULL; /* the node's totals: the last sampling={...} */
        for (const char *q = buf; (q = strstr(q, "sampling={")); q++) last = q;
        t->rows_in[node] = test_field(buf, "rows_in=");
        t->localized[node] = last ? test_field(last, "localized=") : -1;
        t->nstats++;
    } else if (!strcmp(buf, "ok")) {
        t->ok++;
    } else {
        printf("  worker %d: %s\n", worker, buf);
    }
    return 0;
}

static int call(cr_job *j, const char *fn, const char *arg, tally *t) {
    cr_job_cb cb = {.result = on_result, .arg = t};
    cr_err e;
    t->ok = 0;
    if (cr_job_call(j, fn, strlen(fn), arg, strlen(arg), &cb, &e) < 0) printf("  %s: %s\n", fn, cr_job_error(j));
    return t->ok;
}

static void test_relocating_pools(void) {
    test_nodes t = {.hooks = &hooks, .count = 2};
    cr_job_opts o = {.nodes = 2, .workers = 2, .seed = 7, .spawn = 0, .on_listen = test_nodes_start,
                     .on_listen_arg = &t, .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    CR_CHECK(j != NULL);
    if (!j) return;
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "T");
    d.keys = K;
    d.dim = DIM;
    d.optim.kind = CR_OPTIM_ADD;
    CR_CHECK(cr_job_table(j, 0, &d, &e) == 0);
    double w[K];
    for (int k = 0; k < K; k++) w[k] = weight(k);
    CR_CHECK(cr_job_distribution(j, 0, "pi", w, K, &e) == 0);
    tally tl = {0};
    CR_CHECK(call(j, "fill", "", &tl) == 4);
    for (int level = 1; level <= 3; level++) {
        /* reuse 1: each draw is pulled once, so the counts are draws from pi */
        cr_sampling_entry x = {.name = "", .level = level, .pool = 9, .reuse = 1, .postpone = level == 3};
        CR_CHECK(cr_job_sampling(j, "test", &x, 1, &e) == 0);
        CR_CHECK(cr_job_manage(j, 0, 0, NULL, 0, &e) == 0); /* every key home */
        CR_CHECK(cr_job_manage(j, 0, 1, NULL, 0, &e) == 0);
        printf("  level %d\n", level);
        char arg[2] = {(char)('0' + level), 0};
        CR_CHECK(call(j, "draw", arg, &tl) == 4);
    }
    tally st = {0};
    cr_job_cb cb = {.result = on_result, .arg = &st};
    CR_CHECK(cr_job_stats(j, &cb, &e) == 0 && st.nstats == 2);
    printf("  node 0: rows_in %lld, localized %lld; node 1: rows_in %lld, localized %lld\n", st.rows_in[0],
           st.localized[0], st.rows_in[1], st.localized[1]);
    CR_CHECK(st.rows_in[0] > 0 && st.localized[0] > 0 && st.localized[1] == 0);
    cr_job_close(&j);
    test_nodes_join(&t);
}

int main(void) {
    CR_RUN(test_relocating_pools);
    return cr_test_done();
}
