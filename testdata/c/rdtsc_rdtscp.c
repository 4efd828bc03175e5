// Tests the rdtsc and rdtscp instructions (via __rdtsc/__rdtscp) and their relation to elapsed time.
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

int main(void) {
    unsigned long long a = __rdtsc();
    unsigned long long b = __rdtsc();
    unsigned aux = 0;
    unsigned long long c = __rdtscp(&aux);
    printf("rdtsc a=%llu b=%llu delta=%llu\n", a, b, b - a);
    printf("rdtscp c=%llu aux=%#x (cpu %u node %u)\n", c, aux, aux & 0xfff, aux >> 12);
    struct timespec t0, t1, d = {0, 2000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long long s = __rdtsc();
    nanosleep(&d, NULL);
    unsigned long long e = __rdtscp(&aux);
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
