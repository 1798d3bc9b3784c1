#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

const char *cr_cli_home(void) {
    static char home[PATH_MAX];
    if (!home[0]) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return ".";
        exe[n] = '\0';
        strncpy(home, dirname(exe), sizeof home - 1);
    }
    return home;
}
