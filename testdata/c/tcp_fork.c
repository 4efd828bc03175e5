// Tests TCP over 127.0.0.1 between a forked child server and the parent client, with SO_RCVBUF/TCP_INFO getsockopt.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(ls, (struct sockaddr *)&addr, sizeof addr);
    listen(ls, 4);
    socklen_t al = sizeof addr;
    getsockname(ls, (struct sockaddr *)&addr, &al);
    printf("server port %d\n", ntohs(addr.sin_port));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        char line[256];
        ssize_t n;
        /* line-oriented echo with the child's own timestamp */
        while ((n = read(c, line, sizeof line)) > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            char out[400];
            int len = snprintf(out, sizeof out, "[%d @%ld.%09ld] %.*s", getpid(), (long)ts.tv_sec, ts.tv_nsec, (int)n, line);
            write(c, out, len);
        }
        close(c);
        _exit(0);
    }
    close(ls);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&addr, sizeof addr)) { perror("connect"); return 1; }
    int rcvbuf;
    socklen_t ol = sizeof rcvbuf;
    getsockopt(c, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &ol);
    struct tcp_info ti;
    ol = sizeof ti;
    getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &ol);
    printf("rcvbuf>0=%d state=%d rtt=%u\n", rcvbuf > 0, ti.tcpi_state, ti.tcpi_rtt);
    for (int i = 0; i < 4; i++) {
        char msg[64];
        int len = snprintf(msg, sizeof msg, "line %d\n", i);
        write(c, msg, len);
        char reply[400];
        ssize_t n = read(c, reply, sizeof reply);
        printf("reply: %.*s", (int)n, reply);
    }
    shutdown(c, SHUT_WR);
    char tmp[16];
    printf("eof read=%zd\n", read(c, tmp, sizeof tmp));
    int st;
    waitpid(pid, &st, 0);
    printf("child pid=%d exit=%d\n", pid, WEXITSTATUS(st));
    printf("EXIT-SUCCESS\n");
    return 0;
}
