#include "ps/cr_job.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "net/cr_auth.h"
#include "ps/cr_proto.h"
#include "ps/cr_sched.h"

#define TICK_MS 100
#define SHOW_ERROR_AFTER 1.0 /* seconds an error waits for the rest before it is shown */

struct cr_job {
    cr_sched *s;
    double grace;
    int owed;        /* answers of an interrupted command still to come */
    int failed;      /* ended after a grace period (a dead node: cr_sched_failed) */
    int interrupted; /* the last request was interrupted by a callback */
    char *error;     /* whole message of the last failed request */
};

/* 16 per online CPU, at least 32 (4 nodes of 8 workers fit on 2 CPUs). */
static int max_threads(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long cap = 16 * (cpus > 0 ? cpus : 1);
    return (int)(cap < 32 ? 32 : cap > 1 << 20 ? 1 << 20 : cap);
}

int cr_job_check_size(int nodes, int workers, cr_err *e) {
    if (nodes < 1) return cr_errf(e, "nodes must be at least 1, got %d", nodes);
    if (workers < 0) return cr_errf(e, "workers must be at least 0, got %d", workers);
    if (nodes > CR_PROTO_MAX_NODES || workers > CR_PROTO_MAX_WPN)
        return cr_errf(e, "%d nodes of %d workers: at most %d nodes and %d workers per node", nodes, workers,
                       CR_PROTO_MAX_NODES, CR_PROTO_MAX_WPN);
    long threads = (long)nodes * (workers > 1 ? workers : 1), cap = max_threads();
    if (threads > cap)
        return cr_errf(e,
                       "%d nodes x %d workers = %ld worker threads: this machine runs at most %ld "
                       "(16 per CPU, %ld CPUs); use fewer nodes or workers",
                       nodes, workers, threads, cap, sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}

int cr_job_curve_from_env(cr_curve *c, cr_err *e) { return cr_curve_from_env(c, e); }

cr_job *cr_job_start(const cr_job_opts *o, cr_err *e) {
    if (cr_job_check_size(o->nodes, o->workers, e) < 0) return NULL;
    cr_sched_opts so = {.nodes = o->nodes, .workers = o->workers, .seed = o->seed, .listen = o->listen,
                        .spawn = o->spawn, .local_nodes = o->local_nodes, .min_nodes = o->min_nodes, .exe = o->exe, .hooks = o->hooks, .exit_on_death = o->exit_on_death,
                        .timeout = o->timeout, .join_timeout = o->join_timeout, .curve = o->curve,
                        .on_listen = o->on_listen, .on_listen_arg = o->on_listen_arg,
                        .on_death = o->on_death, .on_death_arg = o->on_death_arg,
                        .on_wait = o->on_wait, .on_wait_arg = o->on_wait_arg};
    cr_sched *s = cr_sched_start(&so, e);
    if (!s) return NULL;
    cr_job *j = cr_xcalloc(1, sizeof *j);
    j->s = s;
    j->grace = o->grace > 0 ? o->grace : 10;
    return j;
}

static void close_job(cr_job **jp, int rejoin) {
    cr_job *j = jp ? *jp : NULL;
    if (!j) return;
    cr_sched_close_rejoin(&j->s, rejoin);
    free(j->error);
    free(j);
    *jp = NULL;
}

void cr_job_close(cr_job **jp) { close_job(jp, 0); }
void cr_job_close_rejoin(cr_job **jp) { close_job(jp, 1); }

const char *cr_job_endpoint(const cr_job *j) { return cr_sched_endpoint(j->s); }
int cr_job_nodes(const cr_job *j) { return cr_sched_nodes(j->s); }
int cr_job_workers(const cr_job *j) { return cr_sched_workers(j->s); }
int cr_job_failed(const cr_job *j) { return j->failed || cr_sched_failed(j->s); }
const char *cr_job_error(const cr_job *j) { return j->error ? j->error : ""; }

/* Keep the whole message of a failure (cr_job_error); e gets what fits. */
static int fail_with(cr_job *j, const char *msg, size_t n, cr_err *e) {
    free(j->error);
    j->error = cr_xmalloc(n + 1);
    memcpy(j->error, msg, n);
    j->error[n] = '\0';
    return cr_errf(e, "%s", j->error);
}

static int send_all(cr_job *j, int node, cr_proto_msg *m, cr_err *e) {
    int rc = cr_sched_send(j->s, node, m, e);
    cr_proto_msg_free(m);
    return rc;
}

int cr_job_cancel(cr_job *j, cr_err *e) {
    cr_proto_msg m;
    cr_proto_encode_empty(CR_M_CANCEL, &m, NULL);
    return send_all(j, -1, &m, e);
}

/* The workers did not stop within the grace period: end the nodes, so
 * that the job (and the process) can end. */
static int give_up(cr_job *j, int owed, cr_err *e) {
    j->failed = 1;
    j->owed = 0;
    char msg[CR_ERR_MAX];
    snprintf(msg, sizeof msg, "%d worker(s) did not stop within %.0f s of the cancel; the job's nodes were ended",
             owed, j->grace);
    cr_proto_msg m;
    cr_proto_encode_empty(CR_M_SHUTDOWN, &m, NULL);
    cr_sched_send(j->s, -1, &m, NULL);
    if (!j->error) return fail_with(j, msg, strlen(msg), e);
    /* the worker error that started it comes first */
    size_t n = strlen(j->error), k = strlen(msg);
    char *both = cr_xmalloc(n + k + 4);
    snprintf(both, n + k + 4, "%s\n(%s)", j->error, msg);
    free(j->error);
    j->error = both;
    return cr_errf(e, "%s", j->error);
}

/* ---------- waiting for answers ---------- */

/* How one request's answers are taken: ans(arg, message) for each REPLY or
 * ROWS (not for ERROR or ACK). */
typedef int (*answer_fn)(void *arg, const cr_proto_msg *m, cr_err *e);

typedef struct wait_t {
    cr_job *j;
    const cr_job_cb *cb;
    answer_fn ans;
    void *ans_arg;
    int failed, shown;
    double failed_at;
} wait_t;

static int is_answer(int type) {
    return type == CR_M_REPLY || type == CR_M_ERROR || type == CR_M_ACK || type == CR_M_ROWS || type == CR_M_COUNTS;
}

/* A callback stopped the wait: the command is cancelled, its answers are
 * owed to the next request. */
static int interrupt(wait_t *w, cr_err *cbe, cr_err *e) {
    if (!w->failed) cr_job_cancel(w->j, NULL);
    w->j->interrupted = 1;
    return fail_with(w->j, cbe->msg, strlen(cbe->msg), e);
}

/* One failure (a worker's ERROR, or an answer that cannot be taken): the
 * first is kept as the request's message, and the rest are cancelled. */
static void on_failure(wait_t *w, const char *msg, size_t n) {
    if (w->failed) return;
    w->failed = 1;
    w->failed_at = cr_now();
    fail_with(w->j, msg, n, NULL);
    if (w->j->owed > 0) cr_job_cancel(w->j, NULL);
}

/* Take one message of the request. Returns 0, or -1 if a callback interrupted. */
static int take(wait_t *w, const cr_proto_msg *m, cr_err *e) {
    cr_err ce;
    if (m->h.type == CR_M_PROGRESS) {
        cr_msg_progress pr;
        if (cr_proto_decode_progress(m, &pr, NULL) == 0 && w->cb && w->cb->progress &&
            w->cb->progress(w->cb->arg, pr.items, &ce) < 0)
            return interrupt(w, &ce, e);
        return 0;
    }
    if (!is_answer(m->h.type)) return 0;
    w->j->owed--;
    cr_msg_reply r;
    if (m->h.type == CR_M_ERROR) {
        if (cr_proto_decode_reply(m, &r, NULL) == 0) on_failure(w, r.data, r.n);
        else on_failure(w, "malformed error answer", strlen("malformed error answer"));
    } else if (!w->failed && m->h.type != CR_M_ACK && w->ans && w->ans(w->ans_arg, m, &ce) < 0) {
        on_failure(w, ce.msg, strlen(ce.msg));
    }
    return 0;
}

/* Time passes while a failed command winds down: show a lingering first
 * error, and give the job up when the grace period is over. Returns 0 to
 * go on waiting, -1 once given up. */
static int lapse(wait_t *w, cr_err *e) {
    if (!w->failed || w->j->owed <= 0) return 0;
    double waited = cr_now() - w->failed_at;
    if (!w->shown && waited >= SHOW_ERROR_AFTER) {
        w->shown = 1;
        if (w->cb && w->cb->first_error) w->cb->first_error(w->cb->arg, cr_job_error(w->j));
    }
    return waited >= w->j->grace ? give_up(w->j, w->j->owed, e) : 0;
}

/* Wait until j->owed answers are in. Returns 0, or -1 with a message: the
 * first worker error (after every answer, or after the grace period), a
 * dead node, or a callback's interrupt (tick on every quiet 100 ms). */
static int wait_answers(wait_t *w, cr_err *e) {
    cr_job *j = w->j;
    while (j->owed > 0) {
        cr_parts p;
        cr_proto_msg m;
        cr_err ce;
        int rc = cr_sched_recv(j->s, &p, &m, TICK_MS, e);
        if (rc < 0) {
            j->owed = 0;
            return fail_with(j, e->msg, strlen(e->msg), e);
        }
        if (rc == 0 && w->cb && w->cb->tick && w->cb->tick(w->cb->arg, &ce) < 0) return interrupt(w, &ce, e);
        if (rc > 0) {
            int r = take(w, &m, e);
            cr_parts_close(&p);
            if (r < 0) return -1;
        }
        if (lapse(w, e) < 0) return -1;
    }
    return w->failed ? cr_errf(e, "%s", cr_job_error(j)) : 0;
}

/* Before a request: the job must be usable, and the answers of an
 * interrupted command are taken first (within the grace period); its own
 * failures are not this request's. */
static int ready(cr_job *j, const cr_job_cb *cb, cr_err *e) {
    if (cr_job_failed(j)) return cr_errf(e, "the job cannot go on (a node died, or its nodes were ended)");
    if (j->owed <= 0) return 0;
    cr_job_cancel(j, NULL);
    cr_job_cb quiet = {.tick = cb ? cb->tick : NULL, .arg = cb ? cb->arg : NULL};
    wait_t w = {.j = j, .cb = &quiet, .failed = 1, .shown = 1, .failed_at = cr_now()};
    int rc = wait_answers(&w, e);
    if (rc < 0 && !j->interrupted && !cr_job_failed(j)) {
        free(j->error);
        j->error = NULL;
        rc = 0;
    }
    return rc;
}

/* Every public request starts with begin and returns through done, so that
 * cr_job_error is the whole message of this request's failure. */
static void begin(cr_job *j) {
    free(j->error);
    j->error = NULL;
    j->interrupted = 0;
}

static int done(cr_job *j, int rc, cr_err *e) {
    if (rc < 0 && !j->error) fail_with(j, e->msg, strlen(e->msg), NULL);
    return rc;
}

static int request(cr_job *j, int node, cr_proto_msg *m, int want, const cr_job_cb *cb, answer_fn ans, void *arg,
                   cr_err *e) {
    if (ready(j, cb, e) < 0) {
        cr_proto_msg_free(m);
        return -1;
    }
    if (send_all(j, node, m, e) < 0) return -1;
    j->owed = want;
    wait_t w = {.j = j, .cb = cb, .ans = ans, .ans_arg = arg};
    return wait_answers(&w, e);
}

/* ---------- requests ---------- */

static int deliver(void *arg, const cr_proto_msg *m, cr_err *e) {
    const cr_job_cb *cb = arg;
    cr_msg_reply r;
    if (cr_proto_decode_reply(m, &r, e) < 0) return -1;
    return cb && cb->result ? cb->result(cb->arg, r.worker, r.data, r.n, e) : 0;
}

static int has_workers(cr_job *j, const char *what, cr_err *e) {
    if (cr_job_workers(j) > 0) return 0;
    return cr_errf(e, "%s: this job has no workers (workers = 0): it holds tables but runs no model", what);
}

int cr_job_table(cr_job *j, int id, const cr_table_def *d, cr_err *e) {
    return cr_job_table_placed(j, id, d, NULL, e);
}

int cr_job_table_placed(cr_job *j, int id, const cr_table_def *d, const uint32_t *owner, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_table t = {.id = id, .def = *d, .owner = owner};
    if (cr_proto_encode_table(&t, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j), NULL, NULL, NULL, e), e);
}

int cr_job_model(cr_job *j, const char *src, size_t srcn, const char *chunk, size_t chunkn, const char *opts,
                 size_t optsn, const cr_job_cb *cb, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_script s = {.src = src, .srcn = srcn, .chunk = chunk, .chunkn = chunkn, .opts = opts, .optsn = optsn};
    if (has_workers(j, "model", e) < 0 || cr_proto_encode_script(CR_M_MODEL, &s, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j) * cr_job_workers(j), cb, deliver, (void *)cb, e), e);
}

int cr_job_policy(cr_job *j, const char *src, size_t srcn, const char *chunk, size_t chunkn, const char *opts,
                  size_t optsn, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_script s = {.src = src, .srcn = srcn, .chunk = chunk, .chunkn = chunkn, .opts = opts, .optsn = optsn};
    if (ready(j, NULL, e) < 0 || cr_proto_encode_script(CR_M_POLICY, &s, &m, e) < 0) return done(j, -1, e);
    return done(j, send_all(j, -1, &m, e), e);
}

int cr_job_call(cr_job *j, const char *fn, size_t fnn, const char *args, size_t argsn, const cr_job_cb *cb,
                cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_call c = {.fn = fn, .fnn = fnn, .args = args, .argsn = argsn};
    if (has_workers(j, "call", e) < 0 || cr_proto_encode_call(&c, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j) * cr_job_workers(j), cb, deliver, (void *)cb, e), e);
}

int cr_job_set_lr(cr_job *j, int table, double lr, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_setlr s = {.table = table, .lr = lr};
    if (cr_proto_encode_setlr(&s, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j), NULL, NULL, NULL, e), e);
}

int cr_job_set_clocks(cr_job *j, const int64_t *clocks, const int64_t *barriers, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_clocks c = {.W = cr_job_nodes(j) * cr_job_workers(j), .clocks = clocks, .barriers = barriers};
    if (cr_proto_encode_clocks(CR_M_SETCLOCKS, &c, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j), NULL, NULL, NULL, e), e);
}

int cr_job_stats(cr_job *j, const cr_job_cb *cb, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_proto_encode_empty(CR_M_STATS, &m, NULL);
    return done(j, request(j, -1, &m, cr_job_nodes(j), cb, deliver, (void *)cb, e), e);
}

typedef struct rows_sink {
    int32_t dim, sdim;
    int64_t count;
    float *values, *state;
    int64_t *keys;  /* a dump: the rows' keys go here, count is at most this */
    int64_t got, lo;
} rows_sink;

static int take_rows(void *arg, const cr_proto_msg *m, cr_err *e) {
    rows_sink *k = arg;
    cr_msg_rows r;
    if (m->h.type != CR_M_ROWS) return cr_errf(e, "%s answer to a rows request", cr_proto_name(m->h.type));
    if (cr_proto_decode_rows(m, k->dim, k->sdim, &r, e) < 0) return -1;
    if (k->keys ? r.count > k->count || !r.keys : r.count != k->count)
        return cr_errf(e, "rows reply of the wrong size");
    if (r.valuesn) memcpy(k->values, r.values, r.valuesn);
    if (r.staten) memcpy(k->state, r.state, r.staten);
    if (k->keys && r.count) memcpy(k->keys, r.keys, (size_t)r.count * sizeof *k->keys);
    k->got = r.count;
    k->lo = r.lo;
    return 0;
}

static int check_node(cr_job *j, int node, cr_err *e) {
    if (node >= 0 && node < cr_job_nodes(j)) return 0;
    return cr_errf(e, "node %d out of range [0, %d)", node, cr_job_nodes(j));
}

/* GETROWS r (a range or a key list) from node into values and state. */
static int get_rows(cr_job *j, int node, const cr_msg_rows *r, int32_t dim, int32_t sdim, float *values,
                    float *state, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    if (check_node(j, node, e) < 0 || cr_proto_encode_rows(CR_M_GETROWS, r, &m, e) < 0) return done(j, -1, e);
    rows_sink k = {.dim = dim, .sdim = sdim, .count = r->count, .values = values, .state = state};
    return done(j, request(j, node, &m, 1, NULL, take_rows, &k, e), e);
}

/* SETROWS r (a range or a key list; its values and state set here) to node. */
static int set_rows(cr_job *j, int node, cr_msg_rows *r, int32_t dim, int32_t sdim, const float *values,
                    const float *state, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    r->values = values;
    r->state = state;
    r->valuesn = (size_t)(r->count * dim) * sizeof(float);
    r->staten = state ? (size_t)(r->count * sdim) * sizeof(float) : 0;
    if (check_node(j, node, e) < 0 || cr_proto_encode_rows(CR_M_SETROWS, r, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, node, &m, 1, NULL, NULL, NULL, e), e);
}

int cr_job_get_rows(cr_job *j, int table, int node, int64_t lo, int64_t count, int32_t dim, int32_t sdim,
                    float *values, float *state, cr_err *e) {
    cr_msg_rows r = {.table = table, .lo = lo, .count = count};
    return get_rows(j, node, &r, dim, sdim, values, state, e);
}

int cr_job_set_rows(cr_job *j, int table, int node, int64_t lo, int64_t count, int32_t dim, int32_t sdim,
                    const float *values, const float *state, cr_err *e) {
    cr_msg_rows r = {.table = table, .lo = lo, .count = count};
    return set_rows(j, node, &r, dim, sdim, values, state, e);
}

int cr_job_get_keys(cr_job *j, int table, int node, const int64_t *keys, int64_t n, int32_t dim, int32_t sdim,
                    float *values, float *state, cr_err *e) {
    cr_msg_rows r = {.table = table, .count = n, .keys = keys};
    return get_rows(j, node, &r, dim, sdim, values, state, e);
}

int cr_job_set_keys(cr_job *j, int table, int node, const int64_t *keys, int64_t n, int32_t dim, int32_t sdim,
                    const float *values, const float *state, cr_err *e) {
    cr_msg_rows r = {.table = table, .count = n, .keys = keys};
    return set_rows(j, node, &r, dim, sdim, values, state, e);
}

int cr_job_dump(cr_job *j, int table, int node, uint64_t *cursor, int64_t max, int32_t dim, int32_t sdim,
                int64_t *keys, float *values, float *state, int64_t *got, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_rows r = {.table = table, .lo = (int64_t)*cursor, .count = max};
    if (check_node(j, node, e) < 0 || cr_proto_encode_rows(CR_M_GETROWS, &r, &m, e) < 0) return done(j, -1, e);
    rows_sink k = {.dim = dim, .sdim = sdim, .count = max, .values = values, .state = state, .keys = keys};
    if (request(j, node, &m, 1, NULL, take_rows, &k, e) < 0) return done(j, -1, e);
    *got = k.got;
    *cursor = (uint64_t)k.lo;
    return done(j, 0, e);
}

int cr_job_distribution(cr_job *j, int table, const char *name, const double *weights, int64_t nweights, cr_err *e) {
    begin(j);
    cr_msg_dist d = {.table = table, .kind = weights ? CR_DIST_WEIGHTS : CR_DIST_UNIFORM, .name = name,
                     .namen = strlen(name), .nweights = weights ? nweights : 0};
    int64_t off = 0;
    do { /* in parts, each answered by every node: no message is huge */
        cr_proto_msg m;
        d.offset = off;
        d.npart = weights ? (nweights - off < CR_DIST_PART ? nweights - off : CR_DIST_PART) : 0;
        d.weights = weights ? weights + off : NULL;
        if (cr_proto_encode_dist(&d, &m, e) < 0) return done(j, -1, e);
        if (request(j, -1, &m, cr_job_nodes(j), NULL, NULL, NULL, e) < 0) return done(j, -1, e);
        off += d.npart;
    } while (off < d.nweights);
    return done(j, 0, e);
}

int cr_job_sampling(cr_job *j, const char *label, const cr_sampling_entry *entries, int count, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_sampling s = {.label = label, .labeln = strlen(label), .count = count, .entries = entries};
    if (cr_proto_encode_sampling(&s, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j), NULL, NULL, NULL, e), e);
}

int cr_job_manage(cr_job *j, int table, int mode, const int64_t *repl, int64_t nrepl, cr_err *e) {
    return cr_job_manage_keys(j, table, mode, repl, nrepl, NULL, 0, e);
}

int cr_job_manage_keys(cr_job *j, int table, int mode, const int64_t *repl, int64_t nrepl, const int64_t *reloc,
                       int64_t nreloc, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_manage g = {.table = table, .mode = mode, .nrepl = nrepl, .repl = repl, .nreloc = nreloc, .reloc = reloc};
    if (cr_proto_encode_manage(&g, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j), NULL, NULL, NULL, e), e);
}

int cr_job_count(cr_job *j, int table, int on, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_counts c = {.table = table, .op = on ? CR_COUNTS_ON : CR_COUNTS_OFF};
    if (cr_proto_encode_counts(&c, &m, e) < 0) return done(j, -1, e);
    return done(j, request(j, -1, &m, cr_job_nodes(j), NULL, NULL, NULL, e), e);
}

typedef struct counts_sink {
    int table, nodes;
    cr_job_counts_fn fn;
    void *arg;
} counts_sink;

static int take_counts(void *arg, const cr_proto_msg *m, cr_err *e) {
    counts_sink *k = arg;
    cr_msg_counts c;
    if (m->h.type != CR_M_COUNTS) return cr_errf(e, "%s answer to a counts request", cr_proto_name(m->h.type));
    if (cr_proto_decode_counts(m, &c, e) < 0) return -1;
    if (c.op != CR_COUNTS_DATA || c.table != k->table || c.node < 0 || c.node >= k->nodes)
        return cr_errf(e, "counts: an answer for table %d of node %d to a request for table %d", c.table, c.node,
                       k->table);
    return k->fn(k->arg, c.node, c.data, c.n, e);
}

int cr_job_counts(cr_job *j, int table, cr_job_counts_fn fn, void *arg, cr_err *e) {
    begin(j);
    cr_proto_msg m;
    cr_msg_counts c = {.table = table, .op = CR_COUNTS_READ};
    if (cr_proto_encode_counts(&c, &m, e) < 0) return done(j, -1, e);
    counts_sink k = {.table = table, .nodes = cr_job_nodes(j), .fn = fn, .arg = arg};
    return done(j, request(j, -1, &m, cr_job_nodes(j), NULL, take_counts, &k, e), e);
}
