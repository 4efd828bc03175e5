// Tests anonymous mmap, mprotect, mremap growing (moving), madvise(DONTNEED) reading back zeros, MAP_FIXED, mincore, munmap.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

int main(void) {
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char r[16];
    getrandom(r, sizeof r, 0);
    size_t len = (4 + r[0] % 8) * pg;
    unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap anon %zu pages at %p\n", len / pg, (void *)a);
    for (size_t i = 0; i < len; i++) a[i] = (unsigned char)(i * r[1] + r[2]);
    uint32_t sum = 0;
    for (size_t i = 0; i < len; i++) sum += a[i];
    printf("filled sum=%u\n", sum);

    printf("mprotect read-only: %d\n", mprotect(a, pg, PROT_READ));
    printf("mprotect back rw: %d\n", mprotect(a, pg, PROT_READ | PROT_WRITE));

    unsigned char vec[64];
    mincore(a, len, vec);
    int resident = 0;
    for (size_t i = 0; i < len / pg; i++) resident += vec[i] & 1;
    printf("mincore resident pages=%d\n", resident);

    /* madvise DONTNEED on the second page: reads back zeros */
    printf("page1 byte before=%u\n", a[pg + 7]);
    madvise(a + pg, pg, MADV_DONTNEED);
    int nonzero = 0;
    for (long i = 0; i < pg; i++) nonzero += a[pg + i] != 0;
    printf("after MADV_DONTNEED nonzero bytes in page1=%d, page0 intact=%d\n", nonzero, a[7] == (unsigned char)(7 * r[1] + r[2]));

    /* block the following address range so that mremap must move */
    void *blocker = mmap(a + len, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    size_t newlen = len * 4;
    unsigned char *b = mremap(a, len, newlen, MREMAP_MAYMOVE);
    printf("mremap %zu -> %zu pages: %p (moved=%d, blocker=%s)\n", len / pg, newlen / pg, (void *)b, b != a,
           blocker == MAP_FAILED ? "failed" : "ok");
    int same = 1;
    for (size_t i = 0; i < len; i++)
        if (i / pg != 1 && b[i] != (unsigned char)(i * r[1] + r[2])) same = 0;
    printf("contents preserved=%d tail zero=%d\n", same, b[newlen - 1] == 0);
    memset(b + len, 0xab, newlen - len);

    /* shrink in place */
    unsigned char *c = mremap(b, newlen, len, 0);
    printf("mremap shrink in place: %d\n", c == b);

    /* MAP_FIXED over part of it */
    unsigned char *f = mmap(c + pg * 2, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("MAP_FIXED at +2 pages: %d, zeroed=%d\n", f == c + 2 * pg, f[0] == 0);
    printf("munmap: %d\n", munmap(c, len));
    if (blocker != MAP_FAILED) munmap(blocker, pg);
    /* huge-ish reservation with MAP_NORESERVE, touch one page */
    unsigned char *big = mmap(NULL, 1UL << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    big[(1UL << 29) + r[3]] = 42;
    printf("1GiB NORESERVE at %p touched=%d\n", (void *)big, big[(1UL << 29) + r[3]]);
    munmap(big, 1UL << 30);
    printf("EXIT-SUCCESS\n");
    return 0;
}
