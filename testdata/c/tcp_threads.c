// Tests a TCP server and client over 127.0.0.1 in one process (server thread, ephemeral port, getsockname/getpeername).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

static int listen_fd;

static void *server(void *arg) {
    (void)arg;
    for (int conn = 0; conn < 3; conn++) {
        struct sockaddr_in peer;
        socklen_t pl = sizeof peer;
        int c = accept(listen_fd, (struct sockaddr *)&peer, &pl);
        if (c < 0) { perror("accept"); return NULL; }
        unsigned long long sum = 0, total = 0;
        unsigned char buf[4096];
        ssize_t n;
        while ((n = read(c, buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < n; i++) sum = sum * 131 + buf[i];
            total += n;
        }
        char reply[128];
        int len = snprintf(reply, sizeof reply, "conn %d from port %d: %llu bytes hash %llx\n", conn, ntohs(peer.sin_port), total, sum);
        write(c, reply, len);
        close(c);
    }
    return NULL;
}

int main(void) {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) || listen(listen_fd, 8)) { perror("bind"); return 1; }
    socklen_t al = sizeof addr;
    getsockname(listen_fd, (struct sockaddr *)&addr, &al);
    printf("listening on %s:%d\n", inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));
    pthread_t t;
    pthread_create(&t, NULL, server, NULL);
    for (int conn = 0; conn < 3; conn++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(c, (struct sockaddr *)&addr, sizeof addr)) { perror("connect"); return 1; }
        struct sockaddr_in local;
        socklen_t ll = sizeof local;
        getsockname(c, (struct sockaddr *)&local, &ll);
        unsigned len;
        getrandom(&len, sizeof len, 0);
        len = 1000 + len % 100000;
        unsigned char *data = malloc(len);
        getrandom(data, len, 0);
        unsigned long long sum = 0;
        for (unsigned i = 0; i < len; i++) sum = sum * 131 + data[i];
        for (unsigned off = 0; off < len;) {
            ssize_t w = write(c, data + off, len - off);
            if (w <= 0) { perror("write"); return 1; }
            off += w;
        }
        shutdown(c, SHUT_WR);
        char reply[256] = {0};
        size_t got = 0;
        ssize_t n;
        while ((n = read(c, reply + got, sizeof reply - 1 - got)) > 0) got += n;
        printf("client port %d sent %u hash %llx\n  server said: %s", ntohs(local.sin_port), len, sum, reply);
        close(c);
        free(data);
    }
    pthread_join(t, NULL);
    printf("EXIT-SUCCESS\n");
    return 0;
}
