/* Assignments and their placement files (see cr_assign.h). The text format
 * is written by `crescent partition --out` and read back by
 * cr.partition.load (docs/partitioning.md):
 *
 *   # crescent placement 1          <- required first line
 *   # any further comment lines
 *   k 16                            <- machines
 *   examples 20000                  <- |U|
 *   keys 47000                      <- |V|
 *   u 0 3                           <- example 0 -> worker 3 (one per example)
 *   v 0 5                           <- key 0 -> server 5 (one per key)
 *
 * Every example and key must appear exactly once, ids below the counts and
 * machines below k. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_file.h"
#include "data/cr_assign.h"

#define MAGIC "# crescent placement 1"

cr_assign *cr_assign_new(uint32_t k, uint32_t nu, uint32_t nv) {
    cr_assign *p = cr_xcalloc(1, sizeof *p);
    p->k = k;
    p->nu = nu;
    p->nv = nv;
    p->u_part = cr_xmalloc(((size_t)nu + 1) * sizeof *p->u_part);
    p->v_part = cr_xmalloc(((size_t)nv + 1) * sizeof *p->v_part);
    return p;
}

void cr_assign_destroy(cr_assign **pp) {
    if (!pp || !*pp) return;
    free((*pp)->u_part);
    free((*pp)->v_part);
    free(*pp);
    *pp = NULL;
}

int cr_assign_save(const char *path, const cr_assign *p, const char *comment, cr_err *e) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return cr_errf(e, "%s: path too long", path);
    if (cr_file_check_replace(path, e) != 0) return -1;
    cr_err te;
    int fd = cr_file_create_tmp(tmp, 0666, &te);
    if (fd < 0) { /* errors name PATH, as they always did, unless PATH.tmp itself is refused */
        int er = errno;
        return strstr(te.msg, "refusing") ? cr_errf(e, "%s", te.msg)
                                          : cr_errf(e, "%s: cannot create: %s", path, strerror(er));
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int er = errno;
        close(fd);
        remove(tmp);
        return cr_errf(e, "%s: cannot create: %s", path, strerror(er));
    }
    fprintf(f, "%s\n", MAGIC);
    if (comment && *comment) fprintf(f, "# %s\n", comment);
    fprintf(f, "k %u\nexamples %u\nkeys %u\n", p->k, p->nu, p->nv);
    for (uint32_t u = 0; u < p->nu; u++) fprintf(f, "u %u %u\n", u, p->u_part[u]);
    for (uint32_t v = 0; v < p->nv; v++) fprintf(f, "v %u %u\n", v, p->v_part[v]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        remove(tmp);
        return cr_errf(e, "%s: write failed", path);
    }
    if (cr_file_check_replace(path, e) != 0) {
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        int er = errno;
        remove(tmp);
        return cr_errf(e, "%s: cannot rename into place: %s", path, strerror(er));
    }
    return 0;
}

static int parse_u32(const char *s, uint32_t *out) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *s == '-' || errno || x >= UINT32_MAX) return -1;
    *out = (uint32_t)x;
    return 0;
}

/* Parses "name value" header lines and "u|v id machine" lines. */
cr_assign *cr_assign_load(const char *path, cr_err *e) {
    FILE *f = fopen(path, "r");
    if (!f) return cr_errf(e, "%s: cannot open: %s", path, strerror(errno)), NULL;
    char *line = NULL;
    size_t cap = 0;
    long ln = 0;
    uint32_t k = 0, nu = 0, nv = 0;
    int have = 0, rc = 0;
    cr_assign *p = NULL;
    uint8_t *seen_u = NULL, *seen_v = NULL;
    uint64_t nseen = 0;
    while (rc == 0 && getline(&line, &cap, f) != -1) {
        ln++;
        line[strcspn(line, "\r\n")] = '\0';
        if (ln == 1 && strcmp(line, MAGIC) != 0) { rc = cr_errf_at(e, path, ln, "not a crescent placement file (expected '%s')", MAGIC); break; }
        if (line[0] == '#' || line[0] == '\0') continue;
        char a[16], b[32], c[32], extra[2];
        int nf = sscanf(line, "%15s %31s %31s %1s", a, b, c, extra);
        if (have < 3) {
            uint32_t x;
            if (nf != 2 || parse_u32(b, &x) != 0) { rc = cr_errf_at(e, path, ln, "expected 'k N', 'examples N' or 'keys N'"); break; }
            if (!strcmp(a, "k") && have == 0 && x > 0) k = x;
            else if (!strcmp(a, "examples") && have == 1) nu = x;
            else if (!strcmp(a, "keys") && have == 2) nv = x;
            else { rc = cr_errf_at(e, path, ln, "expected header lines 'k N' (N > 0), 'examples N', 'keys N' in this order"); break; }
            if (++have == 3) {
                p = cr_assign_new(k, nu, nv);
                seen_u = cr_xcalloc((size_t)nu + 1, 1);
                seen_v = cr_xcalloc((size_t)nv + 1, 1);
            }
            continue;
        }
        uint32_t id, m;
        if (nf != 3 || (strcmp(a, "u") && strcmp(a, "v")) || parse_u32(b, &id) || parse_u32(c, &m)) {
            rc = cr_errf_at(e, path, ln, "expected 'u EXAMPLE WORKER' or 'v KEY SERVER'");
            break;
        }
        int is_u = a[0] == 'u';
        if (id >= (is_u ? nu : nv)) { rc = cr_errf_at(e, path, ln, "%s %u out of range (%u %s)", is_u ? "example" : "key", id, is_u ? nu : nv, is_u ? "examples" : "keys"); break; }
        if (m >= k) { rc = cr_errf_at(e, path, ln, "machine %u out of range (k = %u)", m, k); break; }
        uint8_t *seen = is_u ? seen_u : seen_v;
        if (seen[id]) { rc = cr_errf_at(e, path, ln, "%s %u assigned twice", is_u ? "example" : "key", id); break; }
        seen[id] = 1, nseen++;
        (is_u ? p->u_part : p->v_part)[id] = m;
    }
    if (rc == 0 && have < 3) rc = cr_errf_at(e, path, ln, "missing header lines 'k', 'examples', 'keys'");
    if (rc == 0 && nseen != (uint64_t)nu + nv)
        rc = cr_errf_at(e, path, ln, "%llu of %llu examples and keys assigned: the file ends early (cut short?)",
                        (unsigned long long)nseen, (unsigned long long)nu + nv);
    free(line), free(seen_u), free(seen_v);
    fclose(f);
    if (rc != 0) cr_assign_destroy(&p);
    return p;
}
