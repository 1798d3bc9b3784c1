#ifndef CR_PFILTER_H
#define CR_PFILTER_H
/* The parameter server's traffic filters (docs/filters.md): the state the
 * filters of src/net/cr_filter.h keep on a node and in each worker client,
 * and the steps the data path calls where it encodes and decodes a message
 * (src/ps/cr_wclient.c, cr_serve.c). A table whose filters are all off
 * (cr_table_def.filters zeroed) takes none of these steps.
 *
 * Key caches live on both ends of each (worker, node, table): the worker's
 * client keeps what it sent to each node (cr_pfilter_w), the node's server
 * thread what each worker sent (cr_pfilter, receiver side). Counters are
 * per node and table (cr_pfilter_stats). */

#include <stdint.h>

#include "base/cr_err.h"
#include "net/cr_filter.h"
#include "net/cr_wire.h"
#include "ps/cr_dhdr.h"
#include "ps/cr_table.h"

typedef struct cr_pfilter cr_pfilter;
typedef struct cr_pfilter_w cr_pfilter_w;

/* Node side: counters for up to `tables` tables; receiver key caches for
 * W workers (all nodes). Owned by the node (cr_pfilter_destroy). */
cr_pfilter *cr_pfilter_new(int tables, int W);
void cr_pfilter_destroy(cr_pfilter **f);
/* The counters of table t (t < tables). */
cr_filter_stats *cr_pfilter_stats(cr_pfilter *f, int t);
/* Append ",filters={[name]={...},...}" for the tables with a filter on (or
 * compression) to b (cap bytes); returns the length added. */
size_t cr_pfilter_stats_put(cr_pfilter *f, cr_shard *const *tables, int ntables, char *b, size_t cap);
/* Room cr_pfilter_stats_put needs at most for ntables tables. */
size_t cr_pfilter_stats_room(int ntables);

/* Worker side: one per worker client, for a job of `nodes` nodes. */
cr_pfilter_w *cr_pfilter_w_new(int nodes, int tables);
void cr_pfilter_w_destroy(cr_pfilter_w **w);

/* Sender, before request h (table id h->table of definition d, to `node`)
 * goes with its n = h->nkeys keys: key caching. Returns 1 when the keys
 * travel as the CR_KC_FRAME bytes written to frame (h's flags and aux
 * set), 0 when they go as they are (maybe with CR_D_KSTORE set). */
int cr_pfilter_keys_out(cr_pfilter_w *w, cr_pfilter *f, const cr_table_def *d, int node, cr_dhdr *h,
                        const int64_t *keys, unsigned char frame[CR_KC_FRAME]);
/* Sender, a value frame of *vb bytes (a push's rows or a pull reply's):
 * zero removal. Returns a new buffer (caller frees; *vb, h->flags and
 * h->raw_bytes updated) or NULL (send vals as they are). */
void *cr_pfilter_vals_out(cr_pfilter *f, const cr_table_def *d, cr_dhdr *h, const void *vals, size_t *vb);
/* Sender, a value frame of *vb bytes of floats when table d has the half
 * filter: a new buffer of half floats (caller frees; *vb, h->flags and
 * h->raw_bytes updated), else NULL. */
void *cr_pfilter_half_out(cr_pfilter *f, const cr_table_def *d, cr_dhdr *h, const float *vals, size_t *vb);
/* Sender: zlib of a value frame is counted (before, after bytes). */
void cr_pfilter_count_zlib(cr_pfilter *f, int table, size_t before, size_t after);

/* Receiver (server thread only), request h from worker h->worker: the keys
 * of a CR_D_KSTORE or CR_D_KHASH request, whose keys frame is frame (fn
 * bytes). Returns the keys (the frame's own or the cache's; valid until the
 * next call), or NULL with a message (a key cache miss, a frame of the
 * wrong size, an unknown worker). A CR_D_KSTORE list is cached even when
 * its request is refused later: the sender cached it too. */
const int64_t *cr_pfilter_keys_in(cr_pfilter *f, const cr_table_def *d, const cr_dhdr *h, const void *frame,
                                  size_t fn, cr_err *e);

/* Sender, a push of n rows to table tid (definition d) whose keys are not
 * all on this node: the significantly-modified filter. Rows of keys owned
 * by node `me` (owner(key) == me, as the caller's placement says) pass
 * unchanged. A row with nothing to send is dropped, or, when the table
 * has key caching and zero removal on too, sent as zeros (the push keeps
 * its key list: docs/filters.md). Returns the rows to send in *okeys /
 * *ovals (the client's scratch, valid until the next call) and their count. */
typedef int (*cr_pfilter_owner)(void *ctx, int64_t key);
int64_t cr_pfilter_sigmod(cr_pfilter_w *w, cr_pfilter *f, const cr_table_def *d, int tid, const int64_t *keys,
                          int64_t n, const float *vals, cr_pfilter_owner local, void *ctx, const int64_t **okeys,
                          const float **ovals);
/* The residuals of table tid to flush: malloc'd keys and rows (caller
 * frees), their count (0: none, NULL arrays). Counted as flushed. */
int64_t cr_pfilter_sigmod_flush(cr_pfilter_w *w, cr_pfilter *f, const cr_table_def *d, int tid, int64_t **keys,
                                float **vals);
/* Tables with sigmod state in w: ids in ascending order, up to cap; count. */
int cr_pfilter_sigmod_tables(const cr_pfilter_w *w, int *ids, int cap);

#endif
