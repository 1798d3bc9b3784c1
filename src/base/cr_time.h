#ifndef CR_TIME_H
#define CR_TIME_H
/* Monotonic clock in seconds (CLOCK_MONOTONIC). */
double cr_now(void);
#endif
