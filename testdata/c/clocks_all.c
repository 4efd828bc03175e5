// Tests clock_gettime on all clocks (incl. per-process/thread CPU clocks), clock_getres, gettimeofday and time().
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    struct { clockid_t id; const char *name; } clocks[] = {
        {CLOCK_REALTIME, "REALTIME"}, {CLOCK_MONOTONIC, "MONOTONIC"}, {CLOCK_PROCESS_CPUTIME_ID, "PROCESS_CPUTIME"},
        {CLOCK_THREAD_CPUTIME_ID, "THREAD_CPUTIME"}, {CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW"}, {CLOCK_REALTIME_COARSE, "REALTIME_COARSE"},
        {CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE"}, {CLOCK_BOOTTIME, "BOOTTIME"}, {CLOCK_TAI, "TAI"},
    };
    for (unsigned i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        struct timespec ts, res;
        int r = clock_gettime(clocks[i].id, &ts);
        int r2 = clock_getres(clocks[i].id, &res);
        printf("%-17s r=%d %lld.%09ld res r=%d %ld ns\n", clocks[i].name, r, (long long)ts.tv_sec, ts.tv_nsec, r2, res.tv_nsec);
    }
    /* raw syscall, bypassing the vDSO */
    struct timespec raw;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &raw);
    printf("raw syscall MONOTONIC %lld.%09ld\n", (long long)raw.tv_sec, raw.tv_nsec);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    printf("gettimeofday %lld.%06ld\n", (long long)tv.tv_sec, (long)tv.tv_usec);
    time_t t1 = time(NULL), t2;
    time(&t2);
    printf("time() %lld %lld\n", (long long)t1, (long long)t2);
    char buf[64];
    struct tm tm;
    gmtime_r(&t1, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    printf("utc %s\n", buf);
    /* CPU clock of a specific pid via clock_getcpuclockid */
    clockid_t cid;
    clock_getcpuclockid(getpid(), &cid);
    struct timespec cpu;
    clock_gettime(cid, &cpu);
    printf("getcpuclockid cpu time %lld.%09ld\n", (long long)cpu.tv_sec, cpu.tv_nsec);
    /* monotonicity over many reads */
    struct timespec prev, cur;
    clock_gettime(CLOCK_MONOTONIC, &prev);
    int backwards = 0;
    long long maxgap = 0;
    for (int i = 0; i < 10000; i++) {
        clock_gettime(CLOCK_MONOTONIC, &cur);
        long long d = (cur.tv_sec - prev.tv_sec) * 1000000000LL + cur.tv_nsec - prev.tv_nsec;
        if (d < 0) backwards++;
        if (d > maxgap) maxgap = d;
        prev = cur;
    }
    printf("10000 reads: backwards=%d maxgap=%lld ns\n", backwards, maxgap);
    printf("EXIT-SUCCESS\n");
    return 0;
}
