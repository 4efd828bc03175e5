// Tests open/write/read/lseek/pread/pwrite/readv/writev on a file filled with random bytes.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

static uint32_t sum(const unsigned char *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

int main(void) {
    unsigned char buf[4096], back[4096];
    if (getrandom(buf, sizeof buf, 0) != sizeof buf) { perror("getrandom"); return 1; }
    int fd = open("file_rw.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror("open"); return 1; }
    printf("fd=%d random-sum=%08x first=%02x%02x%02x%02x\n", fd, sum(buf, sizeof buf), buf[0], buf[1], buf[2], buf[3]);

    ssize_t n = write(fd, buf, 1000);
    printf("write=%zd\n", n);
    struct iovec wv[3] = {{buf + 1000, 500}, {buf + 1500, 1500}, {buf + 3000, 1096}};
    n = writev(fd, wv, 3);
    printf("writev=%zd\n", n);
    off_t off = lseek(fd, 0, SEEK_CUR);
    printf("lseek cur=%lld end=%lld\n", (long long)off, (long long)lseek(fd, 0, SEEK_END));

    /* pwrite a random patch at a random offset */
    unsigned off2 = buf[10] * 8;
    n = pwrite(fd, "PATCHED!", 8, off2);
    memcpy(buf + off2, "PATCHED!", 8);
    printf("pwrite at %u = %zd\n", off2, n);

    lseek(fd, 0, SEEK_SET);
    memset(back, 0, sizeof back);
    n = read(fd, back, 100);
    printf("read=%zd sum=%08x\n", n, sum(back, 100));
    struct iovec rv[2] = {{back + 100, 900}, {back + 1000, 3096}};
    n = readv(fd, rv, 2);
    printf("readv=%zd\n", n);
    printf("whole-file sum=%08x match=%d\n", sum(back, sizeof back), memcmp(back, buf, sizeof buf) == 0);

    unsigned char small[16];
    n = pread(fd, small, sizeof small, 4090);
    printf("pread at 4090 = %zd bytes: ", n);
    for (int i = 0; i < n; i++) printf("%02x", small[i]);
    printf("\n");
    n = read(fd, small, 16);
    printf("read at EOF = %zd\n", n);
    close(fd);
    unlink("file_rw.dat");
    printf("EXIT-SUCCESS\n");
    return 0;
}
