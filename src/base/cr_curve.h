#ifndef CR_CURVE_H
#define CR_CURVE_H
/* The keys a job's processes authenticate with: a plain value, copied
 * freely (no resources). What they mean on a socket, how they are read from
 * the environment and checked, is net/cr_auth.h's; the job and node options
 * carry them (ps/cr_job.h, ps/cr_node.h) without reaching the transport. */

typedef struct cr_curve {
    int on;                /* 1: authentication on (CURVE, or PLAIN if plain) */
    int plain;             /* 1: per-job secret in sec (loopback only), 0: CURVE pair */
    char pub[41], sec[41]; /* Z85, 40 characters */
} cr_curve;

#endif
