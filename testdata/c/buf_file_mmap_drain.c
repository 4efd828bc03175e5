// Tests private file mappings made through the syscall buffer and captured when the recorder drains them: a closed and reused descriptor, mappings the kernel merges, mprotect splitting one, writes before the thread's next stop, munmap and MAP_FIXED over fresh ones.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#define PG 4096

static uint64_t fnv(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static void make(const char *name, size_t n) {
    static unsigned char buf[8 * PG];
    for (size_t off = 0; off < n;) {
        ssize_t k = getrandom(buf + off, n - off, 0);
        if (k <= 0) { perror("getrandom"); _exit(1); }
        off += k;
    }
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n) { perror(name); _exit(1); }
    close(fd);
}

int main(void) {
    make("a.bin", 3 * PG);
    make("b.bin", 2 * PG);

    /* The descriptor is closed, and its number reused for another file,
       before anything stops the thread. */
    int fa = open("a.bin", O_RDONLY);
    unsigned char *m1 = mmap(NULL, 3 * PG, PROT_READ, MAP_PRIVATE, fa, 0);
    close(fa);
    int fb = open("b.bin", O_RDONLY);
    unsigned char *m2 = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fb, 0);
    if (m1 == MAP_FAILED || m2 == MAP_FAILED) { perror("mmap"); return 1; }
    printf("same fd %d: %d\n", fb, fa == fb);
    unsigned char before = m2[5];
    m2[5] ^= 0x5a; /* a private write before the recorder sees the mapping */
    printf("a %016llx b %016llx b[5] %02x -> %02x\n", (unsigned long long)fnv(m1, 3 * PG),
           (unsigned long long)fnv(m2, 2 * PG), before, m2[5]);

    /* Two mappings of consecutive pages of a.bin, next to each other:
       the kernel merges them into one. */
    fa = open("a.bin", O_RDONLY);
    unsigned char *x = mmap(NULL, 4 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *x0 = mmap(x, PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, fa, 0);
    unsigned char *x1 = mmap(x + PG, PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, fa, PG);
    printf("merged %d %016llx equal %d\n", x0 == x && x1 == x + PG, (unsigned long long)fnv(x, 2 * PG),
           memcmp(x, m1, 2 * PG) == 0);

    /* mprotect splits the first mapping; munmap of part of it and a
       MAP_FIXED mapping over another part. */
    if (mprotect(m1 + PG, PG, PROT_READ | PROT_WRITE) != 0) { perror("mprotect"); return 1; }
    m1[PG + 7] = 0x33;
    unsigned char *y = mmap(m1 + 2 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, fb, PG);
    printf("split %02x %02x %02x over %d %016llx\n", m1[0], m1[PG + 7], m1[PG + 8], y == m1 + 2 * PG,
           (unsigned long long)fnv(y, PG));
    munmap(m1, 2 * PG);

    /* Many short-lived mappings, each unmapped at once. */
    uint64_t acc = 0;
    for (int i = 0; i < 200; i++) {
        unsigned char *p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fb, (i % 2) * PG);
        acc = acc * 31 + p[i * 17 % PG];
        munmap(p, PG);
    }
    printf("loop %016llx pid %d\n", (unsigned long long)acc, getpid());
    close(fa);
    close(fb);
    unlink("a.bin");
    unlink("b.bin");
    printf("EXIT-SUCCESS\n");
    return 0;
}
