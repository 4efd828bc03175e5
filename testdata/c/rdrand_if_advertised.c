// Tests a program that trusts cpuid: it executes rdrand/rdseed only when cpuid advertises them (a recorder must hide the bits or replay fails).
#define _GNU_SOURCE
#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

__attribute__((target("rdrnd"))) static int do_rdrand(unsigned long long *out) { return _rdrand64_step(out); }
__attribute__((target("rdseed"))) static int do_rdseed(unsigned long long *out) { return _rdseed64_step(out); }

int main(void) {
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    int has_rdrand = (c >> 30) & 1, has_rdseed = 0;
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        has_rdseed = (b >> 18) & 1;
    }
    printf("cpuid says rdrand=%d rdseed=%d\n", has_rdrand, has_rdseed);
    if (has_rdrand) {
        unsigned long long v = 0;
        int ok = do_rdrand(&v);
        printf("rdrand ok=%d value=%016llx\n", ok, v);
    }
    if (has_rdseed) {
        unsigned long long v = 0;
        int ok = do_rdseed(&v);
        printf("rdseed ok=%d value=%016llx\n", ok, v);
    }
    /* always print something that varies, even when both are hidden */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("t=%ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
    printf("EXIT-SUCCESS\n");
    return 0;
}
