// Tests the rdtsc and rdtscp instructions (via __rdtsc/__rdtscp) and their relation to elapsed time; rdtscp is guarded against SIGILL.
#define _GNU_SOURCE
#include <cpuid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static sigjmp_buf jb;
static void on_sigill(int sig) {
    (void)sig;
    siglongjmp(jb, 1);
}

int main(void) {
    unsigned ca, cb, cc, cd;
    __cpuid(0x80000001, ca, cb, cc, cd);
    printf("cpuid advertises rdtscp=%u\n", (cd >> 27) & 1);
    /* some hypervisors hide the bit but still execute rdtscp; try it under a SIGILL handler */
    signal(SIGILL, on_sigill);
    volatile int have_rdtscp = 0;
    if (sigsetjmp(jb, 1) == 0) {
        unsigned aux0;
        __rdtscp(&aux0);
        have_rdtscp = 1;
    }
    signal(SIGILL, SIG_DFL);
    printf("rdtscp executes=%d\n", have_rdtscp);
    unsigned long long a = __rdtsc();
    unsigned long long b = __rdtsc();
    unsigned aux = 0;
    unsigned long long c = have_rdtscp ? __rdtscp(&aux) : __rdtsc();
    printf("rdtsc a=%llu b=%llu delta=%llu\n", a, b, b - a);
    printf("rdtscp c=%llu aux=%#x (cpu %u node %u)\n", c, aux, aux & 0xfff, aux >> 12);
    struct timespec t0, t1, d = {0, 2000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long long s = __rdtsc();
    nanosleep(&d, NULL);
    unsigned long long e = have_rdtscp ? __rdtscp(&aux) : __rdtsc();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec;
    printf("sleep 2ms: %lld ns, %llu ticks, ~%.0f MHz\n", ns, e - s, (double)(e - s) * 1000.0 / ns);
    unsigned long long prev = __rdtsc(), minstep = ~0ULL, maxstep = 0;
    int nonincreasing = 0;
    for (int i = 0; i < 1000; i++) {
        unsigned long long v = __rdtsc();
        if (v <= prev) nonincreasing++;
        else {
            if (v - prev < minstep) minstep = v - prev;
            if (v - prev > maxstep) maxstep = v - prev;
        }
        prev = v;
    }
    printf("1000 reads: nonincreasing=%d minstep=%llu maxstep=%llu low-bits=%llu\n", nonincreasing, minstep, maxstep, prev & 0xffff);
    printf("EXIT-SUCCESS\n");
    return 0;
}
