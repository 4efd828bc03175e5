// Tests dup/dup2/dup3, fcntl F_DUPFD/F_GETFD/F_SETFD/F_GETFL/F_SETFL and shared file offsets.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int main(void) {
    unsigned char r[4];
    getrandom(r, sizeof r, 0);
    /* open a random number of dummy fds so later fd numbers vary from run to run */
    int extra = r[0] % 7;
    for (int i = 0; i < extra; i++) open("/dev/null", O_RDONLY);
    int fd = open("dup.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    printf("extra=%d fd=%d\n", extra, fd);
    int d1 = dup(fd);
    int d2 = dup2(fd, 40 + r[1] % 10);
    int d3 = dup3(fd, 60 + r[2] % 10, O_CLOEXEC);
    int d4 = fcntl(fd, F_DUPFD, 100);
    int d5 = fcntl(fd, F_DUPFD_CLOEXEC, 200);
    printf("dup=%d dup2=%d dup3=%d F_DUPFD=%d F_DUPFD_CLOEXEC=%d\n", d1, d2, d3, d4, d5);
    printf("cloexec: fd=%d d3=%d d5=%d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC, fcntl(d3, F_GETFD) & FD_CLOEXEC,
           fcntl(d5, F_GETFD) & FD_CLOEXEC);
    fcntl(d1, F_SETFD, FD_CLOEXEC);
    printf("after F_SETFD d1 cloexec=%d\n", fcntl(d1, F_GETFD) & FD_CLOEXEC);
    int fl = fcntl(fd, F_GETFL);
    printf("flags accmode=%d append=%d\n", fl & O_ACCMODE, !!(fl & O_APPEND));
    fcntl(d2, F_SETFL, fl | O_APPEND);
    printf("after F_SETFL on dup, fd append=%d\n", !!(fcntl(fd, F_GETFL) & O_APPEND));

    write(fd, "hello ", 6);
    write(d1, "from ", 5);
    char msg[32];
    int len = snprintf(msg, sizeof msg, "dup %02x%02x\n", r[2], r[3]);
    write(d4, msg, len);
    printf("shared offset: %lld %lld %lld\n", (long long)lseek(fd, 0, SEEK_CUR), (long long)lseek(d1, 0, SEEK_CUR),
           (long long)lseek(d5, 0, SEEK_CUR));
    char buf[64] = {0};
    pread(d3, buf, sizeof buf - 1, 0);
    printf("content: %s", buf);

    close(d2);
    ssize_t wr = write(d2, "x", 1);
    printf("write to closed fd: %zd errno=%s\n", wr, strerror(errno));
    printf("dup2 same fd: %d\n", dup2(fd, fd));
    int r3 = dup3(fd, fd, 0);
    printf("dup3 same fd: %d errno=%s\n", r3, strerror(errno));
    int bad = fcntl(999, F_GETFD);
    printf("F_GETFD on bad fd: %d errno=%s\n", bad, strerror(errno));
    unlink("dup.txt");
    printf("EXIT-SUCCESS\n");
    return 0;
}
