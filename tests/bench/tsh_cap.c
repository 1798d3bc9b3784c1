/* TSH-2's pair cap: tsh_cap FILE K CAP... runs tsh2 on FILE with each cap
 * (0 = exact pair search) and prints T_max, M_max, T_sum, seconds, and
 * T_max relative to the first cap. */
#include <stdio.h>
#include <stdlib.h>

#include "base/cr_time.h"
#include "partition/cr_bigraph.h"
#include "partition/cr_partition.h"

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: tsh_cap FILE K CAP...\n");
        return 2;
    }
    cr_err e;
    cr_bigraph *g = cr_bigraph_load(argv[1], cr_bigraph_format_guess(argv[1]), &e);
    if (!g) {
        fprintf(stderr, "tsh_cap: %s\n", e.msg);
        return 1;
    }
    uint32_t k = (uint32_t)atoi(argv[2]);
    double first = 0;
    for (int a = 3; a < argc; a++) {
        cr_part_opts o;
        cr_part_opts_default(&o);
        o.pair_cap = (uint32_t)atoi(argv[a]);
        cr_assign *p = cr_assign_new(k, g->nu, g->nv);
        cr_part_metrics m = {0};
        double t0 = cr_now();
        int rc = cr_part_tsh2(g, k, &o, p, &e);
        double t = cr_now() - t0;
        if (rc == 0) rc = cr_part_metrics_compute(g, p, &m, &e);
        cr_assign_destroy(&p);
        if (rc != 0) {
            fprintf(stderr, "tsh_cap: %s\n", e.msg);
            cr_bigraph_destroy(&g);
            return 1;
        }
        if (a == 3) first = (double)m.t_max;
        printf("k %-3u cap %-5s T_max %8llu  M_max %8llu  T_sum %10llu  T_max/first %.4f  %8.3f s\n", k,
               o.pair_cap ? argv[a] : "exact", (unsigned long long)m.t_max, (unsigned long long)m.m_max,
               (unsigned long long)m.t_sum, (double)m.t_max / first, t);
        cr_part_metrics_free(&m);
    }
    cr_bigraph_destroy(&g);
    return 0;
}
