/* crescent run JOB.lua [--nodes N] [--workers W] [--policy NAME[:k=v,...]]
 *                      [--metrics FILE.jsonl] [--seed S] [--repl] [ARGS...] [-- ARGS...]
 * Run options are recognised anywhere; after JOB.lua, anything else (and
 * everything after "--") is the script's (global `arg`). */
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
    int repl = 0, nargs = 0;
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            while (++i < argc) args[nargs++] = argv[i];
            break;
        } else if (!strcmp(a, "--repl")) repl = 1;
        else if (!strcmp(a, "--nodes") || !strcmp(a, "--workers") || !strcmp(a, "--seed")) {
            long *dst = a[2] == 'n' ? &ov.nodes : a[2] == 'w' ? &ov.workers : &ov.seed;
            long hi = a[2] == 'n' ? 1024 : a[2] == 'w' ? 256 : 0x7fffffffL;
            if ((*dst = parse_count(a, v, a[2] == 'n' ? 1 : 0, hi)) < 0) goto bad;
            i++;
        } else if (!strcmp(a, "--policy") || !strcmp(a, "--metrics")) {
            if (!v || !*v) {
                fprintf(stderr, "crescent run: %s needs a value\n", a);
                goto bad;
            }
            if (a[2] == 'p') ov.policy = v;
            else ov.metrics = v;
            i++;
        } else if (!job && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
            usage();
            free(args);
            return 0;
        } else if (!job && a[0] == '-' && a[1]) {
            fprintf(stderr, "crescent run: unknown option '%s'\n", a);
            usage();
            goto bad;
        } else if (!job) job = a;
        else args[nargs++] = argv[i];
    }
    if (!job) {
        usage();
        goto bad;
    }
    int rc = cr_lps_run(cr_cli_home(), job, &ov, repl, nargs, args);
    free(args);
    return rc;
bad:
    free(args);
    return 2;
}
