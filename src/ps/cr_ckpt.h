#ifndef CR_CKPT_H
#define CR_CKPT_H
/* Checkpoint files: every parameter table (values and optimizer state) plus
 * metadata strings, zlib-compressed and crc32-checked, written atomically.
 *
 * Layout (all integers little-endian, floats IEEE-754 binary32 little-endian):
 *
 *   header   "CRCKPT\r\n"  u32 version (1 or 2)  u32 flags (=0)
 *   blocks   u32 type  u32 raw_len  u32 comp_len  u32 crc  comp_len bytes
 *            crc = crc32 over (type, raw_len, comp_len) then the compressed
 *            bytes; the payload is zlib data that inflates to raw_len bytes.
 *            types: META (u32 klen, u32 vlen, key, value), TABLE (name[64],
 *            i64 keys, i32 dim, optimizer[32], i32 state_dim [, u32 dtype]),
 *            ROWS (i64 first key, i64 n, n*dim values, then n*state_dim
 *            state), END (empty). A TABLE without the dtype field (112
 *            bytes: every f32 table, and all files written before dtypes)
 *            holds float32 values; dtype 1 (116 bytes) holds int32 values,
 *            little-endian two's complement in the same 4 bytes; the flag
 *            0x100 in dtype marks a sparse table (CR_CKPT_SPARSE).
 *   footer   u64 body_len  u32 crc32 of the body  "CKND"
 *            (body = header + blocks, i.e. everything before the footer)
 *
 * Meta blocks come first, then each table's TABLE block followed by ROWS
 * blocks covering its keys [0, keys) in ascending order, then END.
 * Blocks hold about 1 MiB of rows, so neither side ever holds a whole table:
 * memory is bounded by one block whatever the table size.
 *
 * Writing goes to PATH.tmp; commit fflushes, fsyncs, renames it to PATH and
 * fsyncs the directory, so PATH is either the old file or the complete new
 * one. Only a missing PATH or a regular file is ever replaced. Opening a reader checks the whole file once (structure, every block's
 * crc and the whole-file crc) before anything is returned, so a caller never
 * loads half a checkpoint: a truncated or corrupted file is refused at open
 * with "PATH: truncated", "PATH: checksum mismatch in table W",
 * "PATH: not a crescent checkpoint", "PATH: checkpoint version N not
 * supported (this build reads versions 1 to 2)". */

#include <stdint.h>

#include "base/cr_err.h"

/* Version 2 has the same blocks as version 1; it promises the job's resume
 * state in the metadata (crescent.epoch, crescent.curve, crescent.seed, ...,
 * see docs/checkpoints.md). Version 1 files (tables, node count, policy and
 * epochs only) are still read; newer versions are refused. */
#define CR_CKPT_VERSION 2
#define CR_CKPT_VERSION_MIN 1

typedef struct cr_ckpt_writer cr_ckpt_writer;
typedef struct cr_ckpt_reader cr_ckpt_reader;

enum { CR_CKPT_F32 = 0, CR_CKPT_I32 = 1 }; /* value types (cr_dtype's numbers) */
/* Flag of a table's dtype: a sparse table (keys = "sparse"). Its `keys` are
 * the rows stored, in any order, and each row's 64-bit key is the first two
 * floats of its state (state_dim = the optimizer's + 2; the key's low 32
 * bits first, as bit patterns). Written with the dtype field (116 bytes). */
#define CR_CKPT_SPARSE 0x100

typedef struct cr_ckpt_table_info {
    char name[64];      /* NUL-terminated, at most 63 bytes */
    int64_t keys;       /* rows, keys [0, keys) */
    int32_t dim;        /* floats per row of values (>= 1) */
    char optimizer[32]; /* e.g. "sgd", "adagrad"; "" if none */
    int32_t state_dim;  /* floats per row of optimizer state (>= 0) */
    int32_t dtype;      /* CR_CKPT_F32 or CR_CKPT_I32 (values as int32 bit patterns) */
} cr_ckpt_table_info;

/* Create PATH.tmp and write the header. PATH must be missing or a regular
 * file (cr_file_check_replace): a device, fifo, socket, directory or
 * symlink at PATH is refused before anything is written ("PATH: not a
 * regular file (character device); refusing to replace it"). PATH.tmp is
 * created new (O_EXCL|O_NOFOLLOW, a leftover regular file is removed first),
 * so a symlink there is never followed. Returns a writer owned by the caller
 * (end it with commit or abort), or NULL with e set ("PATH.tmp: cannot
 * create: reason"). */
cr_ckpt_writer *cr_ckpt_writer_open(const char *path, cr_err *e);

/* Add one metadata entry (clocks, policy, learning curve, RNG state, as
 * text). Must come before the first table. key: 1..255 bytes; value: up to
 * 16 MiB. A later entry with the same key overrides an earlier one. */
int cr_ckpt_put_meta(cr_ckpt_writer *w, const char *key, const char *value, cr_err *e);

/* Start a table. The previous table must have received all its rows.
 * name: 1..63 bytes, unique in the file; optimizer: 0..31 bytes (NULL = "");
 * keys >= 0; dim >= 1; state_dim >= 0. */
int cr_ckpt_put_table(cr_ckpt_writer *w, const char *name, int64_t keys, int32_t dim,
                      const char *optimizer, int32_t state_dim, cr_err *e);
/* The same for a table of value type dtype (CR_CKPT_F32 or CR_CKPT_I32:
 * then the rows' values are int32 bit patterns, passed as floats). */
int cr_ckpt_put_table_typed(cr_ckpt_writer *w, const char *name, int64_t keys, int32_t dim,
                            const char *optimizer, int32_t state_dim, int32_t dtype, cr_err *e);

/* Append the next `count` rows of the current table, in key order: values
 * is count*dim floats, state count*state_dim floats (may be NULL only when
 * state_dim is 0). The arrays stay the caller's. Fails if the table would get
 * more than `keys` rows. Any failure leaves the writer unusable except for
 * abort. */
int cr_ckpt_put_rows(cr_ckpt_writer *w, int64_t count, const float *values, const float *state,
                     cr_err *e);

/* Check the last table is complete, write END and the footer, fsync, check
 * PATH is still missing or a regular file, rename PATH.tmp to PATH and fsync
 * the directory. Frees *w and sets it to NULL
 * whatever the outcome; on failure PATH.tmp is removed and PATH untouched. */
int cr_ckpt_writer_commit(cr_ckpt_writer **w, cr_err *e);

/* Discard: close and remove PATH.tmp, free *w, set it to NULL. Accepts NULL
 * and *w == NULL. */
void cr_ckpt_writer_abort(cr_ckpt_writer **w);

/* Open PATH and validate all of it (magic, version, structure, every block
 * crc, whole-file crc); reads all metadata. Memory stays bounded by one
 * block. Returns a reader owned by the caller (close it with
 * cr_ckpt_reader_close) or NULL with e set. */
cr_ckpt_reader *cr_ckpt_reader_open(const char *path, cr_err *e);

/* Advance to the next table and fill *info. Rows of the previous table that
 * were not read are skipped. Returns 1 for a table, 0 at the end, -1 on error. */
int cr_ckpt_next_table(cr_ckpt_reader *r, cr_ckpt_table_info *info, cr_err *e);

/* Read the next `count` rows of the current table into values (count*dim
 * floats) and state (count*state_dim floats; NULL discards the state).
 * Fails if fewer than `count` rows remain. */
int cr_ckpt_get_rows(cr_ckpt_reader *r, int64_t count, float *values, float *state, cr_err *e);

/* Value of metadata `key`, or NULL if absent. The string is owned by the
 * reader and valid until it is closed. */
const char *cr_ckpt_get_meta(cr_ckpt_reader *r, const char *key);

/* Format version of the open file (CR_CKPT_VERSION_MIN..CR_CKPT_VERSION);
 * 0 for NULL. Writers always write CR_CKPT_VERSION. */
int cr_ckpt_version(const cr_ckpt_reader *r);

/* Metadata keys in file order (for listing; duplicates appear once per
 * entry, cr_ckpt_get_meta gives the value that wins). i in [0, count). */
int cr_ckpt_meta_count(const cr_ckpt_reader *r);
const char *cr_ckpt_meta_key(const cr_ckpt_reader *r, int i);

/* Close and free; sets *r to NULL. Accepts NULL and *r == NULL. */
void cr_ckpt_reader_close(cr_ckpt_reader **r);

#endif
