// Tests SIGALRM arriving again and again in a three-instruction loop (incq of a memory counter) whose registers repeat at two of its instructions, so a signal often stops the thread where rt_sigreturn or a preemption point left it; the handler records the counter, which a signal misplaced at that event would change.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>

#define TICKS 24

static volatile unsigned long counter;
static volatile unsigned char done;
static unsigned long seen[TICKS];
static int ticks;

static void on_alarm(int sig) {
    (void)sig;
    if (ticks == TICKS) return; /* one more before the timer is off */
    seen[ticks] = counter;
    if (++ticks == TICKS) done = 1;
}

int main(void) {
    uint64_t seed;
    getrandom(&seed, sizeof seed, 0);
    counter = seed & 0xffff;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 3000}, {0, 3000}};
    setitimer(ITIMER_REAL, &it, NULL);
    /* At the label and at the jump the registers (flags included: those
       of the cmpb) are the same on every pass; only the counter moves. */
    __asm__ volatile("1: incq %0\n\t"
                     "cmpb $0, %1\n\t"
                     "je 1b"
                     : "+m"(counter)
                     : "m"(done)
                     : "cc");
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    unsigned long sum = 0;
    int rising = 0;
    for (int i = 0; i < TICKS; i++) {
        sum = sum * 1000003 + seen[i];
        if (i > 0 && seen[i] > seen[i - 1]) rising++;
    }
    printf("seed %016llx counter at the signals: first %lu last %lu, %d of %d rising, sum %016lx\n",
           (unsigned long long)seed, seen[0], seen[TICKS - 1], rising, TICKS - 1, sum);
    printf("EXIT-SUCCESS\n");
    return 0;
}
