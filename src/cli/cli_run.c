/* crescent run JOB.lua [--nodes N] [--workers W] [--policy NAME[:k=v,...]]
 *                      [--metrics FILE.jsonl] [--seed S] [--repl] [-- ARGS...] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lua/l_ps.h"

static int usage(void) {
    fprintf(stderr, "usage: crescent run JOB.lua [--nodes N] [--workers W] [--policy NAME[:key=value,...]]\n"
                    "                    [--metrics FILE.jsonl] [--seed S] [--repl] [-- ARGS...]\n");
    return 2;
}

/* Parse a non-negative integer within [lo, hi]; -1 with a message if bad. */
static long parse_count(const char *opt, const char *s, long lo, long hi) {
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "crescent run: %s: '%s' is not an integer in [%ld, %ld]\n", opt, s ? s : "", lo, hi);
        return -1;
    }
    return v;
}

int cr_cli_run(int argc, char **argv) {
    cr_run_overrides ov = {-1, -1, -1, NULL, NULL};
    const char *job = NULL;
    int repl = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "--repl")) repl = 1;
        else if (!strcmp(a, "--nodes")) {
            if ((ov.nodes = parse_count(a, v, 1, 1024)) < 0) return 2;
            i++;
        } else if (!strcmp(a, "--workers")) {
            if ((ov.workers = parse_count(a, v, 0, 256)) < 0) return 2;
            i++;
        } else if (!strcmp(a, "--seed")) {
            if ((ov.seed = parse_count(a, v, 0, 0x7fffffffL)) < 0) return 2;
            i++;
        } else if (!strcmp(a, "--policy") || !strcmp(a, "--metrics")) {
            if (!v || !*v) {
                fprintf(stderr, "crescent run: %s needs a value\n", a);
                return 2;
            }
            if (a[2] == 'p') ov.policy = v;
            else ov.metrics = v;
            i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "crescent run: unknown option '%s'\n", a);
            return usage();
        } else if (!job) job = a;
        else break; /* script arguments */
    }
    if (!job) return usage();
    return cr_lps_run(cr_cli_home(), job, &ov, repl, argc - i, argv + i);
}
