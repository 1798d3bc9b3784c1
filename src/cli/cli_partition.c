/* crescent partition FILE -k K [--method a,b,...|all] [--seeds S] ...
 * Loads the graph once, runs every method for S seeds (seed, seed+1, ...)
 * beside the random baseline, and prints one row per method like table 2
 * of the Parsa paper: metrics averaged over the seeds, improvement over
 * random = (random - method) / method, partition time (loading excluded)
 * as median with min-max. --json prints one object per line instead.
 * dppa with --hash-bins M also reports how hashing densified the graph
 * (cr_fhash_stats, means over the seeds): JSON fields hash_*, and one
 * "hashing:" line under its row in the table. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "cli/cli.h"
#include "partition/cr_fhash.h"
#include "partition/cr_part_opt.h"
#include "partition/cr_partition.h"

#define MAX_METHODS 16

typedef struct row {
    const char *name;
    int available, failed;
    char err[CR_ERR_MAX];
    double m_max, t_max, t_sum, load, product; /* means over seeds */
    double *secs, *cpu; /* wall and process CPU seconds per seed, sorted */
    uint32_t hash_bins;  /* dppa with hashing: m' (0 = no hashing stats) */
    double bins_used, edges, edge_ratio, density, mean_v_degree; /* cr_fhash_stats, means over seeds */
} row;

/* Process CPU seconds: the benches judge speed by this too, because the
 * machines they run on may be shared (wall time then measures the load). */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Add one seed's hashing statistics (the graph dppa partitioned) to r.
 * Outside the timed part: the partition time stays dppa's own. */
static int add_hash_stats(const cr_bigraph *g, const cr_part_opts *o, int seeds, row *r, cr_err *e) {
    cr_fhash_stats s;
    if (cr_fhash_stats_for(g, o->hash_bins, o->seed, &s, e) < 0) return -1;
    r->hash_bins = s.bins;
    r->bins_used += (double)s.bins_used / seeds, r->edges += (double)s.edges / seeds;
    r->edge_ratio += s.edge_ratio / seeds, r->density += s.density / seeds;
    r->mean_v_degree += s.mean_v_degree / seeds;
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run one method for every seed; fills r. Returns 0, or -1 after a write
 * failure of --out (a method error is recorded in r and is not fatal). */
static int run_method(const cr_bigraph *g, uint32_t k, const cr_part_opts *base, int seeds, const char *out_path,
                      row *r) {
    int avail = 0;
    cr_part_fn fn = cr_part_method(r->name, &avail);
    r->available = avail;
    r->secs = cr_xcalloc((size_t)seeds, sizeof *r->secs);
    r->cpu = cr_xcalloc((size_t)seeds, sizeof *r->cpu);
    if (!avail) return 0;
    for (int s = 0; s < seeds; s++) {
        cr_part_opts o = *base;
        o.seed = base->seed + (uint64_t)s;
        cr_assign *p = cr_assign_new(k, g->nu, g->nv);
        cr_err e;
        double t0 = cr_now(), c0 = cpu_now();
        int rc = fn(g, k, &o, p, &e);
        r->secs[s] = cr_now() - t0;
        r->cpu[s] = cpu_now() - c0;
        cr_part_metrics m = {0};
        if (rc == 0) rc = cr_part_metrics_compute(g, p, &m, &e);
        if (rc == 0 && fn == cr_part_dppa && o.hash_bins > 0) {
            rc = add_hash_stats(g, &o, seeds, r, &e);
            if (rc != 0) cr_part_metrics_free(&m);
        }
        if (rc != 0) {
            snprintf(r->err, sizeof r->err, "%s", e.msg);
            r->failed = 1;
            cr_assign_destroy(&p);
            return 0;
        }
        r->m_max += (double)m.m_max / seeds, r->t_max += (double)m.t_max / seeds;
        r->t_sum += (double)m.t_sum / seeds, r->load += (double)m.load / seeds;
        r->product += m.product / seeds;
        cr_part_metrics_free(&m);
        if (s == 0 && out_path) {
            char comment[256];
            snprintf(comment, sizeof comment, "method=%s seed=%llu", r->name, (unsigned long long)o.seed);
            if (cr_assign_save(out_path, p, comment, &e) != 0) {
                fprintf(stderr, "crescent partition: %s\n", e.msg);
                cr_assign_destroy(&p);
                return -1;
            }
        }
        cr_assign_destroy(&p);
    }
    qsort(r->secs, (size_t)seeds, sizeof *r->secs, cmp_double);
    qsort(r->cpu, (size_t)seeds, sizeof *r->cpu, cmp_double);
    return 0;
}

static double impr(double rnd, double x) {
    return x > 0 ? (rnd - x) / x : 0.0;
}

static double median(const double *x, int n) {
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

static void print_row(const row *r, const row *rnd, uint32_t k, int seeds, int json) {
    double med = median(r->secs, seeds);
    if (json) {
        if (!r->available || r->failed) {
            printf("{\"method\":\"%s\",\"k\":%u,\"available\":%s,\"error\":\"", r->name, k, r->available ? "true" : "false");
            const char *msg = r->available ? r->err : "unavailable (libmetis not installed)";
            for (const char *c = msg; *c; c++) {
                if (*c == '"' || *c == '\\') putchar('\\');
                if ((unsigned char)*c >= 0x20) putchar(*c);
            }
            printf("\"}\n");
            return;
        }
        printf("{\"method\":\"%s\",\"k\":%u,\"available\":true,\"seeds\":%d,\"m_max\":%.1f,\"t_max\":%.1f,"
               "\"t_sum\":%.1f,\"load\":%.1f,\"product\":%.1f,\"m_max_impr\":%.4f,\"t_max_impr\":%.4f,"
               "\"t_sum_impr\":%.4f,\"seconds\":%.6f,\"seconds_min\":%.6f,\"seconds_max\":%.6f,"
               "\"cpu_seconds\":%.6f",
               r->name, k, seeds, r->m_max, r->t_max, r->t_sum, r->load, r->product,
               impr(rnd->m_max, r->m_max), impr(rnd->t_max, r->t_max), impr(rnd->t_sum, r->t_sum), med,
               r->secs[0], r->secs[seeds - 1], median(r->cpu, seeds));
        if (r->hash_bins)
            printf(",\"hash_bins\":%u,\"hash_bins_used\":%.1f,\"hash_edges\":%.1f,\"hash_edge_ratio\":%.6f,"
                   "\"hash_density\":%.6f,\"hash_mean_v_degree\":%.4f",
                   r->hash_bins, r->bins_used, r->edges, r->edge_ratio, r->density, r->mean_v_degree);
        printf("}\n");
        return;
    }
    if (!r->available) {
        printf("%s: unavailable (libmetis not installed)\n", r->name);
        return;
    }
    if (r->failed) {
        printf("%s: failed: %s\n", r->name, r->err);
        return;
    }
    printf("%-8s %10.0f %10.0f %12.0f %7.0f%% %7.0f%% %7.0f%%  %9.4f (%.4f-%.4f)\n", r->name, r->m_max, r->t_max,
           r->t_sum, 100 * impr(rnd->m_max, r->m_max), 100 * impr(rnd->t_max, r->t_max),
           100 * impr(rnd->t_sum, r->t_sum), med, r->secs[0], r->secs[seeds - 1]);
    if (r->hash_bins)
        printf("%-8s hashing: %u bins, %.0f used, %.0f edges (%.1f%% kept), density %.4f, mean bin degree %.1f\n",
               "", r->hash_bins, r->bins_used, r->edges, 100 * r->edge_ratio, r->density, r->mean_v_degree);
}

/* Split "a,b,c" (or "all") into names; returns the count or -1. */
static int parse_methods(char *list, const char **names) {
    int n = 0;
    if (!strcmp(list, "all")) {
        for (size_t i = 0; cr_part_method_name(i); i++) names[n++] = cr_part_method_name(i);
        return n;
    }
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (!cr_part_method(tok, NULL)) {
            fprintf(stderr, "crescent partition: unknown method '%s' (random, parsa, tsh1, tsh2, mbp, mbp-grow, dppa, metis)\n", tok);
            return -1;
        }
        if (n == MAX_METHODS) return -1;
        names[n++] = tok;
    }
    return n;
}

/* The command's settings, and the methods' options (rows shared with
 * cr.partition.run through CR_PART_OPT_ROWS). */
typedef struct args {
    const char *file, *out, *format, *methods;
    int64_t k, seeds;
    int json;
    cr_part_optv pv;
} args;

static const cr_opt partition_opts[] = {
    {"k", CR_OPT_INT, offsetof(args, k), CR_OPT_REQUIRED | CR_OPT_RANGE, 1, 1 << 20, NULL, "K", "parts (machines)",
     NULL, NULL},
    {"method", CR_OPT_STRING, offsetof(args, methods), 0, 0, 0, "parsa", "a,b,...|all",
     "methods (all = random parsa tsh1 tsh2 mbp dppa metis)", NULL, NULL},
    {"seeds", CR_OPT_INT, offsetof(args, seeds), CR_OPT_RANGE, 1, 1000, "3", "S",
     "seeds per method, starting at --seed", NULL, NULL},
    {"format", CR_OPT_STRING, offsetof(args, format), 0, 0, 0, NULL, "F",
     "libsvm | mm | edges (default: from the file name, else libsvm)", NULL, NULL},
    {"out", CR_OPT_STRING, offsetof(args, out), 0, 0, 0, NULL, "PATH",
     "write the placement of the first seed (PATH.METHOD for several methods)", NULL, NULL},
    {"json", CR_OPT_FLAG, offsetof(args, json), 0, 0, 0, NULL, NULL, "one JSON object per line per method", NULL,
     NULL},
    CR_PART_OPT_ROWS(offsetof(args, pv)),
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

static const cr_opt_cmd partition_cmd = {
    "crescent partition", "FILE -k K [options]",
    "  Load the graph once, run every method for S seeds beside the random baseline and\n"
    "  print one row per method (metrics averaged over the seeds, improvement over\n"
    "  random, partition time as median with min-max).\n",
    partition_opts, 1, 1, 0};

/* Load file, run the nm methods, print the table. Returns the exit status. */
static int partition(const char *file, const args *ap, const cr_part_opts *op, const char **names, int nm) {
    args a = *ap;
    a.file = file;
    cr_part_opts o = *op;
    cr_bigraph_format fmt = cr_bigraph_format_guess(a.file);
    if (a.format && cr_bigraph_format_parse(a.format, &fmt) != 0)
        return fprintf(stderr, "crescent partition: unknown format '%s' (libsvm, mm, edges)\n", a.format), 2;
    cr_err e;
    double t0 = cr_now();
    cr_bigraph *g = cr_bigraph_load(a.file, fmt, &e);
    if (!g) return fprintf(stderr, "crescent partition: %s\n", e.msg), 1;
    double load_s = cr_now() - t0;
    uint32_t k = (uint32_t)a.k;
    int seeds = (int)a.seeds;
    row rnd = {.name = "random"};
    row *rows = cr_xcalloc((size_t)nm, sizeof *rows);
    int status = 0, fatal = 0;
    if (!a.json)
        printf("graph %s: |U| = %u, |V| = %u, |E| = %llu (loaded in %.2f s); k = %u, seeds = %d\n"
               "%-8s %10s %10s %12s %8s %8s %8s  %s\n",
               a.file, g->nu, g->nv, (unsigned long long)g->ne, load_s, k, seeds, "method", "M_max", "T_max",
               "T_sum", "M_max+", "T_max+", "T_sum+", "seconds median (min-max)");
    if (run_method(g, k, &o, seeds, NULL, &rnd) != 0) fatal = 1;
    for (int i = 0; i < nm && !fatal; i++) {
        rows[i].name = names[i];
        char path[4096];
        const char *out = NULL;
        if (a.out) {
            snprintf(path, sizeof path, nm > 1 ? "%s.%s" : "%s", a.out, names[i]);
            out = path;
        }
        if (run_method(g, k, &o, seeds, out, &rows[i]) != 0) fatal = 1;
        else print_row(&rows[i], &rnd, k, seeds, a.json);
        fflush(stdout);
        if (rows[i].failed) status = 1;
        if (!rows[i].available && nm == 1) status = 1;
    }
    if (fatal) status = 1;
    for (int i = 0; i < nm; i++) free(rows[i].secs), free(rows[i].cpu);
    free(rows);
    free(rnd.secs), free(rnd.cpu);
    cr_bigraph_destroy(&g);
    return status;
}

int cr_cli_partition(int argc, char **argv) {
    args a = {0};
    cr_part_optv_init(&a.pv);
    cr_opt_res r;
    int rc = cr_cli_parse(&partition_cmd, argc, argv, &a, &r);
    if (rc >= 0) return rc;
    const char *file = r.pos[0];
    cr_opt_res_free(&r);
    cr_part_opts o;
    cr_part_optv_get(&a.pv, &o);
    const char *names[MAX_METHODS + 1];
    char *methods = cr_xstrdup(a.methods);
    int nm = parse_methods(methods, names);
    if (nm <= 0) return free(methods), 2;
    rc = partition(file, &a, &o, names, nm);
    free(methods);
    return rc;
}
