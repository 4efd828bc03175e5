// Tests a blocking pipe read interrupted by SIGALRM: with SA_RESTART the read restarts and gets data a child writes later; without it, EINTR.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;
static void on_alarm(int s) {
    (void)s;
    alarms++;
}

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static void arm(long usec) {
    struct itimerval it = {.it_value = {0, usec}};
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    int p[2];
    pipe(p);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        usleep(8000); /* write well after the alarm fired */
        char msg[64];
        int len = snprintf(msg, sizeof msg, "late data from %d", getpid());
        write(p[1], msg, len);
        _exit(0);
    }
    arm(2000);
    long long t0 = now_us();
    char buf[64] = {0};
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    long long t1 = now_us();
    printf("SA_RESTART: read=%zd '%s' alarms=%d waited>=8ms: %d (%lld us)\n", n, buf, alarms, t1 - t0 >= 7000, t1 - t0);
    waitpid(child, NULL, 0);

    sa.sa_flags = 0;
    sigaction(SIGALRM, &sa, NULL);
    /* A repeating timer: even if a tick fires before read() starts (a slow
     * machine, or a recorder), a later one interrupts it. */
    struct itimerval rep = {.it_value = {0, 2000}, .it_interval = {0, 2000}};
    setitimer(ITIMER_REAL, &rep, NULL);
    t0 = now_us();
    n = read(p[0], buf, sizeof buf);
    int e = errno;
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &off, NULL);
    t1 = now_us();
    printf("no SA_RESTART: read=%d errno=%s alarms=%d after %lld us\n", (int)n, e == EINTR ? "EINTR" : strerror(e), alarms, t1 - t0);
    printf("EXIT-SUCCESS\n");
    return 0;
}
