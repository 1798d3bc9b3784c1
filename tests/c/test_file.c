/* cr_file: which targets a tmp+rename writer may replace, and temp files that
 * are never written through; the data writers (cr_out) and placement files
 * use the same checks (probe defect 3). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cr_err.h"
#include "base/cr_file.h"
#include "cr_test.h"
#include "file_util.h"
#include "data/cr_out.h"
#include "partition/cr_partition.h"

static char dir[64];

static void path_of(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

/* victim (named vname, holding "keep") and lnk (named lname), a symlink to
 * it, in the test dir; 1 iff made. */
static int victim_and_link(char victim[256], char lnk[256], const char *vname, const char *lname) {
    path_of(victim, 256, vname);
    path_of(lnk, 256, lname);
    put_text(victim, "keep");
    return symlink(victim, lnk) == 0;
}

static int refused(const char *path, const char *kind, const cr_err *e) {
    char want[512];
    snprintf(want, sizeof want, "%s: not a regular file (%s); refusing to replace it", path, kind);
    if (strcmp(e->msg, want) != 0) printf("  got \"%s\"\n", e->msg);
    return strcmp(e->msg, want) == 0;
}

static void test_check_replace(void) {
    cr_err e;
    char reg[256], lnk[256], fifo[256], sub[256], missing[256];
    path_of(reg, sizeof reg, "reg");
    path_of(lnk, sizeof lnk, "lnk");
    path_of(fifo, sizeof fifo, "fifo");
    path_of(sub, sizeof sub, "sub");
    path_of(missing, sizeof missing, "missing");
    put_text(reg, "x");
    CR_CHECK(symlink(reg, lnk) == 0 && mkfifo(fifo, 0600) == 0 && mkdir(sub, 0700) == 0);
    CR_CHECK(cr_file_check_replace(reg, &e) == 0);
    CR_CHECK(cr_file_check_replace(missing, &e) == 0);
    CR_CHECK(cr_file_check_replace("/dev/null", &e) == -1 && refused("/dev/null", "character device", &e));
    CR_CHECK(cr_file_check_replace(lnk, &e) == -1 && refused(lnk, "symbolic link", &e));
    CR_CHECK(cr_file_check_replace(fifo, &e) == -1 && refused(fifo, "fifo", &e));
    CR_CHECK(cr_file_check_replace(sub, &e) == -1 && refused(sub, "directory", &e));
    CR_CHECK(cr_file_check_replace("/nonexistent-dir/x", &e) == 0); /* missing: the open says why */
}

static void test_create_tmp(void) {
    cr_err e;
    char victim[256], tmp[256];
    CR_CHECK(victim_and_link(victim, tmp, "victim", "out.tmp"));
    CR_CHECK(cr_file_create_tmp(tmp, 0644, &e) == -1 && refused(tmp, "symbolic link", &e));
    CR_CHECK(is_mode(tmp, S_IFLNK) && has_text(victim, "keep"));
    CR_CHECK(unlink(tmp) == 0 && link(victim, tmp) == 0); /* a hard link is a new file, not written through */
    int fd = cr_file_create_tmp(tmp, 0644, &e);
    CR_CHECK(fd >= 0);
    CR_CHECK(write(fd, "new", 3) == 3 && close(fd) == 0);
    CR_CHECK(has_text(victim, "keep") && has_text(tmp, "new"));
    CR_CHECK(cr_file_create_tmp("/nonexistent-dir/x.tmp", 0644, &e) == -1);
    CR_CHECK(strstr(e.msg, "/nonexistent-dir/x.tmp: cannot create") != NULL);
}

/* Data writers (cr.core.data.write_text and the generators) and placement
 * files refuse /dev/null and a symlink; the targets stay as they were. */
static void test_writers_refuse(void) {
    cr_err e;
    cr_out o;
    char victim[256], lnk[256];
    CR_CHECK(victim_and_link(victim, lnk, "victim2", "lnk2"));
    CR_CHECK(cr_out_open(&o, "/dev/null", &e) == -1 && refused("/dev/null", "character device", &e));
    CR_CHECK(cr_out_open(&o, lnk, &e) == -1 && refused(lnk, "symbolic link", &e));
    CR_CHECK(is_mode("/dev/null", S_IFCHR) && is_mode(lnk, S_IFLNK) && has_text(victim, "keep"));
    uint32_t u[1] = {0}, v[1] = {0};
    cr_assign p = {1, 1, 1, u, v};
    CR_CHECK(cr_assign_save("/dev/null", &p, NULL, &e) == -1 && refused("/dev/null", "character device", &e));
    CR_CHECK(cr_assign_save(lnk, &p, NULL, &e) == -1 && refused(lnk, "symbolic link", &e));
    CR_CHECK(is_mode("/dev/null", S_IFCHR) && is_mode(lnk, S_IFLNK) && has_text(victim, "keep"));
    char ok[256];
    path_of(ok, sizeof ok, "ok.placement");
    CR_CHECK(cr_assign_save(ok, &p, NULL, &e) == 0 && is_mode(ok, S_IFREG));
    CR_CHECK(cr_out_open(&o, ok, &e) == 0 && fputs("x", o.f) >= 0 && cr_out_commit(&o, &e) == 0);
    CR_CHECK(has_text(ok, "x"));
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/cr_test_file.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    CR_RUN(test_check_replace);
    CR_RUN(test_create_tmp);
    CR_RUN(test_writers_refuse);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("could not remove %s\n", dir);
    return cr_test_done();
}
