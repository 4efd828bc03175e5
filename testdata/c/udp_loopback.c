// Tests UDP over 127.0.0.1 and ::1: sendto/recvfrom, connected UDP, recvmmsg/sendmmsg, MSG_TRUNC.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void) {
    int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in aa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}, ba = aa;
    bind(a, (struct sockaddr *)&aa, sizeof aa);
    bind(b, (struct sockaddr *)&ba, sizeof ba);
    socklen_t l = sizeof aa;
    getsockname(a, (struct sockaddr *)&aa, &l);
    l = sizeof ba;
    getsockname(b, (struct sockaddr *)&ba, &l);
    printf("a port %d, b port %d\n", ntohs(aa.sin_port), ntohs(ba.sin_port));

    unsigned char r[16];
    getrandom(r, sizeof r, 0);
    char msg[64];
    int len = snprintf(msg, sizeof msg, "udp-%02x%02x%02x", r[0], r[1], r[2]);
    sendto(a, msg, len, 0, (struct sockaddr *)&ba, sizeof ba);
    struct sockaddr_in from;
    l = sizeof from;
    char buf[2048];
    ssize_t n = recvfrom(b, buf, sizeof buf, 0, (struct sockaddr *)&from, &l);
    printf("b got %zd '%.*s' from port %d (is a: %d)\n", n, (int)n, buf, ntohs(from.sin_port), from.sin_port == aa.sin_port);

    /* truncated datagram */
    memset(buf, 'z', 1000);
    sendto(b, buf, 500 + r[3], 0, (struct sockaddr *)&aa, sizeof aa);
    n = recv(a, buf, 10, MSG_TRUNC);
    printf("MSG_TRUNC recv returned %zd (real length)\n", n);

    /* sendmmsg / recvmmsg */
    connect(a, (struct sockaddr *)&ba, sizeof ba);
    struct mmsghdr mm[4];
    struct iovec iov[4];
    char payload[4][32];
    for (int i = 0; i < 4; i++) {
        int pl = snprintf(payload[i], sizeof payload[i], "batch-%d-%02x", i, r[4 + i]);
        iov[i] = (struct iovec){payload[i], pl};
        memset(&mm[i], 0, sizeof mm[i]);
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
    printf("sendmmsg=%d\n", sendmmsg(a, mm, 4, 0));
    char rb[4][64];
    for (int i = 0; i < 4; i++) {
        iov[i] = (struct iovec){rb[i], sizeof rb[i]};
        memset(&mm[i], 0, sizeof mm[i]);
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
    int got = recvmmsg(b, mm, 4, MSG_WAITFORONE, NULL);
    printf("recvmmsg=%d:", got);
    for (int i = 0; i < got; i++) printf(" %.*s", (int)mm[i].msg_len, rb[i]);
    printf("\n");
    while (got < 4) {
        n = recv(b, buf, sizeof buf, 0);
        printf("  later: %.*s\n", (int)n, buf);
        got++;
    }

    /* IPv6 loopback */
    int c6 = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    if (c6 >= 0 && bind(c6, (struct sockaddr *)&a6, sizeof a6) == 0) {
        l = sizeof a6;
        getsockname(c6, (struct sockaddr *)&a6, &l);
        sendto(c6, "v6", 2, 0, (struct sockaddr *)&a6, sizeof a6);
        n = recv(c6, buf, sizeof buf, 0);
        char s6[64];
        inet_ntop(AF_INET6, &a6.sin6_addr, s6, sizeof s6);
        printf("ipv6 self-send via [%s]:%d -> %zd\n", s6, ntohs(a6.sin6_port), n);
    } else {
        printf("ipv6 loopback unavailable\n");
    }
    printf("EXIT-SUCCESS\n");
    return 0;
}
