#include "data/cr_corpus_gcide.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/cr_alloc.h"
#include "base/cr_utf8.h"
#include "data/cr_corpus.h"
#include "data/cr_out.h"

/* ---- markup ---- */

static int is_alnum(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Letters an accent code stands for ("e'" -> "e", "ae" -> "ae", "thorn" ->
 * "th"); "" for symbols (root, deg, digits). */
static const char *accent_letters(const char *code, size_t n, char *buf) {
    static const struct { const char *code, *letters; } special[] = {
        {"ae", "ae"}, {"AE", "AE"}, {"oe", "oe"}, {"OE", "OE"}, {"oo", "oo"}, {"=oo", "oo"}, {"oo^", "oo"},
        {"eth", "th"}, {"thorn", "th"}, {"ng", "ng"}, {"root", ""}, {"deg", ""}, {"=ae", "ae"},
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (strlen(special[i].code) == n && !memcmp(special[i].code, code, n)) return special[i].letters;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)code[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            buf[0] = (char)c; /* "imac", "add", "aum", "e^": the first letter */
            buf[1] = '\0';
            return buf;
        }
    }
    return "";
}

/* Length of the accent code starting at s[i] == '[' (including brackets),
 * or 0 if this bracket is not an accent code: at most 7 characters without
 * spaces and attached to a word on at least one side. */
static size_t accent_len(const char *s, size_t n, size_t i) {
    size_t j = i + 1;
    while (j < n && j - i <= 8 && s[j] != ']' && s[j] != '[' && s[j] != ' ' && s[j] != '\n') j++;
    if (j >= n || s[j] != ']' || j == i + 1 || j - i > 8) return 0;
    int before = i > 0 && is_alnum((unsigned char)s[i - 1]);
    int after = j + 1 < n && is_alnum((unsigned char)s[j + 1]);
    return (before || after) ? j - i + 1 : 0;
}

/* At the start of a body line: length of a sense label to drop ("1.",
 * "(a)", "Syn:", "Note:") after the indentation, else 0. */
static size_t label_len(const char *s, size_t n, size_t i) {
    size_t j = i;
    while (j < n && s[j] >= '0' && s[j] <= '9') j++;
    if (j > i && j < n && s[j] == '.') return j + 1 - i;
    if (i + 2 < n && s[i] == '(' && s[i + 1] >= 'a' && s[i + 1] <= 'z' && s[i + 2] == ')') return 3;
    if (n - i >= 4 && !memcmp(s + i, "Syn:", 4)) return 4;
    if (n - i >= 5 && !memcmp(s + i, "Note:", 5)) return 5;
    return 0;
}

/* Body cleaner from s[i] on; depth = open [...] carried in. */
static size_t clean_body(const char *s, size_t n, size_t i, int depth, char *dst, size_t k) {
    char buf[2];
    int bol = 1;
    while (i < n) {
        char c = s[i];
        if (c == '\n') bol = 1;
        else if (bol && c != ' ' && c != '\t') {
            bol = 0;
            size_t ll = depth ? 0 : label_len(s, n, i);
            if (ll) {
                dst[k++] = ' ';
                i += ll;
                continue;
            }
        }
        if (c == '[') {
            size_t al = depth ? 0 : accent_len(s, n, i);
            if (al) {
                const char *l = accent_letters(s + i + 1, al - 2, buf);
                size_t ll = strlen(l);
                if (!ll) dst[k++] = ' ';
                memcpy(dst + k, l, ll);
                k += ll;
                i += al;
                continue;
            }
            depth++;
            i++;
            continue;
        }
        if (c == ']') {
            if (depth) depth--;
            dst[k++] = ' ';
            i++;
            continue;
        }
        if (depth) {
            i++;
            continue;
        }
        if ((c == '*' || c == '"' || c == '`') && k > 0 && is_alnum((unsigned char)dst[k - 1]) && i + 1 < n &&
            (is_alnum((unsigned char)s[i + 1]) || s[i + 1] == '[')) {
            i++; /* syllable/stress mark inside a word */
            continue;
        }
        dst[k++] = (c == '{' || c == '}' || c == '\\') ? ' ' : c;
        i++;
    }
    dst[k] = '\0';
    return k;
}

size_t cr_gcide_clean(const char *s, size_t n, char *dst, char *headword, size_t hwcap, int *is_noun) {
    *is_noun = 0;
    /* the head line is the first line starting in column 0 (a few entries
     * begin with a stray quotation, indented, which is dropped) */
    while (n > 0 && (s[0] == '\n' || s[0] == ' ' || s[0] == '\t')) {
        const char *nl = memchr(s, '\n', n);
        size_t skip = nl ? (size_t)(nl - s) + 1 : n;
        s += skip;
        n -= skip;
    }
    /* headword: up to the first backslash (or the whole first line) */
    size_t eol = 0;
    while (eol < n && s[eol] != '\n') eol++;
    size_t hw_end = 0;
    while (hw_end < eol && s[hw_end] != '\\') hw_end++;
    size_t k = clean_body(s, hw_end, 0, 0, dst, 0);
    while (k > 0 && (dst[k - 1] == ' ' || dst[k - 1] == ',')) k--;
    size_t h = k < hwcap ? k : hwcap - 1;
    memcpy(headword, dst, h);
    headword[h] = '\0';
    size_t i = hw_end;
    if (i < eol) { /* skip \pronunciation\, which may continue on the next lines */
        i++;
        while (i < n && s[i] != '\\') i++;
        if (i < n) i++;
        while (i < n && (s[i] == ' ' || s[i] == ',')) i++;
        if (i < n && s[i] == '(') {
            while (i < n && s[i] != ')' && s[i] != '\n') i++;
            if (i < n && s[i] == ')') i++;
            while (i < n && (s[i] == ' ' || s[i] == ',')) i++;
        }
        if (i < n && s[i] == 'n' && (i + 1 == n || s[i + 1] == '.' || s[i + 1] == ' ' || s[i + 1] == '\n'))
            *is_noun = 1;
    }
    /* drop the rest of the head line, remembering brackets it leaves open */
    int depth = 0;
    while (i < n && s[i] != '\n') {
        if (s[i] == '[') depth++;
        else if (s[i] == ']' && depth) depth--;
        i++;
    }
    dst[k++] = '\n';
    return clean_body(s, n, i, depth, dst, k);
}

/* ---- index and streaming ---- */

typedef struct span {
    uint64_t off, len;
} span;

static int b64(const char *s, size_t n, uint64_t *v) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n == 0 || n > 10) return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = memchr(digits, s[i], 64);
        if (!p || !s[i]) return -1;
        x = x * 64 + (uint64_t)(p - digits);
    }
    *v = x;
    return 0;
}

static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int read_index(const char *path, span **out, uint64_t *nout, cr_err *e) {
    FILE *f = fopen(path, "r");
    if (!f) return cr_errf(e, "%s: cannot open: %s", path, strerror(errno));
    span *sp = NULL;
    uint64_t n = 0, cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    long lineno = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        uint64_t off, ln;
        if (!t1 || !t2 || strchr(t2 + 1, '\t')) {
            rc = cr_errf_at(e, path, lineno, "expected 'headword TAB offset TAB length'");
            break;
        }
        if (b64(t1 + 1, (size_t)(t2 - t1 - 1), &off) || b64(t2 + 1, strlen(t2 + 1), &ln)) {
            rc = cr_errf_at(e, path, lineno, "offset/length is not dictd base64");
            break;
        }
        if (!strncmp(line, "00-", 3) || !strncmp(line, "00database", 10)) continue; /* database info */
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            sp = cr_xrealloc(sp, cap * sizeof *sp);
        }
        sp[n++] = (span){off, ln};
    }
    free(line);
    fclose(f);
    if (rc) {
        free(sp);
        return rc;
    }
    qsort(sp, n, sizeof *sp, cmp_span);
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (m && sp[m - 1].off == sp[i].off && sp[m - 1].len == sp[i].len) continue;
        if (m && sp[i].off < sp[m - 1].off + sp[m - 1].len) {
            rc = cr_errf(e, "%s: entries at offsets %llu and %llu overlap", path,
                         (unsigned long long)sp[m - 1].off, (unsigned long long)sp[i].off);
            free(sp);
            return rc;
        }
        sp[m++] = sp[i];
    }
    *out = sp;
    *nout = m;
    return 0;
}

/* Reads exactly n bytes (skip when dst is NULL); 0 if the text ended early. */
static int gz_take(gzFile g, char *dst, uint64_t n) {
    char skip[65536];
    while (n > 0) {
        unsigned want = n > sizeof skip ? (unsigned)sizeof skip : (unsigned)n;
        int got = gzread(g, dst ? dst : skip, want);
        if (got <= 0) return 0;
        if (dst) dst += got;
        n -= (uint64_t)got;
    }
    return 1;
}

int cr_gcide_each(const char *dict, const char *index, cr_gcide_fn fn, void *ctx, cr_err *e) {
    span *sp = NULL;
    uint64_t n = 0;
    if (read_index(index, &sp, &n, e)) return -1;
    gzFile g = gzopen(dict, "rb");
    if (!g) {
        free(sp);
        return cr_errf(e, "%s: cannot open: %s", dict, strerror(errno));
    }
    gzbuffer(g, 1 << 17);
    size_t cap = 1 << 16;
    /* conv: the entry as UTF-8 (Windows-1252 bytes converted; up to 3 bytes
     * each), what the cleaner and so every builder sees */
    char *raw = cr_xmalloc(cap), *conv = cr_xmalloc(3 * cap), *clean = cr_xmalloc(3 * cap + 2);
    char hw[256];
    uint64_t pos = 0;
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++) {
        if (sp[i].len + 1 > cap) {
            while (sp[i].len + 1 > cap) cap *= 2;
            raw = cr_xrealloc(raw, cap);
            conv = cr_xrealloc(conv, 3 * cap);
            clean = cr_xrealloc(clean, 3 * cap + 2);
        }
        if (!gz_take(g, NULL, sp[i].off - pos) || !gz_take(g, raw, sp[i].len)) {
            int zerr;
            const char *zmsg = gzerror(g, &zerr);
            rc = cr_errf(e, "%s: entry at offset %llu (length %llu) is past the end of the text%s%s", dict,
                         (unsigned long long)sp[i].off, (unsigned long long)sp[i].len, zerr ? ": " : "",
                         zerr ? cr_corpus_strip_path(zmsg, dict) : " (truncated file or wrong index)");
            break;
        }
        pos = sp[i].off + sp[i].len;
        int noun;
        size_t cn = cr_utf8_from_cp1252(raw, sp[i].len, conv);
        size_t cl = cr_gcide_clean(conv, cn, clean, hw, sizeof hw, &noun);
        rc = fn(ctx, clean, cl, hw, noun, e);
    }
    free(raw);
    free(conv);
    free(clean);
    free(sp);
    gzclose(g);
    return rc;
}

/* ---- gcide-text ---- */

typedef struct text_ctx {
    FILE *f;
    cr_cdict *seen;
    cr_gcide_stats *st;
    int first; /* no token yet on this line */
} text_ctx;

static void text_tok(void *ctx, const char *t, size_t n) {
    text_ctx *c = ctx;
    if (!c->first) fputc(' ', c->f);
    fwrite(t, 1, n, c->f);
    c->first = 0;
    cr_cdict_intern(c->seen, t, n);
}

static int text_entry(void *ctx, const char *clean, size_t n, const char *hw, int noun, cr_err *e) {
    (void)hw;
    (void)noun;
    (void)e;
    text_ctx *c = ctx;
    c->first = 1;
    size_t k = cr_corpus_tokens(clean, n, text_tok, c);
    if (!k) return 0;
    fputc('\n', c->f);
    c->st->entries++;
    c->st->tokens += k;
    return 0;
}

int cr_gcide_write_text(const char *dict, const char *index, FILE *f, cr_gcide_stats *st, cr_err *e) {
    cr_gcide_stats local = {0};
    text_ctx c = {f, cr_cdict_new(), st ? st : &local, 1};
    *c.st = (cr_gcide_stats){0};
    int rc = cr_gcide_each(dict, index, text_entry, &c, e);
    c.st->vocab = cr_cdict_size(c.seen);
    cr_cdict_destroy(&c.seen);
    return rc;
}

/* ---- gcide-docs ---- */

typedef struct docs_ctx {
    cr_cdict *dict;
    uint32_t *feat; /* dict id -> feature id (1-based), 0 = below min_count */
    uint32_t *ids;
    size_t nids, idcap;
    FILE *f;
    cr_gcide_stats *st;
    int pass;
} docs_ctx;

static void docs_tok(void *ctx, const char *t, size_t n) {
    docs_ctx *c = ctx;
    if (c->pass == 1) {
        uint32_t id = cr_cdict_intern(c->dict, t, n); /* may move the counts array */
        cr_cdict_counts(c->dict)[id]++;
        return;
    }
    uint32_t id = cr_cdict_find(c->dict, t, n);
    if (id == UINT32_MAX || !c->feat[id]) return;
    if (c->nids == c->idcap) {
        c->idcap = c->idcap ? 2 * c->idcap : 4096;
        c->ids = cr_xrealloc(c->ids, c->idcap * sizeof *c->ids);
    }
    c->ids[c->nids++] = c->feat[id];
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int docs_entry(void *ctx, const char *clean, size_t n, const char *hw, int noun, cr_err *e) {
    (void)hw;
    (void)e;
    docs_ctx *c = ctx;
    c->nids = 0;
    size_t k = cr_corpus_tokens(clean, n, docs_tok, c);
    if (c->pass == 1) return 0;
    if (!k) return 0; /* same entries as gcide-text: those with tokens */
    qsort(c->ids, c->nids, sizeof *c->ids, cmp_u32);
    fputs(noun ? "+1" : "-1", c->f);
    for (size_t i = 0; i < c->nids;) {
        size_t j = i;
        while (j < c->nids && c->ids[j] == c->ids[i]) j++;
        fprintf(c->f, " %u:%zu", c->ids[i], j - i);
        c->st->nonzeros++;
        i = j;
    }
    fputc('\n', c->f);
    c->st->entries++;
    c->st->nouns += (uint64_t)noun;
    c->st->tokens += c->nids;
    return 0;
}

static int cmp_by_count(const void *a, const void *b, void *ctx) {
    cr_cdict *d = ctx;
    const uint64_t *counts = cr_cdict_counts(d);
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (counts[x] != counts[y]) return counts[x] > counts[y] ? -1 : 1;
    return strcmp(cr_cdict_str(d, x), cr_cdict_str(d, y));
}

int cr_gcide_write_docs(const char *dict, const char *index, const char *path, uint64_t min_count,
                        cr_gcide_stats *st, cr_err *e) {
    cr_gcide_stats local = {0};
    docs_ctx c = {.dict = cr_cdict_new(), .st = st ? st : &local, .pass = 1};
    *c.st = (cr_gcide_stats){0};
    int rc = cr_gcide_each(dict, index, docs_entry, &c, e);
    uint32_t nd = cr_cdict_size(c.dict), nf = 0;
    uint64_t *counts = cr_cdict_counts(c.dict);
    uint32_t *order = cr_xmalloc((nd ? nd : 1) * sizeof *order);
    for (uint32_t i = 0; i < nd; i++)
        if (counts[i] >= min_count) order[nf++] = i;
    qsort_r(order, nf, sizeof *order, cmp_by_count, c.dict);
    c.feat = cr_xcalloc(nd + 1, sizeof *c.feat);
    for (uint32_t i = 0; i < nf; i++) c.feat[order[i]] = i + 1;
    cr_out vo, doc;
    char vpath[4096];
    snprintf(vpath, sizeof vpath, "%s.vocab", path);
    if (!rc && !(rc = cr_out_open(&vo, vpath, e))) {
        for (uint32_t i = 0; i < nf; i++)
            fprintf(vo.f, "%s\t%llu\n", cr_cdict_str(c.dict, order[i]), (unsigned long long)counts[order[i]]);
        rc = cr_out_commit(&vo, e);
    }
    if (!rc && !(rc = cr_out_open(&doc, path, e))) {
        c.f = doc.f;
        c.pass = 2;
        rc = cr_gcide_each(dict, index, docs_entry, &c, e);
        if (rc) cr_out_abort(&doc);
        else rc = cr_out_commit(&doc, e);
    }
    c.st->features = nf;
    c.st->vocab = nf;
    free(order);
    free(c.feat);
    free(c.ids);
    cr_cdict_destroy(&c.dict);
    return rc;
}
