#ifndef CR_L_MODULES_H
#define CR_L_MODULES_H
/* Openers of the C halves of crescent's Lua modules. Each pushes one table
 * (the module) and returns 1. l_crescent.c puts them into crescent.core. */

#include <lua.h>

int cr_lopen_data(lua_State *L);      /* l_data.c      -> core.data */
int cr_lopen_eval(lua_State *L);      /* l_eval.c      -> core.eval */
int cr_lopen_partition(lua_State *L); /* l_partition.c -> core.partition */
int cr_lopen_ps(lua_State *L);        /* l_ps.c        -> core.ps (job, tables, policies) */
int cr_lopen_kernels(lua_State *L);   /* l_kernels.c   -> core.kernels */
/* Add the KGE (l_kge.c) and word2vec (l_w2v.c) kernels to the table on top. */
void cr_lkernels_add_kge(lua_State *L);
void cr_lkernels_add_w2v(lua_State *L);
void cr_lkernels_add_lda(lua_State *L); /* l_lda.c: LDA corpus and samplers */
void cr_lkernels_add_logreg(lua_State *L); /* l_logreg.c: logistic regression data and kernels */
int cr_lopen_util(lua_State *L);      /* l_util.c      -> core.util (matrices, rng, time) */
int cr_lopen_table(lua_State *L);     /* l_table.c     -> core.table (placement, init kinds) */
int cr_lopen_optim(lua_State *L);     /* l_optim.c     -> core.optim (the update rules) */

int luaopen_crescent_core(lua_State *L);

#endif
