// Tests sigprocmask/pthread_sigmask: blocked signals stay pending (sigpending) until unblocked; a per-thread mask steers a process signal to one thread.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t usr1, usr2;
static volatile pid_t handler_tid;

static void h(int sig) {
    if (sig == SIGUSR1) usr1++;
    else usr2++;
    handler_tid = gettid();
}

static void *receiver(void *arg) {
    (void)arg;
    sigset_t un;
    sigemptyset(&un);
    sigaddset(&un, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &un, NULL);
    while (!usr2) usleep(200); /* blocked in nanosleep when the signal arrives */
    return NULL;
}

int main(void) {
    signal(SIGUSR1, h);
    signal(SIGUSR2, h);
    sigset_t set, old, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, &old);
    raise(SIGUSR1);
    raise(SIGUSR1); /* standard signals do not queue */
    sigpending(&pend);
    printf("after raise while blocked: handled=%d pending USR1=%d USR2=%d\n", usr1, sigismember(&pend, SIGUSR1), sigismember(&pend, SIGUSR2));
    sigprocmask(SIG_SETMASK, &old, NULL);
    sigpending(&pend);
    printf("after unblock: handled=%d pending USR1=%d\n", usr1, sigismember(&pend, SIGUSR1));

    /* SIG_IGN discards a pending signal */
    sigprocmask(SIG_BLOCK, &set, NULL);
    raise(SIGUSR1);
    signal(SIGUSR1, SIG_IGN);
    sigpending(&pend);
    printf("pending after SIG_IGN=%d\n", sigismember(&pend, SIGUSR1));
    signal(SIGUSR1, h);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("handled still=%d\n", usr1);

    /* block SIGUSR2 in main, unblock in one thread, send to the process */
    sigset_t s2;
    sigemptyset(&s2);
    sigaddset(&s2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &s2, NULL);
    pthread_t t;
    pthread_create(&t, NULL, receiver, NULL);
    usleep(1000);
    kill(getpid(), SIGUSR2);
    pthread_join(t, NULL);
    printf("SIGUSR2 handled=%d by main thread? %d (main tid=%d)\n", usr2, handler_tid == gettid(), gettid());
    sigset_t cur;
    pthread_sigmask(SIG_SETMASK, NULL, &cur);
    printf("main mask has USR2=%d USR1=%d\n", sigismember(&cur, SIGUSR2), sigismember(&cur, SIGUSR1));
    printf("EXIT-SUCCESS\n");
    return 0;
}
