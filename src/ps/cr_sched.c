#include "ps/cr_sched.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "ps/cr_proto.h"

extern char **environ;

#define HB_INTERVAL 0.5

typedef struct nodeinfo {
    char rid[256];
    size_t ridlen;
    pid_t pid;   /* as registered */
    int rank;    /* a launcher's rank, as registered (-1: none) */
    char addr[256];
    double heard;
    int dead;
} nodeinfo;

struct cr_sched {
    cr_sched_opts o;
    void *zctx;
    void *router;   /* sched thread */
    void *api;      /* PAIR, caller side */
    void *api_t;    /* PAIR, thread side */
    char endpoint[256];
    pid_t *children; /* 0 once reaped */
    int *pidfd;      /* per child: readable once it exits (-1: none, or reaped) */
    int nchildren;
    pthread_t thread, inproc_node;
    int thread_started, inproc_started;
    nodeinfo *nodes;
    int W;
    int64_t *clocks, *bar; /* bar: barriers[W] then active[W] */
    int clocks_dirty;      /* clocks or bar changed since the last broadcast */
    uint64_t *wview;       /* per worker: the view its policy refused (valid if wview_set) */
    char *wview_set;       /* per worker: it waits at a clock (a STATE waiting since its last clock) */
    int stuck_sent;        /* the command was found stuck (CANCEL with CR_CANCEL_STUCK sent) */
    char inproc_ep[64];
    atomic_int failed;
    cr_zap *zap;
    char **child_env; /* environment of spawned nodes: ours plus the per-job key */
    cr_err inproc_err; /* why the in-process node ended, if it failed */
    atomic_int inproc_failed;
};

const char *cr_sched_endpoint(const cr_sched *s) { return s->endpoint; }
int cr_sched_nodes(const cr_sched *s) { return s->o.nodes; }
int cr_sched_workers(const cr_sched *s) { return s->o.workers; }
int cr_sched_failed(const cr_sched *s) { return atomic_load(&((cr_sched *)s)->failed); }

static int find_node(cr_sched *s, const void *rid, size_t len) {
    for (int i = 0; i < s->o.nodes; i++)
        if (s->nodes[i].ridlen == len && !memcmp(s->nodes[i].rid, rid, len)) return i;
    return -1;
}

/* Send m to node i (not if it is dead), as addressed to it. */
static void send_node(cr_sched *s, int i, cr_proto_msg *m) {
    if (s->nodes[i].dead) return;
    m->h.node = i;
    cr_proto_send(s->router, s->nodes[i].rid, s->nodes[i].ridlen, m);
}

static void broadcast_clocks(cr_sched *s) {
    cr_msg_clocks c = {.W = s->W, .clocks = s->clocks, .barriers = s->bar, .active = s->bar + s->W};
    cr_proto_msg m;
    cr_proto_encode_clocks(CR_M_CLOCKS, &c, &m, NULL);
    for (int i = 0; i < s->o.nodes; i++) send_node(s, i, &m);
}

/* Send a message without content (HB, SHUTDOWN) to every live node that
 * registered. */
static void send_all_empty(cr_sched *s, int type) {
    cr_proto_msg m;
    cr_proto_encode_empty(type, &m, NULL);
    for (int i = 0; i < s->o.nodes; i++)
        if (s->nodes[i].ridlen) send_node(s, i, &m);
}

/* Child process: become `crescent node --scheduler EP`; dies with us. It
 * gets a process group of its own, so that Ctrl-C at the terminal reaches
 * only the scheduler (at the REPL it stops the wait and cancels the command;
 * elsewhere the scheduler dies and takes its nodes with it). The job's key
 * reaches it in env (built before fork: nothing is allocated in the child),
 * never on the command line. An exec failure shows as exit status 127. */
static pid_t spawn_node(const char *exe, const char *ep, pid_t parent, char **env) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    setpgid(0, 0);
    char *argv[] = {"crescent", "node", "--scheduler", (char *)ep, NULL};
    execve(exe, argv, env);
    _exit(127);
}

static int is_key_var(const char *v) {
    return !strncmp(v, "CRESCENT_CURVE_PUBLIC=", 22) || !strncmp(v, "CRESCENT_CURVE_SECRET=", 22) ||
           !strncmp(v, "CRESCENT_JOB_SECRET=", 20);
}

/* The environment for spawned nodes: this process's, with the key pair c in
 * CRESCENT_CURVE_PUBLIC / CRESCENT_CURVE_SECRET, or the job's secret in
 * CRESCENT_JOB_SECRET (cr_curve_from_env reads them in the node). */
static char **child_env(const cr_curve *c) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = cr_xcalloc(n + 3, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_key_var(environ[i])) env[k++] = cr_xstrdup(environ[i]);
    char var[64];
    if (c->plain) {
        snprintf(var, sizeof var, "CRESCENT_JOB_SECRET=%s", c->sec);
        env[k++] = cr_xstrdup(var);
    } else if (c->on) {
        snprintf(var, sizeof var, "CRESCENT_CURVE_PUBLIC=%s", c->pub);
        env[k++] = cr_xstrdup(var);
        snprintf(var, sizeof var, "CRESCENT_CURVE_SECRET=%s", c->sec);
        env[k++] = cr_xstrdup(var);
    }
    return env;
}

static void free_env(char **env) {
    for (size_t i = 0; env && env[i]; i++) free(env[i]);
    free(env);
}

/* Who may join: nodes presenting the cluster key (from the environment, o->curve),
 * else, for nodes this scheduler spawns, a secret made for this job alone
 * (PLAIN, loopback only: see net/cr_auth.h for why not a CURVE pair).
 * Nodes started by hand must have the cluster key: without one there is no
 * way to tell them from any other local process. Nodes run as threads of
 * this process by on_listen (tests) need none. Returns 0 or -1 (message). */
static int job_key(cr_sched *s, cr_err *e) {
    if (s->o.curve.on || s->o.on_listen) return 0;
    if (!s->o.spawn)
        return cr_errf(e, "nodes started by hand must present the cluster key: make one with `crescent keygen` and "
                          "set CRESCENT_CURVE_PUBLIC and CRESCENT_CURVE_SECRET for the scheduler and every node");
    return cr_curve_job_secret(&s->o.curve, e);
}

static void *inproc_node_main(void *arg) {
    cr_sched *s = arg;
    cr_node_opts no = {.scheduler = s->inproc_ep, .zctx = s->zctx, .inproc = 1, .hooks = s->o.hooks,
                       .timeout = 3600 * 24 * 365.0};
    if (cr_node_run(&no, &s->inproc_err) < 0) atomic_store(&s->inproc_failed, 1);
    return NULL;
}

/* Send m to the caller (cr_sched_recv, await_ready). */
static void api_send(cr_sched *s, const cr_proto_msg *m) { cr_proto_send(s->api_t, NULL, 0, m); }

static void describe_exit(char *buf, size_t n, int status) {
    if (WIFSIGNALED(status)) snprintf(buf, n, "killed by signal %d", WTERMSIG(status));
    else snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
}

/* Child c was reaped: forget it (its pidfd would stay readable forever). */
static void child_reaped(cr_sched *s, int c) {
    s->children[c] = 0;
    if (s->pidfd[c] >= 0) close(s->pidfd[c]);
    s->pidfd[c] = -1;
}

/* Append a poll item for each live child's pidfd to it; returns how many.
 * *blind is set if a live child has no pidfd (old kernel): then the caller
 * must wake now and then to look at it. */
static int child_items(cr_sched *s, zmq_pollitem_t *it, int *blind) {
    int k = 0;
    *blind = 0;
    for (int c = 0; c < s->nchildren; c++) {
        if (s->children[c] <= 0) continue;
        if (s->pidfd[c] < 0) *blind = 1;
        else it[k++] = (zmq_pollitem_t){.fd = s->pidfd[c], .events = ZMQ_POLLIN};
    }
    return k;
}

static void kill_children(cr_sched *s, int sig) {
    for (int i = 0; i < s->nchildren; i++)
        if (s->children[i] > 0) kill(s->children[i], sig);
}

/* Wait up to wait_s for every child to exit (woken by their pidfds), then
 * SIGKILL and reap the rest. */
static void reap_children(cr_sched *s, double wait_s) {
    double end = cr_now() + wait_s;
    zmq_pollitem_t *it = cr_xcalloc((size_t)s->nchildren + 1, sizeof *it);
    for (;;) {
        int left = 0, blind;
        for (int i = 0; i < s->nchildren; i++) {
            if (s->children[i] <= 0) continue;
            if (waitpid(s->children[i], NULL, WNOHANG) == s->children[i]) child_reaped(s, i);
            else left++;
        }
        double now = cr_now();
        if (!left || now > end) break;
        int k = child_items(s, it, &blind);
        long ms = (long)((end - now) * 1000) + 1;
        zmq_poll(it, k, blind && ms > 10 ? 10 : ms);
    }
    free(it);
    kill_children(s, SIGKILL);
    for (int i = 0; i < s->nchildren; i++)
        if (s->children[i] > 0) waitpid(s->children[i], NULL, 0), child_reaped(s, i);
}

/* Shut the live nodes down: spawned ones are waited for (SIGKILL after 3 s);
 * hand-started ones get a bounded grace of 200 ms for the message to leave
 * (sockets have linger 0 and the caller may end the process next). */
static void stop_nodes(cr_sched *s) {
    send_all_empty(s, CR_M_SHUTDOWN);
    if (s->nchildren == 0) {
        struct timespec ts = {0, 200 * 1000 * 1000}; /* bounded shutdown only */
        nanosleep(&ts, NULL);
    }
    reap_children(s, 3);
}

/* A node died: the job cannot go on. The caller hears it as CR_M_DEAD (from
 * cr_sched_recv); with exit_on_death the other nodes are stopped first and
 * on_death is called on this thread (it may end the process: the core
 * itself never prints or exits). */
static void node_died(cr_sched *s, int i, const char *why) {
    char msg[512];
    s->nodes[i].dead = 1;
    snprintf(msg, sizeof msg, "node %d (pid %d, %s) died: %s", i, (int)s->nodes[i].pid, s->nodes[i].addr, why);
    s->failed = 1;
    if (s->o.exit_on_death) stop_nodes(s);
    cr_msg_dead d = {.node = i, .why = msg, .whyn = strlen(msg)};
    cr_proto_msg m;
    cr_proto_encode_dead(&d, &m, NULL);
    api_send(s, &m);
    if (s->o.on_death) s->o.on_death(msg, s->o.on_death_arg);
}

static void check_health(cr_sched *s, double now) {
    double timeout = s->o.timeout > 0 ? s->o.timeout : 3.0;
    for (int c = 0; c < s->nchildren; c++) {
        int status;
        if (s->children[c] <= 0 || waitpid(s->children[c], &status, WNOHANG) != s->children[c]) continue;
        pid_t pid = s->children[c];
        child_reaped(s, c);
        for (int i = 0; i < s->o.nodes; i++)
            if (s->nodes[i].pid == pid && !s->nodes[i].dead) {
                char why[64];
                describe_exit(why, sizeof why, status);
                node_died(s, i, why);
            }
    }
    for (int i = 0; i < s->o.nodes; i++)
        if (!s->nodes[i].dead && now - s->nodes[i].heard > timeout) {
            char why[64];
            snprintf(why, sizeof why, "no heartbeat for %.1f s", now - s->nodes[i].heard);
            node_died(s, i, why);
        }
}

/* The ERROR answer to a message the scheduler will not take. */
static void refuse(cr_sched *s, cr_parts *p, const char *why) {
    cr_proto_send_error(s->router, cr_parts_data(p, 0), cr_parts_size(p, 0), -1, why);
}

/* Check what a member node i sent: its own workers only, well-formed, of a
 * type that goes from nodes to the scheduler. Returns 0 or -1 with e. */
static int check_from_node(cr_sched *s, int i, const cr_proto_msg *m, cr_err *e) {
    int mine_lo = i * s->o.workers, mine_hi = mine_lo + s->o.workers;
    switch (m->h.type) {
    case CR_M_HB:
    case CR_M_ACK:
        return cr_proto_decode_empty(m, e);
    case CR_M_STATE: {
        cr_msg_state st;
        if (cr_proto_decode_state(m, &st, e) < 0) return -1;
        if (st.worker < mine_lo || st.worker >= mine_hi) return cr_errf(e, "STATE: worker %d is not on node %d", st.worker, i);
        return 0;
    }
    case CR_M_REPLY:
    case CR_M_ERROR: {
        cr_msg_reply r;
        if (cr_proto_decode_reply(m, &r, e) < 0) return -1;
        if (r.worker != -1 && (r.worker < mine_lo || r.worker >= mine_hi))
            return cr_errf(e, "%s: worker %d is not on node %d", cr_proto_name(m->h.type), r.worker, i);
        return 0;
    }
    case CR_M_PROGRESS: {
        cr_msg_progress pr;
        return cr_proto_decode_progress(m, &pr, e);
    }
    case CR_M_COUNTS: {
        cr_msg_counts c;
        if (cr_proto_decode_counts(m, &c, e) < 0) return -1;
        if (c.op != CR_COUNTS_DATA || c.node != i) return cr_errf(e, "COUNTS: not an answer of node %d", i);
        return 0;
    }
    case CR_M_ROWS: /* sizes checked by the job client, which knows the table */
        return m->np == 2 || m->np == 3 ? 0 : cr_errf(e, "ROWS: %d payload frames (expected 2 or 3)", m->np);
    default:
        return cr_errf(e, "the scheduler does not take %s messages from nodes", cr_proto_name(m->h.type));
    }
}

/* A worker's clock or barrier went up: record it; every node hears of it
 * once the messages at hand are read (one broadcast for all of them). */
static void on_state(cr_sched *s, const cr_proto_msg *m) {
    cr_msg_state st;
    cr_proto_decode_state(m, &st, NULL);
    s->wview_set[st.worker] = (char)st.waiting;
    s->wview[st.worker] = st.view;
    if (st.waiting) return;
    if (st.clock > s->clocks[st.worker]) s->clocks[st.worker] = st.clock;
    if (st.barrier > s->bar[st.worker]) s->bar[st.worker] = st.barrier;
    s->clocks_dirty = 1;
}

/* A command is stuck when each of its workers either answered or waits at
 * a clock because its policy said no to the clocks the scheduler holds now
 * (no news is on its way to it): no clock can move again, so no answer
 * can change. The nodes then fail the waiting workers (CR_CANCEL_STUCK),
 * and the command ends with that error instead of waiting for ever. */
static void check_stuck(cr_sched *s) {
    if (s->stuck_sent) return;
    const int64_t *active = s->bar + s->W;
    uint64_t view = cr_proto_clocks_view(s->clocks, active, s->W);
    int waiting = 0;
    for (int w = 0; w < s->W; w++) {
        if (!active[w]) continue;
        if (!s->wview_set[w] || s->wview[w] != view) return;
        waiting++;
    }
    if (!waiting) return;
    s->stuck_sent = 1;
    cr_proto_msg m;
    cr_proto_encode_empty(CR_M_CANCEL, &m, NULL);
    m.h.a = CR_CANCEL_STUCK;
    for (int i = 0; i < s->o.nodes; i++) send_node(s, i, &m);
}

/* Handle a message from a node. A message that is not from a member, is
 * malformed, or is not one a node sends is answered with an ERROR (and not
 * passed on); the job carries on. Answers go to the caller as they are. */
static void from_node(cr_sched *s, cr_parts *p, double now) {
    int i = find_node(s, cr_parts_data(p, 0), cr_parts_size(p, 0));
    cr_proto_msg m;
    cr_err e;
    if (i < 0) {
        int reg = cr_proto_view(p, 1, &m, &e) == 0 && m.h.type == CR_M_REGISTER;
        refuse(s, p, reg ? "the job has all its nodes" : "not a node of this job");
        return;
    }
    if (cr_proto_view(p, 1, &m, &e) == 0 && m.h.type == CR_M_REGISTER) return; /* a resent join (cr_link_join) */
    if (cr_proto_view(p, 1, &m, &e) < 0 || check_from_node(s, i, &m, &e) < 0) {
        refuse(s, p, e.msg);
        return;
    }
    s->nodes[i].heard = now;
    if (m.h.type == CR_M_HB) return;
    if (m.h.type == CR_M_STATE) {
        on_state(s, &m);
        return;
    }
    if ((m.h.type == CR_M_REPLY || m.h.type == CR_M_ERROR) && m.h.worker >= 0) {
        s->bar[s->W + m.h.worker] = 0; /* idle */
        s->wview_set[m.h.worker] = 0;
        s->clocks_dirty = 1;
    }
    for (int k = 1; k < p->n; k++)
        zmq_send(s->api_t, cr_parts_data(p, k), cr_parts_size(p, k), k + 1 < p->n ? ZMQ_SNDMORE : 0);
}

/* Handle a command from the caller: [int32 target][message]. Returns 1 on
 * shutdown. The caller (cr_sched_send) sends only encoded messages. */
static int from_api(cr_sched *s, cr_parts *p) {
    int32_t target;
    cr_proto_msg m;
    if (p->n < 2 || cr_parts_size(p, 0) != sizeof target || cr_proto_view(p, 1, &m, NULL) < 0) return 0;
    memcpy(&target, cr_parts_data(p, 0), sizeof target);
    cr_msg_clocks c;
    if (m.h.type == CR_M_SETCLOCKS && cr_proto_decode_clocks(&m, s->W, &c, NULL) == 0) {
        /* set, not raised: a checkpoint may hold smaller clocks than the job's */
        memcpy(s->clocks, c.clocks, (size_t)s->W * 8);
        memcpy(s->bar, c.barriers, (size_t)s->W * 8);
    }
    if (m.h.type == CR_M_CALL || m.h.type == CR_M_MODEL) {
        for (int w = 0; w < s->W; w++) s->bar[s->W + w] = 1;
        memset(s->wview_set, 0, (size_t)s->W);
        s->stuck_sent = 0;
        broadcast_clocks(s);
    }
    for (int i = 0; i < s->o.nodes; i++)
        if (target < 0 || target == i) send_node(s, i, &m);
    return m.h.type == CR_M_SHUTDOWN;
}

/* -1 with a message if a spawned node exited before joining. */
static int child_gone(cr_sched *s, cr_err *e) {
    for (int c = 0; c < s->nchildren; c++) {
        int status;
        if (s->children[c] > 0 && waitpid(s->children[c], &status, WNOHANG) == s->children[c]) {
            char why[64];
            describe_exit(why, sizeof why, status);
            child_reaped(s, c);
            return cr_errf(e, "node process %d %s before joining%s", c, why,
                           WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (cannot run the crescent binary)" : "");
        }
    }
    return 0;
}

/* Take a REGISTER from p as node slot *joined. A duplicate (a node already
 * registered) and other messages are ignored; a malformed REGISTER is
 * answered with an ERROR saying what is wrong. With keys on, only a process
 * presenting the job's or the cluster's key gets this far (the ZAP handler
 * refused the others). */
static void take_register(cr_sched *s, cr_parts *p, int *joined) {
    cr_proto_msg m;
    cr_msg_register r;
    cr_err e;
    if (p->n < 2 || cr_parts_size(p, 0) > sizeof s->nodes[0].rid ||
        find_node(s, cr_parts_data(p, 0), cr_parts_size(p, 0)) >= 0 || cr_proto_view(p, 1, &m, &e) < 0 ||
        m.h.type != CR_M_REGISTER)
        return;
    if (cr_proto_decode_register(&m, &r, &e) < 0) {
        refuse(s, p, e.msg);
        return;
    }
    for (int i = 0; i < *joined && r.rank >= 0; i++)
        if (s->nodes[i].rank == r.rank) {
            cr_errf(&e, "rank %d is already taken by the node at %s (pid %d): two processes were started as "
                        "the same rank", r.rank, s->nodes[i].addr, (int)s->nodes[i].pid);
            refuse(s, p, e.msg);
            return;
        }
    nodeinfo *ni = &s->nodes[(*joined)++];
    ni->rank = r.rank;
    ni->ridlen = cr_parts_size(p, 0);
    memcpy(ni->rid, cr_parts_data(p, 0), ni->ridlen);
    ni->pid = (pid_t)r.pid;
    snprintf(ni->addr, sizeof ni->addr, "%.*s", (int)r.addrn, r.addr);
    ni->heard = cr_now();
}

/* Send every node its id and the address book (data addresses, NUL-separated). */
static void welcome(cr_sched *s) {
    size_t len = 0;
    for (int i = 0; i < s->o.nodes; i++) len += strlen(s->nodes[i].addr) + 1;
    char *book = cr_xmalloc(len + 1), *q = book;
    for (int i = 0; i < s->o.nodes; i++) {
        size_t l = strlen(s->nodes[i].addr) + 1;
        memcpy(q, s->nodes[i].addr, l);
        q += l;
    }
    for (int i = 0; i < s->o.nodes; i++) {
        cr_msg_welcome w = {.node = i, .nodes = s->o.nodes, .workers = s->o.workers, .seed = s->o.seed,
                            .book = book, .bookn = len};
        cr_proto_msg m;
        if (cr_proto_encode_welcome(&w, &m, NULL) == 0) send_node(s, i, &m); /* sizes checked at start */
        s->nodes[i].heard = cr_now();
    }
    free(book);
}

/* Wait until every node registered (or the join timeout, or a spawned node
 * died: its pidfd wakes the poll), then welcome them. */
static int registration(cr_sched *s, cr_err *e) {
    double limit = s->o.join_timeout > 0 ? s->o.join_timeout : 30, deadline = cr_now() + limit;
    int joined = 0, rc = 0;
    zmq_pollitem_t *it = cr_xcalloc((size_t)s->nchildren + 1, sizeof *it);
    while (joined < s->o.nodes) {
        double now = cr_now();
        if (now > deadline) {
            if (s->o.min_nodes > 0 && joined >= s->o.min_nodes) { /* go on with the nodes that came */
                s->o.nodes = joined;
                s->W = joined * s->o.workers;
                break;
            }
            rc = cr_errf(e, "only %d of %d nodes joined %s within %.0f s", joined, s->o.nodes, s->endpoint, limit);
            break;
        }
        if ((rc = child_gone(s, e)) < 0) break;
        int blind;
        it[0] = (zmq_pollitem_t){.socket = s->router, .events = ZMQ_POLLIN};
        int k = 1 + child_items(s, it + 1, &blind);
        double wake = blind && now + HB_INTERVAL < deadline ? now + HB_INTERVAL : deadline;
        if (zmq_poll(it, k, (long)((wake - now) * 1000) + 1) <= 0 || !(it[0].revents & ZMQ_POLLIN)) continue;
        cr_parts p;
        if (cr_parts_recv(s->router, &p, ZMQ_DONTWAIT) < 0) continue;
        take_register(s, &p, &joined);
        cr_parts_close(&p);
    }
    free(it);
    if (rc == 0) welcome(s);
    return rc;
}

/* Milliseconds until the next heartbeat or the earliest heartbeat deadline
 * of a live node, whichever comes first. */
static long next_wake_ms(cr_sched *s, double now, double hb_due) {
    double timeout = s->o.timeout > 0 ? s->o.timeout : 3.0, t = hb_due;
    for (int i = 0; i < s->o.nodes && !s->failed; i++)
        if (!s->nodes[i].dead && s->nodes[i].heard + timeout < t) t = s->nodes[i].heard + timeout;
    return t <= now ? 0 : (long)((t - now) * 1000) + 1;
}

static void *sched_main(void *arg) {
    cr_sched *s = arg;
    cr_err e;
    cr_proto_msg ready;
    if (registration(s, &e) < 0) {
        cr_msg_reply r = {.worker = -1, .data = e.msg, .n = strlen(e.msg)};
        cr_proto_encode_reply(CR_M_ERROR, &r, &ready, NULL);
        api_send(s, &ready);
        return NULL;
    }
    cr_proto_encode_empty(CR_M_ACK, &ready, NULL);
    api_send(s, &ready);
    zmq_pollitem_t *it = cr_xcalloc((size_t)s->nchildren + 2, sizeof *it);
    it[0] = (zmq_pollitem_t){.socket = s->router, .events = ZMQ_POLLIN};
    it[1] = (zmq_pollitem_t){.socket = s->api_t, .events = ZMQ_POLLIN};
    double hb_due = 0;
    for (;;) {
        int blind, k = 2 + (s->failed ? 0 : child_items(s, it + 2, &blind)); /* a child's exit wakes the poll */
        zmq_poll(it, k, next_wake_ms(s, cr_now(), hb_due));
        double now = cr_now();
        cr_parts p;
        while (cr_parts_recv(s->router, &p, ZMQ_DONTWAIT) > 0) {
            from_node(s, &p, now);
            cr_parts_close(&p);
        }
        if (s->clocks_dirty) {
            s->clocks_dirty = 0;
            broadcast_clocks(s);
        }
        check_stuck(s);
        while (cr_parts_recv(s->api_t, &p, ZMQ_DONTWAIT) > 0) {
            int quit = from_api(s, &p);
            cr_parts_close(&p);
            if (quit) {
                free(it);
                return NULL;
            }
        }
        if (now >= hb_due) {
            send_all_empty(s, CR_M_HB);
            hb_due = now + HB_INTERVAL;
        }
        if (!s->failed) check_health(s, now);
    }
}

static void destroy(cr_sched *s) {
    if (s->thread_started) pthread_join(s->thread, NULL);
    reap_children(s, 3);
    if (s->inproc_started) pthread_join(s->inproc_node, NULL);
    if (s->router) { /* let queued shutdown messages leave */
        int linger = 300;
        zmq_setsockopt(s->router, ZMQ_LINGER, &linger, sizeof linger);
        zmq_close(s->router);
    }
    if (s->api) zmq_close(s->api);
    if (s->api_t) zmq_close(s->api_t);
    cr_zap_stop(&s->zap);
    /* An in-process node whose worker is stuck in C code still holds sockets
     * of this context: terminating it would wait forever. The caller hears
     * of it through on_death (crescent run ends the process there). */
    if (!atomic_load(&s->inproc_failed)) zmq_ctx_term(s->zctx);
    else if (s->o.on_death) s->o.on_death(s->inproc_err.msg, s->o.on_death_arg);
    free_env(s->child_env);
    free(s->children);
    free(s->pidfd);
    free(s->nodes);
    free(s->clocks);
    free(s->bar);
    free(s->wview);
    free(s->wview_set);
    free(s);
}

static cr_sched *sched_new(const cr_sched_opts *o) {
    cr_sched *s = cr_xcalloc(1, sizeof *s);
    s->o = *o;
    s->zctx = zmq_ctx_new();
    s->W = o->nodes * o->workers;
    s->nodes = cr_xcalloc((size_t)o->nodes, sizeof *s->nodes);
    s->clocks = cr_xcalloc((size_t)s->W + 1, 8);
    s->bar = cr_xcalloc(2 * (size_t)s->W + 1, 8);
    s->wview = cr_xcalloc((size_t)s->W + 1, sizeof *s->wview);
    s->wview_set = cr_xcalloc((size_t)s->W + 1, 1);
    s->children = cr_xcalloc((size_t)o->nodes, sizeof *s->children);
    s->pidfd = cr_xcalloc((size_t)o->nodes, sizeof *s->pidfd);
    for (int i = 0; i < o->nodes; i++) s->pidfd[i] = -1;
    s->router = cr_socket(s->zctx, ZMQ_ROUTER);
    return s;
}

/* Bind the control ROUTER (CURVE server with the job's key unless the node
 * runs in this process) and the caller's PAIR. */
static int bind_control(cr_sched *s, int inproc, cr_err *e) {
    const char *ep = s->o.listen ? s->o.listen : "tcp://127.0.0.1:*";
    if (inproc) {
        snprintf(s->inproc_ep, sizeof s->inproc_ep, "inproc://crescent-sched-%p", (void *)s);
        ep = s->inproc_ep;
    } else if (job_key(s, e) < 0 || cr_curve_check_bind(&s->o.curve, ep, e) < 0 ||
               cr_zap_start(s->zctx, &s->o.curve, &s->zap, e) < 0) {
        return -1;
    }
    if (!inproc) cr_curve_server(s->router, &s->o.curve);
    if (zmq_bind(s->router, ep) < 0) return cr_errf(e, "cannot bind scheduler to '%s': %s", ep, zmq_strerror(errno));
    size_t len = sizeof s->endpoint;
    zmq_getsockopt(s->router, ZMQ_LAST_ENDPOINT, s->endpoint, &len);
    char pair_ep[64];
    snprintf(pair_ep, sizeof pair_ep, "inproc://crescent-api-%p", (void *)s);
    s->api_t = cr_socket(s->zctx, ZMQ_PAIR);
    s->api = cr_socket(s->zctx, ZMQ_PAIR);
    zmq_bind(s->api_t, pair_ep);
    zmq_connect(s->api, pair_ep);
    return 0;
}

/* Start the in-process node, spawn the node processes, or tell the caller
 * where hand-started nodes should connect. */
static int start_nodes(cr_sched *s, int inproc, cr_err *e) {
    const cr_sched_opts *o = &s->o;
    if (inproc) {
        if (pthread_create(&s->inproc_node, NULL, inproc_node_main, s) != 0)
            return cr_errf(e, "cannot start the in-process node");
        s->inproc_started = 1;
    } else if (o->spawn || o->local_nodes > 0) {
        s->child_env = child_env(&o->curve);
        int here = o->spawn ? o->nodes : o->local_nodes < o->nodes ? o->local_nodes : o->nodes;
        for (int i = 0; i < here; i++) {
            s->children[i] = spawn_node(o->exe ? o->exe : "/proc/self/exe", s->endpoint, getpid(), s->child_env);
            if (s->children[i] < 0) {
                s->children[i] = 0;
                return cr_errf(e, "fork failed: %s", strerror(errno));
            }
            s->pidfd[i] = pidfd_open(s->children[i], 0); /* -1 on old kernels: then watched on a timer */
            s->nchildren++;
        }
        if (!o->spawn && here < o->nodes && o->on_wait) o->on_wait(s->endpoint, o->nodes - here, o->on_wait_arg);
    } else if (o->on_listen) {
        o->on_listen(s->endpoint, o->on_listen_arg);
    } else if (o->on_wait) {
        o->on_wait(s->endpoint, o->nodes, o->on_wait_arg);
    }
    return 0;
}

/* The scheduler thread's first word: ACK once every node joined, or an
 * ERROR with the reason (then the thread has returned). */
static int await_ready(cr_sched *s, cr_err *e) {
    cr_parts p;
    cr_proto_msg m;
    cr_msg_reply r;
    int rc = -1;
    if (cr_parts_recv(s->api, &p, 0) < 0) return cr_errf(e, "scheduler failed to start");
    int ok = cr_proto_view(&p, 0, &m, NULL) == 0;
    if (ok && m.h.type == CR_M_ACK && cr_proto_decode_empty(&m, NULL) == 0) rc = 0;
    else if (ok && m.h.type == CR_M_ERROR && cr_proto_decode_reply(&m, &r, NULL) == 0 && r.n > 0)
        cr_errf(e, "%.*s", (int)r.n, r.data);
    else cr_errf(e, "scheduler failed to start");
    cr_parts_close(&p);
    if (rc < 0 && atomic_load(&s->inproc_failed)) cr_errf(e, "in-process node: %s", s->inproc_err.msg);
    return rc;
}

/* Undo a failed start: stop whoever joined, kill the children, free s. */
static void abort_start(cr_sched *s) {
    s->failed = 1;
    if (s->thread_started) pthread_join(s->thread, NULL);
    s->thread_started = 0;
    send_all_empty(s, CR_M_SHUTDOWN);
    kill_children(s, SIGTERM);
    destroy(s);
}

cr_sched *cr_sched_start(const cr_sched_opts *o, cr_err *e) {
    if (o->nodes < 1 || o->nodes > CR_PROTO_MAX_NODES || o->workers < 0 || o->workers > CR_PROTO_MAX_WPN) {
        cr_errf(e, "nodes must be 1 to %d and workers 0 to %d", CR_PROTO_MAX_NODES, CR_PROTO_MAX_WPN);
        return NULL;
    }
    cr_sched *s = sched_new(o);
    int inproc = o->nodes == 1 && o->spawn && o->hooks;
    int rc = bind_control(s, inproc, e);
    if (rc == 0) rc = start_nodes(s, inproc, e);
    if (rc == 0 && pthread_create(&s->thread, NULL, sched_main, s) != 0)
        rc = cr_errf(e, "cannot start scheduler thread");
    if (rc == 0) {
        s->thread_started = 1;
        rc = await_ready(s, e);
    }
    if (rc == 0) return s;
    abort_start(s);
    return NULL;
}

int cr_sched_send(cr_sched *s, int node, const cr_proto_msg *m, cr_err *e) {
    int32_t target = node;
    if (zmq_send(s->api, &target, sizeof target, ZMQ_SNDMORE) < 0 || cr_proto_send(s->api, NULL, 0, m) < 0)
        return cr_errf(e, "scheduler: send failed: %s", zmq_strerror(errno));
    return 0;
}

int cr_sched_recv(cr_sched *s, cr_parts *p, cr_proto_msg *m, long timeout_ms, cr_err *e) {
    zmq_pollitem_t it = {.socket = s->api, .events = ZMQ_POLLIN};
    for (;;) {
        if (zmq_poll(&it, 1, timeout_ms) <= 0) return 0;
        if (cr_parts_recv(s->api, p, 0) < 0) return cr_errf(e, "scheduler: receive failed: %s", zmq_strerror(errno));
        if (cr_proto_view(p, 0, m, e) < 0) { /* checked by the scheduler thread: cannot happen */
            cr_parts_close(p);
            continue;
        }
        cr_msg_dead d;
        if (m->h.type == CR_M_DEAD && cr_proto_decode_dead(m, &d, NULL) == 0) {
            cr_errf(e, "%.*s", (int)d.whyn, d.why);
            cr_parts_close(p);
            return -1;
        }
        return 1;
    }
}

void cr_sched_close(cr_sched **sp) { cr_sched_close_rejoin(sp, 0); }

void cr_sched_close_rejoin(cr_sched **sp, int rejoin) {
    cr_sched *s = sp ? *sp : NULL;
    if (!s) return;
    cr_proto_msg m;
    cr_proto_encode_empty(CR_M_SHUTDOWN, &m, NULL);
    if (rejoin) m.h.a = CR_SHUTDOWN_REJOIN;
    cr_sched_send(s, -1, &m, NULL);
    destroy(s);
    *sp = NULL;
}
