/* What `crescent run` and `crescent node` do off one machine: the cluster
 * key from a file, the address a node binds and advertises, and the part a
 * process plays when a cluster launcher started it (cli.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lua/l_worker.h"
#include "net/cr_auth.h"
#include "net/cr_iface.h"
#include "ps/cr_node.h"

/* ---------- the cluster key ---------- */

/* One "public KEY" / "secret KEY" line of a key file into pub or sec. */
static int key_line(const char *path, int line, char *s, char *pub, char *sec) {
    s[strcspn(s, "\r\n")] = 0;
    if (!*s || *s == '#') return 0;
    char *v = strchr(s, ' ');
    char *dst = !v ? NULL : !strncmp(s, "public ", 7) ? pub : !strncmp(s, "secret ", 7) ? sec : NULL;
    if (!dst || strlen(v + 1) != 40) {
        fprintf(stderr, "%s:%d: expected 'public KEY' or 'secret KEY' (40 Z85 characters), as crescent keygen prints\n",
                path, line);
        return -1;
    }
    memcpy(dst, v + 1, 41);
    return 0;
}

int cr_cli_key_file(const char *cmd, const char *path) {
    if (!path || !*path) path = getenv("CRESCENT_KEY_FILE");
    if (!path || !*path) return 0;
    struct stat st;
    FILE *f = fopen(path, "r");
    if (!f || fstat(fileno(f), &st) < 0) {
        fprintf(stderr, "%s: key file %s: %s\n", cmd, path, strerror(errno));
        if (f) fclose(f);
        return -1;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        fprintf(stderr, "%s: key file %s can be read by others (mode %03o): chmod 600 %s\n", cmd, path,
                (unsigned)(st.st_mode & 0777), path);
        fclose(f);
        return -1;
    }
    char buf[256], pub[41] = "", sec[41] = "";
    int line = 0, rc = 0;
    while (rc == 0 && fgets(buf, sizeof buf, f)) rc = key_line(path, ++line, buf, pub, sec);
    fclose(f);
    if (rc < 0) return -1;
    if (!pub[0] || !sec[0]) {
        fprintf(stderr, "%s: key file %s needs a 'public' and a 'secret' line (crescent keygen > %s)\n", cmd, path,
                path);
        return -1;
    }
    setenv("CRESCENT_CURVE_PUBLIC", pub, 1);
    setenv("CRESCENT_CURVE_SECRET", sec, 1);
    cr_curve c;
    cr_err e;
    if (cr_curve_from_env(&c, &e) < 0) {
        fprintf(stderr, "%s: key file %s: %s\n", cmd, path, e.msg);
        return -1;
    }
    return 0;
}

/* ---------- addresses ---------- */

int cr_cli_local_addr(const char *cmd, const char *iface, const char *sched_ip, char *ip, char *name) {
    cr_err e;
    const char *from = "--interface";
    if (!iface || !*iface) iface = getenv("CRESCENT_INTERFACE"), from = "CRESCENT_INTERFACE";
    if (iface && *iface) {
        if (cr_iface_named(iface, ip, &e) < 0) {
            fprintf(stderr, "%s: %s (named by %s)\n", cmd, e.msg, from);
            return -1;
        }
        snprintf(name, CR_IFNAME_MAX, "%s", iface);
        return 0;
    }
    if (cr_iface_toward(sched_ip, ip, name, &e) < 0) {
        fprintf(stderr, "%s: %s (the scheduler's address); name an interface with --interface\n", cmd, e.msg);
        return -1;
    }
    return 0;
}

/* ---------- under a launcher ---------- */

static const char *env_get(const char *name, void *arg) {
    (void)arg;
    return getenv(name);
}

/* Rank 0's address: the launcher's host resolved, checked to be this
 * host's when this process is rank 0. */
static int master_ip(const char *cmd, const cr_launch *l, char *ip) {
    cr_err e;
    if (!l->master[0]) {
        fprintf(stderr,
                "%s: the %s launcher does not say where rank 0 runs: set CRESCENT_MASTER to its host (and pass it "
                "to every rank, e.g. mpirun -x CRESCENT_MASTER)\n",
                cmd, l->name);
        return -1;
    }
    if (cr_iface_resolve(l->master, ip, &e) < 0) {
        fprintf(stderr, "%s: rank 0's %s (from %s)\n", cmd, e.msg, l->master_from);
        return -1;
    }
    char name[CR_IFNAME_MAX];
    if (l->role == CR_ROLE_SCHEDULER && !cr_iface_owner(ip, name)) {
        fprintf(stderr,
                "%s: this process is rank 0 and runs the scheduler, but %s (%s, from %s) is not an address of "
                "this host: set CRESCENT_MASTER to rank 0's host\n",
                cmd, l->master, ip, l->master_from);
        return -1;
    }
    return 0;
}

/* A node rank: join the scheduler at sched, from the address of the
 * interface towards it. The exit status. */
static int run_node(const char *cmd, const cr_launch *l, const char *iface, const char *sip, int port,
                    int restarts) {
    char ip[CR_IP_MAX], name[CR_IFNAME_MAX] = "", sched[64], bind[64];
    if (l->host[0] && !(iface && *iface)) {
        cr_err e;
        if (cr_iface_resolve(l->host, ip, &e) < 0) {
            fprintf(stderr, "%s: %s (from DMLC_NODE_HOST)\n", cmd, e.msg);
            return 2;
        }
        cr_iface_owner(ip, name);
    } else if (cr_cli_local_addr(cmd, iface && *iface ? iface : l->iface, sip, ip, name) < 0) {
        return 2;
    }
    if (cr_ip_is_loopback(ip) && !cr_ip_is_loopback(sip)) {
        fprintf(stderr, "%s: this host would advertise the loopback address %s to a scheduler at %s: name the "
                        "interface that reaches it with --interface\n", cmd, ip, sip);
        return 2;
    }
    snprintf(sched, sizeof sched, "tcp://%s:%d", sip, port);
    snprintf(bind, sizeof bind, "tcp://%s:*", ip);
    char rank[32] = "";
    if (l->rank >= 0) snprintf(rank, sizeof rank, " rank %d of %d:", l->rank, l->world);
    fprintf(stderr, "crescent: %s launcher,%s node at %s (%s), joining %s\n", l->name, rank, ip,
            name[0] ? name : "no local interface", sched);
    cr_node_opts o = {.hooks = &cr_lworker_hooks, .scheduler = sched, .bind = bind, .rank = l->rank,
                      .has_rank = l->rank >= 0};
    cr_err e;
    if (cr_curve_from_env(&o.curve, &e) < 0) {
        fprintf(stderr, "%s: %s\n", cmd, e.msg);
        return 2;
    }
    if (!o.curve.on) {
        fprintf(stderr, "%s: ranks on several hosts need the cluster key: make one with `crescent keygen > FILE`, "
                        "chmod 600 FILE, and give --key FILE or CRESCENT_KEY_FILE to every rank\n", cmd);
        return 2;
    }
    int rejoin = 0;
    o.rejoin = &rejoin;
    for (int run = 0;; run++) {
        if (cr_node_run(&o, &e) < 0) {
            fprintf(stderr, "%s (node at %s on %s): %s\n", cmd, ip, name[0] ? name : "?", e.msg);
            return 1;
        }
        if (!rejoin || run >= restarts) return 0;
        fprintf(stderr, "crescent: the job lost a node and runs again: rank %d joins %s again\n", l->rank, sched);
    }
}

int cr_cli_launched(const char *cmd, const cr_cli_net *n, cr_launch *l, cr_run_overrides *ov, char *listen,
                    size_t listenn, int *status) {
    cr_err e;
    if (cr_launch_detect(env_get, NULL, l, &e) < 0) {
        fprintf(stderr, "%s: %s\n", cmd, e.msg);
        return *status = 2, 1;
    }
    if (l->kind == CR_LAUNCH_NONE || (l->world == 1 && l->local_node)) return 0;
    if (l->role == CR_ROLE_IDLE) {
        fprintf(stderr, "crescent: dmlc worker process: not needed (crescent's nodes run their workers as threads; "
                        "start servers only, e.g. -n 0)\n");
        return *status = 0, 1;
    }
    int port = n->port > 0 ? (int)n->port : l->port;
    if (port <= 0) {
        fprintf(stderr, "%s: under %s the rendezvous port must be given to every rank: --port N or CRESCENT_PORT\n",
                cmd, l->name);
        return *status = 2, 1;
    }
    char sip[CR_IP_MAX];
    if (master_ip(cmd, l, sip) < 0) return *status = 2, 1;
    if (l->role == CR_ROLE_NODE) return *status = run_node(cmd, l, n->iface, sip, port, (int)n->restarts), 1;
    cr_curve c;
    if (cr_curve_from_env(&c, &e) < 0 || !c.on) {
        fprintf(stderr, "%s: %s\n", cmd,
                !c.on ? "ranks on several hosts need the cluster key: make one with `crescent keygen > FILE`, "
                        "chmod 600 FILE, and give --key FILE or CRESCENT_KEY_FILE to every rank"
                      : e.msg);
        return *status = 2, 1;
    }
    if (ov->nodes >= 0 && ov->nodes != l->world) {
        fprintf(stderr, "%s: --nodes %ld, but the launcher (%s) started %d rank(s)\n", cmd, ov->nodes, l->name,
                l->world);
        return *status = 2, 1;
    }
    char name[CR_IFNAME_MAX] = "";
    cr_iface_owner(sip, name);
    snprintf(listen, listenn, "tcp://%s:%d", sip, port);
    fprintf(stderr, "crescent: %s launcher, world %d: scheduler%s at %s (%s, from %s)\n", l->name, l->world,
            l->local_node ? " and node 0" : "", listen, name, l->master_from);
    ov->world = l->world;
    ov->local_nodes = l->local_node;
    ov->listen = listen;
    ov->launcher = l->name;
    return 0;
}
