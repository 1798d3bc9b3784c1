#ifndef CR_L_WORKER_H
#define CR_L_WORKER_H
/* Worker threads' Lua side: each worker gets its own sandboxed lua_State
 * (no os.execute/io/debug/loadfile/dofile/require; the crescent C modules as
 * global `cr`; reading an undefined global raises), runs the shipped model
 * script and answers the scheduler's commands. Plug into a node with
 * cr_lworker_hooks. */

#include "ps/cr_node.h"

extern const cr_node_hooks cr_lworker_hooks;

#endif
