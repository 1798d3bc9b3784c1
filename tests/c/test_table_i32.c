/* dtype = "i32" tables (ps/cr_table.h): int32 counts in the shard's 4-byte
 * slots. The rule add is exact where float32 is not (2^24 + 1), wraps on
 * int32 overflow without undefined behaviour, takes batches of every size
 * (each locking regime of cr_shard_push); assign stores the ints; bulk rows
 * move the bit patterns unchanged; the definition check refuses what an
 * i32 table cannot do; checkpoints record the dtype of i32 tables only (an
 * f32 table's header is the one older files have). */
#include <stdint.h>
#include <stdlib.h>

#include "cr_test.h"
#include "ps/cr_ckpt.h"
#include "ps/cr_table.h"

static cr_table_def def(int kind) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "C");
    d.keys = 9000;
    d.dim = 3;
    d.dtype = CR_DTYPE_I32;
    d.optim = (cr_optim){.kind = kind};
    d.seed = 7;
    return d;
}

static int32_t geti(const float *v, size_t i) {
    int32_t x;
    memcpy(&x, v + i, sizeof x);
    return x;
}

static void puti(float *v, size_t i, int32_t x) { memcpy(v + i, &x, sizeof x); }

/* Row k of s, value j, as an int. */
static int32_t at(cr_shard *s, int64_t k, int j) {
    float row[3];
    cr_shard_pull(s, &k, 1, row);
    return geti(row, (size_t)j);
}

static void test_add_exact_past_2p24(void) {
    cr_table_def d = def(CR_OPTIM_ADD);
    cr_err e;
    cr_shard *s = cr_shard_new(&d, 0, 1, &e);
    CR_CHECK(s != NULL);
    float row[3];
    puti(row, 0, 1 << 24), puti(row, 1, -(1 << 24)), puti(row, 2, INT32_MAX);
    cr_shard_set_rows(s, 5, 1, row, NULL);
    float one[3];
    puti(one, 0, 1), puti(one, 1, -1), puti(one, 2, 1);
    int64_t k = 5;
    for (int i = 0; i < 1000; i++) cr_shard_push(s, &k, 1, one);
    CR_CHECK(at(s, 5, 0) == (1 << 24) + 1000); /* float32: 2^24 + 1 == 2^24, it would stay at 2^24 */
    CR_CHECK(at(s, 5, 1) == -(1 << 24) - 1000);
    CR_CHECK(at(s, 5, 2) == INT32_MIN + 999); /* wrapped, as uint32 arithmetic does */
    /* the same adds on an f32 table lose every one of them: the test above can fail */
    cr_table_def f = d;
    f.dtype = CR_DTYPE_F32;
    cr_shard *sf = cr_shard_new(&f, 0, 1, &e);
    float frow[3] = {16777216.0f, 0, 0}, fone[3] = {1, 1, 1};
    cr_shard_set_rows(sf, 5, 1, frow, NULL);
    for (int i = 0; i < 1000; i++) cr_shard_push(sf, &k, 1, fone);
    CR_CHECK(sf->w[5 * 3] == 16777216.0f);
    cr_shard_destroy(&sf);
    cr_shard_destroy(&s);
}

/* Batches of 1, 200 (stripe by stripe) and 5000 (every stripe) keys with
 * repeats, on 2 nodes' shards: each key ends at its number of adds. */
static void test_add_batches(void) {
    cr_table_def d = def(CR_OPTIM_ADD);
    cr_err e;
    cr_shard *s = cr_shard_new(&d, 1, 2, &e); /* keys [4500, 9000) */
    CR_CHECK(s && s->lo == 4500);
    int32_t *want = calloc(9000, sizeof *want);
    int64_t *keys = malloc(5000 * sizeof *keys);
    float *g = malloc(5000 * 3 * sizeof *g);
    uint64_t x = 12345;
    int sizes[] = {1, 200, 5000};
    for (int round = 0; round < 20; round++) {
        int n = sizes[round % 3];
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            keys[i] = 4500 + (int64_t)((x >> 33) % 300);
            int32_t v = (int32_t)((x >> 20) % 7) - 3;
            for (int j = 0; j < 3; j++) puti(g, (size_t)i * 3 + (size_t)j, v);
            want[keys[i]] += v;
        }
        cr_shard_push(s, keys, n, g);
    }
    int ok = 1;
    for (int64_t k = 4500; k < 4800; k++)
        for (int j = 0; j < 3; j++) ok &= at(s, k, j) == want[k];
    free(want);
    free(keys);
    free(g);
    cr_shard_destroy(&s);
    CR_CHECK(ok);
}

static void test_assign_and_rows(void) {
    cr_table_def d = def(CR_OPTIM_ASSIGN);
    d.init = CR_INIT_UNIFORM, d.init_a = d.init_b = -7; /* the constant -7 */
    cr_err e;
    CR_CHECK(cr_table_def_check(&d, &e) == 0);
    cr_shard *s = cr_shard_new(&d, 0, 1, &e);
    CR_CHECK(at(s, 8999, 2) == -7 && at(s, 0, 0) == -7);
    float g[3];
    puti(g, 0, (1 << 24) + 1), puti(g, 1, -1), puti(g, 2, 0x7fc00001); /* a NaN's bits as a float */
    int64_t k = 3;
    cr_shard_push(s, &k, 1, g);
    CR_CHECK(at(s, 3, 0) == (1 << 24) + 1 && at(s, 3, 1) == -1 && at(s, 3, 2) == 0x7fc00001);
    float rows[6];
    cr_shard_get_rows(s, 3, 2, rows, NULL);
    CR_CHECK(geti(rows, 0) == (1 << 24) + 1 && geti(rows, 2) == 0x7fc00001 && geti(rows, 3) == -7);
    puti(rows, 3, 123456789);
    cr_shard_set_rows(s, 3, 2, rows, NULL);
    CR_CHECK(at(s, 4, 0) == 123456789 && at(s, 3, 2) == 0x7fc00001);
    cr_shard_destroy(&s);
}

static void test_def_check(void) {
    cr_err e;
    cr_table_def d = def(CR_OPTIM_ADD);
    CR_CHECK(cr_table_def_check(&d, &e) == 0);
    d.optim.kind = CR_OPTIM_SGD;
    CR_CHECK(cr_table_def_check(&d, &e) < 0);
    CR_CHECK(strstr(e.msg, "table 'C': an i32 table takes the optimizer add or assign, not sgd") != NULL);
    d.optim.kind = CR_OPTIM_ADAGRAD;
    CR_CHECK(cr_table_def_check(&d, &e) < 0);
    d = def(CR_OPTIM_ADD);
    d.init = CR_INIT_NORMAL, d.init_b = 1;
    CR_CHECK(cr_table_def_check(&d, &e) < 0 && strstr(e.msg, "zeros or a constant integer") != NULL);
    d.init = CR_INIT_UNIFORM, d.init_a = 0, d.init_b = 1;
    CR_CHECK(cr_table_def_check(&d, &e) < 0);
    d.init_a = d.init_b = 0.5;
    CR_CHECK(cr_table_def_check(&d, &e) < 0);
    d.init_a = d.init_b = 4294967296.0;
    CR_CHECK(cr_table_def_check(&d, &e) < 0);
    d = def(CR_OPTIM_ADD);
    d.dtype = 2;
    CR_CHECK(cr_table_def_check(&d, &e) < 0 && strstr(e.msg, "unknown dtype 2 (expected f32 or i32)") != NULL);
    CR_CHECK_STR(cr_dtype_name(CR_DTYPE_I32), "i32");
    CR_CHECK_STR(cr_dtype_name(CR_DTYPE_F32), "f32");
    /* the shard runs add's int32 form (the same rule), and still names it add */
    d = def(CR_OPTIM_ADD);
    cr_shard *s = cr_shard_new(&d, 0, 1, &e);
    CR_CHECK(s->def.optim.kind == CR_OPTIM_ADD && s->def.optim.i32 && cr_shard_i32(s));
    CR_CHECK_STR(cr_optim_name(&s->def.optim), "add");
    cr_shard_destroy(&s);
}

static void test_ckpt_dtype(void) {
    char path[] = "/tmp/crescent_i32_XXXXXX";
    int fd = mkstemp(path);
    CR_CHECK(fd >= 0);
    close(fd);
    cr_err e;
    float v[4], f[2] = {0.5f, -2};
    for (int i = 0; i < 4; i++) puti(v, (size_t)i, (int32_t)(uint32_t)((1u << 24) + 1u + (uint32_t)i * 1000000000u));
    cr_ckpt_writer *w = cr_ckpt_writer_open(path, &e);
    CR_CHECK(w && cr_ckpt_put_table_typed(w, "C", 2, 2, "add", 0, CR_CKPT_I32, &e) == 0);
    CR_CHECK(cr_ckpt_put_rows(w, 2, v, NULL, &e) == 0);
    CR_CHECK(cr_ckpt_put_table(w, "F", 1, 2, "sgd", 0, &e) == 0 && cr_ckpt_put_rows(w, 1, f, NULL, &e) == 0);
    CR_CHECK(cr_ckpt_put_table_typed(w, "X", 1, 1, "", 0, 7, &e) < 0); /* and w is unusable now */
    cr_ckpt_writer_abort(&w);
    w = cr_ckpt_writer_open(path, &e);
    CR_CHECK(w && cr_ckpt_put_table_typed(w, "C", 2, 2, "add", 0, CR_CKPT_I32, &e) == 0);
    CR_CHECK(cr_ckpt_put_rows(w, 2, v, NULL, &e) == 0);
    CR_CHECK(cr_ckpt_put_table(w, "F", 1, 2, "sgd", 0, &e) == 0 && cr_ckpt_put_rows(w, 1, f, NULL, &e) == 0);
    CR_CHECK(cr_ckpt_writer_commit(&w, &e) == 0);
    cr_ckpt_reader *r = cr_ckpt_reader_open(path, &e);
    CR_CHECK(r != NULL);
    cr_ckpt_table_info t;
    float got[4];
    CR_CHECK(cr_ckpt_next_table(r, &t, &e) == 1 && t.dtype == CR_CKPT_I32 && !strcmp(t.name, "C"));
    CR_CHECK(cr_ckpt_get_rows(r, 2, got, NULL, &e) == 0 && !memcmp(got, v, sizeof v));
    CR_CHECK(geti(got, 3) == (1 << 24) + 1 + 3000000000LL - 4294967296LL);
    CR_CHECK(cr_ckpt_next_table(r, &t, &e) == 1 && t.dtype == CR_CKPT_F32 && !strcmp(t.name, "F"));
    CR_CHECK(cr_ckpt_get_rows(r, 1, got, NULL, &e) == 0 && got[0] == 0.5f && got[1] == -2);
    cr_ckpt_reader_close(&r);
    unlink(path);
}

int main(void) {
    CR_RUN(test_add_exact_past_2p24);
    CR_RUN(test_add_batches);
    CR_RUN(test_assign_and_rows);
    CR_RUN(test_def_check);
    CR_RUN(test_ckpt_dtype);
    return cr_test_done();
}
