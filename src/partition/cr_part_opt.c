/* The partitioners' option rows: conversion to and from cr_part_opts, and
 * the library's defaults. */
#include "partition/cr_part_opt.h"

const char *const cr_part_select_names[] = {"examples", "neighbours", "neighbors", NULL};

void cr_part_opts_default(cr_part_opts *o) {
    *o = (cr_part_opts){.seed = 1, .blocks = 1, .init_blocks = 0, .global_sample = 0.0,
                        .select_neighbours = 0, .v_sweeps = 0, .alpha = 1, .beta = -1.0,
                        .sample = 0, .pair_cap = 64, .epsilon = 0.03, .mem_bound = 0, .hash_bins = 0};
}

void cr_part_optv_init(cr_part_optv *v) {
    cr_part_opts o;
    cr_part_opts_default(&o);
    *v = (cr_part_optv){.seed = (int64_t)o.seed, .blocks = o.blocks, .init_blocks = o.init_blocks,
                        .v_sweeps = o.v_sweeps, .alpha = o.alpha, .pair_cap = o.pair_cap,
                        .mem_bound = (int64_t)o.mem_bound, .hash_bins = o.hash_bins,
                        .global_sample = o.global_sample, .beta = o.beta, .epsilon = o.epsilon,
                        .select = o.select_neighbours ? 1 : 0, .select_neighbours = o.select_neighbours,
                        .sample = o.sample};
}

void cr_part_optv_get(const cr_part_optv *v, cr_part_opts *o) {
    cr_part_opts_default(o);
    o->seed = (uint64_t)v->seed;
    o->blocks = (uint32_t)v->blocks;
    o->init_blocks = (uint32_t)v->init_blocks;
    o->global_sample = v->global_sample;
    o->select_neighbours = v->select > 0 || v->select_neighbours;
    o->v_sweeps = (int)v->v_sweeps;
    o->alpha = (uint32_t)v->alpha;
    o->beta = v->beta;
    o->sample = v->sample;
    o->pair_cap = (uint32_t)v->pair_cap;
    o->epsilon = v->epsilon;
    o->mem_bound = (uint64_t)v->mem_bound;
    o->hash_bins = (uint32_t)v->hash_bins;
}
