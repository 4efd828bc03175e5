// Tests unix datagram sockets with SO_PASSCRED/SCM_CREDENTIALS from a forked child, plus an abstract-namespace address.
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "dgram_%d", getpid());
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (bind(s, (struct sockaddr *)&addr, sizeof addr)) { perror("bind"); return 1; }
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
    printf("parent pid=%d uid=%d\n", getpid(), getuid());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int c = socket(AF_UNIX, SOCK_DGRAM, 0);
        for (int i = 0; i < 3; i++) {
            char msg[64];
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            int len = snprintf(msg, sizeof msg, "datagram %d at %ld.%09ld", i, (long)ts.tv_sec, ts.tv_nsec);
            sendto(c, msg, len, 0, (struct sockaddr *)&addr, sizeof addr);
        }
        /* explicit credentials */
        struct ucred cr = {.pid = getpid(), .uid = getuid(), .gid = getgid()};
        char cbuf[CMSG_SPACE(sizeof cr)];
        memset(cbuf, 0, sizeof cbuf);
        struct iovec iov = {.iov_base = "explicit", .iov_len = 8};
        struct msghdr mh = {.msg_name = &addr, .msg_namelen = sizeof addr, .msg_iov = &iov, .msg_iovlen = 1,
                            .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_CREDENTIALS;
        cm->cmsg_len = CMSG_LEN(sizeof cr);
        memcpy(CMSG_DATA(cm), &cr, sizeof cr);
        if (sendmsg(c, &mh, 0) < 0) perror("sendmsg");
        _exit(0);
    }
    for (int i = 0; i < 4; i++) {
        char data[128];
        char cbuf[CMSG_SPACE(sizeof(struct ucred))];
        struct sockaddr_un from;
        struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
        struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
                            .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        ssize_t n = recvmsg(s, &mh, 0);
        printf("recv %zd '%.*s' namelen=%u", n, (int)n, data, mh.msg_namelen);
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
            if (cm->cmsg_type == SCM_CREDENTIALS) {
                struct ucred cr;
                memcpy(&cr, CMSG_DATA(cm), sizeof cr);
                printf(" creds pid=%d uid=%d gid=%d is_child=%d", cr.pid, cr.uid, cr.gid, cr.pid == pid);
            }
        }
        printf("\n");
    }
    waitpid(pid, NULL, 0);

    /* abstract namespace socket, connected pair */
    struct sockaddr_un ab = {.sun_family = AF_UNIX};
    int alen = snprintf(ab.sun_path + 1, sizeof ab.sun_path - 1, "gorr-abstract-%d", getpid());
    socklen_t ablen = offsetof(struct sockaddr_un, sun_path) + 1 + alen;
    int a = socket(AF_UNIX, SOCK_DGRAM, 0);
    printf("abstract bind=%d\n", bind(a, (struct sockaddr *)&ab, ablen));
    int b = socket(AF_UNIX, SOCK_DGRAM, 0);
    connect(b, (struct sockaddr *)&ab, ablen);
    send(b, "ping", 4, 0);
    char buf[16];
    ssize_t n = recv(a, buf, sizeof buf, 0);
    struct sockaddr_un got;
    socklen_t gl = sizeof got;
    getsockname(a, (struct sockaddr *)&got, &gl);
    printf("abstract recv %zd %.4s name=@%.*s\n", n, buf, (int)(gl - offsetof(struct sockaddr_un, sun_path) - 1), got.sun_path + 1);
    unlink(addr.sun_path);
    printf("EXIT-SUCCESS\n");
    return 0;
}
