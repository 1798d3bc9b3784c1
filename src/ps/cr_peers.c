#include "ps/cr_peers.h"

#include <stdlib.h>

#include "base/cr_alloc.h"

void cr_peers_take(cr_peers *p, const cr_msg_welcome *w) {
    p->id = w->node;
    p->nodes = w->nodes;
    p->wpn = w->workers;
    p->seed = w->seed;
    p->addrs = cr_xcalloc((size_t)p->nodes, sizeof *p->addrs);
    for (int i = 0; i < p->nodes; i++) p->addrs[i] = cr_xstrdup(cr_proto_welcome_addr(w, i));
}

void cr_peers_free(cr_peers *p) {
    for (int i = 0; p->addrs && i < p->nodes; i++) free(p->addrs[i]);
    free(p->addrs);
    p->addrs = NULL;
}
