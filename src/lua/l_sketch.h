#ifndef CR_L_SKETCH_H
#define CR_L_SKETCH_H
/* core.sketch (l_sketch.c): access-count sketches (src/ps/cr_sketch.h) on
 * the scheduler: read the nodes' answers, merge, window, heavy hitters. */
#include <lua.h>

int cr_lopen_sketch(lua_State *L);

#endif
