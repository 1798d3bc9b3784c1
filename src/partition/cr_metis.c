/* metis: the METIS k-way baseline (spec "Baselines"). libmetis is loaded at
 * run time with dlopen, so a machine without it still runs every other
 * method and this one reports itself unavailable instead of being skipped.
 * The bipartite graph is handed over as an undirected graph on |U| + |V|
 * vertices (U first); vertex weights (1 for examples, 0 for parameters)
 * make METIS balance the examples; U vertices carry the data assignment and
 * V vertices the parameter assignment. The library name can be overridden
 * with the environment variable CRESCENT_LIBMETIS (tests use a missing name
 * to check the "unavailable" path). */
#include <dlfcn.h>
#include <metis.h>
#include <stdlib.h>

#include "base/cr_alloc.h"
#include "partition/cr_partition.h"

typedef int (*kway_fn)(idx_t *, idx_t *, idx_t *, idx_t *, idx_t *, idx_t *, idx_t *, idx_t *, real_t *,
                       real_t *, idx_t *, idx_t *, idx_t *);
typedef int (*defaults_fn)(idx_t *);

static int tried;
static kway_fn kway;
static defaults_fn defaults;

static void load(void) {
    if (tried) return;
    tried = 1;
    const char *name = getenv("CRESCENT_LIBMETIS");
    void *h = dlopen(name && *name ? name : "libmetis.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    kway = (kway_fn)dlsym(h, "METIS_PartGraphKway");
    defaults = (defaults_fn)dlsym(h, "METIS_SetDefaultOptions");
    if (!kway || !defaults) kway = NULL, defaults = NULL;
}

int cr_metis_available(void) {
    load();
    return kway != NULL;
}

int cr_part_metis(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e) {
    if (k == 0) return cr_errf(e, "k must be at least 1");
    if (!cr_metis_available()) return cr_errf(e, "metis: unavailable (libmetis not installed)");
    uint64_t nvt = (uint64_t)g->nu + g->nv;
    if (nvt > INT32_MAX || 2 * g->ne > INT32_MAX) return cr_errf(e, "metis: graph too large for 32-bit idx_t");
    if (k == 1 || nvt == 0 || g->ne == 0) { /* METIS needs edges and k > 1; the answer is trivial */
        for (uint32_t u = 0; u < g->nu; u++) out->u_part[u] = k == 1 ? 0 : u % k;
        for (uint32_t v = 0; v < g->nv; v++) out->v_part[v] = k == 1 ? 0 : v % k;
        return 0;
    }
    idx_t n = (idx_t)nvt, ncon = 1, nparts = (idx_t)k, cut = 0;
    idx_t *xadj = cr_xmalloc(((size_t)n + 1) * sizeof *xadj);
    idx_t *adj = cr_xmalloc((size_t)(2 * g->ne) * sizeof *adj);
    idx_t *vw = cr_xmalloc((size_t)n * sizeof *vw);
    idx_t *part = cr_xmalloc((size_t)n * sizeof *part);
    idx_t p = 0;
    for (uint32_t u = 0; u < g->nu; u++) {
        xadj[u] = p, vw[u] = 1;
        for (uint64_t j = g->u_off[u]; j < g->u_off[u + 1]; j++) adj[p++] = (idx_t)(g->nu + g->u_adj[j]);
    }
    for (uint32_t v = 0; v < g->nv; v++) {
        xadj[g->nu + v] = p, vw[g->nu + v] = 0;
        for (uint64_t j = g->v_off[v]; j < g->v_off[v + 1]; j++) adj[p++] = (idx_t)g->v_adj[j];
    }
    xadj[n] = p;
    idx_t opts[METIS_NOPTIONS];
    defaults(opts);
    opts[METIS_OPTION_SEED] = (idx_t)(o->seed & 0x7fffffff);
    int rc = kway(&n, &ncon, xadj, adj, vw, NULL, NULL, &nparts, NULL, NULL, opts, &cut, part);
    if (rc == METIS_OK) {
        for (uint32_t u = 0; u < g->nu; u++) out->u_part[u] = (uint32_t)part[u];
        for (uint32_t v = 0; v < g->nv; v++) out->v_part[v] = (uint32_t)part[g->nu + v];
    }
    free(xadj), free(adj), free(vw), free(part);
    if (rc != METIS_OK) return cr_errf(e, "metis: METIS_PartGraphKway failed (code %d)", rc);
    return 0;
}
