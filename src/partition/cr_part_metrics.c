/* The one metric code that judges every partitioner (spec "The model"):
 * the memory and traffic cost of an assignment, per machine and in total. */
#include <stdlib.h>

#include "base/cr_alloc.h"
#include "partition/cr_partition.h"

/* One pass over the parameters: for v, the distinct machines whose examples
 * touch v (found through v's example list and a per-machine stamp) each hold
 * v in memory; the owner serves every other one of them, and each of them
 * that is not the owner pulls it. O(|E| + |V| + k). */
int cr_part_metrics_compute(const cr_bigraph *g, const cr_assign *p, cr_part_metrics *out, cr_err *e) {
    uint32_t k = p->k;
    if (k == 0) return cr_errf(e, "placement has k = 0");
    if (p->nu != g->nu || p->nv != g->nv)
        return cr_errf(e, "placement is for %u x %u, graph is %u x %u", p->nu, p->nv, g->nu, g->nv);
    for (uint32_t u = 0; u < g->nu; u++)
        if (p->u_part[u] >= k) return cr_errf(e, "example %u assigned to machine %u >= k = %u", u, p->u_part[u], k);
    for (uint32_t v = 0; v < g->nv; v++)
        if (p->v_part[v] >= k) return cr_errf(e, "parameter %u assigned to machine %u >= k = %u", v, p->v_part[v], k);
    out->k = k;
    out->u_count = cr_xcalloc(k, sizeof *out->u_count);
    out->m = cr_xcalloc(k, sizeof *out->m);
    out->t = cr_xcalloc(k, sizeof *out->t);
    uint64_t *stamp = cr_xcalloc(k, sizeof *stamp);
    uint32_t *list = cr_xmalloc(k * sizeof *list);
    for (uint32_t u = 0; u < g->nu; u++) out->u_count[p->u_part[u]]++;
    for (uint32_t v = 0; v < g->nv; v++) {
        uint32_t n = 0, owner = p->v_part[v];
        int owner_needs = 0;
        for (uint64_t j = g->v_off[v]; j < g->v_off[v + 1]; j++) {
            uint32_t c = p->u_part[g->v_adj[j]];
            if (stamp[c] == (uint64_t)v + 1) continue;
            stamp[c] = (uint64_t)v + 1;
            list[n++] = c;
            if (c == owner) owner_needs = 1;
        }
        for (uint32_t j = 0; j < n; j++) {
            out->m[list[j]]++;
            if (list[j] != owner) out->t[list[j]]++;
        }
        out->t[owner] += n - (uint32_t)owner_needs;
    }
    free(stamp);
    free(list);
    out->m_max = out->t_max = out->t_sum = out->load = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (out->m[i] > out->m_max) out->m_max = out->m[i];
        if (out->t[i] > out->t_max) out->t_max = out->t[i];
        if (out->u_count[i] > out->load) out->load = out->u_count[i];
        out->t_sum += out->t[i];
    }
    out->product = (double)out->load * (double)out->t_max;
    return 0;
}

void cr_part_metrics_free(cr_part_metrics *m) {
    if (!m) return;
    free(m->u_count);
    free(m->m);
    free(m->t);
    m->u_count = m->m = m->t = NULL;
}
