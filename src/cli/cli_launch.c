/* crescent launch --hosts FILE [--ssh CMD] [--port N] --key FILE JOB.lua [run options] [ARGS...]
 * Start one `crescent run` per slot of the hostfile over ssh, as rank 0..N-1
 * (rank 0 on the first host runs the scheduler and the script), stream each
 * rank's output prefixed with its host, and end them all when the job ends
 * or any rank fails. The binary, the job script and the key file must be at
 * the same paths on every host (a shared file system, or copied there). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "cli/cli.h"

#define MAX_RANKS 1024

typedef struct launch_opts {
    const char *hosts, *ssh, *key;
    int64_t port;
} launch_opts;

static const cr_opt launch_opts_spec[] = {
    {"hosts", CR_OPT_STRING, offsetof(launch_opts, hosts), CR_OPT_REQUIRED, 0, 0, NULL, "FILE",
     "hostfile: one 'HOST [slots=N]' per line (# comments); one rank per slot, rank 0 on the first host", NULL,
     NULL},
    {"key", CR_OPT_STRING, offsetof(launch_opts, key), 0, 0, 0, NULL, "FILE",
     "the cluster key pair (crescent keygen > FILE; mode 600), at this path on every host (or CRESCENT_KEY_FILE)",
     NULL, NULL},
    {"port", CR_OPT_INT, offsetof(launch_opts, port), CR_OPT_RANGE, 1, 65535, "29400", "N",
     "port of rank 0's scheduler", NULL, NULL},
    {"ssh", CR_OPT_STRING, offsetof(launch_opts, ssh), 0, 0, 0, NULL, "CMD",
     "command that runs a command on a host, called as CMD HOST COMMAND (default: CRESCENT_SSH, else "
     "'ssh -o BatchMode=yes')", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

static const cr_opt_cmd launch_cmd = {
    "crescent launch", "--hosts FILE [--key FILE] [--port N] [--ssh CMD] JOB.lua [ARGS...]",
    "  Start the job on the hosts of FILE over ssh: rank 0 (the first host) runs the\n"
    "  scheduler and the script, the others join it as nodes. Each line of output\n"
    "  is prefixed with its host; all ranks end when the job ends or one fails.\n"
    "  Other arguments go to every rank's `crescent run` (run options included).\n",
    launch_opts_spec, 1, -1, CR_OPT_POS_STOPS};

typedef struct rank {
    char host[256];
    pid_t pid;
    int fd, status, done;
    char buf[4096];
    size_t len;
} rank;

/* Read the hostfile into hosts (one entry per slot). The count, or -1
 * after printing file:line and what is wrong. */
static int read_hosts(const char *path, rank **out) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "crescent launch: hostfile %s: %s\n", path, strerror(errno));
        return -1;
    }
    rank *r = cr_xcalloc(MAX_RANKS, sizeof *r);
    char line[1024];
    int n = 0, ln = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        ln++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char host[256], extra[64], junk[2];
        int k = sscanf(line, "%255s %63s %1s", host, extra, junk), slots = 1;
        if (k <= 0) continue;
        if (k == 3 || (k == 2 && (sscanf(extra, "slots=%d%1s", &slots, junk) != 1 || slots < 1 || slots > 64))) {
            fprintf(stderr, "%s:%d: expected 'HOST' or 'HOST slots=N' (N from 1 to 64)\n", path, ln);
            rc = -1;
        }
        for (int s = 0; rc == 0 && s < slots; s++) {
            if (n >= MAX_RANKS) {
                fprintf(stderr, "%s:%d: more than %d ranks\n", path, ln, MAX_RANKS);
                rc = -1;
            } else {
                snprintf(r[n++].host, sizeof r->host, "%s", host);
            }
        }
    }
    fclose(f);
    if (rc == 0 && n == 0) fprintf(stderr, "crescent launch: hostfile %s names no host\n", path), rc = -1;
    if (rc < 0) {
        free(r);
        return -1;
    }
    *out = r;
    return n;
}

/* s quoted for a POSIX shell, appended to *buf. */
static void quote(char **buf, size_t *len, size_t *cap, const char *s) {
    size_t need = *len + 4 * strlen(s) + 4;
    if (need > *cap) *cap = need * 2, *buf = cr_xrealloc(*buf, *cap);
    char *p = *buf + *len;
    *p++ = ' ', *p++ = '\'';
    for (; *s; s++) {
        if (*s == '\'') memcpy(p, "'\\''", 4), p += 4;
        else *p++ = *s;
    }
    *p++ = '\'';
    *p = 0;
    *len = (size_t)(p - *buf);
}

/* An absolute path for p (the same path on every host), or NULL. */
static char *absolute(const char *p) { return realpath(p, NULL); }

static int start_rank(rank *r, int i, int world, const char *master, int port, const char *ssh, const char *exe,
                      const char *key, const char *job, int argc, char **argv) {
    char *cmd = NULL;
    size_t len = 0, cap = 0;
    char v[1600];
    quote(&cmd, &len, &cap, "env");
    const char *vars[] = {"CRESCENT_RANK", "CRESCENT_WORLD", "CRESCENT_MASTER", "CRESCENT_PORT",
                          "CRESCENT_KEY_FILE"};
    char vals[5][300];
    snprintf(vals[0], sizeof vals[0], "%d", i);
    snprintf(vals[1], sizeof vals[1], "%d", world);
    snprintf(vals[2], sizeof vals[2], "%s", master);
    snprintf(vals[3], sizeof vals[3], "%d", port);
    snprintf(vals[4], sizeof vals[4], "%s", key);
    for (int k = 0; k < 5; k++) snprintf(v, sizeof v, "%s=%s", vars[k], vals[k]), quote(&cmd, &len, &cap, v);
    const char *pass[] = {"CRESCENT_ROOT", "LUA_PATH", "LUA_CPATH", "OPENBLAS_NUM_THREADS", "CRESCENT_TEST_TAG"};
    for (size_t k = 0; k < sizeof pass / sizeof *pass; k++) {
        const char *x = getenv(pass[k]);
        if (x) {
            char *w = cr_xmalloc(strlen(pass[k]) + strlen(x) + 2);
            sprintf(w, "%s=%s", pass[k], x);
            quote(&cmd, &len, &cap, w);
            free(w);
        }
    }
    quote(&cmd, &len, &cap, exe);
    quote(&cmd, &len, &cap, "run");
    quote(&cmd, &len, &cap, job);
    for (int k = 0; k < argc; k++) quote(&cmd, &len, &cap, argv[k]);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        free(cmd);
        return -1;
    }
    size_t hl = 0, hc = 0;
    char *hq = NULL;
    quote(&hq, &hl, &hc, r->host);
    char *cq = NULL;
    size_t cl = 0, cc = 0;
    quote(&cq, &cl, &cc, cmd + 1);
    char *sh = cr_xmalloc(strlen(ssh) + hl + cl + 8);
    sprintf(sh, "exec %s%s%s", ssh, hq, cq);
    free(hq), free(cq), free(cmd);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1), dup2(p[1], 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
        _exit(127);
    }
    free(sh);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return -1;
    }
    r->pid = pid, r->fd = p[0];
    return 0;
}

/* Print the complete lines of r's buffer with its host in front; all of it
 * when flush. */
static void emit(rank *r, int i, int flush) {
    size_t start = 0;
    for (size_t k = 0; k < r->len; k++)
        if (r->buf[k] == '\n') {
            printf("[%s %d] %.*s\n", r->host, i, (int)(k - start), r->buf + start);
            start = k + 1;
        }
    if (flush && start < r->len) printf("[%s %d] %.*s\n", r->host, i, (int)(r->len - start), r->buf + start), start = r->len;
    if (start == 0 && r->len == sizeof r->buf) printf("[%s %d] %.*s\n", r->host, i, (int)r->len, r->buf), start = r->len;
    memmove(r->buf, r->buf + start, r->len - start);
    r->len -= start;
    fflush(stdout);
}

static volatile sig_atomic_t stop_sig;
static void on_signal(int s) { stop_sig = s; }

static void kill_all(rank *r, int n) {
    for (int i = 0; i < n; i++)
        if (r[i].pid > 0 && !r[i].done) kill(r[i].pid, SIGTERM);
}

/* Stream every rank's output until all ended; the first failure (or an
 * interrupt) ends the others. Returns rank 0's exit status, or the first
 * failing rank's. */
static int supervise(rank *r, int n) {
    struct pollfd *pf = cr_xcalloc((size_t)n, sizeof *pf);
    int open_fds = n, first_bad = -1, killed = 0;
    while (open_fds > 0) {
        for (int i = 0; i < n; i++) pf[i] = (struct pollfd){.fd = r[i].fd, .events = POLLIN};
        if (poll(pf, (nfds_t)n, 200) < 0 && errno != EINTR) break;
        if (stop_sig && !killed) kill_all(r, n), killed = 1;
        for (int i = 0; i < n; i++) {
            if (r[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t got = read(r[i].fd, r[i].buf + r[i].len, sizeof r[i].buf - r[i].len);
            if (got > 0) {
                r[i].len += (size_t)got;
                emit(&r[i], i, 0);
                continue;
            }
            emit(&r[i], i, 1);
            close(r[i].fd);
            r[i].fd = -1;
            open_fds--;
            waitpid(r[i].pid, &r[i].status, 0);
            r[i].done = 1;
            int st = WIFEXITED(r[i].status) ? WEXITSTATUS(r[i].status) : 128 + WTERMSIG(r[i].status);
            if (st != 0 && first_bad < 0) {
                first_bad = i;
                fprintf(stderr, "crescent launch: rank %d on %s exited with status %d; ending the others\n", i,
                        r[i].host, st);
                if (!killed) kill_all(r, n), killed = 1;
            }
        }
    }
    free(pf);
    int who = first_bad >= 0 ? first_bad : 0;
    int st = WIFEXITED(r[who].status) ? WEXITSTATUS(r[who].status) : 128 + WTERMSIG(r[who].status);
    return st ? st : stop_sig ? 130 : 0;
}

int cr_cli_launch(int argc, char **argv) {
    launch_opts o = {NULL, NULL, NULL, 29400};
    cr_opt_res res;
    int rc = cr_cli_parse(&launch_cmd, argc, argv, &o, &res);
    if (rc >= 0) return rc;
    rank *r = NULL;
    int n = read_hosts(o.hosts, &r);
    const char *key = o.key ? o.key : getenv("CRESCENT_KEY_FILE");
    char *job = n > 0 ? absolute(res.pos[0]) : NULL, *kabs = NULL, exe[PATH_MAX];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    rc = 0;
    if (n < 0) rc = 2;
    else if (!job) fprintf(stderr, "crescent launch: job script %s: %s\n", res.pos[0], strerror(errno)), rc = 2;
    else if (!key || !*key)
        fprintf(stderr, "crescent launch: ranks on several hosts need the cluster key: crescent keygen > FILE, "
                        "chmod 600 FILE, and --key FILE (the same path on every host)\n"), rc = 2;
    else if (cr_cli_key_file("crescent launch", key) < 0 || !(kabs = absolute(key))) rc = 2;
    else if (el <= 0) fprintf(stderr, "crescent launch: cannot find its own binary\n"), rc = 2;
    if (rc == 0) {
        exe[el] = 0;
        const char *ssh = o.ssh ? o.ssh : getenv("CRESCENT_SSH") ? getenv("CRESCENT_SSH") : "ssh -o BatchMode=yes";
        fprintf(stderr, "crescent launch: %d rank(s) from %s, scheduler on %s:%d\n", n, o.hosts, r[0].host,
                (int)o.port);
        signal(SIGINT, on_signal), signal(SIGTERM, on_signal), signal(SIGPIPE, SIG_IGN);
        for (int i = 0; i < n && rc == 0; i++)
            if (start_rank(&r[i], i, n, r[0].host, (int)o.port, ssh, exe, kabs, job, res.npos - 1, res.pos + 1) < 0) {
                fprintf(stderr, "crescent launch: cannot start rank %d on %s: %s\n", i, r[i].host, strerror(errno));
                kill_all(r, i);
                rc = 1;
            }
        int started = 0;
        for (int i = 0; i < n; i++) started += r[i].pid > 0;
        if (rc == 0) rc = supervise(r, n);
        else
            for (int i = 0; i < started; i++) waitpid(r[i].pid, NULL, 0);
    }
    free(job), free(kabs), free(r);
    cr_opt_res_free(&res);
    return rc;
}
