#ifndef CR_CLI_H
#define CR_CLI_H
/* One entry point per `crescent COMMAND`. argv[0] is the command name.
 * Each returns the process exit status: 0 ok, 1 runtime failure, 2 usage.
 * Each reads its options with src/base/cr_opt.h, so `COMMAND --help`
 * (generated from the same table) prints on stdout and exits 0. */

#include <stdio.h>

#include "base/cr_opt.h"
#include "lua/l_ps.h"
#include "ps/cr_launch.h"


int cr_cli_run(int argc, char **argv);       /* cli_run.c: run, with --repl */
int cr_cli_repl(int argc, char **argv);      /* cli_repl.c */
int cr_cli_node(int argc, char **argv);      /* cli_node.c */
int cr_cli_launch(int argc, char **argv);    /* cli_launch.c: ranks over ssh */
int cr_cli_data(int argc, char **argv);      /* cli_data.c */
int cr_cli_partition(int argc, char **argv); /* cli_partition.c */
int cr_cli_keygen(int argc, char **argv);    /* cli_node.c */
int cr_cli_ckpt(int argc, char **argv);      /* cli_ckpt.c: verify and describe checkpoints */
/* Dataset builders from Debian packages and npm (cli_corpus.c): wordnet,
 * wordnet-graph, gcide-text, gcide-docs, brown, gcide-brown, wordnet-synonyms.
 * Called by cr_cli_data with the same argv; returns 2 with a message if
 * argv[1] is not one of those names. */
int cr_cli_corpus(int argc, char **argv);

/* The run options (cli_run.c), shared by `crescent repl JOB.lua`. */
extern const cr_opt cr_cli_run_opts[];

/* Parse argv for command c into out (cli_opt.c). Returns -1 to go on (r
 * filled; the caller frees it with cr_opt_res_free), or the exit status to
 * return at once: 0 after printing the help on stdout, 2 after printing
 * "NAME: message" and the usage line on stderr (r freed). */
int cr_cli_parse(const cr_opt_cmd *c, int argc, char **argv, void *out, cr_opt_res *r);

/* Print c's generated help to f. */
void cr_cli_help(const cr_opt_cmd *c, FILE *f);

/* ---------- off one machine (cli_cluster.c) ---------- */

/* The network options of run and node. port <= 0: not given. */
typedef struct cr_cli_net {
    int64_t port;
    const char *key, *iface;
    int64_t restarts; /* a node rank joins the job's next run this many times at most */
} cr_cli_net;

/* Load the cluster key pair from path (or CRESCENT_KEY_FILE when path is
 * NULL) into the process's CRESCENT_CURVE_* variables, which the job and
 * the nodes it starts read. The file holds crescent keygen's two lines and
 * must not be readable by others. 0 (also when no file is named), or -1
 * after printing "cmd: why" (file:line for a bad line). */
int cr_cli_key_file(const char *cmd, const char *path);

/* This host's address (ip, CR_IP_MAX) and its interface (name,
 * CR_IFNAME_MAX) towards the scheduler at sched_ip, or those of interface
 * iface (or CRESCENT_INTERFACE) when named. 0, or -1 after printing. */
int cr_cli_local_addr(const char *cmd, const char *iface, const char *sched_ip, char *ip, char *name);

/* The part of this process when a cluster launcher started it (l filled
 * from the environment, see ps/cr_launch.h). Returns 0 to run the job
 * script here: either no launcher, or rank 0, with ov's world, local_nodes,
 * listen (in the caller's buffer listen) and launcher set; or 1 when this
 * process is done: it ran as a node, had nothing to do, or found an error
 * (printed), and *status is its exit status. */
int cr_cli_launched(const char *cmd, const cr_cli_net *n, cr_launch *l, cr_run_overrides *ov, char *listen,
                    size_t listenn, int *status);

/* Path of the running executable's directory (for lua/ and configs/). */
const char *cr_cli_home(void);

#endif
