/* cr_progress: final line, human numbers, redraw throttling, tty vs plain. */
#include <stdlib.h>
#include <time.h>

#include "base/cr_progress.h"
#include "base/cr_time.h"
#include "cr_test.h"

/* The whole content written to f so far, NUL-terminated (caller frees). */
static char *slurp(FILE *f) {
    fflush(f);
    long n = ftell(f);
    char *s = calloc((size_t)n + 1, 1);
    rewind(f);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    return s;
}

static int count_char(const char *s, char c) {
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

static void test_human(void) {
    char b[32];
    CR_CHECK_STR(cr_progress_human(999, b, sizeof b), "999");
    CR_CHECK_STR(cr_progress_human(1250000, b, sizeof b), "1.25M");
    CR_CHECK_STR(cr_progress_human(43210, b, sizeof b), "43.2k");
    CR_CHECK_STR(cr_progress_human(2e9, b, sizeof b), "2.00G");
}

static void test_plain_final_line(void) {
    FILE *f = tmpfile();
    CR_CHECK(f);
    cr_progress *p = cr_progress_new_mode("epoch 1", 1000, f, CR_PROGRESS_PLAIN);
    for (int i = 0; i < 100; i++) cr_progress_add(p, 10);
    CR_CHECK(cr_progress_count(p) == 1000);
    cr_progress_done(&p);
    CR_CHECK(p == NULL);
    cr_progress_done(&p); /* idempotent */
    char *s = slurp(f);
    fclose(f);
    /* fast loop: no intermediate plain line, only the final one */
    int ok = count_char(s, '\n') == 1 && strncmp(s, "epoch 1: 1.00k items in ", 24) == 0 &&
             strstr(s, "/s\n") != NULL && !strchr(s, '\r');
    if (!ok) printf("  got: %s", s);
    free(s);
    CR_CHECK(ok);
}

/* 200k adds over ~0.35 s redraw at most ~10 times a second. */
static void test_tty_throttled(void) {
    FILE *f = tmpfile();
    CR_CHECK(f);
    cr_progress *p = cr_progress_new_mode("train", 200000, f, CR_PROGRESS_TTY);
    double t0 = cr_now();
    struct timespec ts = {0, 1750000}; /* 1.75 ms */
    for (int i = 0; i < 200; i++) {
        for (int j = 0; j < 1000; j++) cr_progress_add(p, 1);
        nanosleep(&ts, NULL);
    }
    double el = cr_now() - t0;
    cr_progress_done(&p);
    char *s = slurp(f);
    fclose(f);
    int redraws = count_char(s, '\r') - 2; /* done erases the bar: "\r...\r" */
    int ok = redraws >= 1 && redraws <= (int)(el * 10) + 2 && strstr(s, "[####") &&
             strstr(s, "ETA") && strstr(s, "train: 200k items in ");
    if (!ok) printf("  redraws %d in %.2f s; got: %s\n", redraws, el, s);
    free(s);
    CR_CHECK(ok);
}

static void test_unknown_total(void) {
    FILE *f = tmpfile();
    CR_CHECK(f);
    cr_progress *p = cr_progress_new_mode("scan", 0, f, CR_PROGRESS_TTY);
    struct timespec ts = {0, 120000000};
    cr_progress_add(p, 5);
    nanosleep(&ts, NULL);
    cr_progress_add(p, 5);
    cr_progress_done(&p);
    char *s = slurp(f);
    fclose(f);
    int ok = strstr(s, "scan 10 ") != NULL && strstr(s, "ETA") == NULL && strstr(s, "scan: 10 items");
    if (!ok) printf("  got: %s\n", s);
    free(s);
    CR_CHECK(ok);
}

int main(void) {
    CR_RUN(test_human);
    CR_RUN(test_plain_final_line);
    CR_RUN(test_tty_throttled);
    CR_RUN(test_unknown_total);
    return cr_test_done();
}
