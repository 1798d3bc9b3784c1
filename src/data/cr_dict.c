#include "data/cr_dict.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "data/cr_lines.h"
#include "data/cr_out.h"

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

void cr_dict_init(cr_dict *d) {
    memset(d, 0, sizeof *d);
    d->mask = 1023;
    d->slot = cr_xcalloc(d->mask + 1, sizeof *d->slot);
}

void cr_dict_free(cr_dict *d) {
    free(d->off);
    free(d->text);
    free(d->slot);
    memset(d, 0, sizeof *d);
}

static uint64_t probe(const cr_dict *d, const char *name, size_t len) {
    uint64_t i = hash(name, len) & d->mask;
    while (d->slot[i]) {
        const char *s = d->text + d->off[d->slot[i] - 1];
        if (!strncmp(s, name, len) && s[len] == '\0') break;
        i = (i + 1) & d->mask;
    }
    return i;
}

int64_t cr_dict_find(const cr_dict *d, const char *name, size_t len) {
    return d->slot[probe(d, name, len)] - 1;
}

static void grow(cr_dict *d) {
    free(d->slot);
    d->mask = d->mask * 2 + 1;
    d->slot = cr_xcalloc(d->mask + 1, sizeof *d->slot);
    for (int64_t id = 0; id < d->n; id++) {
        const char *s = d->text + d->off[id];
        d->slot[probe(d, s, strlen(s))] = id + 1;
    }
}

int64_t cr_dict_add(cr_dict *d, const char *name, size_t len, int *added) {
    uint64_t i = probe(d, name, len);
    if (added) *added = d->slot[i] == 0;
    if (d->slot[i]) return d->slot[i] - 1;
    if (d->text_len + len + 1 > d->text_cap) {
        d->text_cap = (d->text_cap + len + 1) * 2;
        d->text = cr_xrealloc(d->text, d->text_cap);
    }
    if ((size_t)d->n == d->off_cap) {
        d->off_cap = d->off_cap ? d->off_cap * 2 : 256;
        d->off = cr_xrealloc(d->off, d->off_cap * sizeof *d->off);
    }
    memcpy(d->text + d->text_len, name, len);
    d->text[d->text_len + len] = '\0';
    d->off[d->n] = (int64_t)d->text_len;
    d->text_len += len + 1;
    d->slot[i] = ++d->n;
    if ((uint64_t)d->n * 2 > d->mask) grow(d);
    return d->n - 1;
}

/* Map files may list ids in any order: collect (id, name) then insert by id. */
int cr_dict_load(cr_dict *d, const char *path, cr_err *e) {
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    cr_dict tmp;
    cr_dict_init(&tmp);
    int64_t *ids = NULL, n = 0, cap = 0, max = -1;
    char *s;
    size_t len;
    int rc;
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        long ln = cr_lines_lineno(in);
        if (*cr_skip_ws(s) == '\0') continue;
        int64_t id;
        char *p = s;
        if (cr_parse_i64(&p, &id) != 0 || *p != '\t' || id < 0 || id > INT32_MAX) {
            rc = cr_errf_at(e, path, ln, "expected 'ID<TAB>NAME' with ID in 0..2147483647");
            break;
        }
        p++;
        int added;
        cr_dict_add(&tmp, p, strlen(p), &added);
        if (!added) {
            rc = cr_errf_at(e, path, ln, "duplicate name '%s'", p);
            break;
        }
        if (n == cap) ids = cr_xrealloc(ids, (size_t)(cap = cap ? cap * 2 : 1024) * sizeof *ids);
        ids[n++] = id;
        if (id > max) max = id;
    }
    if (rc == 0 && max + 1 != n) rc = cr_errf(e, "%s: ids must be 0..%lld each exactly once", path, (long long)n - 1);
    if (rc == 0) {
        int64_t *where = cr_xmalloc((size_t)(n ? n : 1) * sizeof *where);
        for (int64_t i = 0; i < n; i++) where[i] = -1;
        for (int64_t i = 0; i < n && rc == 0; i++) {
            if (where[ids[i]] >= 0) rc = cr_errf(e, "%s: id %lld appears twice", path, (long long)ids[i]);
            where[ids[i]] = i;
        }
        cr_dict_free(d);
        cr_dict_init(d);
        for (int64_t id = 0; id < n && rc == 0; id++) {
            const char *name = cr_dict_name(&tmp, where[id]);
            cr_dict_add(d, name, strlen(name), NULL);
        }
        free(where);
    }
    free(ids);
    cr_dict_free(&tmp);
    cr_lines_close(&in);
    return rc == 0 ? 0 : -1;
}

int cr_dict_write(const cr_dict *d, const char *path, cr_err *e) {
    cr_out o;
    if (cr_out_open(&o, path, e) != 0) return -1;
    for (int64_t id = 0; id < d->n; id++) fprintf(o.f, "%lld\t%s\n", (long long)id, cr_dict_name(d, id));
    return cr_out_commit(&o, e);
}
