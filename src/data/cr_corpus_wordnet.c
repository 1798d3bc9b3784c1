#include "data/cr_corpus_wordnet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/cr_alloc.h"
#include "base/cr_csr.h"
#include "base/cr_rng.h"
#include "data/cr_out.h"

/* Relation names follow WN18 (and NLTK) where WN18 has the relation. rr_drop
 * marks the member of each inverse pair that WN18RR removed; for pairs WN18
 * did not contain, the holonym/"of" direction is dropped the same way.
 * Symmetric relations (antonym, derivationally related form, similar to,
 * verb group, also see, attribute) are their own inverse and are kept. */
const cr_wn_relation cr_wn_relations[] = {
    {"@", "_hypernym", 0},
    {"~", "_hyponym", 1},
    {"@i", "_instance_hypernym", 0},
    {"~i", "_instance_hyponym", 1},
    {"%m", "_member_meronym", 0},
    {"#m", "_member_holonym", 1},
    {"%p", "_has_part", 0},
    {"#p", "_part_of", 1},
    {"%s", "_substance_meronym", 0},
    {"#s", "_substance_holonym", 1},
    {";c", "_synset_domain_topic_of", 0},
    {"-c", "_member_of_domain_topic", 1},
    {";r", "_synset_domain_region_of", 1},
    {"-r", "_member_of_domain_region", 0},
    {";u", "_synset_domain_usage_of", 1},
    {"-u", "_member_of_domain_usage", 0},
    {"+", "_derivationally_related_form", 0},
    {"!", "_antonym", 0},
    {"&", "_similar_to", 0},
    {"$", "_verb_group", 0},
    {"^", "_also_see", 0},
    {"=", "_attribute", 0},
    {"*", "_entailment", 0},
    {">", "_cause", 0},
    {"<", "_participle", 0},
    {"\\", "_pertainym", 0},
};
const uint32_t cr_wn_nrelations = sizeof cr_wn_relations / sizeof cr_wn_relations[0];

static const char *const files[4] = {"noun", "verb", "adj", "adv"};
static const char file_pos[4] = {'n', 'v', 'a', 'r'};

static int pos_index(char pos) { return pos == 'n' ? 0 : pos == 'v' ? 1 : pos == 'a' ? 2 : 3; }

/* A pointer before its target is resolved; where it came from, for errors. */
typedef struct raw_ptr {
    uint32_t s, r, toff;
    char tpos;
    uint8_t file;
    uint32_t line;
} raw_ptr;

typedef struct loader {
    cr_wn *wn;
    cr_cdict *keys; /* "n00001740" -> synset index */
    uint32_t syncap;
    raw_ptr *ptr;
    uint64_t nptr, ptrcap;
    uint32_t *lem;
    uint8_t *proper;
    uint64_t nlem, lemcap;
    char paths[4][4096];
} loader;

static int rel_of(const char *sym) {
    for (uint32_t i = 0; i < cr_wn_nrelations; i++)
        if (!strcmp(cr_wn_relations[i].symbol, sym)) return (int)i;
    return -1;
}

static void key_of(char *buf, char pos, uint32_t offset) { snprintf(buf, 16, "%c%08u", pos, offset); }

/* Next space-separated field of *p (advances *p); NULL at end or at "|". */
static char *field(char **p) {
    char *s = *p;
    while (*s == ' ') s++;
    if (!*s || *s == '|' || *s == '\n') return NULL;
    char *t = s;
    while (*t && *t != ' ' && *t != '\n') t++;
    if (*t) *t++ = '\0';
    *p = t;
    return s;
}

static int num(const char *f, int base, int digits, unsigned long *v) {
    if (!f || (digits && (int)strlen(f) != digits)) return -1;
    char *end;
    errno = 0;
    *v = strtoul(f, &end, base);
    return (*end || errno || f[0] == '-' || f[0] == '+') ? -1 : 0;
}

static void add_lemma(loader *L, const char *w) {
    char buf[256];
    size_t n = 0;
    int cap = 0;
    for (; w[n] && n < sizeof buf - 1; n++) {
        char c = w[n];
        cap |= c >= 'A' && c <= 'Z';
        buf[n] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    /* adjective position markers: "(a)", "(p)", "(ip)" */
    char *paren = memchr(buf, '(', n);
    if (paren && paren > buf) n = (size_t)(paren - buf);
    uint32_t id = cr_cdict_intern(L->wn->lemmas, buf, n);
    cr_wn_synset *sy = &L->wn->syn[L->wn->nsyn];
    for (uint32_t i = 0; i < sy->nlem; i++)
        if (L->lem[sy->lem0 + i] == id) return;
    if (L->nlem == L->lemcap) {
        L->lemcap = L->lemcap ? 2 * L->lemcap : 4096;
        L->lem = cr_xrealloc(L->lem, L->lemcap * sizeof *L->lem);
        L->proper = cr_xrealloc(L->proper, L->lemcap);
    }
    L->proper[L->nlem] = (uint8_t)cap;
    L->lem[L->nlem++] = id;
    sy->nlem++;
}

/* Parses one data line into a new synset plus raw pointers. */
static int parse_data_line(loader *L, char *line, int fi, uint32_t lineno, cr_err *e) {
    const char *path = L->paths[fi];
    char *p = line, *f;
    unsigned long off, lexfile, wcnt, lexid, pcnt, toff, st;
    if (num(field(&p), 10, 8, &off)) return cr_errf_at(e, path, lineno, "bad synset offset (8 digits expected)");
    if (num(field(&p), 10, 2, &lexfile)) return cr_errf_at(e, path, lineno, "bad lex_filenum (2 digits expected)");
    f = field(&p);
    if (!f || strlen(f) != 1 || !strchr("nvasr", f[0]))
        return cr_errf_at(e, path, lineno, "bad ss_type '%s' (n, v, a, s or r expected)", f ? f : "");
    char sstype = f[0];
    if ((fi == 2) != (sstype == 'a' || sstype == 's') || (fi != 2 && sstype != file_pos[fi]))
        return cr_errf_at(e, path, lineno, "ss_type '%c' does not belong in data.%s", sstype, files[fi]);
    if (num(field(&p), 16, 2, &wcnt) || wcnt == 0)
        return cr_errf_at(e, path, lineno, "bad w_cnt (2 hex digits, > 0, expected)");
    cr_cdict *keys = L->keys;
    char key[16];
    key_of(key, file_pos[fi], (uint32_t)off);
    if (cr_cdict_find(keys, key, strlen(key)) != UINT32_MAX)
        return cr_errf_at(e, path, lineno, "duplicate synset offset %08lu", off);
    if (L->wn->nsyn == L->syncap) {
        L->syncap = L->syncap ? 2 * L->syncap : 4096;
        L->wn->syn = cr_xrealloc(L->wn->syn, L->syncap * sizeof *L->wn->syn);
    }
    uint32_t si = L->wn->nsyn;
    cr_wn_synset *sy = &L->wn->syn[si];
    *sy = (cr_wn_synset){.offset = (uint32_t)off, .pos = file_pos[fi], .ss_type = sstype,
                         .name = UINT32_MAX, .lem0 = (uint32_t)L->nlem, .nlem = 0};
    for (unsigned long i = 0; i < wcnt; i++) {
        char *w = field(&p);
        if (!w) return cr_errf_at(e, path, lineno, "expected %lu words, found %lu", wcnt, i);
        if (num(field(&p), 16, 1, &lexid)) return cr_errf_at(e, path, lineno, "bad lex_id after word '%s'", w);
        add_lemma(L, w);
    }
    if (num(field(&p), 10, 3, &pcnt)) return cr_errf_at(e, path, lineno, "bad p_cnt (3 digits expected)");
    for (unsigned long i = 0; i < pcnt; i++) {
        char *sym = field(&p);
        if (!sym) return cr_errf_at(e, path, lineno, "expected %lu pointers, found %lu", pcnt, i);
        int r = rel_of(sym);
        if (r < 0) return cr_errf_at(e, path, lineno, "unknown pointer symbol '%s'", sym);
        if (num(field(&p), 10, 8, &toff)) return cr_errf_at(e, path, lineno, "bad pointer target offset");
        f = field(&p);
        if (!f || strlen(f) != 1 || !strchr("nvasr", f[0]))
            return cr_errf_at(e, path, lineno, "bad pointer part of speech");
        char tpos = f[0] == 's' ? 'a' : f[0];
        if (num(field(&p), 16, 4, &st)) return cr_errf_at(e, path, lineno, "bad pointer source/target (4 hex digits)");
        if (L->nptr == L->ptrcap) {
            L->ptrcap = L->ptrcap ? 2 * L->ptrcap : 16384;
            L->ptr = cr_xrealloc(L->ptr, L->ptrcap * sizeof *L->ptr);
        }
        L->ptr[L->nptr++] = (raw_ptr){si, (uint32_t)r, (uint32_t)toff, tpos, (uint8_t)fi, lineno};
    }
    /* verb frames and the gloss follow; a gloss separator must be present */
    if (!strchr(p, '|')) return cr_errf_at(e, path, lineno, "missing '|' before the gloss");
    cr_cdict_intern(keys, key, strlen(key));
    L->wn->nsyn++;
    return 0;
}

static int load_data(loader *L, int fi, cr_err *e) {
    FILE *f = fopen(L->paths[fi], "r");
    if (!f) return cr_errf(e, "%s: cannot open: %s", L->paths[fi], strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    uint32_t lineno = 0;
    int rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[0] == ' ' || line[0] == '\n') continue; /* license header */
        if ((rc = parse_data_line(L, line, fi, lineno, e)) != 0) break;
    }
    if (!rc && ferror(f)) rc = cr_errf(e, "%s: read error: %s", L->paths[fi], strerror(errno));
    free(line);
    fclose(f);
    return rc;
}

/* Sense numbers from index.POS: the k-th offset of lemma L is L.POS.k if
 * that synset's first lemma is L. Missing index files are not an error. */
static int load_index(loader *L, const char *dir, int fi, cr_err *e) {
    char path[4096];
    snprintf(path, sizeof path, "%s/index.%s", dir, files[fi]);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    cr_wn *wn = L->wn;
    char *line = NULL;
    size_t cap = 0;
    uint32_t lineno = 0;
    int rc = 0;
    while (!rc && getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[0] == ' ' || line[0] == '\n') continue;
        char *p = line, *lemma = field(&p), *pos = field(&p);
        unsigned long nsyn, np, v;
        if (!lemma || !pos || num(field(&p), 10, 0, &nsyn) || num(field(&p), 10, 0, &np)) {
            rc = cr_errf_at(e, path, lineno, "malformed index line");
            break;
        }
        for (unsigned long i = 0; i < np; i++) field(&p);
        if (num(field(&p), 10, 0, &v) || num(field(&p), 10, 0, &v)) {
            rc = cr_errf_at(e, path, lineno, "malformed index line (sense counts)");
            break;
        }
        uint32_t lid = cr_cdict_find(wn->lemmas, lemma, strlen(lemma));
        for (unsigned long k = 1; k <= nsyn; k++) {
            unsigned long off;
            if (num(field(&p), 10, 8, &off)) {
                rc = cr_errf_at(e, path, lineno, "expected %lu synset offsets", nsyn);
                break;
            }
            char key[16];
            key_of(key, file_pos[fi], (uint32_t)off);
            uint32_t si = cr_cdict_find(L->keys, key, strlen(key));
            if (si == UINT32_MAX) {
                rc = cr_errf_at(e, path, lineno, "synset %08lu is not in data.%s", off, files[fi]);
                break;
            }
            cr_wn_synset *sy = &wn->syn[si];
            if (lid == UINT32_MAX || sy->name != UINT32_MAX || wn->lemmas_of[sy->lem0] != lid) continue;
            char name[320];
            int n = snprintf(name, sizeof name, "%s.%c.%02lu", lemma, sy->ss_type, k);
            if (n < 0 || (size_t)n >= sizeof name) continue;
            if (cr_cdict_find(wn->names, name, (size_t)n) != UINT32_MAX) continue;
            sy->name = cr_cdict_intern(wn->names, name, (size_t)n);
        }
    }
    free(line);
    fclose(f);
    return rc;
}

static int cmp_edge(const void *a, const void *b) {
    const cr_wn_edge *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->r != y->r) return x->r < y->r ? -1 : 1;
    if (x->o != y->o) return x->o < y->o ? -1 : 1;
    return 0;
}

static int resolve(loader *L, cr_err *e) {
    cr_wn *wn = L->wn;
    wn->edges = cr_xmalloc((L->nptr ? L->nptr : 1) * sizeof *wn->edges);
    uint64_t n = 0;
    for (uint64_t i = 0; i < L->nptr; i++) {
        raw_ptr *rp = &L->ptr[i];
        char key[16];
        key_of(key, rp->tpos, rp->toff);
        uint32_t o = cr_cdict_find(L->keys, key, strlen(key));
        if (o == UINT32_MAX)
            return cr_errf_at(e, L->paths[rp->file], rp->line, "pointer to missing synset %08u %c", rp->toff,
                              rp->tpos);
        if (o != rp->s) wn->edges[n++] = (cr_wn_edge){rp->s, rp->r, o};
    }
    qsort(wn->edges, n, sizeof *wn->edges, cmp_edge);
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++)
        if (m == 0 || cmp_edge(&wn->edges[m - 1], &wn->edges[i])) wn->edges[m++] = wn->edges[i];
    wn->nedges = m;
    return 0;
}

/* Synsets the index did not name: lemma.POS.OFFSET (always unique). */
static void fallback_names(cr_wn *wn) {
    for (uint32_t i = 0; i < wn->nsyn; i++) {
        cr_wn_synset *sy = &wn->syn[i];
        if (sy->name != UINT32_MAX) continue;
        char name[320];
        int n = snprintf(name, sizeof name, "%.280s.%c.%08u", cr_cdict_str(wn->lemmas, wn->lemmas_of[sy->lem0]),
                         sy->ss_type, sy->offset);
        sy->name = cr_cdict_intern(wn->names, name, (size_t)n);
    }
}

int cr_wn_load(cr_wn **out, const char *dir, cr_err *e) {
    *out = NULL;
    loader L = {0};
    L.wn = cr_xcalloc(1, sizeof *L.wn);
    L.wn->lemmas = cr_cdict_new();
    L.wn->names = cr_cdict_new();
    L.keys = cr_cdict_new();
    int rc = 0;
    for (int fi = 0; fi < 4 && !rc; fi++) {
        snprintf(L.paths[fi], sizeof L.paths[fi], "%s/data.%s", dir, files[fi]);
        rc = load_data(&L, fi, e);
    }
    if (!rc) rc = resolve(&L, e);
    L.wn->lemmas_of = L.lem;
    L.wn->proper = L.proper;
    L.lem = NULL;
    L.proper = NULL;
    for (int fi = 0; fi < 4 && !rc; fi++) rc = load_index(&L, dir, fi, e);
    if (!rc) fallback_names(L.wn);
    free(L.ptr);
    cr_cdict_destroy(&L.keys);
    if (rc) {
        cr_wn_destroy(&L.wn);
        return rc;
    }
    *out = L.wn;
    return 0;
}

void cr_wn_destroy(cr_wn **wn_p) {
    if (!wn_p || !*wn_p) return;
    cr_wn *wn = *wn_p;
    free(wn->syn);
    free(wn->edges);
    free(wn->lemmas_of);
    free(wn->proper);
    cr_cdict_destroy(&wn->lemmas);
    cr_cdict_destroy(&wn->names);
    free(wn);
    *wn_p = NULL;
}

/* ---- knowledge graph ---- */

static const char *syn_name(const cr_wn *wn, uint32_t si) { return cr_cdict_str(wn->names, wn->syn[si].name); }

/* Dense ids for the synsets (entities) and relations that occur in edges. */
typedef struct idmap {
    uint32_t *ent; /* synset -> entity id or UINT32_MAX */
    uint32_t *ent_syn; /* entity id -> synset */
    uint32_t nent;
    uint32_t rel[64], rel_of[64], nrel; /* relation index -> id, id -> index */
} idmap;

static void build_ids(const cr_wn *wn, const cr_wn_edge *ed, uint64_t n, idmap *m) {
    m->ent = cr_xmalloc((wn->nsyn ? wn->nsyn : 1) * sizeof *m->ent);
    m->ent_syn = cr_xmalloc((wn->nsyn ? wn->nsyn : 1) * sizeof *m->ent_syn);
    char *seen = cr_xcalloc(wn->nsyn + 1, 1);
    char rseen[64] = {0};
    for (uint64_t i = 0; i < n; i++) {
        seen[ed[i].s] = seen[ed[i].o] = 1;
        rseen[ed[i].r] = 1;
    }
    m->nent = 0;
    for (uint32_t s = 0; s < wn->nsyn; s++) {
        m->ent[s] = seen[s] ? m->nent : UINT32_MAX;
        if (seen[s]) m->ent_syn[m->nent++] = s;
    }
    m->nrel = 0;
    for (uint32_t r = 0; r < cr_wn_nrelations; r++) {
        m->rel[r] = rseen[r] ? m->nrel : UINT32_MAX;
        if (rseen[r]) m->rel_of[m->nrel++] = r;
    }
    free(seen);
}

static void free_ids(idmap *m) {
    free(m->ent);
    free(m->ent_syn);
}

static int write_triples(const cr_wn *wn, const idmap *m, const cr_wn_edge *ed, uint64_t n, const char *dir,
                         const char *split, cr_err *e) {
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s/%s.tsv", dir, split);
    snprintf(p2, sizeof p2, "%s/%s.del", dir, split);
    cr_out a, b;
    if (cr_out_open(&a, p1, e)) return -1;
    if (cr_out_open(&b, p2, e)) {
        cr_out_abort(&a);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        fprintf(a.f, "%s\t%s\t%s\n", syn_name(wn, ed[i].s), cr_wn_relations[ed[i].r].name, syn_name(wn, ed[i].o));
        fprintf(b.f, "%u\t%u\t%u\n", m->ent[ed[i].s], m->rel[ed[i].r], m->ent[ed[i].o]);
    }
    int rc = cr_out_commit(&a, e);
    if (rc) cr_out_abort(&b);
    else rc = cr_out_commit(&b, e);
    return rc;
}

static int write_ids(const cr_wn *wn, const idmap *m, const char *dir, cr_err *e) {
    char path[4096];
    cr_out o;
    snprintf(path, sizeof path, "%s/entities.tsv", dir);
    if (cr_out_open(&o, path, e)) return -1;
    for (uint32_t i = 0; i < m->nent; i++) fprintf(o.f, "%u\t%s\n", i, syn_name(wn, m->ent_syn[i]));
    if (cr_out_commit(&o, e)) return -1;
    snprintf(path, sizeof path, "%s/relations.tsv", dir);
    if (cr_out_open(&o, path, e)) return -1;
    for (uint32_t i = 0; i < m->nrel; i++) fprintf(o.f, "%u\t%s\n", i, cr_wn_relations[m->rel_of[i]].name);
    return cr_out_commit(&o, e);
}

/* A triple may be held out if train keeps every entity and the relation
 * after removing it: counts over what is still in train must stay >= 1. */
static int can_hold_out(const cr_wn_edge *t, const uint32_t *ecnt, const uint64_t *rcnt) {
    if (rcnt[t->r] < 2) return 0;
    if (t->s == t->o) return ecnt[t->s] >= 3;
    return ecnt[t->s] >= 2 && ecnt[t->o] >= 2;
}

int cr_wn_write_kg(const cr_wn *wn, const cr_wn_kg_opts *o, const char *outdir, cr_wn_kg_stats *st, cr_err *e) {
    if (cr_corpus_mkdir(outdir, e)) return -1;
    uint64_t n = 0;
    cr_wn_edge *all = cr_xmalloc((wn->nedges ? wn->nedges : 1) * sizeof *all);
    for (uint64_t i = 0; i < wn->nedges; i++)
        if (!(o->rr && cr_wn_relations[wn->edges[i].r].rr_drop)) all[n++] = wn->edges[i];
    uint32_t *ecnt = cr_xcalloc(wn->nsyn + 1, sizeof *ecnt);
    uint64_t rcnt[64] = {0};
    for (uint64_t i = 0; i < n; i++) {
        ecnt[all[i].s]++;
        ecnt[all[i].o]++;
        rcnt[all[i].r]++;
    }
    /* Visit triples in a seeded random order; hold out greedily. */
    uint64_t *order = cr_xmalloc((n ? n : 1) * sizeof *order);
    for (uint64_t i = 0; i < n; i++) order[i] = i;
    cr_rng rng;
    cr_rng_seed(&rng, o->seed);
    cr_rng_shuffle_u64(&rng, order, n);
    char *split = cr_xcalloc(n + 1, 1); /* 0 train, 1 valid, 2 test */
    uint64_t nv = 0, nt = 0;
    for (uint64_t k = 0; k < n && (nv < o->nvalid || nt < o->ntest); k++) {
        const cr_wn_edge *t = &all[order[k]];
        if (!can_hold_out(t, ecnt, rcnt)) continue;
        split[order[k]] = nv < o->nvalid ? 1 : 2;
        if (split[order[k]] == 1) nv++;
        else nt++;
        ecnt[t->s]--;
        ecnt[t->o]--;
        rcnt[t->r]--;
    }
    cr_wn_edge *parts[3];
    uint64_t cnt[3] = {0};
    for (int p = 0; p < 3; p++) parts[p] = cr_xmalloc((n ? n : 1) * sizeof *parts[p]);
    for (uint64_t i = 0; i < n; i++) parts[(int)split[i]][cnt[(int)split[i]]++] = all[i]; /* sorted */
    idmap m;
    build_ids(wn, all, n, &m);
    static const char *const names[3] = {"train", "valid", "test"};
    int rc = write_ids(wn, &m, outdir, e);
    for (int p = 0; p < 3 && !rc; p++) rc = write_triples(wn, &m, parts[p], cnt[p], outdir, names[p], e);
    if (!rc && st) *st = (cr_wn_kg_stats){m.nent, m.nrel, cnt[0], cnt[1], cnt[2]};
    free_ids(&m);
    for (int p = 0; p < 3; p++) free(parts[p]);
    free(split);
    free(order);
    free(ecnt);
    free(all);
    return rc;
}

/* ---- synset graph ---- */

static int cmp_pair(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int cr_wn_write_graph(const cr_wn *wn, const char *path, uint64_t *nodes, uint64_t *nedges, cr_err *e) {
    idmap m;
    build_ids(wn, wn->edges, wn->nedges, &m);
    uint64_t *pairs = cr_xmalloc((wn->nedges ? wn->nedges : 1) * sizeof *pairs);
    uint64_t n = 0;
    for (uint64_t i = 0; i < wn->nedges; i++) {
        uint64_t a = m.ent[wn->edges[i].s], b = m.ent[wn->edges[i].o];
        pairs[n++] = a < b ? (a << 32 | b) : (b << 32 | a);
    }
    qsort(pairs, n, sizeof *pairs, cmp_pair);
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        if (k == 0 || pairs[k - 1] != pairs[i]) pairs[k++] = pairs[i];
    cr_out o;
    int rc = cr_out_open(&o, path, e);
    if (!rc) {
        fprintf(o.f, "# WordNet synset graph (undirected, every pointer type): %u nodes, %llu edges\n", m.nent,
                (unsigned long long)k);
        fprintf(o.f, "# node names: %s.nodes\n", path);
        for (uint64_t i = 0; i < k; i++)
            fprintf(o.f, "%llu %llu\n", (unsigned long long)(pairs[i] >> 32),
                    (unsigned long long)(pairs[i] & 0xffffffffu));
        rc = cr_out_commit(&o, e);
    }
    if (!rc) {
        char np[4096];
        snprintf(np, sizeof np, "%s.nodes", path);
        rc = cr_out_open(&o, np, e);
        if (!rc) {
            for (uint32_t i = 0; i < m.nent; i++) fprintf(o.f, "%u\t%s\n", i, syn_name(wn, m.ent_syn[i]));
            rc = cr_out_commit(&o, e);
        }
    }
    if (!rc) {
        if (nodes) *nodes = m.nent;
        if (nedges) *nedges = k;
    }
    free(pairs);
    free_ids(&m);
    return rc;
}

/* ---- synonym questions ---- */

static void count_tok(void *ctx, const char *t, size_t n) {
    (void)t;
    (void)n;
    (*(size_t *)ctx)++;
}

/* A lemma can be a question word if it is one corpus token by itself. */
static int single_token(const char *w) {
    size_t k = 0, n = strlen(w);
    if (cr_corpus_tokens(w, n, count_tok, &k) != 1) return 0;
    for (size_t i = 0; i < n; i++)
        if ((w[i] >= 'A' && w[i] <= 'Z') || w[i] == '_' || w[i] == '-' || w[i] == '.' || w[i] == '\'') return 0;
    return 1;
}

static int all_digits(const char *s, size_t n) {
    if (!n) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

/* Vocabulary file lines: "word [count]" (also word2vec's -save-vocab) or
 * "id TAB word" (a LibKGE-style map without counts). Words kept in ok. */
static int load_vocab(const char *path, uint64_t min_count, cr_cdict *ok, cr_err *e) {
    FILE *f = fopen(path, "r");
    if (!f) return cr_errf(e, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        char *p = line, *fld[3];
        size_t len[3];
        int nf = 0;
        while (nf < 3) {
            while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
            if (!*p) break;
            fld[nf] = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
            len[nf] = (size_t)(p - fld[nf]);
            nf++;
        }
        if (nf == 0) continue;
        if (nf == 3) {
            rc = cr_errf_at(e, path, lineno, "expected 'word [count]' or 'id TAB word'");
            break;
        }
        const char *w = fld[0];
        size_t wl = len[0];
        int counted = 0;
        unsigned long long c = 0;
        if (nf == 2 && all_digits(fld[1], len[1])) {
            errno = 0;
            c = strtoull(fld[1], NULL, 10);
            counted = 1;
            if (errno) {
                rc = cr_errf_at(e, path, lineno, "count out of range");
                break;
            }
        } else if (nf == 2 && all_digits(fld[0], len[0])) {
            w = fld[1]; /* id TAB word */
            wl = len[1];
        } else if (nf == 2) {
            rc = cr_errf_at(e, path, lineno, "expected 'word [count]' or 'id TAB word'");
            break;
        }
        if (!counted && min_count > 1) {
            rc = cr_errf_at(e, path, lineno, "no count for '%.*s' but --min-count %llu needs counts", (int)wl, w,
                            (unsigned long long)min_count);
            break;
        }
        if (!counted || c >= min_count) cr_cdict_intern(ok, w, wl);
    }
    free(line);
    fclose(f);
    return rc;
}

/* Counts the whitespace-separated words of a text corpus (plain or gzip)
 * and keeps those seen at least min_count times. */
static int load_corpus_vocab(const char *path, uint64_t min_count, cr_cdict *ok, cr_err *e) {
    gzFile g = gzopen(path, "rb");
    if (!g) return cr_errf(e, "%s: cannot open: %s", path, strerror(errno));
    gzbuffer(g, 1 << 17);
    cr_cdict *all = cr_cdict_new();
    char buf[1 << 16], word[256];
    size_t wl = 0;
    int got;
    while ((got = gzread(g, buf, sizeof buf)) > 0) {
        for (int i = 0; i < got; i++) { /* a word may continue in the next buffer */
            int sep = buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r';
            if (!sep) {
                if (wl < sizeof word) word[wl++] = buf[i];
                continue;
            }
            if (wl) {
                uint32_t id = cr_cdict_intern(all, word, wl);
                cr_cdict_counts(all)[id]++;
                wl = 0;
            }
        }
    }
    if (wl) {
        uint32_t id = cr_cdict_intern(all, word, wl);
        cr_cdict_counts(all)[id]++;
    }
    int zerr, rc = 0;
    const char *zmsg = gzerror(g, &zerr);
    if (got < 0 || (zerr && zerr != Z_BUF_ERROR)) rc = cr_errf(e, "%s: read error: %s", path, zmsg);
    gzclose(g);
    for (uint32_t i = 0; !rc && i < cr_cdict_size(all); i++)
        if (cr_cdict_counts(all)[i] >= min_count) cr_cdict_intern(ok, cr_cdict_str(all, i), strlen(cr_cdict_str(all, i)));
    cr_cdict_destroy(&all);
    return rc;
}

typedef struct synq {
    const cr_wn *wn;
    uint64_t *ofs;  /* lemma -> first index into syns */
    uint32_t *syns; /* synsets of each lemma, grouped */
    char *eligible; /* per lemma */
} synq;

static int shares_synset(const synq *q, uint32_t a, uint32_t b) {
    for (uint64_t i = q->ofs[a]; i < q->ofs[a + 1]; i++)
        for (uint64_t j = q->ofs[b]; j < q->ofs[b + 1]; j++)
            if (q->syns[i] == q->syns[j]) return 1;
    return 0;
}

/* Every (lemma, synset) membership, for the lemma -> synsets index. */
static void each_member(void *ctx, cr_csr_emit_fn emit, void *ectx) {
    const cr_wn *wn = ctx;
    for (uint32_t s = 0; s < wn->nsyn; s++)
        for (uint32_t i = 0; i < wn->syn[s].nlem; i++) emit(ectx, wn->lemmas_of[wn->syn[s].lem0 + i], s);
}

/* Lemma ids come from the same dictionary, so only a broken cr_wn fails. */
static int index_lemmas(synq *q, cr_err *e) {
    return cr_csr_from_fn(cr_cdict_size(q->wn->lemmas), each_member, (void *)q->wn, &q->ofs, &q->syns, e);
}

/* Eligible lemmas of synset s into out (at most 64); returns the count. */
static uint32_t eligible_of(const synq *q, uint32_t s, uint32_t *out) {
    const cr_wn_synset *sy = &q->wn->syn[s];
    uint32_t k = 0;
    for (uint32_t i = 0; i < sy->nlem && k < 64; i++) {
        uint32_t l = q->wn->lemmas_of[sy->lem0 + i];
        if (q->eligible[l] && !q->wn->proper[sy->lem0 + i]) out[k++] = l;
    }
    return k;
}

int cr_wn_write_synonyms(const cr_wn *wn, const cr_wn_syn_opts *o, const char *path, uint64_t *written,
                         cr_err *e) {
    cr_cdict *vocab = NULL;
    if (o->vocab_path && o->corpus_path) return cr_errf(e, "give a vocabulary or a corpus, not both");
    if (o->vocab_path || o->corpus_path) {
        vocab = cr_cdict_new();
        if (o->vocab_path ? load_vocab(o->vocab_path, o->min_count, vocab, e)
                          : load_corpus_vocab(o->corpus_path, o->min_count, vocab, e)) {
            cr_cdict_destroy(&vocab);
            return -1;
        }
    }
    synq q = {.wn = wn};
    uint32_t nl = cr_cdict_size(wn->lemmas);
    q.eligible = cr_xcalloc(nl + 1, 1);
    for (uint32_t l = 0; l < nl; l++) {
        const char *w = cr_cdict_str(wn->lemmas, l);
        q.eligible[l] = single_token(w) && (!vocab || cr_cdict_find(vocab, w, strlen(w)) != UINT32_MAX);
    }
    cr_cdict_destroy(&vocab);
    if (index_lemmas(&q, e)) return free(q.eligible), -1;
    /* distractor pools per part of speech: (lemma) with an eligible lemma */
    uint32_t *pool[4], npool[4] = {0};
    for (int p = 0; p < 4; p++) pool[p] = cr_xmalloc((nl + 1) * sizeof *pool[p]);
    char *inpool = cr_xcalloc((size_t)nl * 4 + 4, 1);
    for (uint32_t s = 0; s < wn->nsyn; s++) {
        int p = pos_index(wn->syn[s].pos);
        uint32_t el[64], k = eligible_of(&q, s, el);
        for (uint32_t i = 0; i < k; i++)
            if (!inpool[(size_t)el[i] * 4 + (size_t)p]) {
                inpool[(size_t)el[i] * 4 + (size_t)p] = 1;
                pool[p][npool[p]++] = el[i];
            }
    }
    free(inpool);
    cr_rng rng;
    cr_rng_seed(&rng, o->seed);
    uint32_t *order = cr_xmalloc((wn->nsyn ? wn->nsyn : 1) * sizeof *order);
    for (uint32_t s = 0; s < wn->nsyn; s++) order[s] = s;
    cr_rng_shuffle_u32(&rng, order, wn->nsyn);
    char *used = cr_xcalloc(nl + 1, 1);
    cr_out out;
    int rc = cr_out_open(&out, path, e);
    uint64_t nq = 0;
    for (uint32_t k = 0; !rc && k < wn->nsyn && nq < o->questions; k++) {
        uint32_t s = order[k], el[64], ne = eligible_of(&q, s, el);
        int p = pos_index(wn->syn[s].pos);
        if (ne < 2 || npool[p] < 3) continue;
        uint32_t t = el[cr_rng_below(&rng, ne)], syn = t;
        if (used[t]) continue;
        while (syn == t) syn = el[cr_rng_below(&rng, ne)];
        uint32_t ch[4], nd = 0;
        for (int tries = 0; nd < 3 && tries < 1000; tries++) {
            uint32_t d = pool[p][cr_rng_below(&rng, npool[p])];
            int dup = d == t || d == syn;
            for (uint32_t i = 0; i < nd; i++) dup |= ch[i] == d;
            if (dup || shares_synset(&q, d, t) || shares_synset(&q, d, syn)) continue;
            ch[nd++] = d;
        }
        if (nd < 3) continue;
        uint32_t ans = (uint32_t)cr_rng_below(&rng, 4);
        if (ans < 3) ch[3] = ch[ans];
        ch[ans] = syn;
        used[t] = 1;
        fprintf(out.f, "%s\t%s\t%s\t%s\t%s\t%u\n", cr_cdict_str(wn->lemmas, t), cr_cdict_str(wn->lemmas, ch[0]),
                cr_cdict_str(wn->lemmas, ch[1]), cr_cdict_str(wn->lemmas, ch[2]), cr_cdict_str(wn->lemmas, ch[3]),
                ans + 1);
        nq++;
    }
    if (!rc) rc = cr_out_commit(&out, e);
    if (!rc && written) *written = nq;
    free(used);
    free(order);
    for (int p = 0; p < 4; p++) free(pool[p]);
    free(q.ofs);
    free(q.syns);
    free(q.eligible);
    return rc;
}
