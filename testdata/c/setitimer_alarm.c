// Tests setitimer(ITIMER_REAL) periodic SIGALRM delivered during pause(), getitimer, and alarm() interrupting nanosleep.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;
static long long stamps[8];

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void on_alarm(int sig) {
    (void)sig;
    if (ticks < 8) stamps[ticks] = now();
    ticks++;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {.it_interval = {0, 2000}, .it_value = {0, 2000}};
    long long start = now();
    setitimer(ITIMER_REAL, &it, NULL);
    int pauses = 0;
    while (ticks < 5) {
        pause();
        pauses++;
    }
    struct itimerval cur;
    getitimer(ITIMER_REAL, &cur);
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("pauses=%d ticks>=5: %d interval=%ldus remaining=%ldus\n", pauses, ticks >= 5, (long)cur.it_interval.tv_usec,
           (long)cur.it_value.tv_usec);
    for (int i = 0; i < 5; i++) printf("  tick %d at +%lld ns\n", i, stamps[i] - start);

    /* alarm() interrupts nanosleep with EINTR */
    ticks = 0;
    alarm(1);
    unsigned left = alarm(1);
    struct itimerval fast = {.it_value = {0, 3000}};
    setitimer(ITIMER_REAL, &fast, NULL);
    struct timespec req = {0, 500000000}, rem;
    long long t0 = now();
    int r = nanosleep(&req, &rem);
    int e = errno;
    printf("alarm left=%u nanosleep r=%d %s after %lld ns, rem=%ld ms\n", left, r, e == EINTR ? "EINTR" : "?", now() - t0,
           rem.tv_nsec / 1000000);
    printf("EXIT-SUCCESS\n");
    return 0;
}
