// Tests memory calls made through the syscall buffer, which replay makes for real inside a stretch of buffered calls: N threads (argv[1], default 3) each run R rounds (argv[2], default 300) of anonymous mmap (random sizes, some at a hint, some MAP_FIXED over part of an earlier one), fill, mprotect read-only and back, madvise(MADV_DONTNEED) reading back zeros, partial and whole munmap, between clock_gettime and getpid calls; plus an mprotect that fails after changing part of its range (a hole in it) and an munmap that fails (unaligned). Prints the addresses, sums and zero counts, which differ between runs.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static long pg;
static sigjmp_buf jb;

static void on_segv(int sig) {
    (void)sig;
    siglongjmp(jb, 1);
}
static int rounds = 300;

struct result {
    uint64_t sum, zeros, first;
    int fails;
};

static void *worker(void *arg) {
    struct result *res = arg;
    unsigned char r[4096];
    if (getrandom(r, sizeof r, 0) != sizeof r) abort();
    unsigned char *keep = NULL;
    size_t keeplen = 0;
    for (int i = 0; i < rounds; i++) {
        unsigned char x = r[i % sizeof r];
        size_t len = (size_t)(1 + x % 7) * pg;
        void *hint = NULL;
        if (keep && x % 5 == 0) hint = keep + keeplen + 64 * pg;
        unsigned char *a = mmap(hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED) {
            res->fails++;
            continue;
        }
        if (i == 0) res->first = (uint64_t)(uintptr_t)a;
        for (size_t k = 0; k < len; k += 64) a[k] = (unsigned char)(k + x);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (mprotect(a, pg, PROT_READ) != 0 || mprotect(a, pg, PROT_READ | PROT_WRITE) != 0) res->fails++;
        a[0] ^= (unsigned char)ts.tv_nsec;
        if (len > pg) {
            madvise(a + pg, pg, MADV_DONTNEED);
            for (long k = 0; k < pg; k++) res->zeros += a[pg + k] == 0;
        }
        for (size_t k = 0; k < len; k += 64) res->sum += a[k];
        res->sum += (uint64_t)getpid() & 1;
        if (keep && x % 3 == 0 && keeplen > pg) {
            // Replace the second page of the kept mapping in place.
            unsigned char *f = mmap(keep + pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (f != keep + pg || f[0] != 0) res->fails++;
            f[1] = x;
        }
        if (keep) munmap(keep, keeplen);
        if (len > pg && x % 2) {
            munmap(a + len - pg, pg); // the tail first
            len -= pg;
        }
        keep = a;
        keeplen = len;
    }
    if (keep) munmap(keep, keeplen);
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3;
    if (argc > 2) rounds = atoi(argv[2]);
    if (n < 1 || n > 16) n = 3;
    pg = sysconf(_SC_PAGESIZE);

    // mprotect over a hole: the kernel changes the pages before the hole
    // and reports ENOMEM.
    unsigned char *h = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    h[0] = 1;
    munmap(h + pg, pg);
    int rc = mprotect(h, 3 * pg, PROT_READ);
    int e = errno;
    // The first page is read-only now: a write faults.
    signal(SIGSEGV, on_segv);
    volatile int faulted = 0;
    if (sigsetjmp(jb, 1) == 0)
        h[0] = 2;
    else
        faulted = 1;
    signal(SIGSEGV, SIG_DFL);
    printf("mprotect over a hole: %d %s, a write to its first page faulted %d, reads %d\n", rc, rc ? strerror(e) : "", faulted, h[0]);
    rc = munmap(h + 1, pg);
    e = errno;
    printf("unaligned munmap: %d %s\n", rc, rc ? strerror(e) : "");
    munmap(h, pg);
    munmap(h + 2 * pg, pg);

    pthread_t th[16];
    struct result res[16];
    memset(res, 0, sizeof res);
    for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, worker, &res[i]);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++)
        printf("thread %d: first mapping %#llx sum %llu zeros %llu fails %d\n", i, (unsigned long long)res[i].first,
               (unsigned long long)res[i].sum, (unsigned long long)res[i].zeros, res[i].fails);
    printf("EXIT-SUCCESS\n");
    return 0;
}
