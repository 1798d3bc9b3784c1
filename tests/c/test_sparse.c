/* Sparse tables: the per-stripe hash map (ps/cr_fmap.h: growth, deletion,
 * every int64 key including the two that mark cells, slot reuse, the walk),
 * sparse shards (absent keys read their initial value and are not stored,
 * pushes store, get/set by key, the dump by cursor), the owner functions of
 * hash and range placement over the uint64 space, keyed rows messages. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "cr_test.h"
#include "ps/cr_ckpt.h"
#include "ps/cr_fmap.h"
#include "ps/cr_proto.h"
#include "ps/cr_table.h"

static int64_t key_of(int64_t i) { return (int64_t)((uint64_t)i * 0x9E3779B97F4A7C15ULL); }

static void test_fmap_growth(void) {
    cr_fmap f = {0};
    CR_CHECK(cr_fmap_get(&f, 5) == NULL && cr_fmap_get(&f, -1) == NULL);
    int64_t n = 200000;
    for (int64_t i = 0; i < n; i++) {
        float *r = cr_fmap_add(&f, key_of(i), 3);
        r[0] = (float)i, r[1] = -1, r[2] = (float)(i % 7);
    }
    CR_CHECK(f.live == (uint32_t)n);
    CR_CHECK((uint64_t)f.used * 4 <= (uint64_t)f.cap * 3); /* at most 3/4 full */
    CR_CHECK((uint64_t)f.live * 8 >= (uint64_t)f.cap * 3 / 2); /* not grown past what it needs */
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float *r = cr_fmap_get(&f, key_of(i));
        bad += !r || r[0] != (float)i || r[2] != (float)(i % 7);
    }
    CR_CHECK(bad == 0);
    for (int64_t i = n; i < n + 1000; i++) CR_CHECK(cr_fmap_get(&f, key_of(i)) == NULL);
    /* memory: cells and slabs, close to the rows' bytes */
    size_t bytes = cr_fmap_bytes(&f);
    CR_CHECK(bytes >= (size_t)n * 12 && bytes < (size_t)n * (12 + 40));
    cr_fmap_free(&f);
    CR_CHECK(f.cap == 0 && f.slab == NULL);
}

static void test_fmap_delete_and_specials(void) {
    cr_fmap f = {0};
    int64_t special[] = {-1, -2, INT64_MIN, INT64_MAX, 0};
    for (int i = 0; i < 5; i++) cr_fmap_add(&f, special[i], 2)[0] = (float)i;
    for (int i = 0; i < 5; i++) CR_CHECK(cr_fmap_get(&f, special[i]) && cr_fmap_get(&f, special[i])[0] == (float)i);
    for (int64_t i = 1; i <= 5000; i++) cr_fmap_add(&f, i, 2)[0] = (float)i;
    /* the walk sees every key once */
    uint64_t pos = 0;
    int64_t k, seen = 0, sum = 0;
    float *row;
    while (cr_fmap_next(&f, &pos, &k, &row)) seen++, sum += (k >= 1 && k <= 5000) ? k : 0;
    CR_CHECK(seen == 5005 && sum == 5000 * 5001 / 2);
    /* delete half (and the specials), then add new keys: slots are reused */
    for (int64_t i = 2; i <= 5000; i += 2) cr_fmap_del(&f, i);
    cr_fmap_del(&f, -1);
    cr_fmap_del(&f, -2);
    cr_fmap_del(&f, 777777); /* absent: nothing */
    CR_CHECK(cr_fmap_get(&f, -1) == NULL && cr_fmap_get(&f, -2) == NULL && cr_fmap_get(&f, 4) == NULL);
    CR_CHECK(cr_fmap_get(&f, 3) && cr_fmap_get(&f, 3)[0] == 3);
    int32_t slots = f.nslot;
    for (int64_t i = 10001; i <= 12502; i++) cr_fmap_add(&f, i, 2)[0] = (float)i;
    CR_CHECK(f.nslot == slots); /* 2502 new keys took the 2502 freed slots */
    for (int64_t i = 1; i <= 5000; i += 2) CR_CHECK(cr_fmap_get(&f, i) && cr_fmap_get(&f, i)[0] == (float)i);
    for (int64_t i = 10001; i <= 12502; i++) CR_CHECK(cr_fmap_get(&f, i) && cr_fmap_get(&f, i)[0] == (float)i);
    CR_CHECK(cr_fmap_get(&f, INT64_MIN)[0] == 2 && cr_fmap_get(&f, INT64_MAX)[0] == 3);
    /* many deletions and insertions leave a bounded table (tombstones are cleaned out) */
    for (int round = 0; round < 50; round++) {
        for (int64_t i = 0; i < 1000; i++) cr_fmap_add(&f, 1000000 + round * 1000 + i, 2);
        for (int64_t i = 0; i < 1000; i++) cr_fmap_del(&f, 1000000 + round * 1000 + i);
    }
    CR_CHECK(f.cap <= 32768);
    cr_fmap_free(&f);
}

static cr_table_def sdef(int placement) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "S");
    d.sparse = 1;
    d.dim = 4;
    d.init = CR_INIT_NORMAL;
    d.init_b = 1;
    d.optim = (cr_optim){.kind = CR_OPTIM_ADAGRAD, .lr = 0.1f, .eps = 1e-6f, .init = 0.1f};
    d.seed = 9;
    d.placement = placement;
    return d;
}

static void test_owners(void) {
    int64_t cnt[3] = {0}, lo_seen = 0, hi_seen = 0;
    for (int64_t i = 0; i < 30000; i++) cnt[cr_place_sparse_owner(CR_PLACE_HASH, 3, i)]++;
    for (int n = 0; n < 3; n++) CR_CHECK_NEAR(cnt[n], 10000, 400);
    /* range: contiguous thirds of the uint64 space (negative int64 = the upper half) */
    CR_CHECK(cr_place_sparse_owner(CR_PLACE_RANGE, 3, 0) == 0);
    CR_CHECK(cr_place_sparse_owner(CR_PLACE_RANGE, 3, -1) == 2);
    CR_CHECK(cr_place_sparse_owner(CR_PLACE_RANGE, 2, INT64_MAX) == 0 && cr_place_sparse_owner(CR_PLACE_RANGE, 2, INT64_MIN) == 1);
    for (int64_t i = 0; i < 1000; i++) {
        int64_t k = key_of(i);
        int o = cr_place_sparse_owner(CR_PLACE_RANGE, 4, k);
        CR_CHECK((uint64_t)o == (uint64_t)k / (UINT64_MAX / 4 + 1));
        lo_seen += o == 0, hi_seen += o == 3;
    }
    CR_CHECK(lo_seen > 0 && hi_seen > 0);
    cr_err e;
    cr_table_def d = sdef(CR_PLACE_HASH);
    cr_shard *s = cr_shard_new(&d, 1, 3, &e);
    CR_CHECK(s && s->sp);
    for (int64_t i = 0; i < 100; i++) CR_CHECK(cr_shard_owner(s, i) == cr_place_sparse_owner(CR_PLACE_HASH, 3, i));
    CR_CHECK(cr_shard_need_range(s, "sampling", &e) < 0 && strstr(e.msg, "table 'S' is sparse"));
    cr_shard_destroy(&s);
    d.placement = CR_PLACE_FILE;
    CR_CHECK(cr_table_def_check(&d, &e) < 0);
    d = sdef(CR_PLACE_HASH);
    d.keys = 5;
    CR_CHECK(cr_table_def_check(&d, &e) < 0);
}

static void test_shard(void) {
    cr_err e;
    cr_table_def d = sdef(CR_PLACE_HASH);
    cr_shard *s = cr_shard_new(&d, 0, 1, &e);
    CR_CHECK(s);
    int64_t n = 20000;
    int64_t *keys = malloc((size_t)n * sizeof *keys);
    float *out = malloc((size_t)n * 4 * sizeof *out), *g = malloc((size_t)n * 4 * sizeof *g);
    for (int64_t i = 0; i < n; i++) keys[i] = key_of(i);
    /* pulls of keys never written: their initial values, nothing stored */
    cr_shard_pull(s, keys, n, out);
    CR_CHECK(atomic_load(&s->sp_rows) == 0 && cr_shard_sparse_bytes(s) == 0);
    float init[4];
    int bad = 0;
    for (int64_t i = 0; i < n; i += 97) {
        cr_table_init_row(&d, keys[i], init);
        bad += memcmp(init, out + i * 4, sizeof init) != 0;
    }
    CR_CHECK(bad == 0);
    /* pushes store them: adagrad from the initial value */
    for (int64_t i = 0; i < n * 4; i++) g[i] = 1;
    cr_shard_push(s, keys, n / 2, g);
    CR_CHECK(atomic_load(&s->sp_rows) == n / 2);
    float vals[4], st[4];
    cr_shard_get_keys(s, keys + 5, 1, vals, st);
    cr_table_init_row(&d, keys[5], init);
    float acc = 0.1f + 1, want = init[0] - 0.1f * 1 / (sqrtf(acc) + 1e-6f);
    CR_CHECK_NEAR(vals[0], want, 1e-6);
    CR_CHECK_NEAR(st[0], acc, 1e-6);
    cr_shard_get_keys(s, keys + n - 1, 1, vals, st); /* not stored: initial value and state */
    cr_table_init_row(&d, keys[n - 1], init);
    CR_CHECK(!memcmp(vals, init, sizeof init) && st[0] == 0.1f);
    /* set: a new key with its state, an old one keeping its state */
    float one[4] = {1, 2, 3, 4}, sone[4] = {5, 5, 5, 5};
    cr_shard_set_keys(s, keys + n - 1, 1, one, sone);
    cr_shard_set_keys(s, keys + 5, 1, one, NULL);
    cr_shard_get_keys(s, keys + n - 1, 1, vals, st);
    CR_CHECK(vals[3] == 4 && st[2] == 5);
    cr_shard_get_keys(s, keys + 5, 1, vals, st);
    CR_CHECK(vals[0] == 1 && fabsf(st[0] - acc) < 1e-6f);
    CR_CHECK(atomic_load(&s->sp_rows) == n / 2 + 1);
    /* the dump by cursor, in small parts, gives every stored key once */
    uint64_t cur = 0;
    int64_t got = 0, dk[333];
    float dv[333 * 4], ds[333 * 4];
    int64_t sum = 0, want_sum = 0;
    while (cur != CR_SHARD_DUMP_END) {
        int64_t m = cr_shard_dump(s, &cur, 333, dk, dv, ds);
        CR_CHECK(m <= 333);
        for (int64_t i = 0; i < m; i++) sum += dk[i] & 0xffff;
        got += m;
    }
    for (int64_t i = 0; i < n / 2; i++) want_sum += keys[i] & 0xffff;
    want_sum += keys[n - 1] & 0xffff;
    CR_CHECK(got == n / 2 + 1 && sum == want_sum);
    size_t bytes = cr_shard_sparse_bytes(s);
    CR_CHECK(bytes > (size_t)got * 32 && bytes < (size_t)got * (32 + 60));
    free(keys);
    free(out);
    free(g);
    cr_shard_destroy(&s);
}

static void test_keyed_rows_message(void) {
    int64_t keys[3] = {-1, INT64_MAX, 7};
    float v[6] = {1, 2, 3, 4, 5, 6}, st[3] = {7, 8, 9};
    cr_msg_rows r = {.table = 1, .count = 3, .values = v, .state = st, .keys = keys, .valuesn = sizeof v, .staten = sizeof st}, b;
    cr_proto_msg m;
    cr_err e;
    CR_CHECK(cr_proto_encode_rows(CR_M_SETROWS, &r, &m, &e) == 0 && m.np == 3);
    CR_CHECK(cr_proto_decode_rows(&m, 2, 1, &b, &e) == 0 && b.keys && !memcmp(b.keys, keys, sizeof keys));
    cr_proto_msg_free(&m);
    cr_msg_rows g = {.table = 1, .count = 3, .keys = keys};
    CR_CHECK(cr_proto_encode_rows(CR_M_GETROWS, &g, &m, &e) == 0 && m.np == 1);
    CR_CHECK(cr_proto_decode_rows(&m, 0, 0, &b, &e) == 0 && b.keys && b.count == 3);
    cr_proto_msg_free(&m);
    cr_msg_rows plain = {.table = 1, .lo = 4, .count = 3};
    CR_CHECK(cr_proto_encode_rows(CR_M_GETROWS, &plain, &m, &e) == 0 && m.np == 0);
    CR_CHECK(cr_proto_decode_rows(&m, 0, 0, &b, &e) == 0 && !b.keys && b.lo == 4);
    cr_proto_msg_free(&m);
}

/* Threads pushing (add) to overlapping sparse keys while others pull:
 * every push lands once (the stripe locks guard the maps while they grow). */
#define TKEYS 3000
#define TROUNDS 40
static cr_shard *tshard;

static void *pusher(void *arg) {
    int t = (int)(intptr_t)arg;
    int64_t keys[TKEYS];
    float g[TKEYS * 2], out[TKEYS * 2];
    for (int i = 0; i < TKEYS * 2; i++) g[i] = 1;
    for (int r = 0; r < TROUNDS; r++) {
        int64_t n = 0;
        for (int64_t i = (t + r) % 3; i < TKEYS; i += 1 + (r % 3)) keys[n++] = key_of(i);
        if (t == 3) cr_shard_pull(tshard, keys, n, out);
        else cr_shard_push(tshard, keys, n, g);
    }
    return NULL;
}

static void test_threads(void) {
    cr_table_def d = sdef(CR_PLACE_HASH);
    d.init = CR_INIT_ZEROS;
    d.dim = 2;
    d.optim = (cr_optim){.kind = CR_OPTIM_ADD};
    cr_err e;
    tshard = cr_shard_new(&d, 0, 1, &e);
    CR_CHECK(tshard);
    pthread_t th[4];
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, pusher, (void *)(intptr_t)t);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    /* expected pushes of key i: threads 0..2, rounds r, when i is on that round's grid */
    int bad = 0;
    for (int64_t i = 0; i < TKEYS; i++) {
        int want = 0;
        for (int t = 0; t < 3; t++)
            for (int r = 0; r < TROUNDS; r++) {
                int64_t first = (t + r) % 3, step = 1 + (r % 3);
                want += i >= first && (i - first) % step == 0;
            }
        float v[2];
        int64_t k = key_of(i);
        cr_shard_get_keys(tshard, &k, 1, v, NULL);
        bad += v[0] != (float)want || v[1] != (float)want;
    }
    CR_CHECK(bad == 0);
    CR_CHECK(atomic_load(&tshard->sp_rows) == TKEYS);
    cr_shard_destroy(&tshard);
}

/* The checkpoint format of a sparse table: the flag in dtype, stored rows
 * with each key in the first two state floats (bit patterns, whatever they
 * look like as floats), a state too narrow for a key refused. */
static void test_ckpt_format(void) {
    char path[] = "/tmp/crescent_sparse_ckptXXXXXX";
    int fd = mkstemp(path);
    CR_CHECK(fd >= 0);
    close(fd);
    cr_err e;
    cr_ckpt_writer *w = cr_ckpt_writer_open(path, &e);
    CR_CHECK(w);
    CR_CHECK(cr_ckpt_put_table_typed(w, "bad", 1, 2, "sgd", 1, CR_CKPT_F32 | CR_CKPT_SPARSE, &e) < 0);
    cr_ckpt_writer_abort(&w);
    w = cr_ckpt_writer_open(path, &e);
    CR_CHECK(cr_ckpt_put_table_typed(w, "S", 3, 2, "adagrad", 4, CR_CKPT_F32 | CR_CKPT_SPARSE, &e) == 0);
    int64_t keys[3] = {-1, INT64_MIN, 0x7ff8000000000001LL}; /* the last two halves read as a NaN float */
    float v[6] = {1, 2, 3, 4, 5, 6}, st[12];
    for (int i = 0; i < 3; i++) {
        memcpy(st + 4 * i, &keys[i], 8); /* little-endian: low half first */
        st[4 * i + 2] = (float)i, st[4 * i + 3] = -1;
    }
    CR_CHECK(cr_ckpt_put_rows(w, 3, v, st, &e) == 0);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == 0);
    cr_ckpt_reader *r = cr_ckpt_reader_open(path, &e);
    CR_CHECK(r);
    cr_ckpt_table_info info;
    CR_CHECK(cr_ckpt_next_table(r, &info, &e) == 1);
    CR_CHECK(info.dtype == (CR_CKPT_F32 | CR_CKPT_SPARSE) && info.keys == 3 && info.state_dim == 4);
    float v2[6], st2[12];
    CR_CHECK(cr_ckpt_get_rows(r, 3, v2, st2, &e) == 0);
    CR_CHECK(!memcmp(v, v2, sizeof v) && !memcmp(st, st2, sizeof st));
    for (int i = 0; i < 3; i++) {
        int64_t k;
        memcpy(&k, st2 + 4 * i, 8);
        CR_CHECK(k == keys[i]);
    }
    cr_ckpt_reader_close(&r);
    remove(path);
}

int main(void) {
    CR_RUN(test_ckpt_format);
    CR_RUN(test_threads);
    CR_RUN(test_fmap_growth);
    CR_RUN(test_fmap_delete_and_specials);
    CR_RUN(test_owners);
    CR_RUN(test_shard);
    CR_RUN(test_keyed_rows_message);
    return cr_test_done();
}
