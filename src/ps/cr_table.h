#ifndef CR_TABLE_H
#define CR_TABLE_H
/* Parameter tables and their shards.
 *
 * A table is a dense key range [0, keys) of float32 rows of `dim` values plus
 * optimizer state. Placement is by contiguous ranges by default: node i owns
 * [i*block, min((i+1)*block, keys)) with block = ceil(keys / nodes); a hash
 * or file placement renumbers the keys so that each node's are contiguous
 * ids again (ps/cr_place.h), and everything below works on those ids.
 * Initial values depend only on (seed, table name, key), never on the node
 * count. A shard holds one node's range; rows are guarded by striped locks so
 * that worker threads (local access through shared memory) and the node's
 * server thread (remote requests) can use it concurrently. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/cr_err.h"
#include "optim/cr_optim.h"
#include "ps/cr_fmap.h"
#include "ps/cr_place.h"
#include "ps/cr_sketch.h"

#define CR_TABLE_NAME_MAX 64
#define CR_SHARD_STRIPES 64

typedef enum { CR_INIT_ZEROS = 0, CR_INIT_UNIFORM, CR_INIT_NORMAL } cr_init_kind;

/* Value type of a table's rows: float32 (the default) or int32 counts.
 * Both take 4 bytes a value; an i32 table keeps int32 bit patterns in the
 * same float arrays (w, pulls, pushes, rows on the wire), so only what
 * interprets values branches on it: the update rule (an i32 table's "add"
 * is exact int32 addition, wrapping on overflow; "assign" stores the ints;
 * no other rule is allowed), the finite checks (skipped: every bit pattern
 * is a valid int), the initializer (zeros or a constant integer:
 * uniform(c, c)), replication's sums (ps/cr_replica.c). Same numbering as
 * the Lua Matrix's (lua/l_util.h). */
typedef enum { CR_DTYPE_F32 = 0, CR_DTYPE_I32 = 1 } cr_dtype;

/* Traffic filters of a table (docs/filters.md, src/net/cr_filter.h); all
 * zero: off. */
typedef struct cr_filters_def {
    int32_t key_cache;       /* 1: a repeated remote key list travels as its hash */
    int32_t zeros;           /* 1: remote value frames without their zeros */
    double sigmod;           /* > 0: push only changes over this threshold (f32, not "assign") */
    int64_t key_cache_bytes; /* cap of each key cache (per sender, receiver, table); 0: CR_KC_DEFAULT_CAP */
    int32_t half;            /* 1: remote value frames as IEEE half floats (f32 tables, not with zeros or sigmod) */
    int32_t pad_;
} cr_filters_def;

/* Plain data, sent as is between processes of the same binary. */
typedef struct cr_table_def {
    char name[CR_TABLE_NAME_MAX];
    int64_t keys;
    int32_t dim;
    int32_t init;         /* cr_init_kind */
    int32_t compress;     /* 1: zlib-compress large remote value frames */
    int32_t dtype;        /* cr_dtype */
    double init_a, init_b; /* uniform(a, b) or normal(mean a, std b) */
    cr_optim optim;
    uint64_t seed;
    cr_filters_def filters;
    int32_t placement;    /* CR_PLACE_* (ps/cr_place.h): range (0, the default), hash, file */
    int32_t sparse;       /* 1: uint64 keys in hash maps (keys is 0); placement hash or range */
} cr_table_def;

/* Check a definition (name non-empty and short, keys > 0, dim > 0, sane init;
 * an i32 table: rule add or assign, init zeros or a constant int32).
 * Returns 0 or -1 with a message naming the table. */
int cr_table_def_check(const cr_table_def *d, cr_err *e);

/* Keys per node for the range placement. */
int64_t cr_table_block(int64_t keys, int nodes);

/* Initial value of row k (dim values into out: floats, or int32 bit
 * patterns for an i32 table). Deterministic. */
void cr_table_init_row(const cr_table_def *d, int64_t k, float *out);

/* A shard's directory: where its keys are and the technique of each (the
 * operations and their thread rules: ps/cr_dir.h). Part of the shard's
 * layout, created and freed with it. */
#define CR_DIR_HERE 0x4000u
#define CR_DIR_NODE 0x3fffu

enum { CR_TECH_CLASSIC = 0, CR_TECH_RELOCATE = 1, CR_TECH_REPLICATE = 2 };

typedef struct cr_dir {
    uint16_t *own;   /* per home key: node it was given to | CR_DIR_HERE if the row is here */
    cr_fmap fs[CR_SHARD_STRIPES]; /* rows of keys relocated here, by stripe: dim values then sdim state */
    uint8_t *repl;   /* bit per key of the table: replicated (NULL: none) */
    int64_t nrepl;
    atomic_int mode; /* CR_TECH_CLASSIC or CR_TECH_RELOCATE (keys not replicated) */
    atomic_llong away; /* home keys not present here (elsewhere or coming home) */
    atomic_llong held; /* rows of other homes held here */
} cr_dir;

/* Access counting of a table (COUNTS, docs/management.md "Counters"): one
 * sketch per local worker (sk[lw], written by that worker only). */
typedef struct cr_counts {
    int nw;
    cr_sketch *sk[];
} cr_counts;

typedef struct cr_shard {
    cr_table_def def;      /* def.optim.i32 set for an i32 table: its rule's int32 form runs */
    int node, nodes;
    int64_t lo, hi, block; /* this node's keys [lo, hi) */
    int32_t sdim;          /* optimizer state floats per row */
    float *w, *state;      /* (hi-lo) * dim, (hi-lo) * sdim; owned */
    pthread_mutex_t locks[CR_SHARD_STRIPES];
    cr_dir *dir;           /* owned; relocation and technique state */
    /* Access counting: NULL when off (the default). Set and freed by the
     * node's main thread between commands; workers only load it. */
    _Atomic(cr_counts *) counts;
    /* A mixed table (mode relocate with a list, MANAGE): bit per key of the
     * table, set when the key is managed by relocation; a key not set (and
     * not replicated) is classic: it never moves, its localize is skipped.
     * NULL: every key not replicated follows the mode. Main thread, between
     * commands; read by workers in cr_wclient_localize only. */
    uint8_t *reloc;
    int64_t nreloc;
    /* Placement other than range (ps/cr_place.h): keys here are internal
     * ids, [lo, hi) this node's; NULL under range placement (ids are keys). */
    cr_place *pl;
    /* A sparse table (def.sparse): its rows, one map per stripe (a key's
     * stripe is key % CR_SHARD_STRIPES, under that stripe's lock), dim
     * values then sdim state floats a row; NULL for a dense table. [lo, hi)
     * is empty. A key not stored reads as its initial value; a push stores
     * it. */
    cr_fmap *sp;
    _Atomic int64_t sp_rows; /* keys stored */
} cr_shard;

/* 1 if the shard holds int32 counts (dtype "i32"). */
static inline int cr_shard_i32(const cr_shard *s) { return s->def.dtype == CR_DTYPE_I32; }
/* Name of a dtype ("f32", "i32"); "?" if unknown. */
const char *cr_dtype_name(int dtype);

/* Stop counting accesses to s (free its sketches). Between commands only. */
void cr_shard_counts_free(cr_shard *s);
/* Bit k of a per-key bitmap. */
static inline int cr_bit(const uint8_t *b, int64_t k) { return b[k >> 3] >> (k & 7) & 1; }

/* New shard of table d for `node` of `nodes`, initialised. Caller owns it
 * (cr_shard_destroy). Returns NULL with a message if memory is short. */
cr_shard *cr_shard_new(const cr_table_def *d, int node, int nodes, cr_err *e);
/* The same for any placement: owner (d->keys entries, the node of each key)
 * for a file placement (d->placement CR_PLACE_FILE), else NULL. */
cr_shard *cr_shard_new_placed(const cr_table_def *d, int node, int nodes, const uint32_t *owner, cr_err *e);
/* 1 if internal id k is a key of the table (ps/cr_place.h). */
static inline int cr_shard_key_ok(const cr_shard *s, int64_t k) {
    if (s->sp) return 1;
    return s->pl ? cr_place_valid(s->pl, k) : k >= 0 && k < s->def.keys;
}
/* User key of internal id k. */
static inline int64_t cr_shard_user_key(const cr_shard *s, int64_t k) { return s->pl ? cr_place_user(s->pl, k) : k; }
/* Refuse what a sparse table or one placed other than by range does not
 * support: -1 with a message "table 'NAME' has placement KIND: WHAT needs
 * placement range" (or "table 'NAME' is sparse: WHAT needs a dense table
 * placed by range"). */
int cr_shard_need_range(const cr_shard *s, const char *what, cr_err *e);
void cr_shard_destroy(cr_shard **s);

/* Owner node of key k (k < keys; any key of a sparse table). */
static inline int cr_shard_owner(const cr_shard *s, int64_t k) {
    if (s->sp) return cr_place_sparse_owner(s->def.placement, s->nodes, k);
    return (int)(k / s->block);
}
/* 1 if key k is this node's. */
static inline int cr_shard_holds(const cr_shard *s, int64_t k) {
    return s->sp ? cr_shard_owner(s, k) == s->node : k >= s->lo && k < s->hi;
}

/* Copy rows of local keys (all in [lo, hi) and present here: a table in
 * classic mode, or see cr_dir.h) into out (n * dim floats). */
void cr_shard_pull(cr_shard *s, const int64_t *keys, int64_t n, float *out);
/* Apply updates g (n * dim floats) of local keys with the table's rule. */
void cr_shard_push(cr_shard *s, const int64_t *keys, int64_t n, const float *g);
/* Bulk copy of rows [lo, lo+count) (global keys, local) out of / into the
 * shard, values and optimizer state (state may be NULL: then skipped / reset). */
void cr_shard_get_rows(cr_shard *s, int64_t lo, int64_t count, float *vals, float *state);
void cr_shard_set_rows(cr_shard *s, int64_t lo, int64_t count, const float *vals, const float *state);
/* The same, with state from outside the node (the job's set, job:load):
 * through cr_optim_load_state, which keeps what belongs to this job's
 * workers (DBPG's registrations). */
void cr_shard_load_rows(cr_shard *s, int64_t lo, int64_t count, const float *vals, const float *state);
/* A sparse table's rows of n keys (all this node's): values and optimizer
 * state (state may be NULL) out of the maps, initial ones for keys not
 * stored; set stores them (state NULL: a stored key keeps its state, a new
 * one gets the rule's initial state). */
void cr_shard_get_keys(cr_shard *s, const int64_t *keys, int64_t n, float *vals, float *state);
void cr_shard_set_keys(cr_shard *s, const int64_t *keys, int64_t n, const float *vals, const float *state);
void cr_shard_load_keys(cr_shard *s, const int64_t *keys, int64_t n, const float *vals, const float *state);
/* A sparse table's stored rows from *cursor on (0: the start): at most max
 * keys, values and states copied out; returns how many, and moves *cursor
 * (CR_SHARD_DUMP_END once every stripe is done). Between commands (no push
 * may add keys meanwhile). */
#define CR_SHARD_DUMP_END ((uint64_t)CR_SHARD_STRIPES << 40)
int64_t cr_shard_dump(cr_shard *s, uint64_t *cursor, int64_t max, int64_t *keys, float *vals, float *state);
/* A sparse table's bytes in memory (maps and slabs). */
size_t cr_shard_sparse_bytes(cr_shard *s);
/* Change the learning rate of the table's rule. */
void cr_shard_set_lr(cr_shard *s, float lr);

#endif
