#ifndef CR_PROTO_CAPS_H
#define CR_PROTO_CAPS_H
/* The control protocol's caps (ps/cr_proto.h), apart so that the job
 * client's callers see the job's limits without the wire. */

/* Caps on sizes read off the wire (checked before anything is allocated). */
#define CR_PROTO_MAX_NODES 4096
#define CR_PROTO_MAX_WPN 1024           /* workers per node */
#define CR_PROTO_MAX_ADDR 255           /* one data address */
#define CR_PROTO_MAX_SCRIPT (64u << 20) /* model or policy source, options, call args */
#define CR_PROTO_MAX_NAME 255           /* chunk name, function name */
#define CR_PROTO_MAX_ERROR (1u << 20)   /* an error message (with its traceback) */
#define CR_PROTO_MAX_REPLY (1u << 30)   /* a serialized reply */
#define CR_PROTO_MAX_WEIGHTS (1ll << 27) /* weights of one distribution (8 bytes each: 1 GiB) */
#define CR_PROTO_MAX_SCHEME 256         /* entries of one sampling scheme */

#endif
