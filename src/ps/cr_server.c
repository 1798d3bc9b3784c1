#include "ps/cr_server.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/cr_time.h"
#include "ps/cr_dir.h"

/* The server thread's stop pipe: a PAIR of inproc sockets, polled with the
 * data socket, so that the thread sleeps until a request or the stop comes.
 * A PAIR, not the workers' PUB (wstop): a PUB drops what it sends before a
 * subscription has reached it, and the server thread may still be starting
 * when a job that failed at once stops. */
int cr_server_pipe(cr_server *s, void *zctx, cr_err *e) {
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://crescent-node-stop-%p", (void *)s);
    s->srv_stop = cr_socket(zctx, ZMQ_PAIR);
    s->stop_tx = cr_socket(zctx, ZMQ_PAIR);
    if (!s->srv_stop || !s->stop_tx || zmq_bind(s->srv_stop, ep) < 0 || zmq_connect(s->stop_tx, ep) < 0)
        return cr_errf(e, "cannot create the server's stop pipe: %s", zmq_strerror(errno));
    return 0;
}

int cr_server_start(cr_server *s, void *(*body)(void *), void *arg, cr_err *e) {
    if (pthread_create(&s->thread, NULL, body, arg) != 0) return cr_errf(e, "cannot start server thread");
    s->started = 1;
    return 0;
}

void cr_server_stop(cr_server *s) {
    if (!s->started) return;
    zmq_send(s->stop_tx, "", 0, 0);
    pthread_join(s->thread, NULL);
    s->started = 0;
}

void cr_server_close(cr_server *s) {
    void *socks[] = {s->data, s->stop_tx, s->srv_stop};
    for (size_t i = 0; i < sizeof socks / sizeof *socks; i++)
        if (socks[i]) zmq_close(socks[i]);
    s->data = s->stop_tx = s->srv_stop = NULL;
}

int cr_server_recall(cr_server *s, int table, const cr_shard *sh, cr_link *link, cr_err *e) {
    if (atomic_load(&sh->dir->away) == 0 || !s->started) return 0;
    char cmd[5] = {'R'};
    int32_t t = table;
    memcpy(cmd + 1, &t, 4);
    if (zmq_send(s->stop_tx, cmd, sizeof cmd, 0) < 0)
        return cr_errf(e, "node %d: cannot ask the server thread to bring keys home", link->id);
    zmq_pollitem_t it = {.socket = s->stop_tx, .events = ZMQ_POLLIN};
    for (double until = cr_now() + 60; cr_now() < until;) {
        if (zmq_poll(&it, 1, 250) > 0) {
            char b[4];
            zmq_recv(s->stop_tx, b, sizeof b, 0);
            return 0;
        }
        cr_link_beat(link); /* the wait is not silence */
    }
    return cr_errf(e, "node %d: %lld keys of table '%s' did not come home within 60 s", link->id,
                   (long long)atomic_load(&sh->dir->away), sh->def.name);
}
