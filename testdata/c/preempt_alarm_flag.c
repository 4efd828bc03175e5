// Tests a one-shot ITIMER_REAL SIGALRM (~20 ms) delivered to the main thread while it runs a pure LCG loop that polls a sig_atomic_t flag with no syscalls.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Safety net only: natively the timer fires after ~16M iterations. The cap
   (~2-3 s natively) keeps a run whose signal never arrives from hanging. */
#define CAP 2000000000UL

static volatile sig_atomic_t flag;
static volatile sig_atomic_t handler_runs;

static void on_alarm(int sig) {
    (void)sig;
    handler_runs++;
    flag = 1;
}

int main(void) {
    uint64_t x;
    getrandom(&x, sizeof x, 0);
    uint64_t seed = x;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);

    struct itimerval it = {.it_interval = {0, 0}, .it_value = {0, 20000}};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    setitimer(ITIMER_REAL, &it, NULL);
    unsigned long n = 0;
    while (!flag) {
        x = x * 6364136223846793005ULL + 1;
        n++;
        if (n == CAP) break;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);

    printf("pid %d seed %016llx\n", getpid(), (unsigned long long)seed);
    printf("loop ran n=%lu iterations, x=%016llx\n", n, (unsigned long long)x);
    printf("handler runs %d, flag %d\n", (int)handler_runs, (int)flag);
    printf("elapsed %ld ns\n", (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    if (!flag) {
        printf("SIGALRM never arrived\n");
        return 1;
    }
    printf("EXIT-SUCCESS\n");
    return 0;
}
