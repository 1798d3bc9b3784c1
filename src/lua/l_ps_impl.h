#ifndef CR_L_PS_IMPL_H
#define CR_L_PS_IMPL_H
/* The pieces of crescent.core.ps, one concern per file; l_ps.c puts them
 * into one module table (the names lua/crescent uses). */

#include <lua.h>

/* l_job.c: ps.start{...} -> Job, and the Job metatable. */
int cr_ljob_start(lua_State *L);
void cr_ljob_register(lua_State *L);

/* l_progress.c: ps.progress(label, total) -> Progress, and its metatable. */
int cr_lprogress_new(lua_State *L);
void cr_lprogress_register(lua_State *L);

/* l_ckpt.c: ps.ckpt_writer(path), ps.ckpt_reader(path), and their metatables. */
int cr_lckpt_writer(lua_State *L);
int cr_lckpt_reader(lua_State *L);
void cr_lckpt_register(lua_State *L);

/* l_table.c: the Placement userdata at idx (core.table.placement); raises otherwise. */
struct cr_place;
struct cr_place *cr_lplace_check(lua_State *L, int idx);

#endif
