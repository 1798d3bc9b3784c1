#ifndef CR_L_REALLOC_H
#define CR_L_REALLOC_H
/* The dynamic-reallocation half of crescent.core.partition (l_realloc.c). */

#include <lua.h>

/* [-0, +0] Add lru and reallocate to the module table on top of the stack
 * and register the cache's metatable. */
void cr_lrealloc_register(lua_State *L);

#endif
