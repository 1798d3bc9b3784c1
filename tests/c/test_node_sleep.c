/* cr_node_sleep: a timed condition wait that sleeps its full time, ends at
 * once when the worker's command is cancelled (CR_M_CANCEL) and when the node
 * stops. Runs a one-node job in this process (no sockets off it). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/cr_time.h"
#include "cr_test.h"
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

static cr_sched *start(void) {
    cr_sched_opts o = {.nodes = 1, .workers = 1, .seed = 1, .spawn = 1, .hooks = &hooks};
    cr_err e;
    cr_sched *s = cr_sched_start(&o, &e);
    if (!s) printf("start: %s\n", e.msg);
    return s;
}

static void call(cr_sched *s, const char *secs) {
    cr_ctl h = {.type = CR_M_CALL};
    cr_err e;
    cr_sched_send(s, -1, &h, secs, strlen(secs), "", 0, &e);
}

/* Wait for the worker's reply: rc and elapsed seconds, message in msg. */
static int reply(cr_sched *s, int *rc, double *secs, char *msg, size_t n) {
    for (;;) {
        cr_parts p;
        cr_err e;
        if (cr_sched_recv(s, &p, 10000, &e) != 1) return -1;
        cr_ctl h;
        const void *p1, *p2;
        size_t n1, n2;
        cr_ctl_parse(&p, 0, &h, &p1, &n1, &p2, &n2);
        int got = h.type == CR_M_REPLY;
        if (got) {
            char buf[CR_ERR_MAX + 64];
            snprintf(buf, sizeof buf, "%.*s", (int)n1, (const char *)p1);
            int used = 0;
            sscanf(buf, "%d %lf %n", rc, secs, &used);
            snprintf(msg, n, "%s", buf + used);
        }
        cr_parts_close(&p);
        if (got) return 0;
    }
}

static void test_full_sleep(void) {
    cr_sched *s = start();
    CR_CHECK(s != NULL);
    int rc;
    double secs;
    char msg[300];
    call(s, "0.2");
    CR_CHECK(reply(s, &rc, &secs, msg, sizeof msg) == 0);
    CR_CHECK(rc == 0);
    CR_CHECK(secs >= 0.19 && secs < 1.0);
    call(s, "0");
    CR_CHECK(reply(s, &rc, &secs, msg, sizeof msg) == 0);
    CR_CHECK(rc == 0 && secs < 0.1);
    cr_sched_close(&s);
}

static void test_cancel_ends_sleep(void) {
    cr_sched *s = start();
    CR_CHECK(s != NULL);
    call(s, "30");
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL); /* let the worker start sleeping */
    cr_ctl h = {.type = CR_M_CANCEL};
    cr_err e;
    cr_sched_send(s, -1, &h, NULL, 0, NULL, 0, &e);
    int rc;
    double secs;
    char msg[300];
    CR_CHECK(reply(s, &rc, &secs, msg, sizeof msg) == 0);
    CR_CHECK(rc == -1);
    CR_CHECK(secs < 1.0);
    CR_CHECK(strstr(msg, "cancelled") != NULL);
    cr_sched_close(&s);
}

static void test_stop_ends_sleep(void) {
    cr_sched *s = start();
    CR_CHECK(s != NULL);
    call(s, "30");
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
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
