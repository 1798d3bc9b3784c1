#ifndef CR_DHDR_H
#define CR_DHDR_H
/* The data plane's messages (worker DEALER <-> node ROUTER, server <->
 * server), framed by net/cr_wire.h:
 *   request  [cr_dhdr] [keys: int64 * nkeys] [values: float32 * nkeys * dim (push only)]
 *   reply    [cr_dhdr] [values (pull only)]
 *   error    [cr_dhdr type CR_D_ERROR, req of the request or 0] [message]: the request
 *            was refused (malformed, not ours, non-finite values); nothing applied
 * The header is a fixed-size struct sent as raw bytes: every process runs
 * the same binary on the same architecture.
 *
 * Relocation (docs/management.md) adds, between nodes:
 *   HELLO     worker -> node, answered with HELLO: the node's ROUTER now
 *             knows the worker's routing id (CR_D_ID_LEN), so that
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
 * in several replies, from several nodes).
 *
 * Every flag bit of cr_dhdr.flags is defined here and nowhere else, as a
 * position in one enum, so that two flags cannot share a bit and a flag
 * past the field's width does not compile. */

#include <stdint.h>
#include <string.h>

#include "ps/cr_proto_caps.h"

/* Message types (cr_dhdr.type); part of the wire format (append, never renumber). */
enum {
    CR_D_PULL = 1, CR_D_PUSH, CR_D_PULL_REP, CR_D_PUSH_ACK, CR_D_ERROR,
    CR_D_HELLO, CR_D_LOCALIZE, CR_D_LOC_DONE, CR_D_GIVE, CR_D_ROW, CR_D_FWD_PULL, CR_D_FWD_PUSH,
    /* a replica sync message (ps/cr_replica.h): apart from the requests on
     * purpose, since requests are served and sync messages are delivered */
    CR_D_SYNC = 32,
};

/* Flag bit positions, in the order they were given out. */
enum {
    CR_DB_ZLIB,   /* the value frame is zlib-compressed; raw_bytes: its inflated size */
    CR_DB_IDX,    /* a reply carries the rows' positions (above) */
    /* traffic filters (net/cr_filter.h says what each encoding is; the
     * parameter server's side is ps/cr_pfilter.h) */
    CR_DB_KSTORE, /* keys frame: the whole list; the receiver caches it (store serial in aux) */
    CR_DB_KHASH,  /* keys frame: CR_KC_FRAME bytes, hash + length of the list cached with serial aux */
    CR_DB_KRESET, /* the sender's cache is new: the receiver empties its copy first */
    CR_DB_ZEROS,  /* value frame zero-removed; raw_bytes: its size before zlib */
    CR_DB_HALF,   /* pull: answer with half floats; push, reply: the value frame is half floats
                   * (2 bytes a value; raw_bytes: its size before zlib) */
    /* a pull or push whose keys frame is two int64, [first, end): the nkeys
     * consecutive ids first .. end-1, instead of the list (T:pull_range /
     * T:push_range) */
    CR_DB_RANGE,
    CR_DB_COUNT   /* bits given out; a new flag goes just above */
};

#define CR_D_ZLIB (1u << CR_DB_ZLIB)
#define CR_D_IDX (1u << CR_DB_IDX)
#define CR_D_KSTORE (1u << CR_DB_KSTORE)
#define CR_D_KHASH (1u << CR_DB_KHASH)
#define CR_D_KRESET (1u << CR_DB_KRESET)
#define CR_D_ZEROS (1u << CR_DB_ZEROS)
#define CR_D_HALF (1u << CR_DB_HALF)
#define CR_D_RANGE (1u << CR_DB_RANGE)

typedef struct cr_dhdr {
    uint8_t type;
    uint8_t spare;  /* 0 */
    uint16_t flags; /* CR_D_* flags above */
    uint16_t table;
    int16_t part;   /* the request part (destination slot: a node) a reply belongs to */
    uint32_t req;
    int32_t worker, dim;
    int32_t aux;       /* GIVE: the node the rows go to; key cache: the serial */
    int64_t nkeys;
    int64_t raw_bytes; /* size of the value frame before compression */
} cr_dhdr;

_Static_assert(CR_DB_COUNT <= 8 * sizeof(((cr_dhdr *)0)->flags), "data-header flags: no bit left in cr_dhdr.flags");
/* 40 bytes, as before the flags took 16 bits: the header is on every
 * data message, and the traffic tests predict bytes from it. */
_Static_assert(sizeof(cr_dhdr) == 40, "cr_dhdr has no padding: every byte sent is a field");
_Static_assert(CR_PROTO_MAX_NODES <= 32767, "a request part (a node) must fit cr_dhdr.part");

/* Routing ids on the data ROUTERs: a worker's DEALERs are 'w' + global
 * worker id, a server thread's DEALERs 's' + node id (5 bytes each). */
#define CR_D_ID_LEN 5
static inline void cr_d_id(unsigned char id[CR_D_ID_LEN], char tag, int32_t who) {
    id[0] = (unsigned char)tag;
    memcpy(id + 1, &who, 4);
}

#endif
