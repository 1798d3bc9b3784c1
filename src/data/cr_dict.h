#ifndef CR_DICT_H
#define CR_DICT_H
/* A string -> dense id dictionary (ids 0..n-1 in order of insertion), for
 * entity/relation names and vocabularies. Names live in one arena, so a
 * dictionary of a million words is a few allocations. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

typedef struct cr_dict {
    int64_t n;          /* number of names */
    int64_t *off;       /* n offsets into text */
    char *text;         /* NUL-separated names */
    size_t text_len, text_cap, off_cap;
    int64_t *slot;      /* hash slots: id + 1, 0 = empty */
    uint64_t mask;
} cr_dict;

/* Empty dictionary (never fails; aborts on out of memory like cr_xmalloc). */
void cr_dict_init(cr_dict *d);
void cr_dict_free(cr_dict *d);
/* Id of name[0..len), or -1. */
int64_t cr_dict_find(const cr_dict *d, const char *name, size_t len);
/* Id of name, inserting it with the next id if new (*added = 1 then; may be NULL). */
int64_t cr_dict_add(cr_dict *d, const char *name, size_t len, int *added);
static inline const char *cr_dict_name(const cr_dict *d, int64_t id) { return d->text + d->off[id]; }

/* LibKGE-style map file: one "ID<TAB>NAME" per line, ids 0..n-1 in any order
 * but each exactly once. Errors "file:line: ..." (bad id, duplicate id or
 * name, gap in the ids). */
int cr_dict_load(cr_dict *d, const char *path, cr_err *e);
/* Write "ID<TAB>NAME" lines (atomically). */
int cr_dict_write(const cr_dict *d, const char *path, cr_err *e);

#endif
