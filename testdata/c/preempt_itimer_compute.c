// Tests a repeating 1 ms ITIMER_PROF (SIGPROF) interrupting a fixed ~150 ms pure compute loop; the handler counts runs and samples the loop's progress.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 1000
#define INNER 75000 /* ROUNDS*INNER mixing steps: ~150 ms natively */

static volatile long progress;           /* written by the loop once per round */
static volatile sig_atomic_t handler_runs;
static volatile long progress_sum;       /* sum of progress values seen by the handler */
static volatile long first_seen[8];

static void on_prof(int sig) {
    (void)sig;
    long p = progress;
    int k = handler_runs;
    if (k < 8) first_seen[k] = p;
    progress_sum += p;
    handler_runs = k + 1;
}

int main(void) {
    uint64_t data[256];
    getrandom(data, sizeof data, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);

    struct itimerval on = {.it_interval = {0, 1000}, .it_value = {0, 1000}};
    struct itimerval off = {{0, 0}, {0, 0}};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    setitimer(ITIMER_PROF, &on, NULL);

    uint64_t h = data[0];
    for (long r = 0; r < ROUNDS; r++) {
        for (long i = 0; i < INNER; i++) {
            h = (h ^ data[(i + r) & 255]) * 0x100000001b3ULL;
            h ^= h >> 29;
        }
        progress = r + 1;
    }

    setitimer(ITIMER_PROF, &off, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int runs = handler_runs;

    printf("pid %d seed %016llx\n", getpid(), (unsigned long long)data[0]);
    printf("result %016llx after %d rounds\n", (unsigned long long)h, ROUNDS);
    printf("SIGPROF handler runs %d, progress sum %ld, first seen:", runs, progress_sum);
    for (int i = 0; i < 8 && i < runs; i++) printf(" %ld", first_seen[i]);
    printf("\nelapsed %ld ns\n", (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    if (runs == 0) {
        printf("no SIGPROF was delivered\n");
        return 1;
    }
    printf("EXIT-SUCCESS\n");
    return 0;
}
