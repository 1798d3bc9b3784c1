#ifndef CR_L_PS_H
#define CR_L_PS_H
/* `crescent run`: run a job script in a scheduler Lua state. Lives here so
 * that src/cli stays free of lua.h. */

/* Command-line overrides of cr.job{} values; NULL / -1 = not given. */
typedef struct cr_run_overrides {
    long nodes, workers, seed;
    const char *policy, *metrics, *sampling;
    /* Where nodes come from: under a cluster launcher, world nodes of which
     * local_nodes start here and the rest join listen (launcher names the
     * launcher for messages); external = 1: all nodes are started by hand
     * and join listen (or the default endpoint). world = 0: not given. */
    long world;
    int local_nodes, external;
    const char *listen, *launcher;
    /* --checkpoint PATH every checkpoint_every epochs; restarts > 0: a
     * node's death does not end the process (cr_lps_run returns
     * CR_RUN_NODE_DIED and the caller may run the script again). */
    const char *checkpoint;
    long checkpoint_every;
    int restarts;
    long rejoin; /* > 0: a restart under a launcher; wait this many seconds for the ranks to rejoin */
    long checkpoint_seconds; /* > 0: save at the first epoch end this long after the last save (instead of
                              * every checkpoint_every epochs) */
} cr_run_overrides;

/* cr_lps_run's status when the script failed because a node of its job died. */
#define CR_RUN_NODE_DIED 3

/* Run script `path` with overrides; afterwards, if repl, start the REPL on
 * the same state with the job still open; then close every job. argv/argc
 * are the script's arguments (global `arg`, and `...`). Returns the process
 * exit status (0 ok, 1 script or job failure), or CR_RUN_NODE_DIED. */
int cr_lps_run(const char *home, const char *path, const cr_run_overrides *ov, int repl, int argc, char **argv);

#endif
