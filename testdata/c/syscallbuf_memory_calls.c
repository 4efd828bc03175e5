// Anonymous mmap, mprotect, munmap and madvise between other buffered
// calls, from two threads: the syscall buffer makes the private,
// non-executable ones itself and replay makes them again at their
// events; executable mappings, PROT_EXEC added by mprotect and
// MADV_FREE stay traced. Prints addresses, random sizes and sums.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#define ROUNDS 40

static long pg;

static uint32_t churn(unsigned seed, int rounds) {
    uint32_t sum = 0;
    for (int i = 0; i < rounds; i++) {
        unsigned char r[4];
        getrandom(r, sizeof r, 0);
        size_t len = (1 + r[0] % 16) * pg;
        unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED) return 0;
        for (size_t j = 0; j < len; j += 512) a[j] = (unsigned char)(j + r[1] + seed);
        sum += getpid() & 1; /* a buffered call between memory calls */
        if (mprotect(a, pg, PROT_READ) != 0 || mprotect(a, pg, PROT_READ | PROT_WRITE) != 0) return 0;
        if (len > pg) {
            madvise(a + pg, pg, MADV_DONTNEED); /* the page reads back as zeros */
            madvise(a, len, MADV_WILLNEED);     /* a hint */
        }
        for (size_t j = 0; j < len; j += 512) sum += a[j];
        if (len > 2 * pg) {
            /* replace the third page */
            unsigned char *f = mmap(a + 2 * pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            sum += f == a + 2 * pg && f[0] == 0;
        }
        munmap(a, len);
        sum = sum * 31 + r[2];
    }
    return sum;
}

static void *thread(void *arg) {
    return (void *)(uintptr_t)churn((unsigned)(uintptr_t)arg, ROUNDS);
}

int main(void) {
    pg = sysconf(_SC_PAGESIZE);
    pthread_t th;
    pthread_create(&th, NULL, thread, (void *)7);
    uint32_t mine = churn(3, ROUNDS);
    void *theirs;
    pthread_join(th, &theirs);
    printf("sums %u %u\n", mine, (uint32_t)(uintptr_t)theirs);

    /* Executable memory and PROT_EXEC added stay traced (the recorder
     * scans code); MADV_FREE too (the recorder answers it). */
    unsigned char *x = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    x[0] = 0xc3; /* ret */
    ((void (*)(void))x)();
    unsigned char *y = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    y[0] = 0xc3;
    mprotect(y, pg, PROT_READ | PROT_EXEC);
    ((void (*)(void))y)();
    printf("exec mappings at %p and %p ran\n", (void *)x, (void *)y);
    unsigned char *z = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(z, 0x5a, 4 * pg);
    printf("MADV_FREE: %d\n", madvise(z, 4 * pg, MADV_FREE));
    z[0] = 1;
    printf("z at %p: %d\n", (void *)z, z[0] + z[pg]);
    printf("EXIT-SUCCESS\n");
    return 0;
}
