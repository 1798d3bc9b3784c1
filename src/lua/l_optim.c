/* crescent.core.optim: the update rules of src/optim as the Lua side reads
 * them; lua/crescent/optimizers.lua builds cr.optim from this, so names,
 * parameters and defaults are written once, in optim/cr_optim.c.
 *
 * optim.rules -> {rule, ...} in the table's order, a rule being
 *   {name = "ftrl", about = "...", i32 = bool (takes i32 tables),
 *    overwrites = bool (pushes do not add up: no replication, no sigmod),
 *    rate = "alpha" (the parameter W:set_lr changes; nil: none),
 *    params = {{name = "alpha", default = 0.1, help = "...",
 *               lo = 0, hi = math.huge, above = true (lo excluded)
 *               (lo, hi, above only for a ranged parameter)}, ...}}
 *
 * Defaults are the rows' texts read as Lua numbers (0.01, not its float). */
#include "lua/l_optim.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lua/l_modules.h"
#include "lua/l_opt.h"

/* [-0, +1] x as a Lua integer when it is one (a default of 1 reads as 1, as
 * the number a script would write). */
static void push_num(lua_State *L, double x) {
    if (x == floor(x) && fabs(x) < 9007199254740992.0) lua_pushinteger(L, (lua_Integer)x);
    else lua_pushnumber(L, x);
}

/* [-0, +1] One parameter row as a Lua table. */
static void push_param(lua_State *L, const cr_opt *p) {
    lua_createtable(L, 0, 6);
    lua_pushstring(L, p->name);
    lua_setfield(L, -2, "name");
    push_num(L, strtod(p->dflt, NULL));
    lua_setfield(L, -2, "default");
    lua_pushstring(L, p->help);
    lua_setfield(L, -2, "help");
    if (p->flags & CR_OPT_RANGE) {
        push_num(L, p->lo);
        lua_setfield(L, -2, "lo");
        lua_pushnumber(L, p->hi);
        lua_setfield(L, -2, "hi");
        lua_pushboolean(L, (p->flags & CR_OPT_ABOVE) != 0);
        lua_setfield(L, -2, "above");
    }
}

/* [-0, +1] One rule as a Lua table. */
static void push_rule(lua_State *L, const cr_optim_rule *r) {
    lua_createtable(L, 0, 6);
    lua_pushstring(L, r->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, r->about);
    lua_setfield(L, -2, "about");
    lua_pushboolean(L, r->apply_i32 != NULL);
    lua_setfield(L, -2, "i32");
    lua_pushboolean(L, (r->flags & CR_OPTIM_OVERWRITES) != 0);
    lua_setfield(L, -2, "overwrites");
    lua_newtable(L);
    int i = 0;
    for (const cr_opt *p = r->params; p->name; p++) {
        push_param(L, p);
        lua_rawseti(L, -2, ++i);
        if (p->off == offsetof(cr_optim, lr)) {
            lua_pushstring(L, p->name);
            lua_setfield(L, -3, "rate");
        }
    }
    lua_setfield(L, -2, "params");
}

void cr_loptim_read(lua_State *L, int idx, const char *table, cr_optim *o) {
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_getfield(L, idx, "name");
    const char *name = lua_tostring(L, -1);
    const cr_optim_rule *r = name ? cr_optim_find(name) : NULL;
    if (!r) {
        char list[256];
        luaL_error(L, "table '%s': unknown optimizer '%s' (expected %s)", table, name ? name : "?",
                   cr_optim_list(list, sizeof list, 0));
    }
    lua_pop(L, 1);
    /* the rule's rows and "name", which the reader then knows (custom: not set) */
    cr_opt rows[CR_OPT_MAX + 1] = {{.name = "name", .type = CR_OPT_CUSTOM}};
    int n = 1;
    for (const cr_opt *p = r->params; p->name && n < CR_OPT_MAX; p++) rows[n++] = *p;
    rows[n] = (cr_opt){0};
    memset(o, 0, sizeof *o);
    o->kind = (cr_optim_kind)(r - cr_optim_rules);
    const char *fn = lua_pushfstring(L, "table '%s': optimizer %s", table, r->name);
    cr_lopt_set set = {fn, NULL, rows};
    cr_lopt_read(L, idx, &set, o);
    lua_pop(L, 1);
}

int cr_lopen_optim(lua_State *L) {
    lua_newtable(L);
    lua_createtable(L, CR_OPTIM_NKINDS, 0);
    for (int i = 0; i < CR_OPTIM_NKINDS; i++) {
        push_rule(L, &cr_optim_rules[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "rules");
    return 1;
}
