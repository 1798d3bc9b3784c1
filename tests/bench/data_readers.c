/* Times one reader on one file: data_readers KIND PATH, KIND one of
 * mm (parse, no cache), mmcache (cache, built first if missing), libsvm,
 * text, edges. Prints "SECONDS ITEMS". Used by tests/bench/data_readers.sh. */
#include <stdio.h>
#include <string.h>

#include "base/cr_time.h"
#include "data/cr_graph.h"
#include "data/cr_libsvm.h"
#include "data/cr_mm.h"
#include "data/cr_text.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: data_readers mm|mmcache|libsvm|text|edges PATH\n");
        return 2;
    }
    const char *k = argv[1], *p = argv[2];
    cr_err e;
    long long items = 0;
    int rc = -1;
    if (!strcmp(k, "mmcache")) { /* warm the cache outside the timing */
        cr_coo m;
        if (cr_mm_load(p, 0, NULL, NULL, &m, NULL, &e) == 0) cr_coo_free(&m);
    }
    double t0 = cr_now();
    if (!strcmp(k, "mm") || !strcmp(k, "mmcache")) {
        cr_coo m;
        int hit = 0;
        rc = cr_mm_load(p, !strcmp(k, "mm") ? CR_MM_NO_CACHE : 0, NULL, NULL, &m, &hit, &e);
        if (rc == 0) items = m.nnz, cr_coo_free(&m);
        if (rc == 0 && !strcmp(k, "mmcache") && !hit) fprintf(stderr, "cache not used\n");
    } else if (!strcmp(k, "libsvm")) {
        cr_csr m;
        rc = cr_libsvm_load(p, 0, &m, &e);
        if (rc == 0) items = m.rows, cr_csr_free(&m);
    } else if (!strcmp(k, "text")) {
        cr_corpus c;
        cr_dict v;
        cr_dict_init(&v);
        rc = cr_text_load(p, &(cr_text_opts){1, 0, 0}, &c, &v, &e);
        if (rc == 0) items = c.raw, cr_corpus_free(&c);
        cr_dict_free(&v);
    } else if (!strcmp(k, "edges")) {
        cr_edges g;
        rc = cr_edges_load(p, &g, &e);
        if (rc == 0) items = g.m, cr_edges_free(&g);
    } else {
        fprintf(stderr, "unknown kind %s\n", k);
        return 2;
    }
    if (rc != 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    printf("%.4f %lld\n", cr_now() - t0, items);
    return 0;
}
