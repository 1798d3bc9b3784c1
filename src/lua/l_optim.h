#ifndef CR_L_OPTIM_H
#define CR_L_OPTIM_H
/* A table's update rule from Lua (l_optim.c; the rules: optim/cr_optim.h). */

#include <lua.h>

#include "optim/cr_optim.h"

/* [-0, +0] Read the optimizer description at idx ({name = "ftrl", alpha =
 * 0.1, ...}: what cr.optim.NAME{} makes) into o: the rule's kind, then its
 * parameters with the option reader (src/lua/l_opt.h) against the rule's
 * rows, their defaults first; the other fields of o are zeroed. Raises
 * "table 'T': unknown optimizer 'x' (expected ...)" or the reader's message
 * prefixed "table 'T': optimizer NAME: " (T: table). */
void cr_loptim_read(lua_State *L, int idx, const char *table, cr_optim *o);

#endif
