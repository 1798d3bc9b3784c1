#ifndef CR_IFACE_H
#define CR_IFACE_H
/* Which local address a process binds and advertises (IPv4).
 *
 * A node that others reach must advertise an address of the interface that
 * leads to them, never a loopback or wildcard one: the usual failure of
 * parameter servers on a cluster (a scheduler bound to 127.0.0.1, a host
 * name that resolves to 127.0.1.1, DMLC_INTERFACE ignored) is a job that
 * hangs while waiting for nodes. These helpers answer "what is my address
 * towards HOST" by asking the kernel's routing table (a UDP socket
 * connected to HOST, which sends nothing), and "what is the address of
 * interface NAME". */

#include <stddef.h>

#include "base/cr_err.h"

#define CR_IP_MAX 16     /* "255.255.255.255" and its NUL */
#define CR_IFNAME_MAX 16 /* IFNAMSIZ */

/* host (a name or a dotted address) as an IPv4 address. -1 with a message
 * naming host when it does not resolve. */
int cr_iface_resolve(const char *host, char ip[CR_IP_MAX], cr_err *e);

/* The local address the kernel would use to reach dst_ip, and the name of
 * its interface ("" if no interface holds it). -1 with a message naming
 * dst_ip when there is no route. */
int cr_iface_toward(const char *dst_ip, char ip[CR_IP_MAX], char name[CR_IFNAME_MAX], cr_err *e);

/* The first IPv4 address of interface name. -1 with a message listing the
 * interfaces that have one when name has none. */
int cr_iface_named(const char *name, char ip[CR_IP_MAX], cr_err *e);

/* The interface that holds ip, in name; 1 if found, 0 if no local
 * interface has that address. */
int cr_iface_owner(const char *ip, char name[CR_IFNAME_MAX]);

/* 1 for 127.0.0.0/8, 0 otherwise. */
int cr_ip_is_loopback(const char *ip);
/* 1 for 0.0.0.0 and "*". */
int cr_ip_is_wildcard(const char *ip);

/* Split "tcp://HOST:PORT" into host (without brackets) and port ("*" kept
 * as written). -1 with a message when endpoint is not of that form. */
int cr_endpoint_split(const char *endpoint, char *host, size_t hostn, char *port, size_t portn, cr_err *e);

#endif
