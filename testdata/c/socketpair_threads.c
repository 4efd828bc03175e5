// Tests socketpair (SOCK_STREAM and SOCK_SEQPACKET) between threads, send/recv with MSG_PEEK/MSG_DONTWAIT, shutdown.
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int sv[2], sq[2];

static void *echo_thread(void *arg) {
    (void)arg;
    char buf[256];
    ssize_t n;
    while ((n = recv(sv[1], buf, sizeof buf, 0)) > 0) {
        for (int i = 0; i < n; i++) buf[i] = toupper((unsigned char)buf[i]);
        send(sv[1], buf, n, 0);
    }
    shutdown(sv[1], SHUT_WR);
    /* seqpacket: echo each record length */
    while ((n = recv(sq[1], buf, sizeof buf, 0)) > 0) {
        char out[32];
        int len = snprintf(out, sizeof out, "len=%zd", n);
        send(sq[1], out, len, 0);
    }
    return NULL;
}

int main(void) {
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sq);
    pthread_t t;
    pthread_create(&t, NULL, echo_thread, NULL);
    unsigned char r[8];
    getrandom(r, sizeof r, 0);
    char msg[64];
    int len = snprintf(msg, sizeof msg, "hello-%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
    send(sv[0], msg, len, 0);
    char buf[256] = {0};
    ssize_t n = recv(sv[0], buf, 5, MSG_PEEK | MSG_WAITALL);
    printf("peek %zd: %.5s\n", n, buf);
    n = recv(sv[0], buf, len, MSG_WAITALL);
    printf("echo %zd: %.*s\n", n, (int)n, buf);
    n = recv(sv[0], buf, sizeof buf, MSG_DONTWAIT);
    printf("dontwait on empty: %zd %s\n", n, errno == EAGAIN ? "EAGAIN" : strerror(errno));
    shutdown(sv[0], SHUT_WR);
    n = recv(sv[0], buf, sizeof buf, 0);
    printf("after shutdown: %zd\n", n);

    int records = 2 + r[4] % 4;
    for (int i = 0; i < records; i++) {
        int rl = 1 + r[5 + i % 3] % 200;
        memset(buf, 'a' + i, rl);
        send(sq[0], buf, rl, 0);
        n = recv(sq[0], buf, sizeof buf, 0);
        printf("seqpacket record %d sent %d reply %.*s\n", i, rl, (int)n, buf);
    }
    close(sq[0]);
    pthread_join(t, NULL);
    printf("EXIT-SUCCESS\n");
    return 0;
}
