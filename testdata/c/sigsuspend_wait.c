// Tests sigsuspend: SIGUSR1/SIGUSR2 are blocked and a forked child sends them at random intervals; the parent waits in sigsuspend.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t seq[16];
static volatile sig_atomic_t nseq;

static void h(int sig) {
    if (nseq < 16) seq[nseq++] = sig;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigset_t block, waitmask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGUSR2);
    sigprocmask(SIG_BLOCK, &block, &waitmask);
    unsigned char r[8];
    getrandom(r, sizeof r, 0);
    pid_t parent = getpid();
    int ack[2];
    pipe(ack);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        /* one signal at a time: wait for the parent's ack so that no two identical signals coalesce */
        for (int i = 0; i < 6; i++) {
            usleep(300 + r[i] * 4);
            kill(parent, (r[i] & 1) ? SIGUSR1 : SIGUSR2);
            char a;
            if (read(ack[0], &a, 1) != 1) _exit(1);
        }
        _exit(0);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int suspends = 0;
    int acked = 0;
    while (nseq < 6) {
        int rc = sigsuspend(&waitmask);
        suspends++;
        if (rc != -1) printf("sigsuspend returned %d?\n", rc);
        while (acked < nseq) {
            write(ack[1], "k", 1);
            acked++;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("received:");
    for (int i = 0; i < nseq; i++) printf(" %s", seq[i] == SIGUSR1 ? "USR1" : "USR2");
    printf("\nsuspends=%d elapsed=%ld us child=%d\n", suspends, (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000, c);
    waitpid(c, NULL, 0);
    printf("EXIT-SUCCESS\n");
    return 0;
}
