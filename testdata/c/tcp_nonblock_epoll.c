// Tests a single-threaded epoll-driven TCP echo server with non-blocking connects (EINPROGRESS) from 4 clients over 127.0.0.1.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define NCLI 4

int main(void) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(ls, (struct sockaddr *)&addr, sizeof addr);
    listen(ls, 16);
    socklen_t al = sizeof addr;
    getsockname(ls, (struct sockaddr *)&addr, &al);
    printf("port %d\n", ntohs(addr.sin_port));
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);

    int cli[NCLI], state[NCLI] = {0};
    unsigned char r[NCLI];
    getrandom(r, sizeof r, 0);
    int inprogress = 0;
    for (int i = 0; i < NCLI; i++) {
        cli[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        int c = connect(cli[i], (struct sockaddr *)&addr, sizeof addr);
        if (c < 0 && errno == EINPROGRESS) inprogress++;
        struct epoll_event ce = {.events = EPOLLOUT | EPOLLIN, .data.u64 = 1000 + i};
        epoll_ctl(ep, EPOLL_CTL_ADD, cli[i], &ce);
    }
    printf("connects returning EINPROGRESS: %d of %d\n", inprogress, NCLI);
    int done = 0, iterations = 0, accepted = 0;
    char order[64];
    int norder = 0;
    while (done < NCLI && iterations < 1000) {
        struct epoll_event out[16];
        int n = epoll_wait(ep, out, 16, 1000);
        iterations++;
        for (int k = 0; k < n; k++) {
            if (out[k].data.fd == ls && out[k].data.u64 < 1000) {
                int s;
                while ((s = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    struct epoll_event se = {.events = EPOLLIN, .data.fd = s};
                    epoll_ctl(ep, EPOLL_CTL_ADD, s, &se);
                    accepted++;
                }
            } else if (out[k].data.u64 >= 1000) {
                int i = (int)(out[k].data.u64 - 1000);
                if (state[i] == 0 && (out[k].events & EPOLLOUT)) {
                    int err = 0;
                    socklen_t el = sizeof err;
                    getsockopt(cli[i], SOL_SOCKET, SO_ERROR, &err, &el);
                    char msg[32];
                    int len = snprintf(msg, sizeof msg, "client%d:%02x", i, r[i]);
                    write(cli[i], msg, len);
                    state[i] = 1;
                    struct epoll_event ce = {.events = EPOLLIN, .data.u64 = 1000 + i};
                    epoll_ctl(ep, EPOLL_CTL_MOD, cli[i], &ce);
                } else if (state[i] == 1 && (out[k].events & EPOLLIN)) {
                    char buf[64];
                    ssize_t m = read(cli[i], buf, sizeof buf);
                    if (m > 0) {
                        printf("client %d got echo: %.*s\n", i, (int)m, buf);
                        if (norder < 63) order[norder++] = '0' + i;
                        state[i] = 2;
                        done++;
                    }
                }
            } else {
                int s = out[k].data.fd;
                char buf[64];
                ssize_t m = read(s, buf, sizeof buf);
                if (m > 0) {
                    for (ssize_t j = 0; j < m; j++) buf[j] = (buf[j] >= 'a' && buf[j] <= 'z') ? buf[j] - 32 : buf[j];
                    write(s, buf, m);
                } else if (m == 0) {
                    close(s);
                }
            }
        }
    }
    order[norder] = 0;
    printf("accepted=%d completion order=%s epoll iterations=%d\n", accepted, order, iterations);
    printf("EXIT-SUCCESS\n");
    return 0;
}
