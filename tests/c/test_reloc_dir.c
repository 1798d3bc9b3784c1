/* The relocation directory (ps/cr_dir.h): home keys given away and back,
 * rows of other homes stored and dropped (the per-stripe maps grow, reuse
 * slots and survive deletions), the away / held counters, technique per
 * key. The protocol itself (forwarding, the transit queue) runs between
 * node processes: tests/integration/reloc_count.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cr_test.h"
#include "ps/cr_dir.h"
#include "ps/cr_table.h"

static cr_table_def def(void) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "T");
    d.keys = 10000;
    d.dim = 3;
    d.init = CR_INIT_ZEROS;
    d.optim = (cr_optim){.kind = CR_OPTIM_ADAGRAD, .lr = 0.1f, .eps = 1e-8f, .init = 0.5f};
    return d;
}

static void test_home_keys(void) {
    cr_table_def d = def();
    cr_shard *s = cr_shard_new(&d, 0, 2, NULL);
    float *st, *w = cr_dir_row(s, 7, &st), v[3], sv[3];
    CR_CHECK(w != NULL && cr_dir_owner(s, 7) == 0);
    CR_CHECK(cr_dir_row(s, 6000, &st) == NULL); /* node 1's key, not relocated here */
    w[0] = 4;
    st[0] = 9;
    cr_dir_take(s, 7, v, sv);
    cr_dir_set_owner(s, 7, 1);
    CR_CHECK(v[0] == 4 && sv[0] == 9);
    CR_CHECK(cr_dir_row(s, 7, &st) == NULL && cr_dir_owner(s, 7) == 1 && s->dir->away == 1);
    cr_dir_set_owner(s, 7, 0); /* given back to the home: on its way, not here yet */
    CR_CHECK(cr_dir_row(s, 7, &st) == NULL && s->dir->away == 1);
    v[0] = 5;
    cr_dir_install(s, 7, v, sv);
    w = cr_dir_row(s, 7, &st);
    CR_CHECK(w && w[0] == 5 && st[0] == 9 && s->dir->away == 0);
    cr_shard_destroy(&s);
}

/* Many rows of node 1's keys come and go: values and state stay with their key. */
static void test_relocated_rows(void) {
    cr_table_def d = def();
    cr_shard *s = cr_shard_new(&d, 0, 2, NULL);
    float v[3], sv[3], *st;
    for (int round = 0; round < 3; round++) {
        for (int64_t k = 5000; k < 9000; k++) {
            v[0] = (float)k, v[1] = (float)round, v[2] = 0;
            sv[0] = (float)-k, sv[1] = sv[2] = 0;
            cr_dir_install(s, k, v, sv);
        }
        CR_CHECK(s->dir->held == 4000);
        int bad = 0;
        for (int64_t k = 5000; k < 9000; k++) {
            float *w = cr_dir_row(s, k, &st);
            bad += !w || w[0] != (float)k || w[1] != (float)round || st[0] != (float)-k;
        }
        CR_CHECK(bad == 0);
        for (int64_t k = 5000; k < 9000; k += 2) cr_dir_take(s, k, v, sv); /* half leave */
        CR_CHECK(s->dir->held == 2000 && cr_dir_row(s, 5000, &st) == NULL && cr_dir_row(s, 5001, &st) != NULL);
        for (int64_t k = 5001; k < 9000; k += 2) cr_dir_take(s, k, v, sv);
        CR_CHECK(s->dir->held == 0);
    }
    /* slots are reused: the slabs did not grow past one round's rows */
    int64_t slots = 0;
    for (int i = 0; i < CR_SHARD_STRIPES; i++) slots += s->dir->fs[i].nslot;
    CR_CHECK(slots <= 4000);
    cr_shard_destroy(&s);
}

static void test_technique(void) {
    cr_table_def d = def();
    cr_shard *s = cr_shard_new(&d, 1, 2, NULL);
    CR_CHECK(cr_dir_tech(s, 3) == CR_TECH_CLASSIC && !cr_dir_relocating(s));
    atomic_store(&s->dir->mode, CR_TECH_RELOCATE);
    int64_t r[] = {3, 9999, 3};
    cr_dir_set_replicated(s, r, 3);
    CR_CHECK(cr_dir_tech(s, 3) == CR_TECH_REPLICATE && cr_dir_tech(s, 9999) == CR_TECH_REPLICATE);
    CR_CHECK(cr_dir_tech(s, 4) == CR_TECH_RELOCATE && s->dir->nrepl == 2 && cr_dir_relocating(s));
    cr_dir_set_replicated(s, NULL, 0);
    CR_CHECK(cr_dir_tech(s, 3) == CR_TECH_RELOCATE);
    cr_shard_destroy(&s);
}

int main(void) {
    CR_RUN(test_home_keys);
    CR_RUN(test_relocated_rows);
    CR_RUN(test_technique);
    return cr_test_done();
}
