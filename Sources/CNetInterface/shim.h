// Thin wrappers over the socket ioctls that configure one IPv4 address on a network interface and bring it up
// (Swift cannot call the variadic ioctl() directly, and struct ifreq is a union), and over the socket calls of a
// burst of broadcasts out of one interface.
#ifndef CAMO_NET_INTERFACE_SHIM_H
#define CAMO_NET_INTERFACE_SHIM_H

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/// Sets the interface's IPv4 address and netmask (both in network byte order). Returns 0 or an errno.
static inline int camo_netif_set_ipv4(const char *name, uint32_t address, uint32_t netmask) {
    if (strlen(name) >= IFNAMSIZ) return ENAMETOOLONG;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    struct ifreq request;
    memset(&request, 0, sizeof request);
    strncpy(request.ifr_name, name, IFNAMSIZ - 1);
    struct sockaddr_in *in = (struct sockaddr_in *)&request.ifr_addr;
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = address;
    int result = 0;
    if (ioctl(fd, SIOCSIFADDR, &request) < 0) {
        result = errno;
    } else {
        in = (struct sockaddr_in *)&request.ifr_netmask;
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = netmask;
        if (ioctl(fd, SIOCSIFNETMASK, &request) < 0) result = errno;
    }
    close(fd);
    return result;
}

/// Brings the interface up (IFF_UP). Returns 0 or an errno.
static inline int camo_netif_set_up(const char *name) {
    if (strlen(name) >= IFNAMSIZ) return ENAMETOOLONG;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    struct ifreq request;
    memset(&request, 0, sizeof request);
    strncpy(request.ifr_name, name, IFNAMSIZ - 1);
    int result = 0;
    if (ioctl(fd, SIOCGIFFLAGS, &request) < 0) {
        result = errno;
    } else if (!(request.ifr_flags & IFF_UP)) {
        request.ifr_flags |= IFF_UP;
        if (ioctl(fd, SIOCSIFFLAGS, &request) < 0) result = errno;
    }
    close(fd);
    return result;
}

/// Sends `count` UDP datagrams of `length` bytes from `payload` to the IPv4 limited broadcast address
/// (255.255.255.255) port `port`, out of interface `name` only (SO_BINDTODEVICE, which needs no privilege on an
/// unbound socket since Linux 5.7). Returns 0 or the errno of the first failure; stops at the first failure.
static inline int camo_netif_broadcast_burst(const char *name, int count, uint16_t port, const void *payload, size_t length) {
    // An empty name would unbind the socket, and the burst would leave through the default route.
    if (name[0] == 0) return EINVAL;
    if (strlen(name) >= IFNAMSIZ) return ENAMETOOLONG;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    int result = 0;
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &on, sizeof on) < 0
        || setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, (socklen_t)strlen(name)) < 0) {
        result = errno;
    } else {
        struct sockaddr_in to;
        memset(&to, 0, sizeof to);
        to.sin_family = AF_INET;
        to.sin_port = htons(port);
        to.sin_addr.s_addr = htonl(INADDR_BROADCAST);
        for (int i = 0; i < count; i++) {
            if (sendto(fd, payload, length, 0, (struct sockaddr *)&to, sizeof to) < 0) {
                result = errno;
                break;
            }
        }
    }
    close(fd);
    return result;
}

#endif
