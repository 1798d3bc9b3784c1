/* Where the binary finds lua/ and configs/ (its "home"), with no environment
 * variable: next to the binary (the source tree, where `make` leaves
 * ./crescent), else PREFIX/share/crescent for a binary in PREFIX/bin (the
 * layout `make install PREFIX=...` writes). cr_lhost_new puts HOME/lua first
 * on package.path, so the Lua side (crescent.ps's find_home) finds the same
 * home from package.searchpath. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* dir holds lua/crescent (a directory). */
static int has_lua(const char *dir) {
    char p[PATH_MAX];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/lua/crescent", dir) >= (int)sizeof p) return 0;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The home for a binary in directory bindir, into out (PATH_MAX bytes). */
static void find_home(const char *bindir, char *out) {
    char p[PATH_MAX];
    snprintf(out, PATH_MAX, "%s", bindir);
    if (has_lua(bindir)) return;
    if (snprintf(p, sizeof p, "%s/../share/crescent", bindir) >= (int)sizeof p || !has_lua(p)) return;
    char *r = realpath(p, NULL);
    if (r && strlen(r) < PATH_MAX) snprintf(out, PATH_MAX, "%s", r);
    free(r);
}

const char *cr_cli_home(void) {
    static char home[PATH_MAX];
    if (!home[0]) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return ".";
        exe[n] = '\0';
        find_home(dirname(exe), home);
    }
    return home;
}
