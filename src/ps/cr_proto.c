#include "ps/cr_proto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "ps/cr_cmd.h"

_Static_assert(CR_CMD_MODEL == CR_M_MODEL && CR_CMD_CALL == CR_M_CALL, "worker command ids are message types");

static const char *const names[] = {
    [CR_M_REGISTER] = "REGISTER", [CR_M_WELCOME] = "WELCOME",   [CR_M_HB] = "HB",
    [CR_M_TABLE] = "TABLE",       [CR_M_MODEL] = "MODEL",       [CR_M_CALL] = "CALL",
    [CR_M_POLICY] = "POLICY",     [CR_M_CLOCKS] = "CLOCKS",     [CR_M_SETLR] = "SETLR",
    [CR_M_GETROWS] = "GETROWS",   [CR_M_SETROWS] = "SETROWS",   [CR_M_STATS] = "STATS",
    [CR_M_SHUTDOWN] = "SHUTDOWN", [CR_M_REPLY] = "REPLY",       [CR_M_ERROR] = "ERROR",
    [CR_M_STATE] = "STATE",       [CR_M_PROGRESS] = "PROGRESS", [CR_M_DEAD] = "DEAD",
    [CR_M_ACK] = "ACK",           [CR_M_ROWS] = "ROWS",         [CR_M_SETCLOCKS] = "SETCLOCKS",
    [CR_M_CANCEL] = "CANCEL",     [CR_M_DIST] = "DIST",         [CR_M_SAMPLING] = "SAMPLING",
    [CR_M_MANAGE] = "MANAGE",     [CR_M_COUNTS] = "COUNTS",
};
#define NTYPES ((int)(sizeof names / sizeof names[0]))

const char *cr_proto_name(int type) { return type > 0 && type < NTYPES && names[type] ? names[type] : "?"; }

void cr_proto_msg_free(cr_proto_msg *m) {
    if (!m) return;
    free(m->owned);
    m->owned = NULL;
}

int cr_proto_view(cr_parts *p, int first, cr_proto_msg *m, cr_err *e) {
    memset(m, 0, sizeof *m);
    if (p->n <= first) return cr_errf(e, "empty control message");
    if (cr_parts_size(p, first) != sizeof m->h)
        return cr_errf(e, "control header of %zu bytes (expected %zu)", cr_parts_size(p, first), sizeof m->h);
    memcpy(&m->h, cr_parts_data(p, first), sizeof m->h);
    if (!strcmp(cr_proto_name(m->h.type), "?")) return cr_errf(e, "unknown control message type %d", (int)m->h.type);
    int np = p->n - first - 1;
    if (np > 3) return cr_errf(e, "%s: %d payload frames (at most 3)", cr_proto_name(m->h.type), np);
    m->np = np;
    for (int i = 0; i < np; i++) {
        m->p[i] = cr_parts_data(p, first + 1 + i);
        m->n[i] = cr_parts_size(p, first + 1 + i);
    }
    return 0;
}

int cr_proto_send(void *sock, const void *id, size_t idlen, const cr_proto_msg *m) {
    if (id && zmq_send(sock, id, idlen, ZMQ_SNDMORE) < 0) return -1;
    if (zmq_send(sock, &m->h, sizeof m->h, m->np > 0 ? ZMQ_SNDMORE : 0) < 0) return -1;
    for (int i = 0; i < m->np; i++)
        if (zmq_send(sock, m->n[i] ? m->p[i] : "", m->n[i], i + 1 < m->np ? ZMQ_SNDMORE : 0) < 0) return -1;
    return 0;
}

/* ---------- shared pieces of the codecs ---------- */

static void start(cr_proto_msg *m, int type) {
    memset(m, 0, sizeof *m);
    m->h.type = type;
    m->h.worker = -1;
}

static void payload(cr_proto_msg *m, const void *p, size_t n) {
    m->p[m->np] = p ? p : "";
    m->n[m->np] = p ? n : 0;
    m->np++;
}

/* The message has type t (or t2, if t2 > 0) and exactly np payloads. */
static int shape(const cr_proto_msg *m, int t, int t2, int np, cr_err *e) {
    if (m->h.type != t && (t2 <= 0 || m->h.type != t2))
        return cr_errf(e, "expected %s, got %s (type %d)", cr_proto_name(t), cr_proto_name(m->h.type),
                       (int)m->h.type);
    if (m->np != np)
        return cr_errf(e, "%s: %d payload frames (expected %d)", cr_proto_name(t), m->np, np);
    return 0;
}

static int cap(const cr_proto_msg *m, const char *what, size_t n, size_t max, cr_err *e) {
    if (n > max) return cr_errf(e, "%s: %s of %zu bytes (at most %zu)", cr_proto_name(m->h.type), what, n, max);
    return 0;
}

/* bytes = count * width * 4, or -1 when it would overflow. */
static int row_bytes(int64_t count, int32_t width, size_t *bytes) {
    if (count < 0 || width < 0) return -1;
    if (width && (uint64_t)count > SIZE_MAX / 4 / (uint64_t)width) return -1;
    *bytes = (size_t)count * (size_t)width * sizeof(float);
    return 0;
}

/* ---------- REGISTER, WELCOME ---------- */

int cr_proto_encode_register(const cr_msg_register *r, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_REGISTER);
    if (r->addrn > CR_PROTO_MAX_ADDR) return cr_errf(e, "REGISTER: address longer than %d bytes", CR_PROTO_MAX_ADDR);
    if (r->rank < -1 || r->rank >= CR_PROTO_MAX_NODES) return cr_errf(e, "REGISTER: bad rank %d", r->rank);
    m->h.node = -1;
    m->h.a = r->pid;
    m->h.b = r->rank;
    payload(m, r->addr, r->addrn);
    return 0;
}

int cr_proto_decode_register(const cr_proto_msg *m, cr_msg_register *r, cr_err *e) {
    if (shape(m, CR_M_REGISTER, 0, 1, e) < 0 || cap(m, "address", m->n[0], CR_PROTO_MAX_ADDR, e) < 0) return -1;
    if (m->h.a <= 0) return cr_errf(e, "REGISTER: bad pid %lld", (long long)m->h.a);
    if (m->h.b < -1 || m->h.b >= CR_PROTO_MAX_NODES) return cr_errf(e, "REGISTER: bad rank %lld", (long long)m->h.b);
    r->rank = (int)m->h.b;
    r->pid = m->h.a;
    r->addr = m->p[0];
    r->addrn = m->n[0];
    if (memchr(r->addr, '\0', r->addrn)) return cr_errf(e, "REGISTER: NUL inside the address");
    return 0;
}

int cr_proto_encode_welcome(const cr_msg_welcome *w, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_WELCOME);
    m->h.node = w->node;
    m->h.a = w->nodes;
    m->h.b = w->workers;
    memcpy(&m->h.f, &w->seed, sizeof m->h.f);
    payload(m, w->book, w->bookn);
    cr_msg_welcome check;
    return cr_proto_decode_welcome(m, &check, e);
}

/* The book holds exactly `nodes` NUL-terminated addresses, each short. */
static int check_book(const char *b, size_t n, int nodes, cr_err *e) {
    size_t at = 0;
    for (int i = 0; i < nodes; i++) {
        const char *z = at < n ? memchr(b + at, '\0', n - at) : NULL;
        if (!z) return cr_errf(e, "WELCOME: address book holds fewer than %d addresses", nodes);
        size_t l = (size_t)(z - (b + at));
        if (l > CR_PROTO_MAX_ADDR) return cr_errf(e, "WELCOME: address %d longer than %d bytes", i, CR_PROTO_MAX_ADDR);
        at += l + 1;
    }
    if (at != n) return cr_errf(e, "WELCOME: %zu bytes after the last address", n - at);
    return 0;
}

int cr_proto_decode_welcome(const cr_proto_msg *m, cr_msg_welcome *w, cr_err *e) {
    if (shape(m, CR_M_WELCOME, 0, 1, e) < 0) return -1;
    if (m->h.a < 1 || m->h.a > CR_PROTO_MAX_NODES)
        return cr_errf(e, "WELCOME: %lld nodes (1 to %d)", (long long)m->h.a, CR_PROTO_MAX_NODES);
    if (m->h.b < 0 || m->h.b > CR_PROTO_MAX_WPN)
        return cr_errf(e, "WELCOME: %lld workers per node (0 to %d)", (long long)m->h.b, CR_PROTO_MAX_WPN);
    if (m->h.node < 0 || m->h.node >= m->h.a) return cr_errf(e, "WELCOME: node id %d out of range", (int)m->h.node);
    if (check_book(m->p[0], m->n[0], (int)m->h.a, e) < 0) return -1;
    w->node = m->h.node;
    w->nodes = (int)m->h.a;
    w->workers = (int)m->h.b;
    memcpy(&w->seed, &m->h.f, sizeof w->seed);
    w->book = m->p[0];
    w->bookn = m->n[0];
    return 0;
}

const char *cr_proto_welcome_addr(const cr_msg_welcome *w, int i) {
    const char *a = w->book, *end = w->book + w->bookn;
    for (int k = 0; k < i && a < end; k++) a += strlen(a) + 1;
    return i >= 0 && i < w->nodes && a < end ? a : NULL;
}

/* ---------- TABLE ---------- */

int cr_proto_encode_table(const cr_msg_table *t, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_TABLE);
    if (cr_table_def_check(&t->def, e) < 0) return -1;
    m->h.table = t->id;
    payload(m, &t->def, sizeof t->def);
    if (t->def.placement == CR_PLACE_FILE) {
        if (!t->owner) return cr_errf(e, "TABLE: table '%s' placed by a file needs its key-to-node map", t->def.name);
        payload(m, t->owner, (size_t)t->def.keys * sizeof(uint32_t));
    }
    return 0;
}

int cr_proto_decode_table(const cr_proto_msg *m, cr_msg_table *t, cr_err *e) {
    if (shape(m, CR_M_TABLE, 0, m->np == 2 ? 2 : 1, e) < 0) return -1;
    t->owner = NULL;
    if (m->n[0] != sizeof t->def) return cr_errf(e, "TABLE: definition of %zu bytes (expected %zu)", m->n[0], sizeof t->def);
    if (m->h.table < 0) return cr_errf(e, "TABLE: negative table id");
    memcpy(&t->def, m->p[0], sizeof t->def);
    if (!memchr(t->def.name, '\0', sizeof t->def.name)) return cr_errf(e, "TABLE: name not terminated");
    t->id = m->h.table;
    if (cr_table_def_check(&t->def, e) < 0) return -1;
    if ((t->def.placement == CR_PLACE_FILE) != (m->np == 2))
        return cr_errf(e, "TABLE: a key-to-node map goes with a file placement only");
    if (m->np == 2) {
        if (m->n[1] != (size_t)t->def.keys * sizeof(uint32_t))
            return cr_errf(e, "TABLE: key-to-node map of %zu bytes for %lld keys", m->n[1], (long long)t->def.keys);
        t->owner = m->p[1]; /* a frame: maybe not aligned, copy before use (memcpy) */
    }
    return 0;
}

/* ---------- MODEL, POLICY, CALL ---------- */

/* p1 = source; p2 = chunk name, NUL, serialized options. */
int cr_proto_encode_script(int type, const cr_msg_script *s, cr_proto_msg *m, cr_err *e) {
    start(m, type);
    if (type != CR_M_MODEL && type != CR_M_POLICY) return cr_errf(e, "%s is not a script message", cr_proto_name(type));
    if (s->srcn > CR_PROTO_MAX_SCRIPT || s->optsn > CR_PROTO_MAX_SCRIPT || s->chunkn > CR_PROTO_MAX_NAME ||
        memchr(s->chunk, '\0', s->chunkn))
        return cr_errf(e, "%s: script, options or chunk name too long", cr_proto_name(type));
    char *p2 = cr_xmalloc(s->chunkn + 1 + s->optsn);
    memcpy(p2, s->chunk, s->chunkn);
    p2[s->chunkn] = '\0';
    if (s->optsn) memcpy(p2 + s->chunkn + 1, s->opts, s->optsn);
    m->owned = p2;
    payload(m, s->src, s->srcn);
    payload(m, p2, s->chunkn + 1 + s->optsn);
    return 0;
}

int cr_proto_decode_script(const cr_proto_msg *m, cr_msg_script *s, cr_err *e) {
    if (shape(m, CR_M_MODEL, CR_M_POLICY, 2, e) < 0 || cap(m, "source", m->n[0], CR_PROTO_MAX_SCRIPT, e) < 0) return -1;
    const char *z = memchr(m->p[1], '\0', m->n[1]);
    if (!z) return cr_errf(e, "%s: chunk name not terminated", cr_proto_name(m->h.type));
    s->src = m->p[0];
    s->srcn = m->n[0];
    s->chunk = m->p[1];
    s->chunkn = (size_t)(z - s->chunk);
    s->opts = z + 1;
    s->optsn = m->n[1] - s->chunkn - 1;
    if (cap(m, "chunk name", s->chunkn, CR_PROTO_MAX_NAME, e) < 0 || cap(m, "options", s->optsn, CR_PROTO_MAX_SCRIPT, e) < 0)
        return -1;
    return 0;
}

int cr_proto_encode_call(const cr_msg_call *c, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_CALL);
    if (c->fnn == 0 || c->fnn > CR_PROTO_MAX_NAME || c->argsn > CR_PROTO_MAX_SCRIPT)
        return cr_errf(e, "CALL: function name empty or too long, or arguments too large");
    payload(m, c->fn, c->fnn);
    payload(m, c->args, c->argsn);
    return 0;
}

int cr_proto_decode_call(const cr_proto_msg *m, cr_msg_call *c, cr_err *e) {
    if (shape(m, CR_M_CALL, 0, 2, e) < 0 || cap(m, "function name", m->n[0], CR_PROTO_MAX_NAME, e) < 0 ||
        cap(m, "arguments", m->n[1], CR_PROTO_MAX_SCRIPT, e) < 0)
        return -1;
    if (m->n[0] == 0) return cr_errf(e, "CALL: empty function name");
    c->fn = m->p[0];
    c->fnn = m->n[0];
    c->args = m->p[1];
    c->argsn = m->n[1];
    return 0;
}

/* ---------- CLOCKS, SETCLOCKS, SETLR ---------- */

/* CLOCKS: p1 = clocks[W], p2 = barriers[W] then active[W]. SETCLOCKS: p1 =
 * clocks[W], p2 = barriers[W]. All int64. */
int cr_proto_encode_clocks(int type, const cr_msg_clocks *c, cr_proto_msg *m, cr_err *e) {
    start(m, type);
    if (type != CR_M_CLOCKS && type != CR_M_SETCLOCKS) return cr_errf(e, "%s is not a clocks message", cr_proto_name(type));
    if (c->W < 0 || c->W > CR_PROTO_MAX_NODES * CR_PROTO_MAX_WPN) return cr_errf(e, "%s: bad worker count", cr_proto_name(type));
    size_t W = (size_t)c->W;
    payload(m, c->clocks, W * 8);
    if (type == CR_M_SETCLOCKS) {
        payload(m, c->barriers, W * 8);
        return 0;
    }
    /* barriers and active are one frame: the caller keeps them adjacent */
    if (W && (const char *)c->active != (const char *)c->barriers + W * 8)
        return cr_errf(e, "CLOCKS: active flags must follow the barrier counts");
    payload(m, c->barriers, W * 16);
    return 0;
}

int cr_proto_decode_clocks(const cr_proto_msg *m, int W, cr_msg_clocks *c, cr_err *e) {
    if (shape(m, CR_M_CLOCKS, CR_M_SETCLOCKS, 2, e) < 0) return -1;
    size_t want2 = (size_t)W * (m->h.type == CR_M_CLOCKS ? 16 : 8);
    if (W < 0 || m->n[0] != (size_t)W * 8 || m->n[1] != want2)
        return cr_errf(e, "%s: frames of %zu and %zu bytes for %d workers", cr_proto_name(m->h.type), m->n[0], m->n[1], W);
    c->W = W;
    c->clocks = m->p[0];
    c->barriers = m->p[1];
    c->active = m->h.type == CR_M_CLOCKS ? (const char *)m->p[1] + (size_t)W * 8 : NULL;
    return 0;
}

int cr_proto_encode_setlr(const cr_msg_setlr *s, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_SETLR);
    if (!isfinite(s->lr)) return cr_errf(e, "SETLR: learning rate %g is not finite", s->lr);
    m->h.table = s->table;
    m->h.f = s->lr;
    return 0;
}

int cr_proto_decode_setlr(const cr_proto_msg *m, cr_msg_setlr *s, cr_err *e) {
    if (shape(m, CR_M_SETLR, 0, 0, e) < 0) return -1;
    if (!isfinite(m->h.f)) return cr_errf(e, "SETLR: learning rate is not finite");
    s->table = m->h.table;
    s->lr = m->h.f;
    return 0;
}

/* ---------- GETROWS, ROWS, SETROWS ---------- */

/* table, a = lo, b = count; p1 = values, p2 = state (ROWS, SETROWS). */
int cr_proto_encode_rows(int type, const cr_msg_rows *r, cr_proto_msg *m, cr_err *e) {
    start(m, type);
    if (type != CR_M_GETROWS && type != CR_M_ROWS && type != CR_M_SETROWS)
        return cr_errf(e, "%s is not a rows message", cr_proto_name(type));
    if (r->lo < 0 || r->count < 0) return cr_errf(e, "%s: negative row range", cr_proto_name(type));
    m->h.table = r->table;
    m->h.a = r->lo;
    m->h.b = r->count;
    if (type != CR_M_GETROWS) {
        payload(m, r->values, r->valuesn);
        payload(m, r->state, r->staten);
    }
    if (r->keys) payload(m, r->keys, (size_t)r->count * sizeof(int64_t));
    return 0;
}

int cr_proto_decode_rows(const cr_proto_msg *m, int32_t dim, int32_t sdim, cr_msg_rows *r, cr_err *e) {
    int get = m->h.type == CR_M_GETROWS, keyed = m->np == (get ? 1 : 3);
    if (shape(m, get ? CR_M_GETROWS : CR_M_ROWS, get ? 0 : CR_M_SETROWS, (get ? 0 : 2) + keyed, e) < 0) return -1;
    if (m->h.table < 0 || m->h.a < 0 || m->h.b < 0)
        return cr_errf(e, "%s: bad table or row range", cr_proto_name(m->h.type));
    memset(r, 0, sizeof *r);
    r->table = m->h.table;
    r->lo = m->h.a;
    r->count = m->h.b;
    if (keyed) {
        size_t kb = m->n[get ? 0 : 2];
        if (r->count > (int64_t)(SIZE_MAX / 16) || kb != (size_t)r->count * sizeof(int64_t))
            return cr_errf(e, "%s: %zu bytes of keys for %lld rows", cr_proto_name(m->h.type), kb, (long long)r->count);
        r->keys = m->p[get ? 0 : 2];
    }
    if (get) return 0;
    size_t vb, sb;
    if (row_bytes(r->count, dim, &vb) < 0 || row_bytes(r->count, sdim, &sb) < 0)
        return cr_errf(e, "%s: %lld rows overflow", cr_proto_name(m->h.type), (long long)r->count);
    int keep_state = m->h.type == CR_M_SETROWS && m->n[1] == 0;
    if (m->n[0] != vb || (m->n[1] != sb && !keep_state))
        return cr_errf(e, "%s: frames of %zu and %zu bytes for %lld rows (expected %zu and %zu)", cr_proto_name(m->h.type),
                       m->n[0], m->n[1], (long long)r->count, vb, sb);
    r->values = m->p[0];
    r->valuesn = vb;
    r->state = keep_state ? NULL : m->p[1];
    r->staten = keep_state ? 0 : sb;
    return 0;
}

/* ---------- REPLY, ERROR, STATE, PROGRESS, DEAD ---------- */

int cr_proto_encode_reply(int type, const cr_msg_reply *r, cr_proto_msg *m, cr_err *e) {
    start(m, type);
    if (type != CR_M_REPLY && type != CR_M_ERROR) return cr_errf(e, "%s is not an answer", cr_proto_name(type));
    m->h.worker = r->worker;
    size_t n = r->n;
    if (type == CR_M_ERROR && n > CR_PROTO_MAX_ERROR) n = CR_PROTO_MAX_ERROR; /* an error still gets through */
    if (type == CR_M_REPLY && n > CR_PROTO_MAX_REPLY) return cr_errf(e, "REPLY: %zu bytes (at most %u)", n, CR_PROTO_MAX_REPLY);
    payload(m, r->data, n);
    return 0;
}

int cr_proto_decode_reply(const cr_proto_msg *m, cr_msg_reply *r, cr_err *e) {
    if (shape(m, CR_M_REPLY, CR_M_ERROR, 1, e) < 0) return -1;
    size_t max = m->h.type == CR_M_ERROR ? CR_PROTO_MAX_ERROR : CR_PROTO_MAX_REPLY;
    if (cap(m, "data", m->n[0], max, e) < 0) return -1;
    if (m->h.worker < -1) return cr_errf(e, "%s: bad worker %d", cr_proto_name(m->h.type), (int)m->h.worker);
    r->worker = m->h.worker;
    r->data = m->p[0];
    r->n = m->n[0];
    return 0;
}

uint64_t cr_proto_clocks_view(const int64_t *clocks, const int64_t *active, int W) {
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < W; i++) {
        h = (h ^ (uint64_t)clocks[i]) * 1099511628211ull;
        h = (h ^ (uint64_t)(active[i] != 0)) * 1099511628211ull;
    }
    return h & (uint64_t)INT64_MAX;
}

int cr_proto_encode_state(const cr_msg_state *s, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_STATE);
    m->h.worker = s->worker;
    m->h.a = s->clock;
    m->h.b = s->waiting ? (int64_t)(s->view & (uint64_t)INT64_MAX) : s->barrier;
    m->h.table = s->waiting != 0;
    cr_msg_state check;
    return cr_proto_decode_state(m, &check, e);
}

int cr_proto_decode_state(const cr_proto_msg *m, cr_msg_state *s, cr_err *e) {
    if (shape(m, CR_M_STATE, 0, 0, e) < 0) return -1;
    if (m->h.worker < 0 || m->h.a < 0 || m->h.b < 0) return cr_errf(e, "STATE: negative worker, clock or barrier count");
    if (m->h.table != 0 && m->h.table != 1) return cr_errf(e, "STATE: bad waiting flag %d", (int)m->h.table);
    s->worker = m->h.worker;
    s->clock = m->h.a;
    s->waiting = m->h.table;
    s->barrier = s->waiting ? 0 : m->h.b;
    s->view = s->waiting ? (uint64_t)m->h.b : 0;
    return 0;
}

int cr_proto_encode_progress(const cr_msg_progress *p, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_PROGRESS);
    if (p->items < 0) return cr_errf(e, "PROGRESS: negative item count");
    m->h.a = p->items;
    return 0;
}

int cr_proto_decode_progress(const cr_proto_msg *m, cr_msg_progress *p, cr_err *e) {
    if (shape(m, CR_M_PROGRESS, 0, 0, e) < 0) return -1;
    if (m->h.a < 0) return cr_errf(e, "PROGRESS: negative item count");
    p->items = m->h.a;
    return 0;
}

int cr_proto_encode_dead(const cr_msg_dead *d, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_DEAD);
    m->h.node = d->node;
    payload(m, d->why, d->whyn > CR_PROTO_MAX_ERROR ? CR_PROTO_MAX_ERROR : d->whyn);
    (void)e;
    return 0;
}

int cr_proto_decode_dead(const cr_proto_msg *m, cr_msg_dead *d, cr_err *e) {
    if (shape(m, CR_M_DEAD, 0, 1, e) < 0 || cap(m, "reason", m->n[0], CR_PROTO_MAX_ERROR, e) < 0) return -1;
    d->node = m->h.node;
    d->why = m->p[0];
    d->whyn = m->n[0];
    return 0;
}

/* ---------- messages without content ---------- */

static int is_empty_type(int t) {
    return t == CR_M_HB || t == CR_M_STATS || t == CR_M_ACK || t == CR_M_CANCEL || t == CR_M_SHUTDOWN;
}

int cr_proto_encode_empty(int type, cr_proto_msg *m, cr_err *e) {
    start(m, type);
    if (!is_empty_type(type)) return cr_errf(e, "%s is not an empty message", cr_proto_name(type));
    return 0;
}

int cr_proto_decode_empty(const cr_proto_msg *m, cr_err *e) {
    if (!is_empty_type(m->h.type)) return cr_errf(e, "%s is not an empty message", cr_proto_name(m->h.type));
    return shape(m, m->h.type, 0, 0, e);
}

int cr_proto_send_error(void *sock, const void *id, size_t idlen, int node, const char *msg) {
    cr_proto_msg m;
    cr_msg_reply r = {.worker = -1, .data = msg, .n = strlen(msg)};
    cr_proto_encode_reply(CR_M_ERROR, &r, &m, NULL);
    m.h.node = node;
    return cr_proto_send(sock, id, idlen, &m);
}

int cr_proto_send_ack(void *sock, const void *id, size_t idlen, int node) {
    cr_proto_msg m;
    cr_proto_encode_empty(CR_M_ACK, &m, NULL);
    m.h.node = node;
    return cr_proto_send(sock, id, idlen, &m);
}

/* ---------- DIST, SAMPLING ---------- */

/* table; a = kind, b = all weights; p1 = name, p2 = int64 offset then the
 * part's weights (doubles), or nothing (uniform). */
int cr_proto_encode_dist(const cr_msg_dist *d, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_DIST);
    m->h.table = d->table;
    m->h.a = d->kind;
    m->h.b = d->nweights;
    payload(m, d->name, d->namen);
    if (d->kind == CR_DIST_WEIGHTS && d->npart >= 1 && d->npart <= CR_DIST_PART) {
        size_t wb = (size_t)d->npart * sizeof(double);
        char *buf = cr_xmalloc(8 + wb);
        memcpy(buf, &d->offset, 8);
        memcpy(buf + 8, d->weights, wb);
        m->owned = buf;
        payload(m, buf, 8 + wb);
    } else {
        payload(m, NULL, 0);
    }
    cr_msg_dist check;
    if (cr_proto_decode_dist(m, &check, e) == 0) return 0;
    cr_proto_msg_free(m);
    return -1;
}

/* The weights frame of a weighted DIST: its offset and part size, in range. */
static int dist_part(const cr_proto_msg *m, cr_msg_dist *d, cr_err *e) {
    if (m->h.b < 1 || m->h.b > CR_PROTO_MAX_WEIGHTS)
        return cr_errf(e, "DIST: %lld weights (1 to %lld)", (long long)m->h.b, (long long)CR_PROTO_MAX_WEIGHTS);
    if (m->n[1] < 8 + sizeof(double) || (m->n[1] - 8) % sizeof(double) ||
        (m->n[1] - 8) / sizeof(double) > CR_DIST_PART)
        return cr_errf(e, "DIST: weights frame of %zu bytes (an offset and 1 to %d doubles)", m->n[1], CR_DIST_PART);
    memcpy(&d->offset, m->p[1], 8);
    d->npart = (int64_t)((m->n[1] - 8) / sizeof(double));
    if (d->offset < 0 || d->offset > m->h.b - d->npart)
        return cr_errf(e, "DIST: weights [%lld, +%lld) outside the %lld weights", (long long)d->offset,
                       (long long)d->npart, (long long)m->h.b);
    d->weights = (const char *)m->p[1] + 8;
    return 0;
}

int cr_proto_decode_dist(const cr_proto_msg *m, cr_msg_dist *d, cr_err *e) {
    if (shape(m, CR_M_DIST, 0, 2, e) < 0) return -1;
    if (m->n[0] == 0 || m->n[0] >= CR_DIST_NAME_MAX || memchr(m->p[0], '\0', m->n[0]))
        return cr_errf(e, "DIST: name of %zu bytes (1 to %d, no NUL)", m->n[0], CR_DIST_NAME_MAX - 1);
    if (m->h.table < 0) return cr_errf(e, "DIST: negative table id");
    memset(d, 0, sizeof *d);
    if (m->h.a == CR_DIST_UNIFORM) {
        if (m->h.b != 0 || m->n[1] != 0) return cr_errf(e, "DIST: a uniform distribution carries no weights");
    } else if (m->h.a == CR_DIST_WEIGHTS) {
        if (dist_part(m, d, e) < 0) return -1;
    } else {
        return cr_errf(e, "DIST: unknown kind %lld", (long long)m->h.a);
    }
    d->table = m->h.table;
    d->kind = (int)m->h.a;
    d->name = m->p[0];
    d->namen = m->n[0];
    d->nweights = m->h.b;
    return 0;
}

/* a = count; p1 = label, p2 = count entries. */
int cr_proto_encode_sampling(const cr_msg_sampling *s, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_SAMPLING);
    m->h.a = s->count;
    payload(m, s->label, s->labeln);
    size_t eb = s->count > 0 && s->count <= CR_PROTO_MAX_SCHEME ? (size_t)s->count * sizeof(cr_sampling_entry) : 0;
    payload(m, s->entries, eb);
    cr_msg_sampling check;
    return cr_proto_decode_sampling(m, &check, e);
}

void cr_proto_sampling_entry(const cr_msg_sampling *s, int i, cr_sampling_entry *out) {
    memcpy(out, (const char *)s->entries + (size_t)i * sizeof *out, sizeof *out);
}

/* Each entry names "" (entry 0 only) or something, NUL-terminated, and
 * holds a configuration cr_sampling_conf_check accepts. */
static int check_entries(const cr_msg_sampling *s, cr_err *e) {
    for (int i = 0; i < s->count; i++) {
        cr_sampling_entry x;
        cr_proto_sampling_entry(s, i, &x);
        if (!memchr(x.name, '\0', sizeof x.name)) return cr_errf(e, "SAMPLING: entry %d: name not terminated", i);
        if ((i == 0) != (x.name[0] == '\0'))
            return cr_errf(e, "SAMPLING: entry %d: only entry 0 (the default) has no name", i);
        cr_sampling_conf c;
        cr_sampling_conf_default(&c, CR_SAMPLING_CONFORM);
        c.level = x.level < 0 || x.level > 99 ? -1 : (int)x.level;
        c.pool = x.pool;
        c.reuse = x.reuse;
        c.postpone = x.postpone != 0;
        if (cr_sampling_conf_check(&c, e) < 0) return -1;
    }
    return 0;
}

int cr_proto_decode_sampling(const cr_proto_msg *m, cr_msg_sampling *s, cr_err *e) {
    if (shape(m, CR_M_SAMPLING, 0, 2, e) < 0 || cap(m, "label", m->n[0], CR_PROTO_MAX_NAME, e) < 0) return -1;
    if (m->h.a < 1 || m->h.a > CR_PROTO_MAX_SCHEME)
        return cr_errf(e, "SAMPLING: %lld entries (1 to %d)", (long long)m->h.a, CR_PROTO_MAX_SCHEME);
    if (m->n[1] != (size_t)m->h.a * sizeof(cr_sampling_entry))
        return cr_errf(e, "SAMPLING: entries frame of %zu bytes for %lld entries", m->n[1], (long long)m->h.a);
    s->label = m->p[0];
    s->labeln = m->n[0];
    s->count = (int)m->h.a;
    s->entries = m->p[1];
    return check_entries(s, e);
}

/* ---------- MANAGE ---------- */

/* table, a = mode, b = replicated keys; p1 = the keys (int64 * b), p2 =
 * the relocating keys (int64 each; mode 0 only). */
int cr_proto_encode_manage(const cr_msg_manage *g, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_MANAGE);
    if (g->mode != 0 && g->mode != 1) return cr_errf(e, "MANAGE: mode %d is not classic (0) or relocate (1)", g->mode);
    if (g->nrepl < 0 || g->nrepl > CR_PROTO_MAX_WEIGHTS) return cr_errf(e, "MANAGE: %lld replicated keys", (long long)g->nrepl);
    if (g->nreloc < 0 || g->nreloc > CR_PROTO_MAX_WEIGHTS) return cr_errf(e, "MANAGE: %lld relocating keys", (long long)g->nreloc);
    if (g->mode != 0 && g->nreloc > 0)
        return cr_errf(e, "MANAGE: a list of relocating keys needs mode classic (0) for the rest, not relocate");
    m->h.table = g->table;
    m->h.a = g->mode;
    m->h.b = g->nrepl;
    payload(m, g->repl, (size_t)g->nrepl * 8);
    payload(m, g->reloc, (size_t)g->nreloc * 8);
    return 0;
}

int cr_proto_decode_manage(const cr_proto_msg *m, cr_msg_manage *g, cr_err *e) {
    if (shape(m, CR_M_MANAGE, 0, 2, e) < 0) return -1;
    if (m->h.a != 0 && m->h.a != 1) return cr_errf(e, "MANAGE: mode %lld is not classic (0) or relocate (1)", (long long)m->h.a);
    if (m->h.b < 0 || m->h.b > CR_PROTO_MAX_WEIGHTS || m->n[0] != (size_t)m->h.b * 8)
        return cr_errf(e, "MANAGE: %zu bytes for %lld replicated keys", m->n[0], (long long)m->h.b);
    if (m->n[1] % 8 || m->n[1] / 8 > (size_t)CR_PROTO_MAX_WEIGHTS)
        return cr_errf(e, "MANAGE: %zu bytes of relocating keys (8 per key, at most %lld keys)", m->n[1],
                       (long long)CR_PROTO_MAX_WEIGHTS);
    if (m->h.a != 0 && m->n[1] > 0)
        return cr_errf(e, "MANAGE: a list of relocating keys needs mode classic (0) for the rest, not relocate");
    g->table = m->h.table;
    g->mode = (int)m->h.a;
    g->nrepl = m->h.b;
    g->repl = m->p[0];
    g->nreloc = (int64_t)(m->n[1] / 8);
    g->reloc = m->p[1];
    return 0;
}

/* ---------- COUNTS ---------- */

/* table, a = op, node = the sender of DATA; p1 = the sketch (DATA only). */
int cr_proto_encode_counts(const cr_msg_counts *c, cr_proto_msg *m, cr_err *e) {
    start(m, CR_M_COUNTS);
    m->h.table = c->table;
    m->h.a = c->op;
    m->h.node = c->node;
    payload(m, c->op == CR_COUNTS_DATA ? c->data : NULL, c->op == CR_COUNTS_DATA ? c->n : 0);
    cr_msg_counts check;
    return cr_proto_decode_counts(m, &check, e);
}

int cr_proto_decode_counts(const cr_proto_msg *m, cr_msg_counts *c, cr_err *e) {
    if (shape(m, CR_M_COUNTS, 0, 1, e) < 0 || cap(m, "sketch", m->n[0], CR_PROTO_MAX_SKETCH, e) < 0) return -1;
    if (m->h.a < CR_COUNTS_OFF || m->h.a > CR_COUNTS_DATA) return cr_errf(e, "COUNTS: unknown op %lld", (long long)m->h.a);
    if (m->h.table < 0) return cr_errf(e, "COUNTS: negative table id");
    if (m->h.a != CR_COUNTS_DATA && m->n[0] != 0) return cr_errf(e, "COUNTS: a request carries no data");
    if (m->h.a == CR_COUNTS_DATA && m->n[0] == 0) return cr_errf(e, "COUNTS: an answer without its sketch");
    c->table = m->h.table;
    c->op = (int)m->h.a;
    c->node = m->h.node;
    c->data = m->p[0];
    c->n = m->n[0];
    return 0;
}
