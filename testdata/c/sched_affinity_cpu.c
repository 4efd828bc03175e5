// Tests sched_getaffinity/sched_setaffinity, sched_getcpu, getcpu syscall, sched_yield and scheduler policy queries.
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int r = sched_getaffinity(0, sizeof set, &set);
    printf("getaffinity r=%d count=%d cpus:", r, CPU_COUNT(&set));
    int first = -1;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set)) {
            printf(" %d", i);
            if (first < 0) first = i;
        }
    printf("\n");
    int cpu = sched_getcpu();
    unsigned c2 = 0, node = 0;
    syscall(SYS_getcpu, &c2, &node, NULL);
    printf("sched_getcpu=%d getcpu=%u node=%u\n", cpu, c2, node);

    /* pin to the first allowed CPU and confirm */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    r = sched_setaffinity(0, sizeof one, &one);
    sched_yield();
    printf("setaffinity(cpu %d) r=%d now on cpu %d\n", first, r, sched_getcpu());
    sched_setaffinity(0, sizeof set, &set);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int migrations = 0, last = sched_getcpu();
    for (int i = 0; i < 200; i++) {
        sched_yield();
        int c = sched_getcpu();
        if (c != last) migrations++;
        last = c;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("200 yields took %ld ns, migrations=%d\n", (t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec, migrations);
    printf("policy=%d prio range FIFO %d..%d\n", sched_getscheduler(0), sched_get_priority_min(SCHED_FIFO),
           sched_get_priority_max(SCHED_FIFO));
    struct timespec rr;
    sched_rr_get_interval(0, &rr);
    printf("rr interval %ld.%09ld\n", (long)rr.tv_sec, rr.tv_nsec);
    printf("EXIT-SUCCESS\n");
    return 0;
}
