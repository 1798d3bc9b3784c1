/* The CLI side of cr_opt: print the help or the usage error, pick the exit
 * status. */
#include <stdlib.h>

#include "cli/cli.h"

void cr_cli_help(const cr_opt_cmd *c, FILE *f) {
    char *h = cr_opt_help(c);
    fputs(h, f);
    free(h);
}

int cr_cli_parse(const cr_opt_cmd *c, int argc, char **argv, void *out, cr_opt_res *r) {
    cr_err e;
    int rc = cr_opt_parse(c, argc, argv, out, r, &e);
    if (rc == 0) return -1;
    cr_opt_res_free(r);
    if (rc == 1) {
        cr_cli_help(c, stdout);
        return 0;
    }
    fprintf(stderr, "%s: %s\n", c->name, e.msg);
    fprintf(stderr, "usage: %s%s%s  (--help lists the options)\n", c->name, c->args ? " " : "",
            c->args ? c->args : "");
    return 2;
}
