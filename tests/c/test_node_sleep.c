/* cr_node_sleep: a timed condition wait that sleeps its full time, ends at
 * once when the worker's command is cancelled (CR_M_CANCEL) and when the node
 * stops. Runs a one-node job in this process (no sockets off it). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/cr_time.h"
#include "cr_test.h"
#include "ps/cr_job.h"
#include "ps/cr_proto.h"
#include "ps/cr_sched.h"

/* CALL p1 = seconds to sleep (text); reply "rc elapsed message". */
static void worker_main(cr_node *n, int lw) {
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        char secs[32], out[CR_ERR_MAX + 64];
        snprintf(secs, sizeof secs, "%.*s", (int)c.n1, c.p1);
        cr_err e = {{0}};
        double t0 = cr_now();
        int rc = cr_node_sleep(n, lw, atof(secs), &e);
        snprintf(out, sizeof out, "%d %.3f %s", rc, cr_now() - t0, rc < 0 ? e.msg : "");
        cr_node_reply(n, lw, 1, out, strlen(out));
    }
}

static const cr_node_hooks hooks = {worker_main};

static cr_job *start(void) {
    cr_job_opts o = {.nodes = 1, .workers = 1, .seed = 1, .spawn = 1, .hooks = &hooks};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    if (!j) printf("start: %s\n", e.msg);
    return j;
}

/* What one call saw: the worker's reply, and when to cancel (0: never). */
typedef struct {
    cr_job *j;
    double cancel_at;
    int rc, got;
    double secs;
    char msg[300];
} seen;

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)worker;
    (void)e;
    seen *s = arg;
    char buf[CR_ERR_MAX + 64];
    snprintf(buf, sizeof buf, "%.*s", (int)n, data);
    int used = 0;
    sscanf(buf, "%d %lf %n", &s->rc, &s->secs, &used);
    snprintf(s->msg, sizeof s->msg, "%s", buf + used);
    s->got = 1;
    return 0;
}

static int on_tick(void *arg, cr_err *e) {
    seen *s = arg;
    if (s->cancel_at > 0 && cr_now() >= s->cancel_at) {
        s->cancel_at = 0;
        return cr_job_cancel(s->j, e);
    }
    return 0;
}

/* Sleep `secs` on the worker, cancelling after cancel_after seconds (< 0: never). */
static int call(cr_job *j, const char *secs, double cancel_after, seen *s) {
    memset(s, 0, sizeof *s);
    s->j = j;
    s->cancel_at = cancel_after >= 0 ? cr_now() + cancel_after : 0;
    cr_job_cb cb = {.result = on_result, .tick = on_tick, .arg = s};
    cr_err e;
    int rc = cr_job_call(j, secs, strlen(secs), "", 0, &cb, &e);
    if (rc < 0) printf("  call: %s\n", e.msg);
    return rc == 0 && s->got ? 0 : -1;
}

static void test_full_sleep(void) {
    cr_job *j = start();
    CR_CHECK(j != NULL);
    seen s;
    CR_CHECK(call(j, "0.2", -1, &s) == 0);
    CR_CHECK(s.rc == 0);
    CR_CHECK(s.secs >= 0.19 && s.secs < 1.0);
    CR_CHECK(call(j, "0", -1, &s) == 0);
    CR_CHECK(s.rc == 0 && s.secs < 0.1);
    cr_job_close(&j);
}

static void test_cancel_ends_sleep(void) {
    cr_job *j = start();
    CR_CHECK(j != NULL);
    seen s;
    CR_CHECK(call(j, "30", 0.1, &s) == 0); /* the worker answers: its sleep ended early */
    CR_CHECK(s.rc == -1);
    CR_CHECK(s.secs < 1.0);
    CR_CHECK(strstr(s.msg, "cancelled") != NULL);
    cr_job_close(&j);
}

/* A CALL whose answer nobody waits for (sent on the scheduler directly):
 * closing must wake the sleeping worker, not wait out its 30 s. */
static void test_stop_ends_sleep(void) {
    cr_sched_opts o = {.nodes = 1, .workers = 1, .seed = 1, .spawn = 1, .hooks = &hooks};
    cr_err e;
    cr_sched *s = cr_sched_start(&o, &e);
    CR_CHECK(s != NULL);
    if (!s) return;
    cr_msg_call c = {.fn = "30", .fnn = 2, .args = "", .argsn = 0};
    cr_proto_msg m;
    CR_CHECK(cr_proto_encode_call(&c, &m, &e) == 0);
    CR_CHECK(cr_sched_send(s, -1, &m, &e) == 0);
    cr_proto_msg_free(&m);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL); /* let the worker start sleeping */
    double t0 = cr_now();
    cr_sched_close(&s); /* shutdown: teardown wakes the sleeping worker */
    CR_CHECK(cr_now() - t0 < 2.0);
}

int main(void) {
    CR_RUN(test_full_sleep);
    CR_RUN(test_cancel_ends_sleep);
    CR_RUN(test_stop_ends_sleep);
    return cr_test_done();
}
