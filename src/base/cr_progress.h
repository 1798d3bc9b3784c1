#ifndef CR_PROGRESS_H
#define CR_PROGRESS_H
/* Progress of one long step (an epoch): items done, items/s, ETA.
 *
 * On a terminal the bar redraws in place ("\r"), at most about 10 times a
 * second however often cr_progress_add is called. When `out` is not a
 * terminal (a log file, a pipe) it writes plain lines instead, at most one
 * every 5 seconds, plus one final line. One cr_progress is used by one thread. */

#include <stdint.h>
#include <stdio.h>

typedef struct cr_progress cr_progress;

enum { CR_PROGRESS_AUTO = 0, CR_PROGRESS_TTY = 1, CR_PROGRESS_PLAIN = 2 };

/* A new progress display for `total` items (0 = unknown: no percentage, no
 * ETA). `label` is copied; `out` stays owned by the caller and must outlive
 * the progress. isatty(fileno(out)) decides bar vs plain lines. Never NULL. */
cr_progress *cr_progress_new(const char *label, uint64_t total, FILE *out);

/* Same with the mode forced (CR_PROGRESS_TTY or CR_PROGRESS_PLAIN; AUTO
 * asks isatty). For tests and for callers that know better. */
cr_progress *cr_progress_new_mode(const char *label, uint64_t total, FILE *out, int mode);

/* Count n more items done; redraws when due. Cheap: one clock read. */
void cr_progress_add(cr_progress *p, uint64_t n);

/* Items counted so far. */
uint64_t cr_progress_count(const cr_progress *p);

/* Write the final line ("label: N items in S s, R/s"), free p and set *p to
 * NULL. Accepts NULL and *p == NULL. */
void cr_progress_done(cr_progress **p);

/* Format n with a k/M/G suffix into buf (e.g. "1.25M"); returns buf. */
char *cr_progress_human(double n, char *buf, size_t size);

#endif
