/* Relocation through three node threads with C workers (no Lua): every
 * worker localizes every key of a small table, pushes +1 to all of them
 * without waiting and pulls them at once, round after round, so keys move
 * between all three nodes while requests for them are forwarded and queue
 * in transit. Checked: read-your-writes on every pull, every key equal to
 * its number of adds afterwards (rows read through the job client, which
 * brings keys home), the transit queue used, and a classic table on the
 * same job sending no relocation message. Also MANAGE's codec. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cr_test.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_proto.h"
#include "ps/cr_wclient.h"

#define NODES 3
#define KEYS 24
#define ROUNDS 40

/* Table `table`: ROUNDS rounds of localize-all, push +1 to all (not
 * waited), pull all (must show the push). */
static const char *work(cr_node *n, cr_wclient *w, int table, char *msg, size_t msgn) {
    cr_shard *s = cr_node_table_at(n, table, NULL);
    int64_t keys[KEYS];
    float ones[KEYS * 2], before[KEYS * 2], after[KEYS * 2];
    cr_err e;
    for (int i = 0; i < KEYS; i++) keys[i] = (i * 7 + cr_node_id(n) * 5) % KEYS; /* a different order per node */
    for (int i = 0; i < KEYS * 2; i++) ones[i] = 1;
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t loc, push;
        if (cr_wclient_localize(w, s, keys, KEYS, &loc, &e) < 0) return "localize";
        if (cr_wclient_pull_borrow(w, s, keys, KEYS, before, &e) < 0) return "pull before";
        if (cr_wclient_push_copy(w, s, keys, KEYS, ones, &push, &e) < 0) return "push";
        if (cr_wclient_pull_borrow(w, s, keys, KEYS, after, &e) < 0) return "pull after";
        for (int i = 0; i < KEYS; i++)
            if (after[2 * i] < before[2 * i] + 1) {
                snprintf(msg, msgn, "read-your-writes: key %lld %g then %g", (long long)keys[i], before[2 * i],
                         after[2 * i]);
                return msg;
            }
        if (cr_wclient_wait(w, push, &e) < 0 || cr_wclient_wait(w, loc, &e) < 0) return "wait";
    }
    return "ok";
}

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    char msg[256];
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        int table = c.n2 > 0 ? c.p2[0] - '0' : 0;
        const char *r = w ? work(n, w, table, msg, sizeof msg) : "no client";
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

typedef struct tally {
    int ok;
    long long queued, rows_in, msgs;
    char last[256];
} tally;

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)e;
    tally *t = arg;
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*s", (int)n, data);
    if (worker >= 0) {
        t->ok += !strcmp(buf, "ok");
        snprintf(t->last, sizeof t->last, "%.200s", buf);
        return 0;
    }
    t->queued += test_field(buf, "queued_total=");
    t->rows_in += test_field(buf, "rows_in=");
    t->msgs += test_field(buf, "relocation={rows_in=") >= 0 ? test_field(buf, ",messages=") : 0;
    return 0;
}

static int run(cr_job *j, int table, tally *t) {
    cr_job_cb cb = {.result = on_result, .arg = t};
    char args[2] = {(char)('0' + table), 0};
    cr_err e;
    return cr_job_call(j, "work", 4, args, 1, &cb, &e);
}

static void check_counts(cr_job *j, int table) {
    float v[KEYS * 2], st[KEYS * 2];
    cr_err e;
    int bad = 0;
    for (int node = 0; node < NODES; node++) {
        int64_t block = (KEYS + NODES - 1) / NODES, lo = node * block;
        CR_CHECK(cr_job_get_rows(j, table, node, lo, block, 2, 0, v, st, &e) == 0);
        for (int i = 0; i < block * 2; i++) bad += v[i] != (float)(NODES * ROUNDS);
    }
    CR_CHECK(bad == 0);
}

static void test_three_nodes(void) {
    test_nodes t = {.hooks = &hooks, .count = NODES};
    cr_job_opts o = {.nodes = NODES, .workers = 1, .seed = 1, .spawn = 0, .on_listen = test_nodes_start,
                     .on_listen_arg = &t, .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    CR_CHECK(j != NULL);
    if (!j) return;
    cr_table_def d;
    memset(&d, 0, sizeof d);
    d.keys = KEYS;
    d.dim = 2;
    d.optim.kind = CR_OPTIM_ADD;
    snprintf(d.name, sizeof d.name, "classic");
    CR_CHECK(cr_job_table(j, 0, &d, &e) == 0);
    snprintf(d.name, sizeof d.name, "moving");
    CR_CHECK(cr_job_table(j, 1, &d, &e) == 0);
    CR_CHECK(cr_job_manage(j, 1, 1, NULL, 0, &e) == 0);
    tally c = {0}, r = {0}, s0 = {0}, s1 = {0};
    cr_job_cb scb = {.result = on_result, .arg = &s0};
    CR_CHECK(run(j, 0, &c) == 0 && c.ok == NODES);
    CR_CHECK(cr_job_stats(j, &scb, &e) == 0);
    CR_CHECK(s0.msgs == 0 && s0.rows_in == 0); /* a classic table: no relocation message */
    CR_CHECK(run(j, 1, &r) == 0);
    CR_CHECK(r.ok == NODES);
    if (r.ok != NODES) printf("  worker said: %s\n", r.last);
    scb.arg = &s1;
    CR_CHECK(cr_job_stats(j, &scb, &e) == 0);
    printf("  relocated rows %lld, queued in transit %lld, relocation messages %lld\n", s1.rows_in, s1.queued,
           s1.msgs);
    CR_CHECK(s1.rows_in > 0 && s1.queued > 0 && s1.msgs > 0);
    check_counts(j, 0);
    check_counts(j, 1);
    CR_CHECK(cr_job_manage(j, 1, 0, NULL, 0, &e) == 0); /* back to classic: everything home */
    check_counts(j, 1);
    cr_job_close(&j);
    test_nodes_join(&t);
}

static void test_manage_codec(void) {
    int64_t keys[3] = {5, 0, 7};
    cr_msg_manage g = {.table = 2, .mode = 1, .nrepl = 3, .repl = keys}, out;
    cr_proto_msg m;
    cr_err e;
    CR_CHECK(cr_proto_encode_manage(&g, &m, &e) == 0);
    CR_CHECK(cr_proto_decode_manage(&m, &out, &e) == 0);
    CR_CHECK(out.table == 2 && out.mode == 1 && out.nrepl == 3 && cr_proto_i64(out.repl, 2) == 7);
    m.n[0] = 16; /* a frame shorter than its count */
    CR_CHECK(cr_proto_decode_manage(&m, &out, &e) < 0 && strstr(e.msg, "MANAGE"));
    m.n[0] = 24;
    m.h.a = 7; /* no such mode */
    CR_CHECK(cr_proto_decode_manage(&m, &out, &e) < 0 && strstr(e.msg, "mode"));
    g.mode = 2;
    CR_CHECK(cr_proto_encode_manage(&g, &m, &e) < 0);
    g.mode = 0;
    g.nrepl = -1;
    CR_CHECK(cr_proto_encode_manage(&g, &m, &e) < 0);
}

int main(void) {
    CR_RUN(test_manage_codec);
    CR_RUN(test_three_nodes);
    return cr_test_done();
}
