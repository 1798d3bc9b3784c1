/* cr_launch: rank, world and rendezvous from each launcher's variables, set
 * as the launcher sets them; Slurm host lists; cr_iface on this host. */
#include <stdlib.h>

#include "cr_test.h"
#include "net/cr_iface.h"
#include "ps/cr_launch.h"

/* A NULL-ended list of "NAME=VALUE" strings as an environment. */
static const char *get(const char *name, void *arg) {
    size_t n = strlen(name);
    for (const char **v = arg; *v; v++)
        if (!strncmp(*v, name, n) && (*v)[n] == '=') return *v + n + 1;
    return NULL;
}

static int detect(cr_launch *l, cr_err *e, const char **env) { return cr_launch_detect(get, (void *)env, l, e); }

static void test_none(void) {
    const char *env[] = {"HOME=/root", "SLURM_PROCID=0", "SLURM_NTASKS=4", NULL}; /* a batch shell: no step */
    cr_launch l;
    cr_err e;
    CR_CHECK(detect(&l, &e, env) == 0);
    CR_CHECK(l.kind == CR_LAUNCH_NONE);
}

static void test_slurm(void) {
    const char *env[] = {"SLURM_PROCID=2", "SLURM_STEP_ID=0", "SLURM_NTASKS=8", "SLURM_STEP_NUM_TASKS=4",
                         "SLURM_JOB_NODELIST=big[01-08]", "SLURM_STEP_NODELIST=node[07-09,11],x", NULL};
    cr_launch l;
    cr_err e;
    CR_CHECK(detect(&l, &e, env) == 0);
    CR_CHECK(l.kind == CR_LAUNCH_SLURM);
    CR_CHECK(l.rank == 2 && l.world == 4 && l.role == CR_ROLE_NODE && l.local_node);
    CR_CHECK_STR(l.master, "node07");
    CR_CHECK_STR(l.master_from, "SLURM_STEP_NODELIST");
    CR_CHECK(l.port == 0);
}

static void test_slurm_bad(void) {
    const char *env[] = {"SLURM_PROCID=4", "SLURM_STEP_ID=0", "SLURM_NTASKS=4", NULL};
    cr_launch l;
    cr_err e;
    CR_CHECK(detect(&l, &e, env) < 0);
    CR_CHECK(strstr(e.msg, "SLURM_PROCID='4'") != NULL);
    const char *env2[] = {"SLURM_PROCID=0", "SLURM_STEP_ID=0", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=n[3-1]", NULL};
    CR_CHECK(detect(&l, &e, env2) < 0);
    CR_CHECK(strstr(e.msg, "SLURM_JOB_NODELIST") && strstr(e.msg, "bad range"));
}

static void test_torchrun(void) {
    const char *env[] = {"RANK=0", "WORLD_SIZE=3", "LOCAL_RANK=0", "MASTER_ADDR=10.7.0.1", "MASTER_PORT=29500",
                         "SLURM_PROCID=5", "SLURM_STEP_ID=0", "SLURM_NTASKS=9", NULL};
    cr_launch l;
    cr_err e;
    CR_CHECK(detect(&l, &e, env) == 0);
    CR_CHECK(l.kind == CR_LAUNCH_TORCHRUN); /* torchrun inside an allocation: its own variables win */
    CR_CHECK(l.rank == 0 && l.world == 3 && l.role == CR_ROLE_SCHEDULER);
    CR_CHECK_STR(l.master, "10.7.0.1");
    CR_CHECK(l.port == 29500);
    CR_CHECK_STR(l.port_from, "MASTER_PORT");
}

static void test_dmlc(void) {
    const char *sched[] = {"DMLC_ROLE=scheduler", "DMLC_PS_ROOT_URI=10.1.0.1", "DMLC_PS_ROOT_PORT=9091",
                           "DMLC_NUM_SERVER=2", "DMLC_NUM_WORKER=2", "DMLC_INTERFACE=eth1", NULL};
    cr_launch l;
    cr_err e;
    CR_CHECK(detect(&l, &e, sched) == 0);
    CR_CHECK(l.kind == CR_LAUNCH_DMLC && l.role == CR_ROLE_SCHEDULER && l.world == 2 && !l.local_node);
    CR_CHECK_STR(l.master, "10.1.0.1");
    CR_CHECK(l.port == 9091);
    CR_CHECK_STR(l.iface, "eth1");
    const char *srv[] = {"DMLC_ROLE=server", "DMLC_PS_ROOT_URI=10.1.0.1", "DMLC_PS_ROOT_PORT=9091",
                         "DMLC_NUM_SERVER=2", "DMLC_NODE_HOST=10.1.0.2", NULL};
    CR_CHECK(detect(&l, &e, srv) == 0);
    CR_CHECK(l.role == CR_ROLE_NODE && l.rank == -1);
    CR_CHECK_STR(l.host, "10.1.0.2");
    const char *wrk[] = {"DMLC_ROLE=worker", "DMLC_NUM_SERVER=2", NULL};
    CR_CHECK(detect(&l, &e, wrk) == 0);
    CR_CHECK(l.role == CR_ROLE_IDLE);
    const char *bad[] = {"DMLC_ROLE=boss", "DMLC_NUM_SERVER=2", NULL};
    CR_CHECK(detect(&l, &e, bad) < 0);
    CR_CHECK(strstr(e.msg, "DMLC_ROLE='boss'") != NULL);
}

static void test_mpi(void) {
    const char *ompi[] = {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4",
                          "OMPI_MCA_orte_hnp_uri=1293287424.0;tcp://192.0.2.2:57995;tcp6://[fd00::2]:57085",
                          "CRESCENT_PORT=7000", NULL};
    cr_launch l;
    cr_err e;
    CR_CHECK(detect(&l, &e, ompi) == 0);
    CR_CHECK(l.kind == CR_LAUNCH_OMPI && l.rank == 1 && l.world == 4);
    CR_CHECK_STR(l.master, "192.0.2.2");
    CR_CHECK(l.port == 7000);
    const char *pmi[] = {"PMI_RANK=0", "PMI_SIZE=2", "CRESCENT_MASTER=h1", NULL};
    CR_CHECK(detect(&l, &e, pmi) == 0);
    CR_CHECK(l.kind == CR_LAUNCH_PMI && l.role == CR_ROLE_SCHEDULER);
    CR_CHECK_STR(l.master, "h1");
    CR_CHECK_STR(l.master_from, "CRESCENT_MASTER");
    const char *nosize[] = {"PMI_RANK=0", NULL};
    CR_CHECK(detect(&l, &e, nosize) < 0);
    CR_CHECK(strstr(e.msg, "PMI_SIZE") != NULL);
}

static void test_crescent(void) {
    const char *env[] = {"CRESCENT_RANK=3", "CRESCENT_WORLD=4", "CRESCENT_MASTER=10.9.0.1", "CRESCENT_PORT=abc",
                         NULL};
    cr_launch l;
    cr_err e;
    CR_CHECK(detect(&l, &e, env) < 0);
    CR_CHECK(strstr(e.msg, "CRESCENT_PORT='abc'") != NULL);
    env[3] = "CRESCENT_PORT=7001";
    CR_CHECK(detect(&l, &e, env) == 0);
    CR_CHECK(l.kind == CR_LAUNCH_CRESCENT && l.rank == 3 && l.world == 4 && l.port == 7001);
}

static int expand(const char *list, char ***h, cr_err *e) { return cr_hostlist_expand(list, h, 64, e); }

static void freeh(char **h, int n) {
    for (int i = 0; i < n; i++) free(h[i]);
    free(h);
}

static void test_hostlist(void) {
    char **h;
    cr_err e;
    int n = expand("node[01-04,07]", &h, &e);
    CR_CHECK(n == 5);
    int ok = !strcmp(h[0], "node01") && !strcmp(h[3], "node04") && !strcmp(h[4], "node07");
    freeh(h, n);
    CR_CHECK(ok);
    n = expand("a,b[8-10],rack[1-2]-n[1-2]", &h, &e);
    CR_CHECK(n == 8);
    ok = !strcmp(h[0], "a") && !strcmp(h[1], "b8") && !strcmp(h[3], "b10") && !strcmp(h[4], "rack1-n1") &&
         !strcmp(h[5], "rack1-n2") && !strcmp(h[6], "rack2-n1") && !strcmp(h[7], "rack2-n2");
    freeh(h, n);
    CR_CHECK(ok);
    const char *bad[] = {"n[1-", "n1]", "n[]", "n[a-b]", "a,,b", "n[1-100]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CR_CHECK(expand(bad[i], &h, &e) < 0);
        CR_CHECK(h == NULL && strstr(e.msg, bad[i]) != NULL);
    }
}

static void test_iface(void) {
    char ip[CR_IP_MAX], name[CR_IFNAME_MAX];
    cr_err e;
    CR_CHECK(cr_iface_toward("127.0.0.1", ip, name, &e) == 0);
    CR_CHECK(cr_ip_is_loopback(ip));
    CR_CHECK_STR(name, "lo");
    CR_CHECK(cr_iface_named("lo", ip, &e) == 0);
    CR_CHECK_STR(ip, "127.0.0.1");
    CR_CHECK(cr_iface_named("no-such-if", ip, &e) < 0);
    CR_CHECK(strstr(e.msg, "'no-such-if'") && strstr(e.msg, "lo"));
    CR_CHECK(cr_iface_owner("127.0.0.1", name) == 1);
    CR_CHECK(cr_iface_owner("192.0.2.254", name) == 0 || name[0]);
    CR_CHECK(cr_iface_resolve("localhost", ip, &e) == 0 && cr_ip_is_loopback(ip));
    CR_CHECK(cr_iface_resolve("no-such-host.invalid", ip, &e) < 0);
    CR_CHECK(strstr(e.msg, "no-such-host.invalid") != NULL);
    char host[64], port[16];
    CR_CHECK(cr_endpoint_split("tcp://0.0.0.0:*", host, sizeof host, port, sizeof port, &e) == 0);
    CR_CHECK(cr_ip_is_wildcard(host) && !strcmp(port, "*"));
    CR_CHECK(cr_endpoint_split("ipc:///x", host, sizeof host, port, sizeof port, &e) < 0);
}

int main(void) {
    CR_RUN(test_none);
    CR_RUN(test_slurm);
    CR_RUN(test_slurm_bad);
    CR_RUN(test_torchrun);
    CR_RUN(test_dmlc);
    CR_RUN(test_mpi);
    CR_RUN(test_crescent);
    CR_RUN(test_hostlist);
    CR_RUN(test_iface);
    return cr_test_done();
}
