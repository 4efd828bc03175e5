// Tests SA_SIGINFO handlers printing si_pid/si_uid/si_code/si_value for kill to self, raise, sigqueue and a kill from a forked child.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static siginfo_t last;
static void *last_uc;

static void handler(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    last = *si;
    last_uc = uc;
    got++;
}

static const char *code_name(int c) {
    switch (c) {
    case SI_USER: return "SI_USER";
    case SI_QUEUE: return "SI_QUEUE";
    case SI_TKILL: return "SI_TKILL";
    case SI_KERNEL: return "SI_KERNEL";
    default: return "other";
    }
}

static void report(const char *what) {
    printf("%-12s signo=%d code=%s pid=%d (self=%d) uid=%d value=%d ucontext!=NULL:%d\n", what, last.si_signo, code_name(last.si_code),
           last.si_pid, last.si_pid == getpid(), last.si_uid, last.si_value.sival_int, last_uc != NULL);
}

int main(void) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
    printf("old handler was SIG_DFL: %d; pid=%d\n", old.sa_handler == SIG_DFL, getpid());
    sigaction(SIGUSR2, &sa, NULL);

    kill(getpid(), SIGUSR1);
    report("kill self");
    raise(SIGUSR2);
    report("raise");
    union sigval v = {.sival_int = getpid() * 3};
    sigqueue(getpid(), SIGUSR1, v);
    report("sigqueue");
    fflush(stdout);

    /* a child sends SIGUSR2; we wait for it in sigsuspend */
    sigset_t block, orig;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    sigprocmask(SIG_BLOCK, &block, &orig);
    int before = got;
    pid_t child = fork();
    if (child == 0) {
        kill(getppid(), SIGUSR2);
        _exit(0);
    }
    while (got == before) sigsuspend(&orig);
    printf("from child   signo=%d code=%s pid=%d (is child=%d)\n", last.si_signo, code_name(last.si_code), last.si_pid, last.si_pid == child);
    waitpid(child, NULL, 0);
    sigprocmask(SIG_SETMASK, &orig, NULL);

    /* SA_RESETHAND: second delivery uses SIG_DFL, so ignore-by-default check with SIGURG */
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(SIGURG, &sa, NULL);
    raise(SIGURG);
    sigaction(SIGURG, NULL, &old);
    printf("after SA_RESETHAND handler reset to default: %d, total handled=%d\n", old.sa_handler == SIG_DFL, got);
    printf("EXIT-SUCCESS\n");
    return 0;
}
