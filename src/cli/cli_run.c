/* crescent run JOB.lua [--nodes N] [--workers W] [--policy NAME[:k=v,...]] [--sampling NAME[:k=v,...]]
 *                      [--metrics FILE.jsonl] [--seed S] [--repl] [ARGS...] [-- ARGS...]
 * Run options are recognised anywhere; after JOB.lua, anything else (and
 * everything after "--") is the script's (global `arg`). */
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lua/l_ps.h"
#include "ps/cr_job.h"

typedef struct run_opts {
    int64_t nodes, workers, seed; /* -1 = not given: the script's cr.job{} value */
    const char *policy, *metrics, *sampling;
    int repl;
    cr_cli_net net;
    const char *listen;
    int external;
    const char *checkpoint;
    const char *every;
    int64_t restarts, rejoin;
} run_opts;

/* The node and worker ranges are the core's (cr_job.h), so --nodes and
 * --workers accept what cr.job{} accepts; what this machine can run on top
 * of that is check_size's. */
const cr_opt cr_cli_run_opts[] = {
    {"nodes", CR_OPT_INT, offsetof(run_opts, nodes), CR_OPT_RANGE, 1, CR_JOB_MAX_NODES, NULL, "N",
     "node processes to start (default: the script's cr.job{nodes})", NULL, NULL},
    {"workers", CR_OPT_INT, offsetof(run_opts, workers), CR_OPT_RANGE, 0, CR_JOB_MAX_WORKERS, NULL, "W",
     "worker threads per node (default: the script's)", NULL, NULL},
    {"policy", CR_OPT_STRING, offsetof(run_opts, policy), 0, 0, 0, NULL, "NAME[:k=v,...]",
     "consistency policy, e.g. ssp:staleness=2", NULL, NULL},
    {"sampling", CR_OPT_STRING, offsetof(run_opts, sampling), 0, 0, 0, NULL, "NAME[:k=v,...]",
     "sampling scheme (configs/sampling, or a .lua file), e.g. bounded:pool=100", NULL, NULL},
    {"metrics", CR_OPT_STRING, offsetof(run_opts, metrics), 0, 0, 0, NULL, "FILE.jsonl",
     "JSON-lines file that job:log appends to (default: the script's)", NULL, NULL},
    {"seed", CR_OPT_INT, offsetof(run_opts, seed), CR_OPT_RANGE, 0, 0x7fffffff, NULL, "S", "random seed of the job",
     NULL, NULL},
    {"repl", CR_OPT_FLAG, offsetof(run_opts, repl), 0, 0, 0, NULL, NULL,
     "after the script, a Lua prompt with the job still open", NULL, NULL},
    {"port", CR_OPT_INT, offsetof(run_opts, net.port), CR_OPT_RANGE, 1, 65535, NULL, "N",
     "under a cluster launcher: the port rank 0's scheduler listens on (or CRESCENT_PORT; torchrun's "
     "MASTER_PORT and dmlc's DMLC_PS_ROOT_PORT are read)", NULL, NULL},
    {"key", CR_OPT_STRING, offsetof(run_opts, net.key), 0, 0, 0, NULL, "FILE",
     "the cluster key pair (crescent keygen > FILE; mode 600), needed off one host (or CRESCENT_KEY_FILE)",
     NULL, NULL},
    {"interface", CR_OPT_STRING, offsetof(run_opts, net.iface), 0, 0, 0, NULL, "NAME",
     "network interface nodes bind and advertise (default: the one that reaches the scheduler; or "
     "CRESCENT_INTERFACE)", NULL, NULL},
    {"listen", CR_OPT_STRING, offsetof(run_opts, listen), 0, 0, 0, NULL, "tcp://HOST:PORT",
     "the scheduler's endpoint for nodes started by hand (with --external-nodes)", NULL, NULL},
    {"checkpoint", CR_OPT_STRING, offsetof(run_opts, checkpoint), 0, 0, 0, NULL, "PATH",
     "save the job to PATH every --checkpoint-every epochs; a run that finds PATH resumes from it", NULL, NULL},
    {"checkpoint-every", CR_OPT_STRING, offsetof(run_opts, every), 0, 0, 0, NULL, "K|Ss",
     "epochs between checkpoints (default 1), or with an s, seconds (saved at the first epoch end after them)",
     NULL, NULL},
    {"restarts", CR_OPT_INT, offsetof(run_opts, restarts), CR_OPT_RANGE, 0, 1000, "0", "N",
     "when a node dies, run the job again from the last checkpoint, at most N times (needs --checkpoint)", NULL,
     NULL},
    {"rejoin-timeout", CR_OPT_INT, offsetof(run_opts, rejoin), CR_OPT_RANGE, 1, 86400, "30", "S",
     "under a launcher, after a restart: seconds to wait for the ranks still alive to join again; the job "
     "goes on with those that did", NULL, NULL},
    {"external-nodes", CR_OPT_FLAG, offsetof(run_opts, external), 0, 0, 0, NULL, NULL,
     "start no node: wait for `crescent node --scheduler ...` processes started elsewhere", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

static const cr_opt_cmd run_cmd = {
    "crescent run", "JOB.lua [options] [ARGS...] [-- ARGS...]",
    "  Run a job script on the scheduler; its nodes start on loopback. Options are\n"
    "  recognised anywhere; other arguments after JOB.lua (and all after --) are the\n"
    "  script's (global `arg`, and `...`).\n"
    "  Started by a cluster launcher (srun, mpirun, dmlc-tracker, torchrun, crescent\n"
    "  launch), rank 0 runs the scheduler and one node and the other ranks become\n"
    "  nodes that join it; see docs/cluster.md.\n",
    cr_cli_run_opts, 1, -1, CR_OPT_POS_STOPS};

/* Refuse --nodes/--workers the machine cannot run before the script starts
 * (the job client's one limit, cr_job_check_size; a value not given counts
 * as 1). From the command line, --workers 0 leaves no worker for the model. */
static int check_size(const run_opts *o) {
    if (o->nodes < 0 && o->workers < 0) return 0;
    if (o->workers == 0) {
        fprintf(stderr, "crescent run: --workers 0 leaves no worker thread to run the job's model (give at least 1)\n");
        return -1;
    }
    cr_err e;
    if (cr_job_check_size(o->nodes >= 0 ? (int)o->nodes : 1, o->workers >= 0 ? (int)o->workers : 1, &e) < 0) {
        fprintf(stderr, "crescent run: %s\n", e.msg);
        return -1;
    }
    return 0;
}

/* --restarts needs somewhere to restart from, and is for a script run to
 * its end (not the REPL). */
static int restart_check(const run_opts *o) {
    if (o->restarts > 0 && !o->checkpoint) {
        fprintf(stderr, "crescent run: --restarts needs --checkpoint PATH (where the job is saved to resume from)\n");
        return -1;
    }
    if (o->restarts > 0 && o->repl) {
        fprintf(stderr, "crescent run: --restarts cannot be used with --repl\n");
        return -1;
    }
    if (o->checkpoint && !o->checkpoint[0]) {
        fprintf(stderr, "crescent run: --checkpoint needs a value\n");
        return -1;
    }
    return 0;
}

/* "K" epochs or "Ns" seconds. 0 or -1. */
static int parse_every(const char *s, long *epochs, long *secs) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > 1000000) return -1;
    if (*end == 's' && !end[1]) return *secs = v, 0;
    if (*end) return -1;
    *epochs = v;
    return 0;
}

/* path made absolute against the current directory (the script may cd:
 * the checkpoint stays where the user meant), in buf. */
static const char *absolute(const char *path, char *buf) {
    if (path[0] == '/' || !getcwd(buf, PATH_MAX)) return path;
    size_t l = strlen(buf);
    if (l + strlen(path) + 2 > PATH_MAX) return path;
    snprintf(buf + l, PATH_MAX - l, "/%s", path);
    return buf;
}

int cr_cli_run(int argc, char **argv) {
    run_opts o = {-1, -1, -1, NULL, NULL, NULL, 0, {-1, NULL, NULL, 0}, NULL, 0, NULL, NULL, 0, 30};
    cr_opt_res r;
    int rc = cr_cli_parse(&run_cmd, argc, argv, &o, &r);
    if (rc >= 0) return rc;
    const char *empty = o.policy && !o.policy[0]       ? "--policy"
                        : o.metrics && !o.metrics[0]   ? "--metrics"
                        : o.sampling && !o.sampling[0] ? "--sampling"
                                                       : NULL;
    if (empty) {
        fprintf(stderr, "crescent run: %s needs a value\n", empty);
        cr_opt_res_free(&r);
        return 2;
    }
    if (check_size(&o) < 0) {
        cr_opt_res_free(&r);
        return 2;
    }
    if (restart_check(&o) < 0) {
        cr_opt_res_free(&r);
        return 2;
    }
    char ckpath[PATH_MAX];
    if (o.checkpoint) o.checkpoint = absolute(o.checkpoint, ckpath);
    o.net.restarts = o.restarts;
    long every = 1, every_s = 0;
    if (o.every && parse_every(o.every, &every, &every_s) < 0) {
        fprintf(stderr, "crescent run: --checkpoint-every '%s': expected epochs (1 to 1000000) or seconds "
                        "with an s (e.g. 600s)\n", o.every);
        cr_opt_res_free(&r);
        return 2;
    }
    cr_run_overrides ov = {(long)o.nodes, (long)o.workers, (long)o.seed, o.policy, o.metrics, o.sampling,
                           0, 0, o.external, o.listen, NULL, o.checkpoint, every, (int)o.restarts, 0, every_s};
    cr_launch l;
    char listen[64];
    int status;
    if (cr_cli_key_file("crescent run", o.net.key) < 0) {
        cr_opt_res_free(&r);
        return 2;
    }
    if (cr_cli_launched("crescent run", &o.net, &l, &ov, listen, sizeof listen, &status)) {
        cr_opt_res_free(&r);
        return status;
    }
    for (int attempt = 1;; attempt++) {
        rc = cr_lps_run(cr_cli_home(), r.pos[0], &ov, o.repl, r.npos - 1, r.pos + 1);
        if (rc != CR_RUN_NODE_DIED) break;
        if (attempt > o.restarts) {
            if (o.restarts > 0) fprintf(stderr, "crescent run: a node died again; no restart left (--restarts %d)\n",
                                        (int)o.restarts);
            rc = 1;
            break;
        }
        if (ov.world > 0) {
            ov.rejoin = (long)o.rejoin;
            fprintf(stderr, "crescent run: restart %d of %d: waiting up to %d s for the %ld rank(s) to join again\n",
                    attempt, (int)o.restarts, (int)o.rejoin, ov.world);
        }
        if (access(o.checkpoint, F_OK) == 0)
            fprintf(stderr, "crescent run: restart %d of %d: the job runs again from %s (what the epochs after it "
                            "did is lost)\n", attempt, (int)o.restarts, o.checkpoint);
        else
            fprintf(stderr, "crescent run: restart %d of %d: no checkpoint saved yet (%s): the job starts over\n",
                    attempt, (int)o.restarts, o.checkpoint);
    }
    cr_opt_res_free(&r);
    return rc;
}
