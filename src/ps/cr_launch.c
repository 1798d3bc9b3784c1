/* Launcher environments: rank, world and rendezvous from the variables
 * Slurm, MPI, dmlc-tracker, torchrun and crescent launch set. */
#include "ps/cr_launch.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

/* ---------- Slurm host lists ---------- */

typedef struct hlist {
    char **h;
    int n, max;
} hlist;

static void hl_free(hlist *l) {
    for (int i = 0; i < l->n; i++) free(l->h[i]);
    free(l->h);
    l->h = NULL;
    l->n = 0;
}

/* Parse the digits at *p (at most 18): the value, and the count in *w. */
static int digits(const char **p, long long *v, int *w) {
    const char *s = *p;
    *w = 0;
    *v = 0;
    while (isdigit((unsigned char)*s) && *w < 18) *v = *v * 10 + (*s++ - '0'), (*w)++;
    if (*w == 0 || isdigit((unsigned char)*s)) return -1;
    *p = s;
    return 0;
}

/* Every value of one bracket body "01-04,07" (text up to ']') as strings,
 * appended to vals. */
static int bracket_values(const char *s, const char *end, hlist *vals, const char *list, cr_err *e) {
    while (s < end) {
        long long a, b;
        int wa, wb;
        if (digits(&s, &a, &wa) < 0) return cr_errf(e, "host list '%s': a bracket holds numbers and ranges", list);
        b = a;
        if (*s == '-') {
            s++;
            if (digits(&s, &b, &wb) < 0 || b < a)
                return cr_errf(e, "host list '%s': bad range in brackets", list);
        }
        if (s < end && *s++ != ',') return cr_errf(e, "host list '%s': a bracket holds numbers and ranges", list);
        for (long long v = a; v <= b; v++) {
            if (vals->n >= vals->max) return cr_errf(e, "host list '%s': more than %d hosts", list, vals->max);
            char buf[32];
            snprintf(buf, sizeof buf, "%0*lld", wa, v);
            vals->h[vals->n++] = cr_xstrdup(buf);
        }
    }
    return 0;
}

/* out = every string of cur followed by every string of vals (in order). */
static int cross(hlist *cur, const hlist *vals, const char *list, cr_err *e) {
    if ((long long)cur->n * vals->n > cur->max) return cr_errf(e, "host list '%s': more than %d hosts", list, cur->max);
    hlist out = {cr_xcalloc((size_t)cur->max, sizeof(char *)), 0, cur->max};
    for (int i = 0; i < cur->n; i++)
        for (int j = 0; j < vals->n; j++) {
            size_t la = strlen(cur->h[i]), lb = strlen(vals->h[j]);
            char *s = cr_xmalloc(la + lb + 1);
            memcpy(s, cur->h[i], la);
            memcpy(s + la, vals->h[j], lb + 1);
            out.h[out.n++] = s;
        }
    hl_free(cur);
    *cur = out;
    return 0;
}

/* Expand one top-level item [s, end) ("rack[1-2]-n[01-02]") onto all. */
static int expand_item(const char *s, const char *end, hlist *all, const char *list, cr_err *e) {
    if (s == end) return cr_errf(e, "host list '%s': an empty host name", list);
    hlist cur = {cr_xcalloc((size_t)all->max, sizeof(char *)), 1, all->max};
    cur.h[0] = cr_xstrdup("");
    int rc = 0;
    while (s < end && rc == 0) {
        hlist vals = {cr_xcalloc((size_t)all->max, sizeof(char *)), 0, all->max};
        if (*s == '[') {
            const char *close = memchr(s, ']', (size_t)(end - s));
            if (!close) rc = cr_errf(e, "host list '%s': '[' without ']'", list);
            else rc = bracket_values(s + 1, close, &vals, list, e);
            if (rc == 0 && vals.n == 0) rc = cr_errf(e, "host list '%s': empty brackets", list);
            s = close ? close + 1 : end;
        } else {
            const char *t = s;
            while (t < end && *t != '[') {
                if (*t == ']') rc = cr_errf(e, "host list '%s': ']' without '['", list);
                t++;
            }
            char *lit = cr_xmalloc((size_t)(t - s) + 1);
            memcpy(lit, s, (size_t)(t - s));
            lit[t - s] = 0;
            vals.h[vals.n++] = lit;
            s = t;
        }
        if (rc == 0) rc = cross(&cur, &vals, list, e);
        hl_free(&vals);
    }
    for (int i = 0; rc == 0 && i < cur.n; i++) {
        if (all->n >= all->max) rc = cr_errf(e, "host list '%s': more than %d hosts", list, all->max);
        else all->h[all->n++] = cur.h[i], cur.h[i] = NULL;
    }
    hl_free(&cur);
    return rc;
}

int cr_hostlist_expand(const char *list, char ***hosts, int max, cr_err *e) {
    *hosts = NULL;
    if (max < 1) max = 1;
    hlist all = {cr_xcalloc((size_t)max, sizeof(char *)), 0, max};
    const char *s = list;
    int rc = 0;
    while (rc == 0) {
        const char *t = s;
        int depth = 0;
        while (*t && (depth > 0 || *t != ',')) {
            if (*t == '[') depth++;
            if (*t == ']') depth--;
            t++;
        }
        rc = expand_item(s, t, &all, list, e);
        if (!*t) break;
        s = t + 1;
    }
    if (rc < 0) {
        hl_free(&all);
        return -1;
    }
    *hosts = all.h;
    return all.n;
}

/* ---------- variables ---------- */

/* An integer variable in [lo, hi]: 1 and *v when set, 0 when unset, -1 with
 * a message when malformed. */
static int int_var(cr_getenv_fn get, void *arg, const char *name, long lo, long hi, int *v, cr_err *e) {
    const char *s = get(name, arg);
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return cr_errf(e, "%s='%s': expected an integer from %ld to %ld", name, s, lo, hi);
    *v = (int)x;
    return 1;
}

static void copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

/* Rank and world from two variables, both required once the first is set. */
static int rank_world(cr_getenv_fn get, void *arg, const char *rv, const char *wv, cr_launch *l, cr_err *e) {
    int r = int_var(get, arg, wv, 1, CR_LAUNCH_MAX_WORLD, &l->world, e);
    if (r < 0) return -1;
    if (r == 0) return cr_errf(e, "%s is set but %s is not", rv, wv);
    if (int_var(get, arg, rv, 0, l->world - 1, &l->rank, e) < 0) return -1;
    return 0;
}

static int port_var(cr_getenv_fn get, void *arg, const char *name, cr_launch *l, cr_err *e) {
    int r = int_var(get, arg, name, 1, 65535, &l->port, e);
    if (r > 0) l->port_from = name;
    return r < 0 ? -1 : 0;
}

static void master_var(cr_getenv_fn get, void *arg, const char *name, cr_launch *l) {
    const char *s = get(name, arg);
    if (s && *s) copy(l->master, sizeof l->master, s), l->master_from = name;
}

/* Open MPI's mpirun says where it runs (its "HNP"): 'JOBID.0;tcp://ADDR:PORT;...'.
 * With the default mapping rank 0 lands on mpirun's host when mpirun runs
 * inside the host list (an allocation's first node); the caller checks that
 * the address is its own and says to set CRESCENT_MASTER otherwise. */
static void ompi_master(cr_getenv_fn get, void *arg, cr_launch *l) {
    const char *s = get("OMPI_MCA_orte_hnp_uri", arg);
    const char *t = s ? strstr(s, ";tcp://") : NULL;
    if (!t) return;
    t += 7;
    size_t n = strcspn(t, ":;");
    if (n == 0 || n >= sizeof l->master) return;
    memcpy(l->master, t, n);
    l->master[n] = 0;
    l->master_from = "OMPI_MCA_orte_hnp_uri (mpirun's host)";
}

static int slurm(cr_getenv_fn get, void *arg, cr_launch *l, cr_err *e) {
    l->kind = CR_LAUNCH_SLURM, l->name = "slurm";
    const char *wv = get("SLURM_STEP_NUM_TASKS", arg) ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
    if (rank_world(get, arg, "SLURM_PROCID", wv, l, e) < 0) return -1;
    const char *nv = get("SLURM_STEP_NODELIST", arg) ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST";
    const char *list = get(nv, arg);
    if (!list || !*list) return 0;
    char **h;
    cr_err he;
    int n = cr_hostlist_expand(list, &h, CR_LAUNCH_MAX_WORLD, &he);
    if (n < 0) return cr_errf(e, "%s: %s", nv, he.msg + (strncmp(he.msg, "host list ", 10) ? 0 : 10));
    copy(l->master, sizeof l->master, h[0]);
    l->master_from = nv;
    for (int i = 0; i < n; i++) free(h[i]);
    free(h);
    return 0;
}

static int dmlc(cr_getenv_fn get, void *arg, const char *role, cr_launch *l, cr_err *e) {
    l->kind = CR_LAUNCH_DMLC, l->name = "dmlc";
    if (!strcmp(role, "scheduler")) l->role = CR_ROLE_SCHEDULER, l->rank = 0;
    else if (!strcmp(role, "server")) l->role = CR_ROLE_NODE, l->rank = -1;
    else if (!strcmp(role, "worker")) l->role = CR_ROLE_IDLE, l->rank = -1;
    else return cr_errf(e, "DMLC_ROLE='%s': expected scheduler, server or worker", role);
    int r = int_var(get, arg, "DMLC_NUM_SERVER", 1, CR_LAUNCH_MAX_WORLD, &l->world, e);
    if (r < 0) return -1;
    if (r == 0) return cr_errf(e, "DMLC_ROLE is set but DMLC_NUM_SERVER is not");
    l->local_node = 0; /* the tracker starts the scheduler as a process of its own */
    master_var(get, arg, "DMLC_PS_ROOT_URI", l);
    if (port_var(get, arg, "DMLC_PS_ROOT_PORT", l, e) < 0) return -1;
    copy(l->iface, sizeof l->iface, get("DMLC_INTERFACE", arg));
    copy(l->host, sizeof l->host, get("DMLC_NODE_HOST", arg));
    return 0;
}

int cr_launch_detect(cr_getenv_fn get, void *arg, cr_launch *l, cr_err *e) {
    memset(l, 0, sizeof *l);
    l->kind = CR_LAUNCH_NONE, l->name = "none", l->rank = 0, l->world = 1, l->local_node = 1;
    const char *role = get("DMLC_ROLE", arg);
    int rc = 0;
    if (get("CRESCENT_RANK", arg)) {
        l->kind = CR_LAUNCH_CRESCENT, l->name = "crescent (CRESCENT_RANK)";
        rc = rank_world(get, arg, "CRESCENT_RANK", "CRESCENT_WORLD", l, e);
    } else if (get("RANK", arg) && get("WORLD_SIZE", arg) && get("MASTER_ADDR", arg)) {
        l->kind = CR_LAUNCH_TORCHRUN, l->name = "torchrun";
        rc = rank_world(get, arg, "RANK", "WORLD_SIZE", l, e);
        if (rc == 0) master_var(get, arg, "MASTER_ADDR", l), rc = port_var(get, arg, "MASTER_PORT", l, e);
    } else if (role && *role) {
        rc = dmlc(get, arg, role, l, e);
    } else if (get("OMPI_COMM_WORLD_RANK", arg)) {
        l->kind = CR_LAUNCH_OMPI, l->name = "mpi (Open MPI)";
        rc = rank_world(get, arg, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", l, e);
        if (rc == 0) ompi_master(get, arg, l);
    } else if (get("PMI_RANK", arg)) {
        l->kind = CR_LAUNCH_PMI, l->name = "mpi (PMI)";
        rc = rank_world(get, arg, "PMI_RANK", "PMI_SIZE", l, e);
    } else if (get("SLURM_PROCID", arg) && get("SLURM_STEP_ID", arg)) {
        rc = slurm(get, arg, l, e);
    } else {
        return 0;
    }
    if (rc < 0) return -1;
    if (l->kind != CR_LAUNCH_DMLC) l->role = l->rank == 0 ? CR_ROLE_SCHEDULER : CR_ROLE_NODE;
    master_var(get, arg, "CRESCENT_MASTER", l);
    return port_var(get, arg, "CRESCENT_PORT", l, e);
}
