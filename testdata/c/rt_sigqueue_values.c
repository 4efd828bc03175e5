// Tests real-time signals queued with sigqueue while blocked: multiple instances carry values and are delivered in order (lowest signal first).
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static int log_sig[32], log_val[32];
static volatile sig_atomic_t nlog;

static void h(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    if (nlog < 32) {
        log_sig[nlog] = sig;
        log_val[nlog] = si->si_value.sival_int;
        nlog++;
    }
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigset_t set;
    sigemptyset(&set);
    for (int s = SIGRTMIN; s <= SIGRTMIN + 3; s++) {
        sigaction(s, &sa, NULL);
        sigaddset(&set, s);
    }
    sigaction(SIGUSR1, &sa, NULL);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    unsigned char r[16];
    getrandom(r, sizeof r, 0);
    printf("queueing:");
    for (int i = 0; i < 10; i++) {
        int sig = SIGRTMIN + r[i] % 4;
        union sigval v = {.sival_int = r[i] * 1000 + i};
        sigqueue(getpid(), sig, v);
        printf(" RT%d:%d", sig - SIGRTMIN, v.sival_int);
    }
    union sigval v = {.sival_int = -1};
    sigqueue(getpid(), SIGUSR1, v);
    sigqueue(getpid(), SIGUSR1, v); /* coalesced */
    printf("\n");
    sigset_t pend;
    sigpending(&pend);
    printf("pending RT0..3: %d%d%d%d USR1=%d\n", sigismember(&pend, SIGRTMIN), sigismember(&pend, SIGRTMIN + 1), sigismember(&pend, SIGRTMIN + 2),
           sigismember(&pend, SIGRTMIN + 3), sigismember(&pend, SIGUSR1));
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("delivered %d:", nlog);
    for (int i = 0; i < nlog; i++) {
        if (log_sig[i] == SIGUSR1) printf(" USR1");
        else printf(" RT%d:%d", log_sig[i] - SIGRTMIN, log_val[i]);
    }
    printf("\nSIGRTMIN=%d SIGRTMAX=%d\n", SIGRTMIN, SIGRTMAX);
    printf("EXIT-SUCCESS\n");
    return 0;
}
