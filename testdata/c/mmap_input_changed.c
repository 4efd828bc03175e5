// Tests reading AND mmapping an input file (random content from setup) that is modified and deleted before replay.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

int main(void) {
    int fd = open("input.bin", O_RDONLY);
    if (fd < 0) { perror("open input.bin"); return 1; }
    struct stat st;
    fstat(fd, &st);
    printf("size=%lld mtime=%lld.%09ld\n", (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    static unsigned char buf[1 << 16];
    ssize_t n = read(fd, buf, sizeof buf);
    printf("read %zd bytes fnv=%016llx head=%02x%02x%02x%02x\n", n, (unsigned long long)fnv(buf, n), buf[0], buf[1], buf[2], buf[3]);

    unsigned char *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) { perror("mmap"); return 1; }
    printf("mmap fnv=%016llx equal-to-read=%d\n", (unsigned long long)fnv(m, st.st_size), memcmp(m, buf, n) == 0);
    /* touch pages in a data-dependent order */
    unsigned idx = 0, acc = 0;
    for (int i = 0; i < 1000; i++) {
        idx = (idx * 31 + m[idx % st.st_size]) % st.st_size;
        acc += m[idx];
    }
    printf("walk acc=%u last-idx=%u\n", acc, idx);

    /* a writable private copy-on-write mapping of the same file */
    unsigned char *w = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    w[0] ^= 0xff;
    printf("cow byte0 %02x -> %02x, file mapping still %02x\n", m[0], w[0], m[0]);
    munmap(w, st.st_size);
    munmap(m, st.st_size);
    close(fd);
    printf("EXIT-SUCCESS\n");
    return 0;
}
