#include "ps/cr_dists.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

void cr_dists_init(cr_dists *s, int wpn) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->ws = cr_xcalloc((size_t)wpn + 1, sizeof *s->ws);
    s->nw = wpn;
}

void cr_dists_free(cr_dists *s) {
    for (int i = 0; i < cr_dists_count(s); i++) {
        cr_alias_free(&s->d[i]->pi);
        cr_alias_free(&s->d[i]->local);
        free(s->d[i]);
    }
    free(s->scheme);
    free(s->pend_w);
    free(s->ws);
    pthread_mutex_destroy(&s->mu);
    memset(s, 0, sizeof *s);
}

cr_dist *cr_dists_find(const cr_dists *s, const char *name, size_t len) {
    for (int i = 0; i < cr_dists_count(s); i++)
        if (strlen(s->d[i]->name) == len && !memcmp(s->d[i]->name, name, len)) return s->d[i];
    return NULL;
}

void cr_dists_add(cr_dists *s, cr_dist *x) {
    s->d[cr_dists_count(s)] = x;
    atomic_fetch_add(&s->n, 1);
}

void cr_dists_set_scheme(cr_dists *s, cr_sampling_entry *v, int count, const char *label, size_t labeln) {
    pthread_mutex_lock(&s->mu);
    free(s->scheme);
    s->scheme = v;
    s->nscheme = count;
    snprintf(s->label, sizeof s->label, "%.*s", (int)labeln, label);
    s->gen++;
    pthread_mutex_unlock(&s->mu);
}

uint64_t cr_dists_gen(cr_dists *s) {
    pthread_mutex_lock(&s->mu);
    uint64_t g = s->gen;
    pthread_mutex_unlock(&s->mu);
    return g;
}

int cr_dists_entry(cr_dists *s, const char *dname, const char *tname, cr_sampling_entry *out, uint64_t *gen) {
    pthread_mutex_lock(&s->mu);
    *gen = s->gen;
    const cr_sampling_entry *x = NULL;
    for (int i = 1; i < s->nscheme && !x; i++)
        if (!strcmp(s->scheme[i].name, dname)) x = &s->scheme[i];
    for (int i = 1; i < s->nscheme && !x; i++)
        if (!strcmp(s->scheme[i].name, tname)) x = &s->scheme[i];
    if (!x && s->nscheme > 0) x = &s->scheme[0];
    if (x) *out = *x;
    pthread_mutex_unlock(&s->mu);
    return x != NULL;
}

void cr_dists_set_stats(cr_dists *s, int lw, const cr_sampling_stats *st) {
    pthread_mutex_lock(&s->mu);
    s->ws[lw] = *st;
    pthread_mutex_unlock(&s->mu);
}

void cr_dists_stats(cr_dists *s, int lw, cr_sampling_stats *out) {
    pthread_mutex_lock(&s->mu);
    *out = s->ws[lw];
    pthread_mutex_unlock(&s->mu);
}
