#include "data/cr_graph.h"

#include <string.h>

#include "data/cr_lines.h"
#include "data/cr_out.h"
#include "data/cr_vec.h"

/* Parse a non-negative id field at *s into *out, at most max. Returns 0 or
 * -1 with e set; *s ends past the field and its trailing blanks. */
static int parse_id(char **s, int64_t max, int64_t *out, const char *what, const char *path, long ln,
                    cr_err *e) {
    char *at = cr_skip_ws(*s);
    int rc = cr_parse_i64(s, out);
    if (rc == -1 && *at == '\0') return cr_errf_at(e, path, ln, "missing %s", what);
    if (rc == -1 || (rc == 0 && !cr_field_end(**s))) return cr_errf_at(e, path, ln, "%s is not an integer", what);
    if (rc == -2 || *out < 0 || *out > max) {
        int w = (int)strcspn(at, " \t");
        return cr_errf_at(e, path, ln, "%s %.*s out of range 0..%lld", what, w > 24 ? 24 : w, at, (long long)max);
    }
    *s = cr_skip_ws(*s);
    return 0;
}

/* Cut a '#' comment; is what is left blank? */
static int blank(char *s, size_t len) {
    char *hash = memchr(s, '#', len);
    if (hash) *hash = '\0';
    return *cr_skip_ws(s) == '\0';
}

void cr_edges_free(cr_edges *g) {
    free(g->src);
    free(g->dst);
    memset(g, 0, sizeof *g);
}

int cr_edges_scan(const char *path, int flags, cr_edge_fn fn, void *ud, cr_err *e) {
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    int64_t x, y, edges = 0;
    char *s;
    size_t len;
    int rc;
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        long ln = cr_lines_lineno(in);
        if (blank(s, len) || *cr_skip_ws(s) == '%') continue;
        if (parse_id(&s, INT32_MAX, &x, "source id", path, ln, e) != 0 ||
            parse_id(&s, INT32_MAX, &y, "target id", path, ln, e) != 0) {
            rc = -1;
            break;
        }
        if (*s && !(flags & CR_EDGES_EXTRA_FIELDS)) {
            rc = cr_errf_at(e, path, ln, "extra field after 'SOURCE TARGET'");
            break;
        }
        edges++;
        if (fn(ud, x, y, e) != 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && edges == 0) rc = cr_errf(e, "%s: empty file (no edges)", path);
    cr_lines_close(&in);
    return rc == 0 ? 0 : -1;
}

typedef struct eacc {
    cr_i64v a, b;
    int64_t max;
} eacc;

static int append_edge(void *ud, int64_t x, int64_t y, cr_err *e) {
    (void)e;
    eacc *acc = ud;
    cr_i64v_push(&acc->a, x);
    cr_i64v_push(&acc->b, y);
    if (x > acc->max) acc->max = x;
    if (y > acc->max) acc->max = y;
    return 0;
}

int cr_edges_load(const char *path, cr_edges *g, cr_err *e) {
    memset(g, 0, sizeof *g);
    eacc acc = {{0}, {0}, -1};
    if (cr_edges_scan(path, 0, append_edge, &acc, e) != 0) {
        free(acc.a.a);
        free(acc.b.a);
        return -1;
    }
    g->n = acc.max + 1;
    g->m = acc.a.n;
    g->src = acc.a.a;
    g->dst = acc.b.a;
    return 0;
}

int cr_edges_write(const char *path, const cr_edges *g, cr_err *e) {
    cr_out o;
    if (cr_out_open(&o, path, e) != 0) return -1;
    for (int64_t i = 0; i < g->m; i++) fprintf(o.f, "%lld %lld\n", (long long)g->src[i], (long long)g->dst[i]);
    return cr_out_commit(&o, e);
}

void cr_triples_free(cr_triple_cols *t) {
    free(t->s);
    free(t->r);
    free(t->o);
    memset(t, 0, sizeof *t);
}

typedef struct tacc {
    cr_i64v s, r, o;
} tacc;

static int finish_triples(int rc, tacc *a, cr_triple_cols *t, const char *path, cr_err *e) {
    if (rc == 0 && a->s.n == 0) rc = cr_errf(e, "%s: empty file (no triples)", path);
    if (rc != 0) {
        free(a->s.a);
        free(a->r.a);
        free(a->o.a);
        return -1;
    }
    t->n = a->s.n;
    t->s = a->s.a;
    t->r = a->r.a;
    t->o = a->o.a;
    return 0;
}

int cr_triples_load(const char *path, cr_dict *ents, cr_dict *rels, int grow, cr_triple_cols *t, cr_err *e) {
    memset(t, 0, sizeof *t);
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    tacc a;
    memset(&a, 0, sizeof a);
    static const char *what[3] = {"subject", "relation", "object"};
    char *s;
    size_t len;
    int rc;
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        long ln = cr_lines_lineno(in);
        if (*cr_skip_ws(s) == '\0') continue;
        int64_t id[3];
        int bad = 0;
        char *f = s;
        for (int k = 0; k < 3 && !bad; k++) {
            char *tab = strchr(f, '\t');
            if (k < 2 && !tab) {
                bad = cr_errf_at(e, path, ln, "expected 3 tab-separated fields 'SUBJECT\\tRELATION\\tOBJECT'");
                break;
            }
            if (k == 2 && tab) {
                bad = cr_errf_at(e, path, ln, "more than 3 tab-separated fields");
                break;
            }
            size_t n = tab ? (size_t)(tab - f) : strlen(f);
            if (n == 0) {
                bad = cr_errf_at(e, path, ln, "empty %s name", what[k]);
                break;
            }
            cr_dict *d = k == 1 ? rels : ents;
            id[k] = grow ? cr_dict_add(d, f, n, NULL) : cr_dict_find(d, f, n);
            if (id[k] < 0) bad = cr_errf_at(e, path, ln, "unknown %s '%.*s'", what[k], (int)(n > 60 ? 60 : n), f);
            f = tab ? tab + 1 : f + n;
        }
        if (bad) {
            rc = -1;
            break;
        }
        cr_i64v_push(&a.s, id[0]);
        cr_i64v_push(&a.r, id[1]);
        cr_i64v_push(&a.o, id[2]);
    }
    cr_lines_close(&in);
    t->n_ent = ents->n;
    t->n_rel = rels->n;
    return finish_triples(rc, &a, t, path, e);
}

int cr_triples_load_del(const char *path, int64_t max_ent, int64_t max_rel, cr_triple_cols *t, cr_err *e) {
    memset(t, 0, sizeof *t);
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    tacc a;
    memset(&a, 0, sizeof a);
    int64_t lim_e = max_ent > 0 ? max_ent - 1 : INT32_MAX, lim_r = max_rel > 0 ? max_rel - 1 : INT32_MAX;
    int64_t top_e = -1, top_r = -1, x, y, z;
    char *s;
    size_t len;
    int rc;
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        long ln = cr_lines_lineno(in);
        if (*cr_skip_ws(s) == '\0') continue;
        if (parse_id(&s, lim_e, &x, "subject id", path, ln, e) || parse_id(&s, lim_r, &y, "relation id", path, ln, e) ||
            parse_id(&s, lim_e, &z, "object id", path, ln, e)) {
            rc = -1;
            break;
        }
        if (*s) {
            rc = cr_errf_at(e, path, ln, "extra field after 'SUBJECT RELATION OBJECT'");
            break;
        }
        cr_i64v_push(&a.s, x);
        cr_i64v_push(&a.r, y);
        cr_i64v_push(&a.o, z);
        if (x > top_e) top_e = x;
        if (z > top_e) top_e = z;
        if (y > top_r) top_r = y;
    }
    cr_lines_close(&in);
    t->n_ent = max_ent > 0 ? max_ent : top_e + 1;
    t->n_rel = max_rel > 0 ? max_rel : top_r + 1;
    return finish_triples(rc, &a, t, path, e);
}

int cr_triples_write(const char *path, const cr_triple_cols *t, const cr_dict *ents, const cr_dict *rels,
                     cr_err *e) {
    cr_out o;
    if (cr_out_open(&o, path, e) != 0) return -1;
    for (int64_t i = 0; i < t->n; i++) {
        if (ents && rels)
            fprintf(o.f, "%s\t%s\t%s\n", cr_dict_name(ents, t->s[i]), cr_dict_name(rels, t->r[i]),
                    cr_dict_name(ents, t->o[i]));
        else
            fprintf(o.f, "%lld\t%lld\t%lld\n", (long long)t->s[i], (long long)t->r[i], (long long)t->o[i]);
    }
    return cr_out_commit(&o, e);
}
