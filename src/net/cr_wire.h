#ifndef CR_WIRE_H
#define CR_WIRE_H
/* Framing of crescent's messages: ZeroMQ multipart messages received whole,
 * frames sent without a copy, zlib for large value frames, sockets that
 * never block at close. What the frames mean is the parameter server's:
 * the control messages and their codecs are src/ps/cr_proto.h, the data
 * plane's header and its flags src/ps/cr_dhdr.h. */

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zmq.h>

#include "base/cr_err.h"

/* One received multipart message: up to CR_PARTS_MAX frames (more are dropped). */
#define CR_PARTS_MAX 8
typedef struct cr_parts {
    int n;
    zmq_msg_t part[CR_PARTS_MAX];
} cr_parts;

/* Receive every frame of the next message on sock (zmq flags, e.g.
 * ZMQ_DONTWAIT). Returns the frame count, or -1 (errno from zmq). On success
 * the caller must cr_parts_close(p). */
int cr_parts_recv(void *sock, cr_parts *p, int flags);
void cr_parts_close(cr_parts *p);
static inline void *cr_parts_data(cr_parts *p, int i) { return zmq_msg_data(&p->part[i]); }
static inline size_t cr_parts_size(cr_parts *p, int i) { return zmq_msg_size(&p->part[i]); }

/* Send len bytes at buf as one frame, taking ownership of buf (freed with
 * free() by ZeroMQ when sent): no copy. more = 1 if frames follow. */
int cr_send_owned(void *sock, void *buf, size_t len, int more);

/* zlib (level 1) compression of a value frame. On success *out is a new
 * buffer (caller frees) of *outlen bytes. */
int cr_wire_deflate(const void *src, size_t n, void **out, size_t *outlen, cr_err *e);
/* Inflate src (n bytes) into dst, which must hold exactly raw bytes. */
int cr_wire_inflate(const void *src, size_t n, void *dst, size_t raw, cr_err *e);

/* Create a socket of `type` with linger 0 (never blocks at close). */
void *cr_socket(void *ctx, int type);

#endif
