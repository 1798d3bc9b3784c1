#ifndef CR_L_WORKER_H
#define CR_L_WORKER_H
/* Worker threads' Lua side: each worker gets its own sandboxed lua_State
 * (l_sandbox.h: an allow-list of the standard library, a memory cap, a count
 * hook that stops the script when the command is cancelled or the node
 * stops), with the allow-listed crescent functions as global `cr`
 * (l_sandbox_core.h: no writers; readers only for the files the job named)
 * and `ctx`. It runs the shipped model script and answers the scheduler's
 * commands. Consistency policies are loaded into the same state, each in an
 * environment of its own (no `cr`, no `ctx`). Worker tables also sample:
 * T:prepare_sample(dist, n), T:pull_sample(h [, m]) -> keys, rows,
 * T:pull_sample_async(h [, m]) -> id, T:wait(id) -> keys, rows (over
 * ps/cr_wsample.h; docs/sampling.md). And relocate: T:localize(keys) -> id
 * (T:wait(id) -> true), T:localize(keys, true) waits (ps/cr_wclient.h;
 * docs/management.md).
 *
 * Two model options are the sandbox's, taken out before M.init sees them:
 *   memory_mb = N        the state's cap in MB (default CR_SANDBOX_DEFAULT_MB);
 *                        going over it is the error "SCRIPT:LINE: model
 *                        script exceeded N MB (option memory_mb)"
 *   allow_read = {paths} files the model may read besides those named by
 *                        the other options (every string option that names
 *                        a regular file, e.g. mf's train and test)
 * Plug into a node with cr_lworker_hooks. */

#include "ps/cr_node.h"

extern const cr_node_hooks cr_lworker_hooks;

#endif
