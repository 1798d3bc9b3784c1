#ifndef CR_CMD_H
#define CR_CMD_H
/* What a node's workers are told and how they ask the consistency policy:
 * the command type and the two callbacks of the worker API (ps/cr_node.h),
 * kept apart so that the node's clocks (ps/cr_clocks.h) and the protocol
 * (ps/cr_proto.c checks the command numbers) use them without the node. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

/* A command for the workers (payloads owned by the node, valid until the
 * worker replies). type is CR_CMD_MODEL (p1 = source, p2 = chunk name, NUL,
 * serialized options) or CR_CMD_CALL (p1 = function name, p2 = serialized
 * arguments); the values are those of the protocol (ps/cr_proto.c checks). */
#define CR_CMD_MODEL 5
#define CR_CMD_CALL 6
typedef struct cr_cmd {
    int type;
    const char *p1, *p2;
    size_t n1, n2;
} cr_cmd;

/* Loads a policy shipped as Lua source (cr_node_policy_refresh): source,
 * its length, chunk name, serialized options and their length. */
typedef int (*cr_policy_load_fn)(void *arg, const char *src, size_t n, const char *chunk,
                                 const char *opts, size_t optsn);

/* Policy decision: 1 proceed, 0 wait, -1 error (message in e). */
typedef int (*cr_decide_fn)(void *arg, int64_t my_clock, int64_t min_clock, const int64_t *clocks,
                            int nworkers, cr_err *e);

#define CR_NODE_CANCELLED_MSG "cancelled: the command was stopped (another worker failed, or the wait was interrupted)"

#endif
