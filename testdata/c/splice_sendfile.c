// Tests kernel-side copies: sendfile file->socket, splice file->pipe->file, tee, vmsplice, and copy_file_range between files.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static uint32_t hash_fd(int fd, off_t len) {
    unsigned char buf[4096];
    uint32_t h = 2166136261u;
    off_t off = 0;
    while (off < len) {
        ssize_t n = pread(fd, buf, sizeof buf, off);
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; i++) h = (h ^ buf[i]) * 16777619u;
        off += n;
    }
    return h;
}

int main(void) {
    int src = open("src.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
    static unsigned char data[65536];
    getrandom(data, sizeof data, 0);
    size_t len = 10000 + (data[0] | data[1] << 8) % 50000;
    write(src, data, len);
    printf("source %zu bytes hash %08x\n", len, hash_fd(src, len));

    /* sendfile into a socketpair, read it back */
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int sz = 1 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    off_t off = 100;
    ssize_t sent = sendfile(sv[0], src, &off, 5000);
    unsigned char got[5000];
    ssize_t n = recv(sv[1], got, sizeof got, MSG_WAITALL);
    printf("sendfile=%zd off now %lld recv=%zd match=%d\n", sent, (long long)off, n, memcmp(got, data + 100, 5000) == 0);

    /* splice file -> pipe -> file */
    int p[2];
    pipe(p);
    int dst = open("dst.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
    loff_t in_off = 0;
    size_t moved = 0;
    while (moved < len) {
        ssize_t a = splice(src, &in_off, p[1], NULL, len - moved, SPLICE_F_MOVE);
        if (a <= 0) break;
        ssize_t b = splice(p[0], NULL, dst, NULL, a, SPLICE_F_MOVE);
        if (b != a) break;
        moved += a;
    }
    printf("splice moved %zu hash %08x\n", moved, hash_fd(dst, len));

    /* tee duplicates pipe contents without consuming */
    int p2[2];
    pipe(p2);
    char msg[32];
    int ml = snprintf(msg, sizeof msg, "tee-%02x%02x", data[2], data[3]);
    write(p[1], msg, ml);
    ssize_t t = tee(p[0], p2[1], ml, 0);
    char a[32] = {0}, b[32] = {0};
    read(p[0], a, ml);
    read(p2[0], b, ml);
    printf("tee=%zd original='%s' copy='%s'\n", t, a, b);

    /* vmsplice user memory into a pipe */
    struct iovec iov = {.iov_base = data + 7, .iov_len = 64};
    ssize_t v = vmsplice(p[1], &iov, 1, 0);
    unsigned char vb[64];
    read(p[0], vb, 64);
    printf("vmsplice=%zd match=%d\n", v, memcmp(vb, data + 7, 64) == 0);

    /* copy_file_range */
    int cp = open("copy.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
    loff_t o1 = 0, o2 = 0;
    ssize_t c = copy_file_range(src, &o1, cp, &o2, len, 0);
    printf("copy_file_range=%zd hash %08x\n", c, hash_fd(cp, len));
    unlink("src.bin");
    unlink("dst.bin");
    unlink("copy.bin");
    printf("EXIT-SUCCESS\n");
    return 0;
}
