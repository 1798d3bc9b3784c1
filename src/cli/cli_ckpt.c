/* crescent ckpt FILE...: check checkpoints and describe them.
 * Reads every row (streaming), so a file that passes here loads; prints a
 * resume summary (epoch, seed, policy, curve length, last loss), the
 * metadata and, per table, its shape, optimizer and value statistics
 * (min, max, mean, count of non-finite values: NaN/Inf show a diverged run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "ps/cr_ckpt.h"

#define CHUNK_FLOATS (1 << 18)

typedef struct summary {
    double min, max, sum;
    int64_t n, nonfinite;
} summary;

static void summarize(summary *s, const float *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        if (!isfinite(x)) {
            s->nonfinite++;
            continue;
        }
        if (s->n == 0 || x < s->min) s->min = x;
        if (s->n == 0 || x > s->max) s->max = x;
        s->sum += x;
        s->n++;
    }
}

/* int32 counts (an i32 table's values): every one is finite. */
static void summarize_ints(summary *s, const float *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int32_t x;
        memcpy(&x, v + i, sizeof x);
        if (s->n == 0 || x < s->min) s->min = x;
        if (s->n == 0 || x > s->max) s->max = x;
        s->sum += x;
        s->n++;
    }
}

/* Read all rows of the current table in chunks; fills the two summaries. */
static int read_table(cr_ckpt_reader *r, const cr_ckpt_table_info *t, summary *vs, summary *ss, cr_err *e) {
    int64_t width = (int64_t)t->dim + t->state_dim;
    int64_t rows = CHUNK_FLOATS / width > 0 ? CHUNK_FLOATS / width : 1;
    float *v = malloc((size_t)(rows * t->dim) * sizeof *v);
    float *s = t->state_dim ? malloc((size_t)(rows * t->state_dim) * sizeof *s) : NULL;
    int rc = (!v || (t->state_dim && !s)) ? cr_errf(e, "out of memory") : 0;
    for (int64_t k = 0; rc == 0 && k < t->keys; k += rows) {
        int64_t n = t->keys - k < rows ? t->keys - k : rows;
        rc = cr_ckpt_get_rows(r, n, v, s, e);
        if (rc == 0) {
            ((t->dtype & ~CR_CKPT_SPARSE) == CR_CKPT_I32 ? summarize_ints : summarize)(vs, v, (size_t)(n * t->dim));
            if (s && (t->dtype & CR_CKPT_SPARSE)) /* the first two state floats of a row are its key */
                for (int64_t i = 0; i < n; i++) summarize(ss, s + i * t->state_dim + 2, (size_t)(t->state_dim - 2));
            else if (s)
                summarize(ss, s, (size_t)(n * t->state_dim));
        }
    }
    free(v);
    free(s);
    return rc;
}

/* ints: the values are int32 counts (min and max printed in full). */
static void print_summary(const char *what, const summary *s, int ints) {
    if (s->n && ints) printf("  %s: min %.0f, max %.0f, mean %.6g", what, s->min, s->max, s->sum / (double)s->n);
    else if (s->n) printf("  %s: min %.6g, max %.6g, mean %.6g", what, s->min, s->max, s->sum / (double)s->n);
    else printf("  %s: no finite values", what);
    if (s->nonfinite) printf(", %lld NOT FINITE", (long long)s->nonfinite);
    printf("\n");
}

/* Records in the learning curve (one JSON line each) and the "loss" of the
 * last one (NAN if it has none). */
static int64_t curve_summary(const char *curve, double *last_loss) {
    int64_t n = 0;
    const char *last = NULL;
    for (const char *p = curve; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        if (eol > p) {
            n++;
            last = p;
        }
        p = *eol ? eol + 1 : eol;
    }
    *last_loss = NAN;
    if (last) {
        const char *eol = strchr(last, '\n'), *l = strstr(last, "\"loss\":");
        if (l && (!eol || l < eol)) {
            char *end;
            double v = strtod(l + 7, &end);
            if (end != l + 7) *last_loss = v;
        }
    }
    return n;
}

/* Print serialized Lua options ({["staleness"]=1,}) the way a user writes
 * them ({staleness=1}); display only. */
static void print_opts(const char *s) {
    for (; *s; s++) {
        if (s[0] == '[' && s[1] == '"') {
            const char *q = strstr(s + 2, "\"]");
            if (q) {
                printf("%.*s", (int)(q - s - 2), s + 2);
                s = q + 1;
                continue;
            }
        }
        if (s[0] == ',' && s[1] == '}') continue;
        putchar(*s);
    }
}

/* One line saying where a job resumed from this file would continue. */
static void print_resume(cr_ckpt_reader *r) {
    const char *epochs = cr_ckpt_get_meta(r, "crescent.epochs"), *seed = cr_ckpt_get_meta(r, "crescent.seed"),
               *pol = cr_ckpt_get_meta(r, "crescent.policy"), *opts = cr_ckpt_get_meta(r, "crescent.policy_opts"),
               *curve = cr_ckpt_get_meta(r, "crescent.curve");
    if (cr_ckpt_version(r) < 2 || !epochs || !curve) {
        printf("resume: none (tables only: written by an older crescent, or not by job:save)\n");
        return;
    }
    double loss;
    int64_t n = curve_summary(curve, &loss);
    printf("resume: epoch %s, seed %s, policy %s", epochs, seed ? seed : "?", pol ? pol : "?");
    if (opts && strcmp(opts, "{}") != 0) {
        putchar(' ');
        print_opts(opts);
    }
    printf(", curve %lld epoch%s", (long long)n, n == 1 ? "" : "s");
    if (n > 0 && !isnan(loss)) printf(", last loss %.6g", loss);
    printf("\n");
}

/* Describe one file; 0 if it is a complete, consistent checkpoint. */
static int describe(const char *path) {
    cr_err e;
    cr_ckpt_reader *r = cr_ckpt_reader_open(path, &e);
    if (!r) {
        fprintf(stderr, "crescent ckpt: %s\n", e.msg);
        return 1;
    }
    struct stat st;
    long long size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    printf("%s: crescent checkpoint version %d, %lld bytes\n", path, cr_ckpt_version(r), size);
    print_resume(r);
    for (int i = 0; i < cr_ckpt_meta_count(r); i++) {
        const char *k = cr_ckpt_meta_key(r, i), *v = cr_ckpt_get_meta(r, k);
        const char *eol = strchr(v, '\n');
        size_t n = eol ? (size_t)(eol - v) : strlen(v);
        printf("meta %s = %.*s%s", k, n > 200 ? 200 : (int)n, v, n > 200 || (eol && eol[1]) ? " ..." : "");
        if (eol && eol[1]) {
            size_t len = strlen(v);
            int64_t lines = v[len - 1] != '\n';
            for (const char *p = v; (p = strchr(p, '\n')); p++) lines++;
            printf(" (%lld lines)", (long long)lines);
        }
        printf("\n");
    }
    cr_ckpt_table_info t;
    int rc, bad = 0;
    while ((rc = cr_ckpt_next_table(r, &t, &e)) == 1) {
        printf("table %s: %lld keys x dim %d, optimizer %s", t.name, (long long)t.keys, t.dim,
               t.optimizer[0] ? t.optimizer : "(none)");
        if (t.state_dim) printf(" (%d state floats per row%s)", t.state_dim, (t.dtype & CR_CKPT_SPARSE) ? ", 2 of them its key" : "");
        if ((t.dtype & ~CR_CKPT_SPARSE) == CR_CKPT_I32) printf(", dtype i32");
        if (t.dtype & CR_CKPT_SPARSE) printf(", sparse (keys = rows stored)");
        printf("\n");
        summary vs = {0}, ss = {0};
        if (read_table(r, &t, &vs, &ss, &e) != 0) {
            rc = -1;
            break;
        }
        print_summary("values", &vs, (t.dtype & ~CR_CKPT_SPARSE) == CR_CKPT_I32);
        if (t.state_dim > ((t.dtype & CR_CKPT_SPARSE) ? 2 : 0)) print_summary("state", &ss, 0);
        bad |= vs.nonfinite > 0 || ss.nonfinite > 0;
    }
    cr_ckpt_reader_close(&r);
    if (rc < 0) {
        fprintf(stderr, "crescent ckpt: %s\n", e.msg);
        return 1;
    }
    if (bad) fprintf(stderr, "crescent ckpt: %s: some values are not finite (NaN or Inf)\n", path);
    return bad;
}

static const cr_opt_cmd ckpt_cmd = {
    "crescent ckpt", "FILE...",
    "  Verify checkpoints (every block, every row) and describe them: where a resumed\n"
    "  job would continue, the metadata, and per table its shape, optimizer and value\n"
    "  statistics. Exit 1 if a file is damaged or holds values that are not finite.\n",
    NULL, 1, -1, 0};

int cr_cli_ckpt(int argc, char **argv) {
    cr_opt_res r;
    int rc = cr_cli_parse(&ckpt_cmd, argc, argv, NULL, &r);
    if (rc >= 0) return rc;
    rc = 0;
    for (int i = 0; i < r.npos; i++) rc |= describe(r.pos[i]);
    cr_opt_res_free(&r);
    return rc;
}
