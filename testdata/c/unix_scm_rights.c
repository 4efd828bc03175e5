// Tests a unix stream socket bound to a path: a forked child sends open fds via SCM_RIGHTS; the parent reads through them.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "sock_%d", getpid());
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) || listen(ls, 1)) { perror("bind/listen"); return 1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&addr, sizeof addr)) { perror("connect"); _exit(1); }
        /* create a file with random content and a pipe with data, then pass both fds */
        unsigned char rnd[32];
        getrandom(rnd, sizeof rnd, 0);
        int f = open("passed.txt", O_RDWR | O_CREAT | O_TRUNC, 0600);
        char text[100];
        int tl = snprintf(text, sizeof text, "secret-%02x%02x%02x%02x-from-%d", rnd[0], rnd[1], rnd[2], rnd[3], getpid());
        write(f, text, tl);
        lseek(f, 0, SEEK_SET);
        int p[2];
        pipe(p);
        write(p[1], rnd + 4, 8);
        close(p[1]);
        int fds[2] = {f, p[0]};
        char cbuf[CMSG_SPACE(sizeof fds)];
        memset(cbuf, 0, sizeof cbuf);
        struct iovec iov = {.iov_base = "FD", .iov_len = 2};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof fds);
        memcpy(CMSG_DATA(cm), fds, sizeof fds);
        if (sendmsg(c, &mh, 0) < 0) perror("sendmsg");
        close(f);
        close(p[0]);
        char ack;
        read(c, &ack, 1);
        _exit(0);
    }
    int s = accept(ls, NULL, NULL);
    /* add random extra fds so received fd numbers vary */
    unsigned char k;
    getrandom(&k, 1, 0);
    for (int i = 0; i < k % 5; i++) dup(0);
    char data[8];
    int fds[2] = {-1, -1};
    char cbuf[CMSG_SPACE(sizeof fds)];
    struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
    printf("recvmsg=%zd data=%.*s controllen=%zu flags=%d\n", n, (int)n, data, (size_t)mh.msg_controllen, mh.msg_flags);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            memcpy(fds, CMSG_DATA(cm), sizeof fds);
            printf("got fds %d %d (cloexec=%d)\n", fds[0], fds[1], fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
        }
    }
    char buf[128] = {0};
    n = read(fds[0], buf, sizeof buf - 1);
    printf("file via fd: %s\n", buf);
    struct stat st;
    fstat(fds[0], &st);
    printf("file size=%lld\n", (long long)st.st_size);
    unsigned char pb[8];
    n = read(fds[1], pb, sizeof pb);
    printf("pipe via fd (%zd):", n);
    for (int i = 0; i < n; i++) printf(" %02x", pb[i]);
    printf("\n");
    write(s, "k", 1);
    int stt;
    waitpid(pid, &stt, 0);
    printf("child status=%d\n", WEXITSTATUS(stt));
    unlink(addr.sun_path);
    unlink("passed.txt");
    printf("EXIT-SUCCESS\n");
    return 0;
}
