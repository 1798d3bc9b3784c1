/* The sampling manager's levels, checked statistically at fixed seeds
 * (chi-square at the 0.999 level, see stat_util.h) and structurally (where
 * rows come from, reuse windows, postponing), with a fake fetch whose
 * arrival the test controls. */
#include "base/cr_alias.h"
#include "cr_test.h"
#include "ps/cr_sampling.h"
#include "stat_util.h"

/* ---- a fake fetch: remembers each fetch's keys until released --------- */

typedef struct fake {
    int64_t **keys; /* by ticket */
    int64_t *n;
    int *released;
    uint64_t nt, cap;
    int64_t live, fetched_keys, bad_release;
    int ready_mode; /* 0 always arrived, 1 never, 2 with probability 0.3 */
    int fail;
    cr_rng rng;
} fake;

static int fake_fetch(void *ctx, const int64_t *keys, int64_t n, uint64_t *ticket, cr_err *e) {
    fake *f = ctx;
    if (f->fail) return cr_errf(e, "fetch: node 1 is gone");
    if (f->nt == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->keys = realloc(f->keys, f->cap * sizeof *f->keys);
        f->n = realloc(f->n, f->cap * sizeof *f->n);
        f->released = realloc(f->released, f->cap * sizeof *f->released);
    }
    f->keys[f->nt] = malloc((size_t)n * sizeof(int64_t));
    memcpy(f->keys[f->nt], keys, (size_t)n * sizeof(int64_t));
    f->n[f->nt] = n;
    f->released[f->nt] = 0;
    *ticket = f->nt++;
    f->live++;
    f->fetched_keys += n;
    return 0;
}

static int fake_ready(void *ctx, uint64_t ticket) {
    fake *f = ctx;
    (void)ticket;
    if (f->ready_mode == 1) return 0;
    if (f->ready_mode == 2) return cr_rng_uniform(&f->rng) < 0.3;
    return 1;
}

static void fake_release(void *ctx, uint64_t ticket) {
    fake *f = ctx;
    if (ticket >= f->nt || f->released[ticket]) {
        f->bad_release++;
        return;
    }
    f->released[ticket] = 1;
    free(f->keys[ticket]);
    f->keys[ticket] = NULL;
    f->live--;
}

static void fake_free(fake *f) {
    for (uint64_t t = 0; t < f->nt; t++) free(f->keys[t]);
    free(f->keys);
    free(f->n);
    free(f->released);
    memset(f, 0, sizeof *f);
}

static cr_sampling_io fake_io(fake *f) {
    cr_sampling_io io = {f, fake_fetch, fake_ready, fake_release};
    return io;
}

/* The row of x is where the sampler says: the shard for local keys, row
 * `slot` of a live fetch for the others. */
static int row_ok(const fake *f, const cr_sampling_conf *c, const cr_sample *x) {
    int local = x->key >= c->local_lo && x->key < c->local_hi;
    if (x->ticket == CR_SAMPLE_LOCAL) return local && x->slot == -1;
    if (!f || local || x->ticket >= f->nt || f->released[x->ticket]) return 0;
    return x->slot >= 0 && x->slot < f->n[x->ticket] && f->keys[x->ticket][x->slot] == x->key;
}

/* Zipf-like pi over n keys: w_k = 1 / (k + 1). */
static void zipf(double *w, double *p, int n) {
    double t = 0;
    for (int k = 0; k < n; k++) t += w[k] = 1.0 / (k + 1);
    for (int k = 0; k < n; k++) p[k] = w[k] / t;
}

static cr_sampling_conf conf(cr_sampling_level level, int64_t g, int64_t u, int64_t lo, int64_t hi) {
    cr_sampling_conf c;
    cr_sampling_conf_default(&c, level);
    c.pool = g;
    c.reuse = u;
    c.local_lo = lo;
    c.local_hi = hi;
    return c;
}

/* ---- a rig: the alias table over n keys and a fake fetch ------------- */

typedef struct rig {
    cr_alias a;
    fake f;
    cr_sampling_io io;
    cr_err e;
} rig;

/* Weights w (NULL: uniform) over n keys; io fetches into r->f. r must not
 * move after this (io points into it). */
static int rig_init(rig *r, const double *w, uint64_t n) {
    memset(r, 0, sizeof *r);
    r->io = fake_io(&r->f);
    return cr_alias_build(&r->a, w, n, &r->e);
}

/* Every fetch released exactly once? Then frees the rig either way. */
static int rig_done(rig *r) {
    int ok = r->f.live == 0 && r->f.bad_release == 0;
    fake_free(&r->f);
    cr_alias_free(&r->a);
    return ok;
}

/* A sampler over the rig's table and fetch (rng stream (seed, stream)),
 * or NULL with the message in r->e. */
static cr_sampler *rig_new(rig *r, const cr_sampling_conf *c, uint64_t seed, uint64_t stream) {
    return cr_sampler_new(&r->a, NULL, c, &r->io, seed, stream, &r->e);
}

/* How many of out[0, n) drew key k. */
static long count_key(const cr_sample *out, int n, int64_t k) {
    long m = 0;
    for (int i = 0; i < n; i++) m += out[i].key == k;
    return m;
}

/* ---- configuration and call errors ------------------------------------ */

static void test_bad_conf(void) {
    rig rg;
    CR_CHECK(rig_init(&rg, NULL, 10) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_BOUNDED, 0, 16, 0, 5);
    CR_CHECK(rig_new(&rg, &c, 1, 0) == NULL);
    CR_CHECK_STR(rg.e.msg, "sampling: pool size must be at least 1 (got 0)");
    c = conf(CR_SAMPLING_BOUNDED, 250, 0, 0, 5);
    CR_CHECK(rig_new(&rg, &c, 1, 0) == NULL);
    CR_CHECK_STR(rg.e.msg, "sampling: reuse count must be at least 1 (got 0)");
    c = conf(CR_SAMPLING_BOUNDED, 250, 16, 0, 5);
    c.postpone = 1;
    CR_CHECK(rig_new(&rg, &c, 1, 0) == NULL);
    CR_CHECK_STR(rg.e.msg, "sampling: postponing needs level 3 (longterm): it breaks level 2");
    c.postpone = 0;
    c.level = 7;
    CR_CHECK(rig_new(&rg, &c, 1, 0) == NULL);
    CR_CHECK_STR(rg.e.msg, "sampling: unknown level 7 (1 conform, 2 bounded, 3 longterm, 4 local)");
    c = conf(CR_SAMPLING_CONFORM, 250, 16, 6, 5);
    CR_CHECK(rig_new(&rg, &c, 1, 0) == NULL);
    CR_CHECK_STR(rg.e.msg, "sampling: bad local key range [6, 5)");
    c = conf(CR_SAMPLING_LOCAL, 250, 16, 0, 5);
    CR_CHECK(cr_sampler_new(&rg.a, NULL, &c, NULL, 1, 0, &rg.e) == NULL);
    CR_CHECK_STR(rg.e.msg, "sampling: level 4 (local) needs the local alias table");
    c = conf(CR_SAMPLING_CONFORM, 250, 16, 0, 5);
    CR_CHECK(cr_sampler_new(&rg.a, NULL, &c, NULL, 1, 0, &rg.e) == NULL);
    CR_CHECK_STR(rg.e.msg, "sampling: no fetch function");
    CR_CHECK(rig_done(&rg));
}

static void test_bad_calls(void) {
    rig rg;
    CR_CHECK(rig_init(&rg, NULL, 10) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_CONFORM, 1, 1, 0, 5);
    cr_sampler *s = rig_new(&rg, &c, 1, 0);
    CR_CHECK(s != NULL);
    uint32_t h;
    cr_sample out[8];
    CR_CHECK(cr_sampler_prepare(s, -1, &h, &rg.e) == -1);
    CR_CHECK_STR(rg.e.msg, "prepare_sample: bad number of samples -1");
    CR_CHECK(cr_sampler_prepare(s, 4, &h, &rg.e) == 0 && h != 0);
    CR_CHECK(cr_sampler_pull(s, h, 5, out, &rg.e) == -1);
    CR_CHECK_STR(rg.e.msg, "pull_sample: handle 1 has 4 samples left, asked for 5");
    CR_CHECK(cr_sampler_pull(s, h + 1, 1, out, &rg.e) == -1);
    CR_CHECK_STR(rg.e.msg, "pull_sample: no open handle 2");
    CR_CHECK(cr_sampler_pull(s, h, 4, out, &rg.e) == 0);
    CR_CHECK(cr_sampler_left(s, h) == -1); /* closed by its last pull */
    CR_CHECK(cr_sampler_pull(s, h, 1, out, &rg.e) == -1);
    CR_CHECK_STR(rg.e.msg, "pull_sample: no open handle 1");
    /* A failing fetch fails the prepare and leaves no handle behind. */
    rg.f.fail = 1;
    int64_t nh = 0;
    for (int i = 0; i < 20 && cr_sampler_prepare(s, 8, &h, &rg.e) == 0; i++) nh++;
    CR_CHECK(nh < 20); /* 8 uniform draws over 10 keys, 5 remote: some fetch */
    CR_CHECK_STR(rg.e.msg, "fetch: node 1 is gone");
    cr_sampler_destroy(&s);
    CR_CHECK(s == NULL);
    cr_sampler_destroy(&s);
    CR_CHECK(rig_done(&rg));
}

/* Pull a handle of n in portions of at most `part`, checking rows. */
static int pull_all(cr_sampler *s, const fake *f, const cr_sampling_conf *c, int64_t n, int64_t part,
                    cr_sample *out) {
    uint32_t h;
    cr_err e;
    if (cr_sampler_prepare(s, n, &h, &e)) return -1;
    for (int64_t got = 0; got < n;) {
        int64_t m = n - got < part ? n - got : part;
        if (cr_sampler_pull(s, h, m, out + got, &e)) return -1;
        for (int64_t i = got; i < got + m; i++)
            if (!row_ok(f, c, &out[i])) return -1;
        got += m;
    }
    return cr_sampler_left(s, h) == -1 ? 0 : -1;
}

/* ---- level 1 ---------------------------------------------------------- */

static void test_conform_chi2(void) {
    double w[50], p[50];
    zipf(w, p, 50);
    rig rg;
    CR_CHECK(rig_init(&rg, w, 50) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_CONFORM, 1, 1, 0, 25);
    cr_sampler *s = rig_new(&rg, &c, 7, 0);
    CR_CHECK(s != NULL);
    static cr_sample out[1000];
    static long cnt[50];
    long total = 0;
    for (int r = 0; r < 200; r++) {
        CR_CHECK(pull_all(s, &rg.f, &c, 1000, 96, out) == 0);
        for (int i = 0; i < 1000; i++) cnt[out[i].key]++, total++;
    }
    CR_CHECK(st_chi2(cnt, p, 50, total) < CHI2_999_DF49);
    cr_sampling_stats st, sum = {0};
    cr_sampler_stats(s, &st);
    cr_sampling_stats_add(&sum, &st);
    cr_sampling_stats_add(&sum, &st);
    CR_CHECK(sum.drawn == 2 * st.drawn && sum.remote == 2 * st.remote && sum.local == 2 * st.local);
    CR_CHECK(st.drawn == (uint64_t)total && st.local + st.pooled == (uint64_t)total);
    CR_CHECK(st.remote == st.pooled && st.reused == 0 && st.postponed == 0);
    CR_CHECK((int64_t)st.remote == rg.f.fetched_keys);
    cr_sampler_destroy(&s);
    CR_CHECK(rig_done(&rg));
}

/* ---- level 2 ---------------------------------------------------------- */

/* The L2 definition itself: the sample at a fixed position, across many
 * independent workers, is distributed as pi, whatever the position within
 * the pool's passes. G = 8, U = 3: positions 5 (first pass) and 40 (second
 * pool, third pass). */
static void test_bounded_marginals(void) {
    double w[20], p[20];
    zipf(w, p, 20);
    rig rg;
    CR_CHECK(rig_init(&rg, w, 20) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_BOUNDED, 8, 3, 0, 10);
    static long at5[20], at40[20];
    cr_sample out[48];
    const long runs = 20000;
    for (long r = 0; r < runs; r++) {
        cr_sampler *s = rig_new(&rg, &c, 11, (uint64_t)r);
        CR_CHECK(s != NULL);
        CR_CHECK(pull_all(s, &rg.f, &c, 48, 48, out) == 0);
        at5[out[5].key]++;
        at40[out[40].key]++;
        CR_CHECK(out[40].use == 2);
        cr_sampler_destroy(&s);
    }
    CR_CHECK(st_chi2(at5, p, 20, runs) < CHI2_999_DF19);
    CR_CHECK(st_chi2(at40, p, 20, runs) < CHI2_999_DF19);
    CR_CHECK(rig_done(&rg));
}

/* One worker's long stream: every draw is used exactly U times, all within
 * U*G consecutive samples; its rows are fetched once (not U times); the
 * frequencies over whole pools are U times the draw counts, which are pi. */
static void test_bounded_window(void) {
    enum { G = 50, U = 4, POOLS = 400, N = G * U * POOLS };
    double w[50], p[50];
    zipf(w, p, 50);
    rig rg;
    CR_CHECK(rig_init(&rg, w, 50) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_BOUNDED, G, U, 0, 20);
    cr_sampler *s = rig_new(&rg, &c, 5, 0);
    CR_CHECK(s != NULL);
    static cr_sample out[N];
    for (int64_t i = 0; i < N; i += 1000) CR_CHECK(pull_all(s, &rg.f, &c, 1000, 37, out + i) == 0);
    static int64_t first[N / U], last[N / U], uses[N / U];
    static long cnt[50];
    for (int64_t i = 0; i < N; i++) {
        uint64_t d = out[i].draw;
        CR_CHECK(d < N / U);
        if (uses[d]++ == 0) first[d] = i;
        last[d] = i;
        CR_CHECK(out[i].use == (uint32_t)(uses[d] - 1)); /* passes in order */
        cnt[out[i].key]++;
    }
    for (int64_t d = 0; d < N / U; d++) CR_CHECK(uses[d] == U && last[d] - first[d] < U * G);
    for (int k = 0; k < 50; k++) CR_CHECK(cnt[k] % U == 0);
    for (int k = 0; k < 50; k++) cnt[k] /= U;
    CR_CHECK(st_chi2(cnt, p, 50, N / U) < CHI2_999_DF49);
    cr_sampling_stats st;
    cr_sampler_stats(s, &st);
    CR_CHECK(st.reused == (uint64_t)N / U * (U - 1));
    CR_CHECK(st.pooled == U * st.remote - (uint64_t)rg.f.n[rg.f.nt - 1] * U); /* last pool: fetched ahead, unused */
    cr_sampler_destroy(&s);
    CR_CHECK(rig_done(&rg));
}

/* A pass is a permutation of the pool: within each block of G samples of a
 * pass, the multiset of draws is the pool's. And with U = 1, G = 1 the
 * stream is plain iid (level 1 behaviour). */
static void test_bounded_passes(void) {
    enum { G = 16, U = 3 };
    rig rg;
    CR_CHECK(rig_init(&rg, NULL, 1000) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_BOUNDED, G, U, 0, 500);
    cr_sampler *s = rig_new(&rg, &c, 3, 0);
    CR_CHECK(s != NULL);
    static cr_sample out[G * U * 10];
    CR_CHECK(pull_all(s, &rg.f, &c, G * U * 10, 7, out) == 0);
    for (int b = 0; b < U * 10; b++) {
        uint64_t base = (uint64_t)(b / U) * G, seen = 0;
        for (int i = 0; i < G; i++) {
            const cr_sample *x = &out[b * G + i];
            CR_CHECK(x->draw >= base && x->draw < base + G && x->use == (uint32_t)(b % U));
            seen |= 1ULL << (x->draw - base);
        }
        CR_CHECK(seen == (1ULL << G) - 1);
        /* a fresh order each pass: never the previous pass's (p = 1/16!) */
        if (b % U) {
            int same = 1;
            for (int i = 0; i < G; i++) same &= out[b * G + i].draw == out[(b - 1) * G + i].draw;
            CR_CHECK(!same);
        }
    }
    cr_sampler_destroy(&s);
    CR_CHECK(rig_done(&rg));
}

/* Keys are fixed at prepare time: two handles pulled in reverse order get
 * the stream positions they were prepared with (handles may overlap, as
 * with an asynchronous prepare of the next batch). */
static void test_bounded_handles_interleave(void) {
    rig rg;
    CR_CHECK(rig_init(&rg, NULL, 1000) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_BOUNDED, 4, 2, 0, 500);
    cr_sampler *s = rig_new(&rg, &c, 8, 0), *r = rig_new(&rg, &c, 8, 0);
    CR_CHECK(s && r);
    uint32_t h1, h2;
    cr_sample o1[5], o2[5], all[10];
    CR_CHECK(cr_sampler_prepare(s, 5, &h1, &rg.e) == 0 && cr_sampler_prepare(s, 5, &h2, &rg.e) == 0);
    CR_CHECK(cr_sampler_pull(s, h2, 5, o2, &rg.e) == 0 && cr_sampler_pull(s, h1, 5, o1, &rg.e) == 0);
    CR_CHECK(pull_all(r, &rg.f, &c, 10, 10, all) == 0);
    for (int i = 0; i < 5; i++) {
        CR_CHECK(o1[i].key == all[i].key && o1[i].draw == all[i].draw && o1[i].use == all[i].use);
        CR_CHECK(o2[i].key == all[5 + i].key && o2[i].draw == all[5 + i].draw);
    }
    cr_sampler_destroy(&s);
    cr_sampler_destroy(&r);
    CR_CHECK(rig_done(&rg));
}

/* ---- level 3 ---------------------------------------------------------- */

/* Nothing ever arrives: every non-local sample (but a last one with nothing
 * after it) is postponed exactly once, and the handle serves its prepared
 * samples as a stable partition, local ones first. The prepared order is
 * that of the same sampler without postponing. */
static void test_longterm_postpone_once(void) {
    enum { N = 60 };
    rig rg;
    CR_CHECK(rig_init(&rg, NULL, 100) == 0);
    rg.f.ready_mode = 1;
    fake g = {0};
    cr_sampling_io io2 = fake_io(&g);
    cr_sampling_conf c = conf(CR_SAMPLING_LONGTERM, 10, 2, 0, 50), c0 = c;
    c0.postpone = 0;
    cr_sampler *s = rig_new(&rg, &c, 9, 0), *s0 = cr_sampler_new(&rg.a, NULL, &c0, &io2, 9, 0, &rg.e);
    CR_CHECK(s && s0);
    cr_sample got[N], plan[N], want[N];
    CR_CHECK(pull_all(s, &rg.f, &c, N, 1, got) == 0);
    CR_CHECK(pull_all(s0, &g, &c0, N, N, plan) == 0);
    int64_t nw = 0, far = 0, flagged = 0;
    for (int i = 0; i < N; i++)
        if (plan[i].ticket == CR_SAMPLE_LOCAL) want[nw++] = plan[i];
    for (int i = 0; i < N; i++)
        if (plan[i].ticket != CR_SAMPLE_LOCAL) want[nw++] = plan[i], far++;
    for (int i = 0; i < N; i++) {
        CR_CHECK(got[i].key == want[i].key && got[i].draw == want[i].draw && got[i].use == want[i].use);
        CR_CHECK(got[i].postponed <= 1);
        flagged += got[i].postponed;
        CR_CHECK(got[i].postponed == (got[i].ticket != CR_SAMPLE_LOCAL) || i == N - 1);
    }
    cr_sampling_stats st;
    cr_sampler_stats(s, &st);
    CR_CHECK(far > 10 && (int64_t)st.postponed == flagged && flagged >= far - 1);
    cr_sampler_destroy(&s);
    cr_sampler_destroy(&s0);
    CR_CHECK(g.live == 0);
    fake_free(&g);
    CR_CHECK(rig_done(&rg));
}

/* Rows arrive at random: postponing reorders samples within handles, yet
 * each prepared sample is served exactly once, and the long-run frequencies
 * converge to pi (chi-square on whole pools, total variation shrinking). */
static void test_longterm_converges(void) {
    enum { G = 20, U = 4, H = 64, HANDLES = 5000, N = H * HANDLES };
    double w[20], p[20];
    zipf(w, p, 20);
    rig rg;
    CR_CHECK(rig_init(&rg, w, 20) == 0);
    rg.f.ready_mode = 2;
    cr_rng_seed(&rg.f.rng, 77);
    cr_sampling_conf c = conf(CR_SAMPLING_LONGTERM, G, U, 0, 10);
    cr_sampler *s = rig_new(&rg, &c, 13, 0);
    CR_CHECK(s != NULL);
    static long cnt[20];
    double tv_early = 0;
    cr_sample out[H];
    for (int h = 0; h < HANDLES; h++) {
        CR_CHECK(pull_all(s, &rg.f, &c, H, 8, out) == 0);
        static uint8_t seen[N / U * U]; /* (draw, use) served once */
        for (int i = 0; i < H; i++) {
            uint64_t id = out[i].draw * U + out[i].use;
            CR_CHECK(id < (uint64_t)N && !seen[id] && out[i].postponed <= 1);
            seen[id] = 1;
            cnt[out[i].key]++;
        }
        if (h == 9) tv_early = st_tv(cnt, p, 20, 10 * H);
    }
    cr_sampling_stats st;
    cr_sampler_stats(s, &st);
    CR_CHECK(st.postponed > N / 20);
    double tv = st_tv(cnt, p, 20, N);
    CR_CHECK(tv < 0.01 && tv < tv_early / 4);
    for (int k = 0; k < 20; k++) CR_CHECK(cnt[k] % U == 0);
    for (int k = 0; k < 20; k++) cnt[k] /= U;
    CR_CHECK(st_chi2(cnt, p, 20, N / U) < CHI2_999_DF19);
    cr_sampler_destroy(&s);
    CR_CHECK(rig_done(&rg));
}

/* ---- level 4 ---------------------------------------------------------- */

/* pi_0 = 0.6 > 1/2 on 2 nodes. Local sampling returns only local keys,
 * fetches nothing, and its frequencies diverge from pi on both nodes: the
 * node without key 0 never sees it (frequency 0 <= 1/Q < pi_0), the other
 * sees it too often. Level 3 on the same node gets pi_0 right. */
static void test_local_violates_longterm(void) {
    double w[20];
    w[0] = 0.6;
    for (int k = 1; k < 20; k++) w[k] = 0.4 / 19;
    rig rg;
    CR_CHECK(rig_init(&rg, w, 20) == 0);
    double freq0[2];
    enum { N = 100000 };
    static cr_sample out[N];
    for (int node = 0; node < 2; node++) {
        cr_alias la;
        CR_CHECK(cr_alias_build_range(&la, w, 20, (uint64_t)node * 10, (uint64_t)node * 10 + 10, &rg.e) == 0);
        cr_sampling_conf c = conf(CR_SAMPLING_LOCAL, 1, 1, node * 10, node * 10 + 10);
        cr_sampler *s = cr_sampler_new(&rg.a, &la, &c, NULL, 21, (uint64_t)node, &rg.e);
        CR_CHECK(s != NULL);
        CR_CHECK(pull_all(s, NULL, &c, N, 1000, out) == 0); /* row_ok: only local keys */
        freq0[node] = (double)count_key(out, N, 0) / N;
        cr_sampling_stats st;
        cr_sampler_stats(s, &st);
        CR_CHECK(st.local == N && st.remote == 0 && st.pooled == 0 && st.drawn == N);
        cr_sampler_destroy(&s);
        cr_alias_free(&la);
    }
    CR_CHECK(freq0[1] == 0 && freq0[0] > 0.7);
    CR_CHECK(fabs(freq0[0] - 0.6) > 0.1 && fabs(freq0[1] - 0.6) > 0.1);
    /* The contrast: level 3 at node 1 draws key 0 at its rate. */
    rg.f.ready_mode = 2;
    cr_rng_seed(&rg.f.rng, 5);
    cr_sampling_conf c = conf(CR_SAMPLING_LONGTERM, 250, 4, 10, 20);
    cr_sampler *s = rig_new(&rg, &c, 21, 1);
    CR_CHECK(s != NULL);
    CR_CHECK(pull_all(s, &rg.f, &c, N, 100, out) == 0);
    CR_CHECK_NEAR((double)count_key(out, N, 0) / N, 0.6, 0.02);
    cr_sampler_destroy(&s);
    CR_CHECK(rig_done(&rg));
}

/* ---- lifecycle ---------------------------------------------------------- */

/* Closing handles early and destroying with handles open releases every
 * fetch exactly once; a fetch outlives the pull that served its last sample
 * until the next call, so its rows can still be read. Same seed, same keys. */
static void test_lifecycle(void) {
    rig rg;
    CR_CHECK(rig_init(&rg, NULL, 100) == 0);
    cr_sampling_conf c = conf(CR_SAMPLING_CONFORM, 1, 1, 0, 10);
    cr_sampler *s = rig_new(&rg, &c, 4, 2);
    CR_CHECK(s != NULL);
    uint32_t h1, h2, h3;
    cr_sample out[50];
    CR_CHECK(cr_sampler_prepare(s, 50, &h1, &rg.e) == 0 && cr_sampler_prepare(s, 50, &h2, &rg.e) == 0);
    CR_CHECK(cr_sampler_prepare(s, 50, &h3, &rg.e) == 0 && rg.f.live == 3);
    cr_sampler_close(s, h2);
    cr_sampler_close(s, 999);
    CR_CHECK(cr_sampler_pull(s, h1, 50, out, &rg.e) == 0);
    CR_CHECK(rg.f.live == 2); /* h2's fetch went at close; h1's stays readable */
    for (int i = 0; i < 50; i++) CR_CHECK(row_ok(&rg.f, &c, &out[i]));
    CR_CHECK(cr_sampler_left(s, h3) == 50);
    cr_sampler_destroy(&s);
    CR_CHECK(rg.f.live == 0 && rg.f.bad_release == 0);
    /* Determinism. */
    cr_sampler *s1 = rig_new(&rg, &c, 4, 2), *s2 = rig_new(&rg, &c, 4, 2);
    cr_sample o2[50];
    CR_CHECK(cr_sampler_prepare(s1, 50, &h1, &rg.e) == 0 && cr_sampler_prepare(s2, 50, &h2, &rg.e) == 0);
    CR_CHECK(cr_sampler_pull(s1, h1, 50, out, &rg.e) == 0 && cr_sampler_pull(s2, h2, 50, o2, &rg.e) == 0);
    for (int i = 0; i < 50; i++) CR_CHECK(out[i].key == o2[i].key);
    cr_sampler_destroy(&s1);
    cr_sampler_destroy(&s2);
    CR_CHECK(rig_done(&rg));
}

int main(void) {
    CR_RUN(test_bad_conf);
    CR_RUN(test_bad_calls);
    CR_RUN(test_conform_chi2);
    CR_RUN(test_bounded_marginals);
    CR_RUN(test_bounded_window);
    CR_RUN(test_bounded_passes);
    CR_RUN(test_bounded_handles_interleave);
    CR_RUN(test_longterm_postpone_once);
    CR_RUN(test_longterm_converges);
    CR_RUN(test_local_violates_longterm);
    CR_RUN(test_lifecycle);
    return cr_test_done();
}
