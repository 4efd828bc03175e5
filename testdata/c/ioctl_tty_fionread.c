// Tests ioctl: TCGETS/TIOCGWINSZ on a non-terminal stdin fail with ENOTTY, isatty, FIONREAD on a pipe and socket, FIONBIO.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

int main(void) {
    struct termios tio;
    int r = ioctl(0, TCGETS, &tio);
    int e = errno;
    printf("TCGETS on stdin: r=%d errno=%d (%s)\n", r, r ? e : 0, r ? strerror(e) : "ok");
    struct winsize ws;
    r = ioctl(1, TIOCGWINSZ, &ws);
    e = errno;
    printf("TIOCGWINSZ on stdout: r=%d errno=%s\n", r, r ? strerror(e) : "ok");
    printf("isatty(0)=%d isatty(1)=%d isatty(2)=%d\n", isatty(0), isatty(1), isatty(2));
    r = tcgetattr(0, &tio);
    e = errno;
    printf("tcgetattr r=%d errno=%s\n", r, r ? strerror(e) : "ok");

    int p[2];
    pipe(p);
    unsigned char rnd[2];
    getrandom(rnd, 2, 0);
    int len = 1 + (rnd[0] | rnd[1] << 8) % 3000;
    char buf[4096];
    memset(buf, 'q', sizeof buf);
    write(p[1], buf, len);
    int avail = -1;
    ioctl(p[0], FIONREAD, &avail);
    printf("FIONREAD on pipe after writing %d bytes: %d\n", len, avail);
    read(p[0], buf, len / 2);
    ioctl(p[0], FIONREAD, &avail);
    printf("FIONREAD after reading half: %d\n", avail);
    int on = 1;
    ioctl(p[0], FIONBIO, &on);
    read(p[0], buf, sizeof buf);
    ssize_t n = read(p[0], buf, 1);
    printf("FIONBIO set, empty read=%zd %s, O_NONBLOCK=%d\n", n, errno == EAGAIN ? "EAGAIN" : "?", !!(fcntl(p[0], F_GETFL) & O_NONBLOCK));

    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    write(sv[0], buf, rnd[0] + 1);
    ioctl(sv[1], FIONREAD, &avail);
    printf("FIONREAD on socket: %d (wrote %d)\n", avail, rnd[0] + 1);
    int out = -1;
    ioctl(sv[0], TIOCOUTQ, &out);
    printf("TIOCOUTQ on socket: %d\n", out);
    r = ioctl(p[0], TCGETS, &tio);
    printf("TCGETS on pipe: r=%d errno=%s\n", r, strerror(errno));
    printf("EXIT-SUCCESS\n");
    return 0;
}
