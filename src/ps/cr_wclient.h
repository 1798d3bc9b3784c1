#ifndef CR_WCLIENT_H
#define CR_WCLIENT_H
/* The worker side of pull/push: one client per worker thread.
 *
 * Keys on this node are read and written through shared memory (the shard,
 * under its striped locks); keys on other nodes are grouped per destination
 * into ONE request message each, sent on this worker's own DEALER socket to
 * that node. Per destination, requests are served in order, so a pull issued
 * after a push from the same worker sees that push.
 *
 * Who owns the buffers is said by the function's name:
 *   *_borrow  blocking: the caller's keys, rows and out are borrowed for the
 *             call only (sent without copying; the reply proves ZeroMQ is
 *             done reading them) and stay the caller's.
 *   *_copy    asynchronous: keys and rows are copied before return and stay
 *             the caller's; a pull's out must stay valid until the request
 *             completes (cr_wclient_wait / cr_wclient_drain).
 *   *_take    asynchronous: the client takes the malloc'd keys and rows
 *             (also on failure) and sets the caller's pointers to NULL, as a
 *             CZMQ `**` argument does; no copy when one node gets them all.
 * Asynchronous calls store a request id in *req (0 if everything was local
 * and is already complete); a request id is valid until it is waited on. */

#include <stdint.h>

#include "base/cr_err.h"
#include "ps/cr_node.h"

typedef struct cr_wclient cr_wclient;

/* New client for local worker lw of node n (connects to every peer); owned
 * by the caller, end it with cr_wclient_destroy. NULL with e set when a peer
 * cannot be reached. */
cr_wclient *cr_wclient_new(cr_node *n, int lw, cr_err *e);
/* Close the sockets and free; sets *w to NULL, accepts NULL. Destroy the
 * client before freeing buffers of requests that failed: until then a
 * queued frame may still point at them. */
void cr_wclient_destroy(cr_wclient **w);

/* Pull n keys of table s into out (n * dim floats, rows in key order) and
 * wait. keys and out are borrowed for the call. Keys out of range: -1 with a
 * message naming the key and its position (nothing sent). */
int cr_wclient_pull_borrow(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, cr_err *e);
/* Start a pull of n keys into out. keys are copied; out (n * dim floats)
 * must stay valid until *req completes. Errors as for the borrowing pull. */
int cr_wclient_pull_copy(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out,
                         uint32_t *req, cr_err *e);
/* As cr_wclient_pull_copy, for rows read ahead of time that may be any value
 * the keys had from the call to the answer (the sampler's fetches): on a
 * relocating table it is not ordered with this worker's later accesses to
 * the same keys (those do not wait behind it: docs/management.md,
 * Consistency). */
int cr_wclient_prefetch(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, uint32_t *req,
                        cr_err *e);

/* Push n rows (vals: n * dim floats) and wait until every node has applied
 * them. keys and vals are borrowed for the call. */
int cr_wclient_push_borrow(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                           cr_err *e);
/* Start a push of n rows; keys and vals are copied before return. */
int cr_wclient_push_copy(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                         uint32_t *req, cr_err *e);
/* Start a push of n rows, taking *keys (n int64) and *vals (n * dim floats),
 * both from malloc: the client frees them whatever the outcome and sets
 * *keys and *vals to NULL. */
int cr_wclient_push_take(cr_wclient *w, cr_shard *s, int64_t **keys, int64_t n, float **vals, uint32_t *req,
                         cr_err *e);

/* Push what the significantly-modified filter (docs/filters.md) holds back
 * on this worker's tables, and wait until it is applied: the worker calls
 * it at each barrier and at the end of each command, so that no update
 * stays behind. Nothing to do without the filter. */
int cr_wclient_flush(cr_wclient *w, cr_err *e);
/* Range operations (T:pull_range, T:push_range): as the borrowing pull and
 * push of the ids of keys [lo, hi) in key order (ids: ps/cr_place.h; the
 * keys themselves under range placement), but each node's part travels as
 * [first id, end) instead of its list (the ids of one node's keys in a
 * range are consecutive). Sparse, relocating or replicated tables: -1. */
int cr_wclient_pull_range(cr_wclient *w, cr_shard *s, const int64_t *ids, int64_t n, float *out, cr_err *e);
int cr_wclient_push_range(cr_wclient *w, cr_shard *s, const int64_t *ids, int64_t n, const float *vals, cr_err *e);

/* Start moving n keys of a relocating table to this worker's node (Lapse):
 * keys already here, or not managed by relocation, need nothing; the rest
 * are asked of their homes. *req completes (cr_wclient_wait) when every
 * key asked for has arrived here or was already claimed by this node.
 * Accesses stay correct before then (they go through the key's home).
 * On a classic table: nothing moves, *req = 0. Keys out of range: -1. */
int cr_wclient_localize(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, uint32_t *req, cr_err *e);

/* Counting accesses (docs/management.md, Counters). Every pull and push
 * counts its keys (once per operation) by cause: node counter acc_direct,
 * and the table's per-worker sketch when counting is on (COUNTS). While
 * the worker's sampler works (cause CR_CAUSE_SAMPLING, set by
 * src/ps/cr_wsample.c around its calls) its fetches are not counted;
 * instead it counts the keys it hands out (cr_wclient_count_sampled).
 * Localize requests are not accesses. */
enum { CR_CAUSE_DIRECT = 0, CR_CAUSE_SAMPLING = 1 };
/* Set the cause of the accesses that follow; returns the previous one. */
int cr_wclient_cause(cr_wclient *w, int cause);
/* n keys drawn by the sampler (acc_sampling; the sketch when on). */
void cr_wclient_count_sampled(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n);

/* Wait for request req (0 or already complete: returns at once). */
int cr_wclient_wait(cr_wclient *w, uint32_t req, cr_err *e);
/* Without blocking: take the replies that have arrived, then 1 if request
 * req is complete (or 0, or already waited on), 0 if it is still
 * outstanding, -1 with a message when a reply taken is an error (of any
 * request: as for cr_wclient_wait) or the node stops. */
int cr_wclient_test(cr_wclient *w, uint32_t req, cr_err *e);
/* Drop request req whatever its state: a reply still to come is ignored,
 * so a pull's out buffer may be freed right after. Unknown ids are ignored. */
void cr_wclient_forget(cr_wclient *w, uint32_t req);
/* Wait for every outstanding request of this worker. */
int cr_wclient_drain(cr_wclient *w, cr_err *e);

#endif
