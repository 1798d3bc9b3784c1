#ifndef CR_PROTO_H
#define CR_PROTO_H
/* The control protocol: one typed struct per message between the scheduler,
 * its caller (the job client) and the nodes, each with an encoder and a
 * decoder. Nothing else packs or unpacks a control message.
 *
 * On the wire a message is a fixed header (cr_ctl, below) followed by
 * zero to three payload frames (three: ROWS and SETROWS of a sparse table,
 * values, state and keys). What the header fields and payloads mean
 * depends on the type; that meaning lives here only, in the comment above
 * each struct. Every decoder checks the frame count, every payload size
 * against the header and against the caps below before the caller allocates
 * anything, and fails with a one-line message (never crashes) on a short,
 * oversized, truncated or garbage message.
 *
 * Decoded structs point into the received frames (no copy): they are valid
 * while the cr_proto_msg (and the cr_parts it views) is. Payload pointers
 * may be unaligned; numeric arrays are read with memcpy (cr_proto_i64). */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/cr_err.h"
#include "net/cr_wire.h"
#include "ps/cr_proto_caps.h"
#include "ps/cr_sampling.h"
#include "ps/cr_table.h"

/* Control message types. What each carries, and its codec, is in
 * this file: nothing else packs or unpacks a control message.
 * The values are part of the wire format (append, never renumber). */
enum {
    CR_M_REGISTER = 1,
    CR_M_WELCOME,
    CR_M_HB,
    CR_M_TABLE,
    CR_M_MODEL,
    CR_M_CALL,
    CR_M_POLICY,
    CR_M_CLOCKS,
    CR_M_SETLR,
    CR_M_GETROWS,
    CR_M_SETROWS,
    CR_M_STATS,
    CR_M_SHUTDOWN,
    CR_M_REPLY,
    CR_M_ERROR,
    CR_M_STATE,
    CR_M_PROGRESS,
    CR_M_DEAD,
    CR_M_ACK,
    CR_M_ROWS,
    CR_M_SETCLOCKS,
    CR_M_CANCEL,
    CR_M_DIST,
    CR_M_SAMPLING,
    CR_M_MANAGE,
    CR_M_COUNTS,
};

/* The fixed header of every control message; the meaning of node, worker,
 * table, a, b and f depends on the type (the comment above each message struct below). */
typedef struct cr_ctl {
    int32_t type, node, worker, table;
    int64_t a, b;
    double f;
} cr_ctl;

/* Caps on sizes read off the wire: ps/cr_proto_caps.h. */

/* A message as frames: the header and up to three payloads. Encoders fill it
 * pointing at the caller's data (no copy) or at `owned`, a buffer the encoder
 * allocated (cr_proto_msg_free releases it; the struct itself is the
 * caller's). cr_proto_view fills it from received frames. */
typedef struct cr_proto_msg {
    cr_ctl h;
    int np;              /* payload frames present: 0 to 3 */
    const void *p[3];
    size_t n[3];
    void *owned;
} cr_proto_msg;

void cr_proto_msg_free(cr_proto_msg *m);

/* Name of a message type ("CALL"), or "?" for an unknown one. */
const char *cr_proto_name(int type);

/* View frames [first..] of p as a message: checks the header frame's size,
 * that the type is known and that at most three payloads follow. Returns 0 or
 * -1 with a message (the message is then garbage). */
int cr_proto_view(cr_parts *p, int first, cr_proto_msg *m, cr_err *e);

/* Send m on sock, after a routing id frame when id != NULL. Payloads are
 * copied by ZeroMQ. Returns 0 or -1 (errno from zmq). */
int cr_proto_send(void *sock, const void *id, size_t idlen, const cr_proto_msg *m);

/* Read int64 i of an unaligned array. */
static inline int64_t cr_proto_i64(const void *base, size_t i) {
    int64_t v;
    memcpy(&v, (const char *)base + i * 8, 8);
    return v;
}

/* ---- the messages ----
 * Direction, then meaning. `node` in a header is the sender's node id on
 * messages from nodes and the target's on messages to them; codecs set it
 * from the struct where the struct has it, else the sender fills m->h.node. */

/* REGISTER, node -> scheduler: "I am process pid, peers reach me at addr"
 * (and rank `rank` of a cluster launcher, -1: none). */
typedef struct cr_msg_register {
    int64_t pid;
    int rank;
    const char *addr; /* not NUL-terminated; addrn <= CR_PROTO_MAX_ADDR */
    size_t addrn;
} cr_msg_register;

/* WELCOME, scheduler -> node: your id, the job's size and seed, and the
 * data address of every node (book: nodes NUL-terminated strings). */
typedef struct cr_msg_welcome {
    int node, nodes, workers; /* workers per node */
    uint64_t seed;
    const char *book;
    size_t bookn;
} cr_msg_welcome;

/* TABLE, scheduler -> node: create table `id` (ids come in sequence). */
typedef struct cr_msg_table {
    int id;
    cr_table_def def;
    /* def.placement CR_PLACE_FILE: the node of each of the def.keys keys
     * (a second frame; decoded: pointing into the frame, perhaps not
     * aligned: memcpy it out); else NULL */
    const void *owner;
} cr_msg_table;

/* MODEL or POLICY, scheduler -> node: a script to load (a model on every
 * worker, answered by each; a policy stored for the next clock boundary,
 * not answered). opts is a serialized Lua value. */
typedef struct cr_msg_script {
    const char *src, *chunk, *opts;
    size_t srcn, chunkn, optsn;
} cr_msg_script;

/* CALL, scheduler -> node: every worker runs model function fn(args),
 * answering with REPLY or ERROR. args is a serialized Lua value. */
typedef struct cr_msg_call {
    const char *fn, *args;
    size_t fnn, argsn;
} cr_msg_call;

/* CLOCKS, scheduler -> node: every worker's clock, barrier count and
 * active flag (W = nodes * workers). SETCLOCKS, scheduler -> node, answered
 * with ACK: set clocks and barriers (job:load), active is unused.
 * Arrays are unaligned views: read with cr_proto_i64. */
typedef struct cr_msg_clocks {
    int W;
    const void *clocks, *barriers, *active;
} cr_msg_clocks;

/* SETLR, scheduler -> node, answered with ACK: table's learning rate. */
typedef struct cr_msg_setlr {
    int table;
    double lr;
} cr_msg_setlr;

/* GETROWS (scheduler -> node, answered with ROWS), ROWS (node -> scheduler),
 * SETROWS (scheduler -> node, answered with ACK): rows [lo, lo + count) of a
 * table, values count * dim floats, state count * sdim floats (or none on
 * SETROWS: statesn = 0 keeps the state). GETROWS carries no data, or keys. */
typedef struct cr_msg_rows {
    int table;
    int64_t lo, count;
    const void *values, *state;
    size_t valuesn, staten;
    /* A sparse table's rows go by key: count int64 keys (a frame after the
     * values and state; GETROWS: its only frame), NULL for rows by range.
     * A GETROWS without keys of a sparse table asks for its stored rows
     * from cursor lo, at most count; the ROWS answer carries their keys,
     * count the number, lo the next cursor (CR_SHARD_DUMP_END: done).
     * Decoded: pointing into the frame, perhaps not aligned (memcpy). */
    const void *keys;
} cr_msg_rows;

/* REPLY or ERROR, node -> scheduler: the answer of a worker (worker >= 0:
 * its global id) or of the node itself (-1). REPLY data is a serialized Lua
 * value; ERROR data is a one-line message. */
typedef struct cr_msg_reply {
    int worker;
    const char *data;
    size_t n;
} cr_msg_reply;

/* SHUTDOWN with h.a = CR_SHUTDOWN_REJOIN: the job lost a node and runs
 * again (crescent run --restarts): a node started by a launcher joins the
 * scheduler again instead of exiting. */
#define CR_SHUTDOWN_REJOIN 1

/* STATE, node -> scheduler: worker's clock and barrier count went up; or,
 * with waiting = 1, the worker waits at `clock` because the policy said no
 * with the clocks whose cr_proto_clocks_view is `view` (barrier unused). */
typedef struct cr_msg_state {
    int worker;
    int64_t clock, barrier;
    int waiting;
    uint64_t view;
} cr_msg_state;

/* A 63-bit hash of a clock vector and the active flags of its W workers
 * (what a consistency policy decides on): the scheduler compares a waiting
 * worker's view with its own to know the worker decided on the newest. */
uint64_t cr_proto_clocks_view(const int64_t *clocks, const int64_t *active, int W);

/* CANCEL, scheduler -> node, with h.a = CR_CANCEL_STUCK: not a cancel but
 * the news that every worker of the command waits at a clock the policy
 * refused with the newest clocks, or is done; the waiting ones fail, naming
 * the policy and the clocks (cr_node.c). */
#define CR_CANCEL_STUCK 1

/* PROGRESS, node -> scheduler: items processed since the last one. */
typedef struct cr_msg_progress {
    int64_t items;
} cr_msg_progress;

/* DEAD, scheduler thread -> its caller: node died, with why. */
typedef struct cr_msg_dead {
    int node;
    const char *why;
    size_t whyn;
} cr_msg_dead;

/* DIST, scheduler -> node, answered with ACK (or ERROR): the sampling
 * distribution `name` over the keys of table `table`. kind 0: uniform (no
 * weights); kind 1: nweights doubles in all, one per key of the table,
 * finite, >= 0, with a positive sum, sent in parts (CR_DIST_PART weights at
 * most each, in order, each ACKed: a message stays small, so heartbeats
 * keep flowing around it): this message carries weights [offset, offset +
 * npart). The node checks the count against its table and builds the alias
 * tables when the last part is in. nweights <= CR_PROTO_MAX_WEIGHTS. */
#define CR_DIST_UNIFORM 0
#define CR_DIST_WEIGHTS 1
#define CR_DIST_PART (1 << 20) /* weights per DIST message (8 MiB) */
typedef struct cr_msg_dist {
    int table, kind;
    const char *name; /* not NUL-terminated; 1 <= namen < CR_DIST_NAME_MAX */
    size_t namen;
    int64_t nweights;     /* all the weights (0: uniform) */
    int64_t offset, npart; /* this part: weights [offset, offset + npart) */
    const void *weights;  /* npart doubles; unaligned view: read with memcpy */
} cr_msg_dist;

/* SAMPLING, scheduler -> node, answered with ACK: the sampling scheme, as
 * the scheme script configured it. Entry 0 (name "") is the configuration
 * of every distribution; a later entry overrides it for the distribution,
 * or the table, it names. label: the scheme as the user named it
 * ("bounded:pool=100"), for stats. Entries: cr_sampling_entry (ps/cr_sampling.h). */
typedef struct cr_msg_sampling {
    const char *label; /* not NUL-terminated; labeln <= CR_PROTO_MAX_NAME */
    size_t labeln;
    int count;              /* 1 <= count <= CR_PROTO_MAX_SCHEME */
    const void *entries;    /* count cr_sampling_entry, unaligned: read with memcpy */
} cr_msg_sampling;

/* MANAGE, scheduler -> node, answered with ACK (or ERROR), only between
 * commands: table's technique for keys not replicated (mode 0 classic, 1
 * relocate; to classic: the node first brings its keys home), the
 * replicated keys (nrepl int64, in range: checked by the node) and, with
 * mode 0 only, the keys managed by relocation (nreloc int64: in range, no
 * key twice, none replicated; every other key not replicated is classic;
 * nreloc = 0: all classic). Unaligned views: read with cr_proto_i64. */
typedef struct cr_msg_manage {
    int table, mode;
    int64_t nrepl, nreloc;
    const void *repl, *reloc;
} cr_msg_manage;

/* COUNTS, both ways: access counting per key (docs/management.md,
 * Counters). Scheduler -> node, op CR_COUNTS_OFF or _ON, answered with
 * ACK: stop counting accesses to table (sketches freed) / (re)start with
 * zeroed sketches; op CR_COUNTS_READ, answered with a COUNTS of op
 * CR_COUNTS_DATA (node -> scheduler): the node's workers' sketches of the
 * table merged, in cr_sketch_write's format (data, n bytes; at most
 * CR_PROTO_MAX_SKETCH). Requests carry no data. */
#define CR_COUNTS_OFF 0
#define CR_COUNTS_ON 1
#define CR_COUNTS_READ 2
#define CR_COUNTS_DATA 3
#define CR_PROTO_MAX_SKETCH (256u << 20)
typedef struct cr_msg_counts {
    int table, op, node; /* node: the sender of a DATA answer */
    const void *data;
    size_t n;
} cr_msg_counts;

/* HB (both ways), STATS (scheduler -> node, answered with a REPLY of worker
 * -1 holding a serialized table), ACK (node -> scheduler), CANCEL (scheduler
 * -> node: end the running command at each worker's next clock, barrier,
 * progress or sleep; no answer), SHUTDOWN (scheduler -> node) carry nothing:
 * cr_proto_encode_empty / cr_proto_decode_empty. */

/* Encoders: fill m (any previous content is overwritten, not freed) from the
 * struct. Pointers in the struct must stay valid until m is sent. Only the
 * script encoder allocates (m->owned). Encoders check the caps too and
 * return -1 with a message when a value would not decode on the other side. */
int cr_proto_encode_register(const cr_msg_register *r, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_welcome(const cr_msg_welcome *w, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_table(const cr_msg_table *t, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_script(int type, const cr_msg_script *s, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_call(const cr_msg_call *c, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_clocks(int type, const cr_msg_clocks *c, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_setlr(const cr_msg_setlr *s, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_rows(int type, const cr_msg_rows *r, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_reply(int type, const cr_msg_reply *r, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_state(const cr_msg_state *s, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_progress(const cr_msg_progress *p, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_dead(const cr_msg_dead *d, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_empty(int type, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_dist(const cr_msg_dist *d, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_sampling(const cr_msg_sampling *s, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_manage(const cr_msg_manage *g, cr_proto_msg *m, cr_err *e);
int cr_proto_encode_counts(const cr_msg_counts *c, cr_proto_msg *m, cr_err *e);

/* Decoders: check that m has the right type and shape, then fill the
 * struct. Returns 0, or -1 with a message naming the message and what is
 * wrong. Where the receiver knows a size (W for clocks), it passes it. */
int cr_proto_decode_register(const cr_proto_msg *m, cr_msg_register *r, cr_err *e);
int cr_proto_decode_welcome(const cr_proto_msg *m, cr_msg_welcome *w, cr_err *e);
int cr_proto_decode_table(const cr_proto_msg *m, cr_msg_table *t, cr_err *e);
int cr_proto_decode_script(const cr_proto_msg *m, cr_msg_script *s, cr_err *e);
int cr_proto_decode_call(const cr_proto_msg *m, cr_msg_call *c, cr_err *e);
int cr_proto_decode_clocks(const cr_proto_msg *m, int W, cr_msg_clocks *c, cr_err *e);
int cr_proto_decode_setlr(const cr_proto_msg *m, cr_msg_setlr *s, cr_err *e);
/* dim, sdim: the table's row widths, which the receiver knows (ROWS, SETROWS). */
int cr_proto_decode_rows(const cr_proto_msg *m, int32_t dim, int32_t sdim, cr_msg_rows *r, cr_err *e);
int cr_proto_decode_reply(const cr_proto_msg *m, cr_msg_reply *r, cr_err *e);
int cr_proto_decode_state(const cr_proto_msg *m, cr_msg_state *s, cr_err *e);
int cr_proto_decode_progress(const cr_proto_msg *m, cr_msg_progress *p, cr_err *e);
int cr_proto_decode_dead(const cr_proto_msg *m, cr_msg_dead *d, cr_err *e);
int cr_proto_decode_empty(const cr_proto_msg *m, cr_err *e);
int cr_proto_decode_dist(const cr_proto_msg *m, cr_msg_dist *d, cr_err *e);
int cr_proto_decode_sampling(const cr_proto_msg *m, cr_msg_sampling *s, cr_err *e);
int cr_proto_decode_manage(const cr_proto_msg *m, cr_msg_manage *g, cr_err *e);
int cr_proto_decode_counts(const cr_proto_msg *m, cr_msg_counts *c, cr_err *e);
/* Entry i of a decoded SAMPLING (copied out: the frame may be unaligned). */
void cr_proto_sampling_entry(const cr_msg_sampling *s, int i, cr_sampling_entry *out);

/* Address i of a decoded WELCOME book (NUL-terminated inside the frame,
 * checked by the decoder), or NULL past the end. */
const char *cr_proto_welcome_addr(const cr_msg_welcome *w, int i);

/* Convenience for the common answers, sent straight to sock (with routing
 * id when id != NULL): an ERROR with a formatted-once message (worker -1),
 * an ACK. node is the sender's node id. Return 0 or -1 (errno). */
int cr_proto_send_error(void *sock, const void *id, size_t idlen, int node, const char *msg);
int cr_proto_send_ack(void *sock, const void *id, size_t idlen, int node);

#endif
