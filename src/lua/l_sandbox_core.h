#ifndef CR_L_SANDBOX_CORE_H
#define CR_L_SANDBOX_CORE_H
/* What a model script may call from crescent: the C functions that work on
 * data the job gave it, and nothing that writes a file. In a sandboxed state
 * (l_sandbox.h) the global `cr` is {core = {util, kernels, data, eval}} with
 *
 *   util     matrix ints now
 *   kernels  mf_sgd mf_eval, and the readers mm_header mf_load
 *   data     the readers mm_open libsvm edges triples text dict
 *            (Dict:write removed; matrix_market is not there: it writes a
 *            cache file next to its input)
 *   eval     link_prediction rmse logloss accuracy auc lda_loglik
 *            lda_perplexity, and the readers analogy synonyms
 *
 * A reader accepts only a path the job declared readable: its real path
 * (absolute, symlinks resolved) must be one added by cr_sandbox_allow_read,
 * else it raises "FN: reading 'PATH' is not allowed in a model script (...)".
 * triples' options entities/relations, when paths, are checked the same way.
 * Nothing in crescent.core.partition or crescent.core.ps is there. */

#include <lua.h>

/* [-0, +1] Push the `cr` table above (opens crescent.core in L; what is not
 * copied is garbage). Starts with no readable path. */
void cr_sandbox_push_worker_core(lua_State *L);

/* Forget every readable path (a new model starts from none). */
void cr_sandbox_clear_reads(lua_State *L);

/* Make `path` readable if it names a regular file (its real path is
 * stored). Returns 1 if added, 0 if it is not a regular file. */
int cr_sandbox_allow_read(lua_State *L, const char *path);

/* Make readable every string found in the plain-data value at idx (tables
 * walked to depth 8) that names a regular file: a model's options declare
 * its data files (mf: train = "...", test = "..."). */
void cr_sandbox_allow_from(lua_State *L, int idx);

/* Hide the metatables of crescent's userdata in L (crescent.Matrix, ...)
 * from getmetatable: a script cannot call __gc by hand or change methods
 * for other code of the state. The bindings check types with the raw
 * metatable and are not affected. */
void cr_sandbox_protect_metatables(lua_State *L);

#endif
