#include "ps/cr_counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cr_counters_init(cr_counters *c, int wpn) {
    memset(c, 0, sizeof *c);
    size_t bytes = ((size_t)wpn + 1) * sizeof *c->w;
    void *p;
    if (posix_memalign(&p, _Alignof(cr_wcounters), bytes) != 0) {
        fprintf(stderr, "crescent: out of memory (requested %zu bytes)\n", bytes);
        abort();
    }
    memset(p, 0, bytes);
    c->w = p;
    c->nw = wpn;
}

void cr_counters_free(cr_counters *c) {
    free(c->w);
    c->w = NULL;
    c->nw = 0;
}

size_t cr_counters_put_traffic(const cr_counters *c, char *b, size_t cap) {
    return (size_t)snprintf(b, cap,
                            "messages_remote=%lld,bytes_remote=%lld,messages_local=%lld,"
                            "bytes_local=%lld,keys_local=%lld,keys_remote=%lld,pulls=%lld,pushes=%lld,"
                            "served=%lld",
                            (long long)c->msgs_remote, (long long)c->bytes_remote, (long long)c->msgs_local,
                            (long long)c->bytes_local, (long long)c->keys_local, (long long)c->keys_remote,
                            (long long)c->pulls, (long long)c->pushes, (long long)c->served);
}

size_t cr_counters_put_worker(const cr_counters *c, int lw, char *b, size_t cap) {
    return (size_t)snprintf(b, cap, ",pulls=%lld,pushes=%lld", (long long)c->w[lw].pulls, (long long)c->w[lw].pushes);
}

size_t cr_counters_put_access(const cr_counters *c, long long held, long long away, char *b, size_t cap) {
    long long shm = 0, direct = 0, sampling = 0;
    for (int i = 0; i < c->nw; i++) {
        shm += atomic_load_explicit(&c->w[i].shm, memory_order_relaxed);
        direct += atomic_load_explicit(&c->w[i].direct, memory_order_relaxed);
        sampling += atomic_load_explicit(&c->w[i].sampling, memory_order_relaxed);
    }
    return (size_t)snprintf(b, cap,
                            ",access={[\"local\"]=%lld,shared=%lld,remote=%lld,forwarded=%lld,direct=%lld,sampling=%lld},"
                            "relocation={rows_in=%lld,rows_out=%lld,messages=%lld,bytes=%lld,queued=%lld,"
                            "queued_total=%lld,held=%lld,away=%lld,skipped=%lld}",
                            shm, (long long)c->acc_local, (long long)c->acc_remote, (long long)c->acc_fwd, direct,
                            sampling, (long long)c->reloc_in, (long long)c->reloc_out, (long long)c->reloc_msgs,
                            (long long)c->reloc_bytes, (long long)c->deferred, (long long)c->deferred_total, held,
                            away, (long long)c->reloc_skipped);
}
