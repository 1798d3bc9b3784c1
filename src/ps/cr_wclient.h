#ifndef CR_WCLIENT_H
#define CR_WCLIENT_H
/* The worker side of pull/push: one client per worker thread.
 *
 * Keys on this node are read and written through shared memory (the shard,
 * under its striped locks); keys on other nodes are grouped per destination
 * into ONE request message each, sent on this worker's own DEALER socket to
 * that node. Requests are asynchronous: *_start returns a request id (0 if
 * everything was local and is already complete), cr_wclient_wait completes
 * it. Per destination, requests are served in order, so a pull issued after a
 * push from the same worker sees that push. */

#include <stdint.h>

#include "base/cr_err.h"
#include "ps/cr_node.h"

typedef struct cr_wclient cr_wclient;

/* New client for local worker lw of node n (connects to every peer). */
cr_wclient *cr_wclient_new(cr_node *n, int lw, cr_err *e);
void cr_wclient_destroy(cr_wclient **w);

/* Start a pull of n keys of table s into out (n * dim floats, which must stay
 * valid until the request completes). Keys out of range: -1 with a message
 * naming the key and its position (nothing sent). */
int cr_wclient_pull(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out,
                    uint32_t *req, cr_err *e);
/* Start a push of n rows (vals: n * dim floats, copied before return). */
int cr_wclient_push(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                    uint32_t *req, cr_err *e);
/* Pull / push and wait for completion. The caller's keys and rows are sent
 * without copying (the reply proves ZeroMQ is done reading them). */
int cr_wclient_pull_sync(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, cr_err *e);
int cr_wclient_push_sync(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals, cr_err *e);
/* Wait for request req (0 or already complete: returns at once). */
int cr_wclient_wait(cr_wclient *w, uint32_t req, cr_err *e);
/* Wait for every outstanding request of this worker. */
int cr_wclient_drain(cr_wclient *w, cr_err *e);

#endif
