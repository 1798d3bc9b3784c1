#ifndef CR_LAUNCH_H
#define CR_LAUNCH_H
/* Who this process is in a job started by a cluster's launcher.
 *
 * crescent has no cluster manager of its own: the launchers clusters already
 * have (Slurm's srun, mpirun, dmlc-tracker, torchrun, or `crescent launch`
 * over ssh) start the same binary on every host and say, in environment
 * variables, which rank each process is, how many there are, and where rank
 * 0 can be reached. Rank 0 becomes the scheduler (and hosts one node); the
 * other ranks become nodes that join it. This module only reads those
 * variables: it opens no socket and changes nothing.
 *
 * Precedence, first match wins (a launcher started inside another one's
 * allocation sets its own variables on top of the outer one's):
 *   CRESCENT_RANK + CRESCENT_WORLD   crescent launch, or set by hand
 *   RANK + WORLD_SIZE + MASTER_ADDR  torchrun (MASTER_PORT, LOCAL_RANK)
 *   DMLC_ROLE                        dmlc-tracker (DMLC_PS_ROOT_URI/PORT, DMLC_NUM_SERVER,
 *                                    DMLC_INTERFACE, DMLC_NODE_HOST)
 *   OMPI_COMM_WORLD_RANK/SIZE        Open MPI's mpirun
 *   PMI_RANK + PMI_SIZE              MPICH / Hydra's mpiexec
 *   SLURM_PROCID + SLURM_STEP_ID     srun (SLURM_STEP_NUM_TASKS or SLURM_NTASKS,
 *                                    SLURM_STEP_NODELIST or SLURM_JOB_NODELIST)
 * A batch script's own shell under Slurm (no SLURM_STEP_ID) is not a rank.
 *
 * CRESCENT_MASTER (host of rank 0) and CRESCENT_PORT, when set, win over
 * what a launcher says, so a user can always correct a guess. */

#include <stddef.h>

#include "base/cr_err.h"

typedef enum cr_launch_kind {
    CR_LAUNCH_NONE = 0,
    CR_LAUNCH_CRESCENT,
    CR_LAUNCH_TORCHRUN,
    CR_LAUNCH_DMLC,
    CR_LAUNCH_OMPI,
    CR_LAUNCH_PMI,
    CR_LAUNCH_SLURM,
} cr_launch_kind;

typedef enum cr_launch_role {
    CR_ROLE_SCHEDULER = 0, /* rank 0: the scheduler, plus one node of its own (not under dmlc) */
    CR_ROLE_NODE,          /* joins the scheduler at master:port */
    CR_ROLE_IDLE,          /* a process the launcher started that crescent does not need (a dmlc worker) */
} cr_launch_role;

#define CR_LAUNCH_HOST_MAX 256

typedef struct cr_launch {
    cr_launch_kind kind;
    const char *name;    /* "slurm", "mpi (Open MPI)", ...; "none" */
    cr_launch_role role;
    int rank;            /* -1: the launcher gives none (dmlc nodes) */
    int world;           /* nodes of the job (not counting a dmlc scheduler) */
    int local_node;      /* 1: the scheduler rank also runs a node */
    char master[CR_LAUNCH_HOST_MAX]; /* host (name or address) of the scheduler; "" unknown */
    const char *master_from; /* the variable master came from, for messages */
    int port;            /* rendezvous port; 0: not given */
    const char *port_from;
    char iface[64];      /* interface the launcher names (DMLC_INTERFACE); "" none */
    char host[CR_LAUNCH_HOST_MAX]; /* this host's address as the launcher names it (DMLC_NODE_HOST); "" none */
} cr_launch;

/* Where variables come from: getenv in the binary, a table in tests. */
typedef const char *(*cr_getenv_fn)(const char *name, void *arg);

/* Fill l from the variables get returns. l->kind = CR_LAUNCH_NONE when no
 * launcher's variables are set (then nothing else is meaningful). -1 with a
 * message naming the variable when one is malformed (a rank that is not an
 * integer, a rank outside the world, a world above CR_LAUNCH_MAX_WORLD, a
 * host list Slurm would not write). A missing master or port is not an
 * error here (l->master = "", l->port = 0): the caller may have them from
 * the command line. */
int cr_launch_detect(cr_getenv_fn get, void *arg, cr_launch *l, cr_err *e);

#define CR_LAUNCH_MAX_WORLD 4096

/* Expand a Slurm host list ("node[01-04,07],gpu3", "rack[1-2]-n[1-2]") into
 * at most max host names, written to *hosts (owned by the caller: free each
 * and the array). Zero padding is kept as written ("n[08-10]" -> n08 n09
 * n10). Returns the count, or -1 with a message (unbalanced brackets, a
 * range that runs backwards, more than max hosts). */
int cr_hostlist_expand(const char *list, char ***hosts, int max, cr_err *e);

#endif
