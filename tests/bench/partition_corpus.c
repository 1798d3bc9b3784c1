/* Real graphs for the partition benchmarks from installed Debian packages
 * (until `crescent data gcide-docs / wordnet-graph` exist):
 *   partition_corpus wordnet DIR          -> edge list "a b" on stdout:
 *       WordNet synsets (data.noun/verb/adj/adv in DIR) linked by pointers
 *   partition_corpus gcide INDEX DICT     -> LIBSVM on stdout: one example per
 *       dictionary entry (dictd index, decompressed dict text), features =
 *       words of 3+ letters (lowercased), value = count in the entry */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* open-addressing map from a 64-bit key (hash of a string or a synset id)
 * to a dense id */
typedef struct map {
    uint64_t *keys;
    uint32_t *vals;
    uint64_t cap, n;
} map;

static uint64_t mix(uint64_t x) {
    x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL, x ^= x >> 33;
    return x;
}

static uint32_t map_id(map *m, uint64_t key) {
    if (2 * (m->n + 1) > m->cap) {
        map old = *m;
        m->cap = m->cap ? m->cap * 2 : 1 << 16;
        m->keys = calloc(m->cap, sizeof *m->keys), m->vals = calloc(m->cap, sizeof *m->vals), m->n = 0;
        for (uint64_t i = 0; i < old.cap; i++)
            if (old.keys[i]) {
                uint64_t j = mix(old.keys[i]) & (m->cap - 1);
                while (m->keys[j]) j = (j + 1) & (m->cap - 1);
                m->keys[j] = old.keys[i], m->vals[j] = old.vals[i], m->n++;
            }
        free(old.keys), free(old.vals);
    }
    key |= 1ULL << 63; /* never 0 */
    uint64_t j = mix(key) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != key) j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) m->keys[j] = key, m->vals[j] = (uint32_t)m->n++;
    return m->vals[j];
}

static int pos_index(char c) {
    return c == 'n' ? 0 : c == 'v' ? 1 : (c == 'a' || c == 's') ? 2 : 3;
}

static int wordnet(const char *dir) {
    static const char *files[] = {"data.noun", "data.verb", "data.adj", "data.adv"};
    map m = {0};
    char path[4096], *line = NULL;
    size_t cap = 0;
    for (int f = 0; f < 4; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        FILE *in = fopen(path, "r");
        if (!in) return perror(path), 1;
        while (getline(&line, &cap, in) != -1) {
            if (line[0] == ' ') continue; /* license header */
            char *s = line, *end;
            uint64_t off = strtoull(s, &end, 10);
            s = end;
            strtol(s, &s, 10);              /* lex_filenum */
            while (*s == ' ') s++;
            char pos = *s++;
            long wc = strtol(s, &s, 16);
            for (long w = 0; w < wc; w++) { /* word lex_id */
                while (*s == ' ') s++;
                while (*s && *s != ' ') s++;
                strtol(s, &s, 16);
            }
            long pc = strtol(s, &s, 10);
            uint32_t a = map_id(&m, off * 4 + (uint64_t)pos_index(pos));
            for (long p = 0; p < pc; p++) {
                while (*s == ' ') s++;
                while (*s && *s != ' ') s++; /* symbol */
                uint64_t to = strtoull(s, &s, 10);
                while (*s == ' ') s++;
                char tp = *s++;
                strtol(s, &s, 16); /* source/target */
                printf("%u %u\n", a, map_id(&m, to * 4 + (uint64_t)pos_index(tp)));
            }
        }
        fclose(in);
    }
    free(line);
    return 0;
}

static uint64_t b64(const char *s) {
    static const char *al = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint64_t x = 0;
    for (; *s && *s != '\t' && *s != '\n'; s++) x = x * 64 + (uint64_t)(strchr(al, *s) - al);
    return x;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int gcide(const char *index, const char *dict) {
    FILE *fi = fopen(index, "r"), *fd = fopen(dict, "r");
    if (!fi || !fd) return perror(fi ? dict : index), 1;
    fseek(fd, 0, SEEK_END);
    long size = ftell(fd);
    rewind(fd);
    char *text = malloc((size_t)size + 1);
    if (fread(text, 1, (size_t)size, fd) != (size_t)size) return fprintf(stderr, "%s: short read\n", dict), 1;
    text[size] = 0;
    fclose(fd);
    map words = {0}, seen = {0};
    char *line = NULL;
    size_t cap = 0;
    size_t idcap = (size_t)1 << 20;
    uint32_t *ids = malloc(idcap * sizeof *ids), nid;
    while (getline(&line, &cap, fi) != -1) {
        if (!strncmp(line, "00-database", 11)) continue;
        char *t1 = strchr(line, '\t');
        if (!t1) continue;
        char *t2 = strchr(t1 + 1, '\t');
        if (!t2) continue;
        uint64_t off = b64(t1 + 1), len = b64(t2 + 1);
        if (off + len > (uint64_t)size) continue;
        uint64_t before = seen.n;
        map_id(&seen, off + 1);
        if (seen.n == before) continue; /* same entry under another headword */
        nid = 0;
        for (uint64_t i = off; i < off + len;) {
            while (i < off + len && !isalpha((unsigned char)text[i])) i++;
            uint64_t st = i, h = 1469598103934665603ULL;
            while (i < off + len && isalpha((unsigned char)text[i]))
                h = (h ^ (uint64_t)tolower((unsigned char)text[i])) * 1099511628211ULL, i++;
            if (i - st < 3) continue;
            if (nid == idcap) ids = realloc(ids, (idcap *= 2) * sizeof *ids);
            ids[nid++] = map_id(&words, h) + 1;
        }
        if (nid == 0) continue;
        qsort(ids, nid, sizeof *ids, cmp_u32);
        fputs("1", stdout);
        for (uint32_t i = 0, c = 1; i < nid; i++, c++)
            if (i + 1 == nid || ids[i + 1] != ids[i]) printf(" %u:%u", ids[i], c), c = 0;
        putchar('\n');
    }
    free(line), free(text), free(ids);
    fclose(fi);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "wordnet")) return wordnet(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "gcide")) return gcide(argv[2], argv[3]);
    fprintf(stderr, "usage: partition_corpus wordnet DIR | gcide INDEX DICT\n");
    return 2;
}
