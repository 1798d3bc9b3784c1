/* Local IPv4 addresses: by route, by interface name, by owner. */
#include "net/cr_iface.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int cr_iface_resolve(const char *host, char ip[CR_IP_MAX], cr_err *e) {
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) == 1) {
        snprintf(ip, CR_IP_MAX, "%s", host);
        return 0;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 || !res) return cr_errf(e, "host '%s' does not resolve to an IPv4 address: %s", host, gai_strerror(rc));
    inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, ip, CR_IP_MAX);
    freeaddrinfo(res);
    return 0;
}

int cr_iface_owner(const char *ip, char name[CR_IFNAME_MAX]) {
    struct ifaddrs *ifs, *i;
    name[0] = 0;
    if (getifaddrs(&ifs) < 0) return 0;
    int found = 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        char a[CR_IP_MAX];
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a, sizeof a);
        if (!strcmp(a, ip)) snprintf(name, CR_IFNAME_MAX, "%s", i->ifa_name), found = 1;
    }
    freeifaddrs(ifs);
    return found;
}

int cr_iface_toward(const char *dst_ip, char ip[CR_IP_MAX], char name[CR_IFNAME_MAX], cr_err *e) {
    struct sockaddr_in d = {.sin_family = AF_INET, .sin_port = htons(9)}, s;
    if (inet_pton(AF_INET, dst_ip, &d.sin_addr) != 1) return cr_errf(e, "'%s' is not an IPv4 address", dst_ip);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return cr_errf(e, "socket: %s", strerror(errno));
    socklen_t sl = sizeof s;
    int rc = connect(fd, (struct sockaddr *)&d, sizeof d) < 0 ? -1 : getsockname(fd, (struct sockaddr *)&s, &sl);
    int err = errno;
    close(fd);
    if (rc < 0) return cr_errf(e, "no route from this host to %s: %s", dst_ip, strerror(err));
    inet_ntop(AF_INET, &s.sin_addr, ip, CR_IP_MAX);
    cr_iface_owner(ip, name);
    return 0;
}

int cr_iface_named(const char *name, char ip[CR_IP_MAX], cr_err *e) {
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) < 0) return cr_errf(e, "cannot list interfaces: %s", strerror(errno));
    char known[256] = "";
    size_t kl = 0;
    int found = 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        if (!strcmp(i->ifa_name, name)) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, CR_IP_MAX);
            found = 1;
        } else if (kl + strlen(i->ifa_name) + 3 < sizeof known) {
            kl += (size_t)snprintf(known + kl, sizeof known - kl, "%s%s", kl ? ", " : "", i->ifa_name);
        }
    }
    freeifaddrs(ifs);
    if (!found) return cr_errf(e, "interface '%s' has no IPv4 address here (interfaces that have one: %s)", name, known);
    return 0;
}

int cr_ip_is_loopback(const char *ip) { return !strncmp(ip, "127.", 4) || !strcmp(ip, "localhost"); }

int cr_ip_is_wildcard(const char *ip) { return !strcmp(ip, "0.0.0.0") || !strcmp(ip, "*"); }

int cr_endpoint_split(const char *ep, char *host, size_t hostn, char *port, size_t portn, cr_err *e) {
    if (strncmp(ep, "tcp://", 6)) return cr_errf(e, "'%s' is not a tcp://HOST:PORT address", ep);
    const char *h = ep + 6, *colon = strrchr(h, ':');
    if (!colon || colon == h || !colon[1]) return cr_errf(e, "'%s' is not a tcp://HOST:PORT address", ep);
    size_t hl = (size_t)(colon - h);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') h++, hl -= 2;
    if (hl >= hostn || strlen(colon + 1) >= portn) return cr_errf(e, "address '%s' is too long", ep);
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(port, portn, "%s", colon + 1);
    return 0;
}
