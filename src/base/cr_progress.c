/* Progress display: see cr_progress.h. */
#include "base/cr_progress.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"

#define BAR_WIDTH 24
#define TTY_PERIOD 0.1   /* seconds between redraws on a terminal */
#define PLAIN_PERIOD 5.0 /* seconds between lines otherwise */

struct cr_progress {
    char *label;
    uint64_t total, count;
    FILE *out;
    int tty;
    double start, last_draw;
    int drawn_width; /* characters of the last tty redraw, to blank leftovers */
};

char *cr_progress_human(double n, char *buf, size_t size) {
    static const char suffix[] = " kMGTP";
    int k = 0;
    while (n >= 1000.0 && k < 5) {
        n /= 1000.0;
        k++;
    }
    if (k == 0)
        snprintf(buf, size, "%.0f", n);
    else
        snprintf(buf, size, "%.*f%c", n < 10 ? 2 : n < 100 ? 1 : 0, n, suffix[k]);
    return buf;
}

static void fmt_eta(double s, char *buf, size_t size) {
    if (s < 0 || s > 359999) {
        snprintf(buf, size, "--:--");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

cr_progress *cr_progress_new_mode(const char *label, uint64_t total, FILE *out, int mode) {
    cr_progress *p = cr_xcalloc(1, sizeof *p);
    p->label = cr_xstrdup(label ? label : "");
    p->total = total;
    p->out = out;
    if (mode == CR_PROGRESS_AUTO) p->tty = out && isatty(fileno(out));
    else p->tty = mode == CR_PROGRESS_TTY;
    p->start = p->last_draw = cr_now();
    return p;
}

cr_progress *cr_progress_new(const char *label, uint64_t total, FILE *out) {
    return cr_progress_new_mode(label, total, out, CR_PROGRESS_AUTO);
}

/* One status text: "label [#####-----]  42%  1.23M/s  ETA 0:12" */
static int status(const cr_progress *p, double now, char *buf, size_t size) {
    double el = now - p->start;
    double rate = el > 0 ? (double)p->count / el : 0;
    char r[32], c[32], eta[32];
    cr_progress_human(rate, r, sizeof r);
    cr_progress_human((double)p->count, c, sizeof c);
    if (p->total == 0) return snprintf(buf, size, "%s %s  %s/s", p->label, c, r);
    double frac = (double)p->count / (double)p->total;
    if (frac > 1) frac = 1;
    fmt_eta(rate > 0 ? (double)(p->total - (p->count < p->total ? p->count : p->total)) / rate : -1,
            eta, sizeof eta);
    if (!p->tty)
        return snprintf(buf, size, "%s %3.0f%%  %s  %s/s  ETA %s", p->label, frac * 100, c, r, eta);
    char bar[BAR_WIDTH + 1];
    int full = (int)(frac * BAR_WIDTH);
    for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < full ? '#' : '-';
    bar[BAR_WIDTH] = '\0';
    return snprintf(buf, size, "%s [%s] %3.0f%%  %s/s  ETA %s", p->label, bar, frac * 100, r, eta);
}

static void draw(cr_progress *p, double now) {
    char buf[256];
    int w = status(p, now, buf, sizeof buf);
    if (w >= (int)sizeof buf) w = (int)sizeof buf - 1;
    if (p->tty) {
        int pad = p->drawn_width > w ? p->drawn_width - w : 0;
        fprintf(p->out, "\r%s%*s", buf, pad, "");
        p->drawn_width = w;
    } else {
        fprintf(p->out, "%s\n", buf);
    }
    fflush(p->out);
    p->last_draw = now;
}

void cr_progress_add(cr_progress *p, uint64_t n) {
    if (!p) return;
    p->count += n;
    if (!p->out) return;
    double now = cr_now();
    if (now - p->last_draw >= (p->tty ? TTY_PERIOD : PLAIN_PERIOD)) draw(p, now);
}

uint64_t cr_progress_count(const cr_progress *p) { return p ? p->count : 0; }

void cr_progress_done(cr_progress **pp) {
    if (!pp || !*pp) return;
    cr_progress *p = *pp;
    if (p->out) {
        double el = cr_now() - p->start;
        char c[32], r[32];
        cr_progress_human((double)p->count, c, sizeof c);
        cr_progress_human(el > 0 ? (double)p->count / el : 0, r, sizeof r);
        if (p->tty && p->drawn_width > 0) fprintf(p->out, "\r%*s\r", p->drawn_width, ""); /* erase the bar */
        fprintf(p->out, "%s: %s items in %.2f s, %s/s\n", p->label, c, el, r);
        fflush(p->out);
    }
    free(p->label);
    free(p);
    *pp = NULL;
}
