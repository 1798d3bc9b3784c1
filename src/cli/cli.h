#ifndef CR_CLI_H
#define CR_CLI_H
/* One entry point per `crescent COMMAND`. argv[0] is the command name.
 * Each returns the process exit status: 0 ok, 1 runtime failure, 2 usage. */

int cr_cli_run(int argc, char **argv);       /* cli_run.c: run, with --repl */
int cr_cli_repl(int argc, char **argv);      /* cli_repl.c */
int cr_cli_node(int argc, char **argv);      /* cli_node.c */
int cr_cli_data(int argc, char **argv);      /* cli_data.c */
int cr_cli_partition(int argc, char **argv); /* cli_partition.c */
int cr_cli_keygen(int argc, char **argv);    /* cli_node.c */
int cr_cli_ckpt(int argc, char **argv);      /* cli_ckpt.c: verify and describe checkpoints */
/* Dataset builders from Debian packages and npm (cli_corpus.c): wordnet,
 * wordnet-graph, gcide-text, gcide-docs, brown, gcide-brown, wordnet-synonyms.
 * Called by cr_cli_data with the same argv; returns 2 with a message if
 * argv[1] is not one of those names. */
int cr_cli_corpus(int argc, char **argv);

/* Path of the running executable's directory (for lua/ and configs/). */
const char *cr_cli_home(void);

#endif
