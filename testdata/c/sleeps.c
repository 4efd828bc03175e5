// Tests nanosleep, clock_nanosleep (relative, TIMER_ABSTIME on MONOTONIC and REALTIME), usleep and sleep(0) with measured durations.
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(void) {
    long long t0 = ns(CLOCK_MONOTONIC);
    struct timespec req = {0, 1000000}, rem = {9, 9};
    int r = nanosleep(&req, &rem);
    long long t1 = ns(CLOCK_MONOTONIC);
    printf("nanosleep 1ms r=%d slept %lld ns rem=%ld.%09ld\n", r, t1 - t0, (long)rem.tv_sec, rem.tv_nsec);

    req.tv_nsec = 1500000;
    r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
    long long t2 = ns(CLOCK_MONOTONIC);
    printf("clock_nanosleep rel 1.5ms r=%d slept %lld ns\n", r, t2 - t1);

    struct timespec abs;
    clock_gettime(CLOCK_MONOTONIC, &abs);
    abs.tv_nsec += 2000000;
    if (abs.tv_nsec >= 1000000000) { abs.tv_sec++; abs.tv_nsec -= 1000000000; }
    r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
    long long t3 = ns(CLOCK_MONOTONIC);
    printf("clock_nanosleep abs MONOTONIC r=%d overshoot %lld ns\n", r, t3 - (abs.tv_sec * 1000000000LL + abs.tv_nsec));

    clock_gettime(CLOCK_REALTIME, &abs);
    abs.tv_nsec += 1000000;
    if (abs.tv_nsec >= 1000000000) { abs.tv_sec++; abs.tv_nsec -= 1000000000; }
    r = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &abs, NULL);
    long long t4 = ns(CLOCK_REALTIME);
    printf("clock_nanosleep abs REALTIME r=%d overshoot %lld ns\n", r, t4 - (abs.tv_sec * 1000000000LL + abs.tv_nsec));

    /* deadline already in the past returns immediately */
    abs.tv_sec -= 10;
    long long t5 = ns(CLOCK_MONOTONIC);
    r = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &abs, NULL);
    printf("past deadline r=%d took %lld ns\n", r, ns(CLOCK_MONOTONIC) - t5);

    long long t6 = ns(CLOCK_MONOTONIC);
    usleep(500);
    long long t7 = ns(CLOCK_MONOTONIC);
    printf("usleep 500 slept %lld ns, sleep(0)=%u\n", t7 - t6, sleep(0));
    req.tv_nsec = -1;
    r = nanosleep(&req, NULL);
    printf("invalid nanosleep r=%d\n", r);
    printf("total %lld ns\n", ns(CLOCK_MONOTONIC) - t0);
    printf("EXIT-SUCCESS\n");
    return 0;
}
