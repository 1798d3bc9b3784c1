/* Placements of dense tables (ps/cr_place.h): owners, internal ids that
 * are contiguous per node, shards under hash and file placement holding
 * exactly their keys with initial values of the user key, the TABLE
 * message carrying a file's key-to-node map. */
#include <stdint.h>
#include <stdlib.h>

#include "cr_test.h"
#include "ps/cr_place.h"
#include "ps/cr_proto.h"
#include "ps/cr_table.h"

/* ids of every node are [lo, lo + cnt), the owner is id / block, each key
 * maps to one id and back, and ids of a node follow the key order */
static int consistent(const cr_place *p, const uint32_t *want_owner) {
    int64_t total = 0;
    for (int n = 0; n < p->nodes; n++) total += p->cnt[n];
    if (total != p->keys) return 0;
    int64_t last[16];
    if (p->nodes > 16) return 0;
    for (int n = 0; n < p->nodes; n++) last[n] = -1;
    int ok = 1;
    for (int64_t k = 0; k < p->keys && ok; k++) {
        int64_t id = cr_place_id(p, k);
        int o = cr_place_owner(p, k);
        ok = o >= 0 && o < p->nodes && id >= cr_place_lo(p, o) && id < cr_place_lo(p, o) + p->cnt[o] &&
             cr_place_user(p, id) == k && cr_place_valid(p, id) && id > last[o] &&
             (!want_owner || (uint32_t)o == want_owner[k]);
        last[o] = id;
    }
    return ok;
}

static void test_range_identity(void) {
    cr_err e;
    cr_place *p = cr_place_new(1001, 3, CR_PLACE_RANGE, NULL, "t", &e);
    CR_CHECK(p && !p->to_int && p->block == 334);
    CR_CHECK(consistent(p, NULL));
    for (int64_t k = 0; k < 1001; k++) CR_CHECK(cr_place_id(p, k) == k && cr_place_owner(p, k) == (int)(k / 334));
    CR_CHECK(!cr_place_valid(p, 1001) && !cr_place_valid(p, -1));
    cr_place_destroy(&p);
    CR_CHECK(p == NULL);
}

static void test_hash_spreads(void) {
    cr_err e;
    for (int nodes = 1; nodes <= 5; nodes++) {
        cr_place *p = cr_place_new(10000, nodes, CR_PLACE_HASH, NULL, "t", &e);
        CR_CHECK(p && consistent(p, NULL));
        for (int n = 0; n < nodes; n++) CR_CHECK_NEAR(p->cnt[n], 10000.0 / nodes, 300);
        for (int64_t k = 0; k < 10000; k += 97)
            CR_CHECK(cr_place_owner(p, k) == (int)(cr_place_mix((uint64_t)k) % (uint64_t)nodes));
        /* the gaps of smaller nodes are no key's */
        for (int n = 0; n < nodes; n++)
            if (p->cnt[n] < p->block) CR_CHECK(!cr_place_valid(p, cr_place_lo(p, n) + p->cnt[n]));
        cr_place_destroy(&p);
    }
}

static void test_file_map(void) {
    cr_err e;
    uint32_t own[200];
    for (int k = 0; k < 200; k++) own[k] = (uint32_t)((k * 7 + 3) % 11 < 4 ? 2 : k % 2); /* 3 nodes, uneven */
    cr_place *p = cr_place_new(200, 3, CR_PLACE_FILE, own, "t", &e);
    CR_CHECK(p && consistent(p, own));
    cr_place_destroy(&p);
    own[17] = 3; /* beyond the nodes */
    p = cr_place_new(200, 3, CR_PLACE_FILE, own, "table 'T'", &e);
    CR_CHECK(p == NULL && strstr(e.msg, "table 'T'") && strstr(e.msg, "key 17"));
    CR_CHECK(cr_place_new(200, 3, CR_PLACE_FILE, NULL, "t", &e) == NULL);
    /* a node without keys */
    for (int k = 0; k < 200; k++) own[k] = (uint32_t)(k % 2) * 2;
    p = cr_place_new(200, 3, CR_PLACE_FILE, own, "t", &e);
    CR_CHECK(p && consistent(p, own) && p->cnt[1] == 0);
    cr_place_destroy(&p);
}

static cr_table_def def(int placement) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "W");
    d.keys = 301;
    d.dim = 3;
    d.init = CR_INIT_UNIFORM;
    d.init_a = -1;
    d.init_b = 1;
    d.optim = (cr_optim){.kind = CR_OPTIM_SGD, .lr = 0.5f};
    d.seed = 42;
    d.placement = placement;
    return d;
}

/* Shards of every node under hash and file placement hold their keys, with
 * the rows a range placement gives the same user keys. */
static void test_shards(void) {
    cr_err e;
    cr_table_def dr = def(CR_PLACE_RANGE);
    cr_shard *one = cr_shard_new(&dr, 0, 1, &e);
    CR_CHECK(one);
    uint32_t own[301];
    for (int k = 0; k < 301; k++) own[k] = (uint32_t)(k % 3 == 0);
    for (int kind = CR_PLACE_HASH; kind <= CR_PLACE_FILE; kind++) {
        cr_table_def d = def(kind);
        int64_t held = 0;
        for (int node = 0; node < 2; node++) {
            cr_shard *s = cr_shard_new_placed(&d, node, 2, kind == CR_PLACE_FILE ? own : NULL, &e);
            CR_CHECK(s && s->pl);
            held += s->hi - s->lo;
            for (int64_t id = s->lo; id < s->hi; id++) {
                int64_t k = cr_shard_user_key(s, id);
                CR_CHECK(cr_shard_owner(s, id) == node && cr_shard_key_ok(s, id));
                if (kind == CR_PLACE_FILE) CR_CHECK(own[k] == (uint32_t)node);
                float row[3];
                cr_shard_pull(s, &id, 1, row);
                CR_CHECK(!memcmp(row, one->w + k * 3, sizeof row));
            }
            CR_CHECK(cr_shard_need_range(s, "sampling", &e) < 0 && strstr(e.msg, "table 'W' has placement"));
            cr_shard_destroy(&s);
        }
        CR_CHECK(held == 301);
    }
    CR_CHECK(cr_shard_need_range(one, "sampling", &e) == 0);
    cr_shard_destroy(&one);
    /* a file placement without its map is refused */
    cr_table_def d = def(CR_PLACE_FILE);
    CR_CHECK(cr_shard_new_placed(&d, 0, 2, NULL, &e) == NULL);
}

static void test_table_message(void) {
    cr_table_def d = def(CR_PLACE_FILE);
    uint32_t own[301];
    for (int k = 0; k < 301; k++) own[k] = (uint32_t)(k % 5 == 0);
    cr_msg_table t = {.id = 2, .def = d, .owner = own}, back;
    cr_proto_msg m;
    cr_err e;
    CR_CHECK(cr_proto_encode_table(&t, &m, &e) == 0 && m.np == 2);
    CR_CHECK(cr_proto_decode_table(&m, &back, &e) == 0);
    CR_CHECK(back.owner && !memcmp(back.owner, own, sizeof own) && back.def.placement == CR_PLACE_FILE);
    cr_proto_msg_free(&m);
    t.owner = NULL; /* a file placement needs its map */
    CR_CHECK(cr_proto_encode_table(&t, &m, &e) < 0);
    cr_proto_msg_free(&m);
    t.def.placement = CR_PLACE_HASH;
    CR_CHECK(cr_proto_encode_table(&t, &m, &e) == 0 && m.np == 1);
    CR_CHECK(cr_proto_decode_table(&m, &back, &e) == 0 && !back.owner && back.def.placement == CR_PLACE_HASH);
    cr_proto_msg_free(&m);
}

int main(void) {
    CR_RUN(test_range_identity);
    CR_RUN(test_hash_spreads);
    CR_RUN(test_file_map);
    CR_RUN(test_shards);
    CR_RUN(test_table_message);
    return cr_test_done();
}
