// Tests SIGALRM (setitimer) arriving in a loop whose general registers repeat every iteration while it rewrites a 64-byte buffer; the handler records the buffer at delivery, which a misplaced point would change.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t done;
static unsigned char buf[64];
static unsigned char seen[64];
static int ticks;

static void on_alarm(int sig) {
    (void)sig;
    memcpy(seen, buf, sizeof seen);
    if (++ticks == 3) done = 1;
}

int main(void) {
    uint64_t seed;
    getrandom(&seed, sizeof seed, 0);
    memset(buf, (int)(seed & 0xff), sizeof buf);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 7000}, {0, 7000}};
    setitimer(ITIMER_REAL, &it, NULL);
    /* Each pass adds 1 to every byte: the registers repeat, the buffer
       does not (until it wraps after 256 passes). */
    while (!done) {
        for (int i = 0; i < 64; i++) buf[i]++;
        __asm__ volatile("" ::: "memory");
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    unsigned sum = 0;
    for (int i = 0; i < 64; i++) sum = sum * 31 + seen[i];
    printf("seed %016llx ticks %d buffer at the last signal %02x%02x%02x%02x sum %08x\n", (unsigned long long)seed,
           ticks, seen[0], seen[1], seen[62], seen[63], sum);
    printf("EXIT-SUCCESS\n");
    return 0;
}
