#include "ps/cr_clocks.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"

/* A local worker's side of the clocks (under mu, except seen_cmd: see
 * cr_clocks_cancelled). */
typedef struct wclock {
    int64_t clock, barrier;
    double wait_s;
    int64_t max_gap;
    uint64_t seen_cmd; /* last command generation taken by this worker */
} wclock;

struct cr_clocks {
    int id, wpn, W;
    atomic_int stop;
    pthread_mutex_t mu;    /* guards everything below */
    pthread_cond_t cmd_cv; /* new command or stop */
    pthread_cond_t clk_cv; /* clocks, policy, command or cancel changed, or stop */
    uint64_t cmd_gen;
    _Atomic uint64_t cancel_gen; /* the command generation cancelled (0: none) */
    _Atomic uint64_t clk_gen; /* bumped on every clocks/policy change (under mu; read without it by a spinning waiter) */
    cr_cmd cmd;
    char *cmd_buf1, *cmd_buf2;
    int64_t *clocks, *barriers; /* per global worker, from the scheduler */
    int64_t *active;
    wclock *ws; /* per local worker */
    uint64_t pol_gen;
    char *pol_src, *pol_chunk, *pol_opts;
    size_t pol_srcn, pol_optsn;
};

cr_clocks *cr_clocks_new(int id, int nodes, int wpn) {
    cr_clocks *c = cr_xcalloc(1, sizeof *c);
    c->id = id;
    c->wpn = wpn;
    c->W = nodes * wpn;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cmd_cv, NULL);
    pthread_cond_init(&c->clk_cv, NULL);
    c->clocks = cr_xcalloc((size_t)c->W + 1, 8);
    c->barriers = cr_xcalloc((size_t)c->W + 1, 8);
    c->active = cr_xcalloc((size_t)c->W + 1, 8);
    c->ws = cr_xcalloc((size_t)wpn + 1, sizeof *c->ws);
    return c;
}

void cr_clocks_destroy(cr_clocks **cp) {
    cr_clocks *c = cp ? *cp : NULL;
    if (!c) return;
    void *bufs[] = {c->clocks, c->barriers, c->active, c->ws, c->cmd_buf1, c->cmd_buf2,
                    c->pol_src, c->pol_chunk, c->pol_opts};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cmd_cv);
    pthread_cond_destroy(&c->clk_cv);
    free(c);
    *cp = NULL;
}

static char *dupn(const void *p, size_t len) {
    char *s = cr_xmalloc(len + 1);
    if (len) memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

/* ---------- main thread ---------- */

/* Wake every worker waiting at a clock or barrier (caller holds c->mu). */
static void clocks_changed(cr_clocks *c) {
    c->clk_gen++;
    pthread_cond_broadcast(&c->clk_cv);
}

void cr_clocks_post(cr_clocks *c, int type, const void *p1, size_t n1, const void *p2, size_t n2) {
    pthread_mutex_lock(&c->mu);
    free(c->cmd_buf1);
    free(c->cmd_buf2);
    c->cmd_buf1 = dupn(p1, n1);
    c->cmd_buf2 = dupn(p2, n2);
    c->cmd = (cr_cmd){type, c->cmd_buf1, c->cmd_buf2, n1, n2};
    c->cmd_gen++;
    for (int i = 0; i < c->W; i++) c->active[i] = 1;
    pthread_cond_broadcast(&c->cmd_cv);
    clocks_changed(c);
    pthread_mutex_unlock(&c->mu);
}

void cr_clocks_cancel(cr_clocks *c) {
    pthread_mutex_lock(&c->mu);
    atomic_store(&c->cancel_gen, c->cmd_gen);
    clocks_changed(c);
    pthread_mutex_unlock(&c->mu);
}

void cr_clocks_set_policy(cr_clocks *c, const cr_msg_script *s) {
    pthread_mutex_lock(&c->mu);
    free(c->pol_src);
    free(c->pol_chunk);
    free(c->pol_opts);
    c->pol_src = dupn(s->src, s->srcn);
    c->pol_srcn = s->srcn;
    c->pol_chunk = dupn(s->chunk, s->chunkn);
    c->pol_opts = dupn(s->opts, s->optsn);
    c->pol_optsn = s->optsn;
    c->pol_gen++;
    clocks_changed(c);
    pthread_mutex_unlock(&c->mu);
}

void cr_clocks_raise(cr_clocks *c, const cr_msg_clocks *m) {
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < m->W; i++) {
        int64_t ci = cr_proto_i64(m->clocks, (size_t)i), bi = cr_proto_i64(m->barriers, (size_t)i);
        if (ci > c->clocks[i]) c->clocks[i] = ci;
        if (bi > c->barriers[i]) c->barriers[i] = bi;
        c->active[i] = cr_proto_i64(m->active, (size_t)i);
    }
    clocks_changed(c);
    pthread_mutex_unlock(&c->mu);
}

void cr_clocks_set(cr_clocks *c, const cr_msg_clocks *m) {
    pthread_mutex_lock(&c->mu);
    memcpy(c->clocks, m->clocks, (size_t)m->W * 8);
    memcpy(c->barriers, m->barriers, (size_t)m->W * 8);
    for (int lw = 0; lw < c->wpn; lw++) {
        c->ws[lw].clock = c->clocks[c->id * c->wpn + lw];
        c->ws[lw].barrier = c->barriers[c->id * c->wpn + lw];
    }
    clocks_changed(c);
    pthread_mutex_unlock(&c->mu);
}

void cr_clocks_stop(cr_clocks *c) {
    if (!c) return;
    atomic_store(&c->stop, 1);
    pthread_mutex_lock(&c->mu);
    pthread_cond_broadcast(&c->cmd_cv);
    pthread_cond_broadcast(&c->clk_cv);
    pthread_mutex_unlock(&c->mu);
}

void cr_clocks_stat(cr_clocks *c, int lw, cr_clock_stat *out) {
    pthread_mutex_lock(&c->mu);
    const wclock *w = &c->ws[lw];
    *out = (cr_clock_stat){.clock = w->clock, .barrier = w->barrier, .max_gap = w->max_gap, .wait_s = w->wait_s};
    pthread_mutex_unlock(&c->mu);
}

/* ---------- worker threads ---------- */

int cr_clocks_stopping(const cr_clocks *c) { return atomic_load(&((cr_clocks *)c)->stop); }

/* seen_cmd is written by worker lw itself (cr_clocks_next_cmd), so reading
 * it here, on that worker's thread, needs no lock. */
int cr_clocks_cancelled(cr_clocks *c, int lw) {
    uint64_t g = atomic_load(&c->cancel_gen); /* command generations start at 1 */
    return g != 0 && g == c->ws[lw].seen_cmd;
}

/* -1 with the reason in e if worker lw must leave a clock or barrier wait:
 * the node stops, or its command was cancelled. */
static int must_leave(cr_clocks *c, int lw, cr_err *e) {
    if (atomic_load(&c->stop)) return cr_errf(e, "node stopping");
    if (cr_clocks_cancelled(c, lw)) return cr_errf(e, CR_NODE_CANCELLED_MSG);
    return 0;
}

int64_t cr_clocks_worker(cr_clocks *c, int lw) {
    pthread_mutex_lock(&c->mu);
    int64_t v = c->ws[lw].clock;
    pthread_mutex_unlock(&c->mu);
    return v;
}

int cr_clocks_next_cmd(cr_clocks *c, int lw, cr_cmd *cmd) {
    pthread_mutex_lock(&c->mu);
    while (!atomic_load(&c->stop) && c->cmd_gen == c->ws[lw].seen_cmd) pthread_cond_wait(&c->cmd_cv, &c->mu);
    int stop = atomic_load(&c->stop);
    if (!stop) {
        c->ws[lw].seen_cmd = c->cmd_gen;
        *cmd = c->cmd;
    }
    pthread_mutex_unlock(&c->mu);
    return stop ? -1 : 0;
}

int cr_clocks_policy_refresh(cr_clocks *c, uint64_t *gen, cr_policy_load_fn load, void *arg) {
    pthread_mutex_lock(&c->mu);
    if (c->pol_gen == *gen) {
        pthread_mutex_unlock(&c->mu);
        return 0;
    }
    /* Copy out under the lock: load runs Lua and must not hold it. */
    size_t sn = c->pol_srcn, on = c->pol_optsn;
    char *src = cr_xmalloc(sn + 1), *opts = cr_xmalloc(on + 1), *chunk = cr_xstrdup(c->pol_chunk ? c->pol_chunk : "?");
    memcpy(src, c->pol_src, sn);
    memcpy(opts, c->pol_opts, on);
    uint64_t g = c->pol_gen;
    pthread_mutex_unlock(&c->mu);
    int rc = load(arg, src, sn, chunk, opts, on);
    if (rc == 0) *gen = g;
    free(src);
    free(opts);
    free(chunk);
    return rc;
}

static void min_max(cr_clocks *c, int gw, int64_t mine, int64_t *vec, int64_t *mn, int64_t *mx) {
    int any = 0;
    *mn = *mx = mine;
    for (int i = 0; i < c->W; i++) {
        int64_t v = i == gw ? mine : vec[i];
        if (!c->active[i] && i != gw) continue;
        if (!any || v < *mn) *mn = v;
        if (!any || v > *mx) *mx = v;
        any = 1;
    }
}

int64_t cr_clocks_advance(cr_clocks *c, int lw, int barrier, cr_msg_state *st) {
    int gw = c->id * c->wpn + lw;
    pthread_mutex_lock(&c->mu);
    int64_t mine = barrier ? ++c->ws[lw].barrier : ++c->ws[lw].clock;
    int64_t *vec = barrier ? c->barriers : c->clocks;
    if (vec[gw] < mine) vec[gw] = mine;
    *st = (cr_msg_state){.worker = gw, .clock = c->ws[lw].clock, .barrier = c->ws[lw].barrier};
    pthread_mutex_unlock(&c->mu);
    return mine;
}

/* Before a waiter at a clock sleeps on clk_cv (caller holds c->mu, released
 * meanwhile): up to CR_CLOCK_SPIN_S of yielding spin until the clocks
 * change. Block-wise jobs (DBPG: one clock per block, 64 per epoch) wait
 * at a clock for tens of microseconds, and on a virtual machine waking a
 * sleeping thread on an idle vCPU cost about as much again every time;
 * sched_yield leaves the core to any thread with work (the node's own
 * thread, which brings the news). */
#define CR_CLOCK_SPIN_S 200e-6
static void spin_for_news(cr_clocks *c, uint64_t gen) {
    pthread_mutex_unlock(&c->mu);
    double until = cr_now() + CR_CLOCK_SPIN_S;
    while (atomic_load(&c->clk_gen) == gen && !atomic_load(&c->stop) && cr_now() < until) sched_yield();
    pthread_mutex_lock(&c->mu);
}

int cr_clocks_wait(cr_clocks *c, int lw, int64_t mine, cr_decide_fn decide, void *arg, cr_err *e) {
    int gw = c->id * c->wpn + lw, W = c->W;
    int64_t *snap = cr_xmalloc((size_t)W * sizeof *snap);
    double t0 = cr_now();
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if ((rc = must_leave(c, lw, e)) < 0) break;
        int64_t mn, mx;
        min_max(c, gw, mine, c->clocks, &mn, &mx);
        memcpy(snap, c->clocks, (size_t)W * sizeof *snap);
        snap[gw] = mine;
        uint64_t gen = c->clk_gen;
        pthread_mutex_unlock(&c->mu);
        int d = decide(arg, mine, mn, snap, W, e);
        pthread_mutex_lock(&c->mu);
        if (d < 0) {
            rc = -1;
            break;
        }
        if (d > 0) {
            if (mine - mn > c->ws[lw].max_gap) c->ws[lw].max_gap = mine - mn;
            break;
        }
        /* Wait for news unless something changed while deciding. */
        if (gen == c->clk_gen && !atomic_load(&c->stop)) {
            spin_for_news(c, gen);
            if (gen == c->clk_gen && !atomic_load(&c->stop)) pthread_cond_wait(&c->clk_cv, &c->mu);
        }
    }
    c->ws[lw].wait_s += cr_now() - t0;
    pthread_mutex_unlock(&c->mu);
    free(snap);
    return rc;
}

/* Waits on clk_cv, which a cancel and the stop broadcast, so that either
 * ends the sleep at once. */
int cr_clocks_sleep(cr_clocks *c, int lw, double seconds, cr_err *e) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    if (seconds > 0) {
        double t = seconds > 1e9 ? 1e9 : seconds; /* about 30 years: forever */
        until.tv_sec += (time_t)t;
        until.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if ((rc = must_leave(c, lw, e)) < 0) break;
        if (seconds <= 0 || pthread_cond_timedwait(&c->clk_cv, &c->mu, &until) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&c->mu);
    if (rc == 0) rc = must_leave(c, lw, e); /* a cancel that came with the deadline still counts */
    return rc;
}

int cr_clocks_barrier(cr_clocks *c, int lw, int64_t mine, cr_err *e) {
    int gw = c->id * c->wpn + lw;
    double t0 = cr_now();
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if ((rc = must_leave(c, lw, e)) < 0) break;
        int64_t mn, mx;
        min_max(c, gw, mine, c->barriers, &mn, &mx);
        if (mn >= mine) break;
        pthread_cond_wait(&c->clk_cv, &c->mu);
    }
    c->ws[lw].wait_s += cr_now() - t0;
    pthread_mutex_unlock(&c->mu);
    return rc;
}
