#ifndef CR_WIRE_H
#define CR_WIRE_H
/* Wire format of crescent's messages (ZeroMQ multipart).
 *
 * Control plane (scheduler ROUTER <-> node DEALER, node-internal inproc):
 *   [routing id (ROUTER side only)] [cr_ctl] [payload 1]? [payload 2]? [payload 3]?
 *   (typed messages and their codecs: src/ps/cr_proto.h)
 * Data plane (worker DEALER -> node ROUTER):
 *   request  [cr_dhdr] [keys: int64 * nkeys] [values: float32 * nkeys * dim (push only)]
 *   reply    [cr_dhdr] [values (pull only)]
 *   error    [cr_dhdr type CR_D_ERROR, req of the request or 0] [message]: the request
 *            was refused (malformed, not ours, non-finite values); nothing applied
 * Headers are fixed-size structs sent as raw bytes: every process runs the
 * same binary on the same architecture. A value frame whose header has
 * CR_D_ZLIB set is zlib-compressed; raw_bytes is its inflated size. */

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zmq.h>

#include "base/cr_err.h"

/* Control message types. What each carries, and its codec, is in
 * src/ps/cr_proto.h: nothing else packs or unpacks a control message.
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
 * table, a, b and f depends on the type (src/ps/cr_proto.h). */
typedef struct cr_ctl {
    int32_t type, node, worker, table;
    int64_t a, b;
    double f;
} cr_ctl;

/* Relocation (docs/management.md) adds, between nodes:
 *   HELLO     worker -> node, answered with HELLO: the node's ROUTER now
 *             knows the worker's routing id (CR_D_WORKER_ID), so that
 *             another node's server can reply to it straight
 *   LOCALIZE  worker -> home [keys]: move these keys to my node; answered
 *             with LOC_DONE (nkeys: how many are done) by the home, or by
 *             the worker's node once the row has arrived
 *   GIVE      home -> holder [keys]: send these rows to node `aux`
 *   ROW       holder -> new holder [keys][values][optimizer state]
 *   FWD_PULL, FWD_PUSH  home -> holder [keys][positions int32][values]:
 *             a worker's request forwarded; the holder answers the worker
 * A reply with CR_D_IDX carries [positions int32 * nkeys] before the rows:
 * the rows' places in the request part `part` (rows of one part may come
 * in several replies, from several nodes). */
enum {
    CR_D_PULL = 1, CR_D_PUSH, CR_D_PULL_REP, CR_D_PUSH_ACK, CR_D_ERROR,
    CR_D_HELLO, CR_D_LOCALIZE, CR_D_LOC_DONE, CR_D_GIVE, CR_D_ROW, CR_D_FWD_PULL, CR_D_FWD_PUSH,
};
#define CR_D_ZLIB 1u
#define CR_D_IDX 2u

typedef struct cr_dhdr {
    uint8_t type, flags;
    uint16_t table;
    uint32_t req;
    int32_t worker, dim;
    int64_t nkeys;
    int64_t raw_bytes; /* size of the value frame before compression */
    int32_t part;      /* the request part (destination slot) a reply belongs to */
    int32_t aux;       /* GIVE: the node the rows go to */
} cr_dhdr;

/* Routing ids on the data ROUTERs: a worker's DEALERs are 'w' + global
 * worker id, a server thread's DEALERs 's' + node id (5 bytes each). */
#define CR_D_ID_LEN 5
static inline void cr_d_id(unsigned char id[CR_D_ID_LEN], char tag, int32_t who) {
    id[0] = (unsigned char)tag;
    memcpy(id + 1, &who, 4);
}

/* One received multipart message: up to CR_PARTS_MAX frames (more are dropped). */
#define CR_PARTS_MAX 8
typedef struct cr_parts {
    int n;
    zmq_msg_t part[CR_PARTS_MAX];
} cr_parts;

/* Receive every frame of the next message on sock (zmq flags, e.g.
 * ZMQ_DONTWAIT). Returns the frame count, or -1 (errno from zmq). On success
 * the caller must cr_parts_close(p). */
int cr_parts_recv(void *sock, cr_parts *p, int flags);
void cr_parts_close(cr_parts *p);
static inline void *cr_parts_data(cr_parts *p, int i) { return zmq_msg_data(&p->part[i]); }
static inline size_t cr_parts_size(cr_parts *p, int i) { return zmq_msg_size(&p->part[i]); }

/* Send len bytes at buf as one frame, taking ownership of buf (freed with
 * free() by ZeroMQ when sent): no copy. more = 1 if frames follow. */
int cr_send_owned(void *sock, void *buf, size_t len, int more);

/* zlib (level 1) compression of a value frame. On success *out is a new
 * buffer (caller frees) of *outlen bytes. */
int cr_wire_deflate(const void *src, size_t n, void **out, size_t *outlen, cr_err *e);
/* Inflate src (n bytes) into dst, which must hold exactly raw bytes. */
int cr_wire_inflate(const void *src, size_t n, void *dst, size_t raw, cr_err *e);

/* Create a socket of `type` with linger 0 (never blocks at close). */
void *cr_socket(void *ctx, int type);

#endif
