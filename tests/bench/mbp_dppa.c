/* Bench: MBP (random and greedy-growing initial partition) and DPPA against
 * the uniform random placement on a planted-partition graph. Prints, per
 * method, the median over seeds of T_sum, M_max, the improvement of T_sum
 * over random ((C_random - C) / C) and the partition time (loading and
 * graph generation excluded).
 * Usage: mbp_dppa NU NV K DEG P_IN RUNS [HASH_BINS]
 *        mbp_dppa hash NU NV K DEG P_IN M1 M2 ...  (densification table:
 *        per m', the hashed graph's size and DPPA vs random T_sum on it) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_time.h"
#include "part_util.h"
#include "partition/cr_dppa.h"
#include "partition/cr_fhash.h"
#include "partition/cr_mbp.h"
#include "stat_util.h"

static int hash_table(int argc, char **argv) {
    uint32_t nu = (uint32_t)atoi(argv[2]), nv = (uint32_t)atoi(argv[3]), k = (uint32_t)atoi(argv[4]);
    uint32_t deg = (uint32_t)atoi(argv[5]);
    cr_bigraph *g = pu_planted(nu, nv, k, deg, atof(argv[6]), 2026);
    printf("graph: |U| %u |V| %u |E| %llu, k %u\n", g->nu, g->nv, (unsigned long long)g->ne, k);
    printf("%8s %9s %10s %8s %9s %12s %12s %8s %8s\n", "m'", "bins used", "edges", "kept", "density",
           "T_sum dppa", "T_sum random", "impr%", "time s");
    for (int a = 7; a < argc; a++) {
        cr_part_opts o;
        cr_part_opts_default(&o);
        o.hash_bins = (uint32_t)atoi(argv[a]);
        cr_bigraph *h;
        cr_assign *p;
        cr_err e;
        double t0 = cr_now();
        if (o.hash_bins == 0 || cr_dppa_hashed(g, k, &o, &h, &p, &e)) {
            fprintf(stderr, "m'=%s: %s\n", argv[a], o.hash_bins ? e.msg : "need m' >= 1");
            return 1;
        }
        double t = cr_now() - t0;
        cr_fhash_stats st;
        cr_fhash_stats_of(g, h, &st);
        cr_assign *r = cr_assign_new(k, h->nu, h->nv);
        pu_random(r, 1);
        double td = (double)pu_tsum(h, p->u_part, p->v_part, k), tr = (double)pu_tsum(h, r->u_part, r->v_part, k);
        printf("%8u %9u %10llu %7.1f%% %9.5f %12.0f %12.0f %8.1f %8.3f\n", st.bins, st.bins_used,
               (unsigned long long)st.edges, 100 * st.edge_ratio, st.density, td, tr, 100 * (tr - td) / td, t);
        cr_assign_destroy(&r);
        cr_assign_destroy(&p);
        cr_bigraph_destroy(&h);
    }
    cr_bigraph_destroy(&g);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 8 && !strcmp(argv[1], "hash")) return hash_table(argc, argv);
    if (argc < 7) {
        fprintf(stderr, "usage: %s NU NV K DEG P_IN RUNS [HASH_BINS]\n", argv[0]);
        return 2;
    }
    uint32_t nu = (uint32_t)atoi(argv[1]), nv = (uint32_t)atoi(argv[2]), k = (uint32_t)atoi(argv[3]);
    uint32_t deg = (uint32_t)atoi(argv[4]);
    double pin = atof(argv[5]);
    int runs = atoi(argv[6]);
    uint32_t bins = argc > 7 ? (uint32_t)atoi(argv[7]) : 0;
    if (runs < 1 || runs > 32 || k == 0) return 2;
    cr_bigraph *g = pu_planted(nu, nv, k, deg, pin, 2026);
    printf("graph: |U| %u |V| %u |E| %llu, k %u, %d runs\n", g->nu, g->nv, (unsigned long long)g->ne, k, runs);
    const char *names[] = {"random", "mbp", "mbp-grow", "dppa"};
    cr_part_fn fns[] = {NULL, cr_part_mbp, cr_part_mbp_grow, cr_part_dppa};
    double t[4][32], tm[4][32], mm[4][32];
    cr_assign *p = cr_assign_new(k, nu, nv);
    cr_err e;
    for (int m = 0; m < 4; m++)
        for (int r = 0; r < runs; r++) {
            cr_part_opts o;
            cr_part_opts_default(&o);
            o.seed = (uint64_t)r + 1;
            o.hash_bins = m == 3 ? bins : 0;
            double t0 = cr_now();
            if (fns[m] == NULL) pu_random(p, o.seed);
            else if (fns[m](g, k, &o, p, &e)) {
                fprintf(stderr, "%s: %s\n", names[m], e.msg);
                return 1;
            }
            t[m][r] = cr_now() - t0;
            tm[m][r] = (double)pu_tsum(g, p->u_part, p->v_part, k);
            mm[m][r] = (double)pu_mmax(g, p->u_part, k);
        }
    double trand = st_median(tm[0], runs), mrand = st_median(mm[0], runs);
    printf("%-9s %12s %9s %10s %10s %9s\n", "method", "T_sum", "T impr%", "M_max", "M impr%", "time s");
    for (int m = 0; m < 4; m++) {
        double ts = st_median(tm[m], runs), ms = st_median(mm[m], runs);
        printf("%-9s %12.0f %9.1f %10.0f %10.1f %9.3f\n", names[m], ts, 100 * (trand - ts) / ts, ms,
               100 * (mrand - ms) / ms, st_median(t[m], runs));
    }
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&g);
    return 0;
}
