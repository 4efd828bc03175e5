// Tests sigwait/sigwaitinfo/sigtimedwait on blocked signals sent by another thread and a child, including a timeout (EAGAIN).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t main_pid;

static void *sender(void *arg) {
    (void)arg;
    usleep(1000);
    union sigval v = {.sival_int = gettid()};
    sigqueue(main_pid, SIGRTMIN + 2, v);
    usleep(1000);
    kill(main_pid, SIGUSR2);
    return NULL;
}

int main(void) {
    main_pid = getpid();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGRTMIN + 2);
    sigaddset(&set, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    struct timespec to = {0, 3000000}, t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    siginfo_t si;
    int r = sigtimedwait(&set, &si, &to);
    int e = errno;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("sigtimedwait with nothing pending: %d %s after %ld us\n", r, e == EAGAIN ? "EAGAIN" : strerror(e),
           (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000);

    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    r = sigwaitinfo(&set, &si);
    printf("sigwaitinfo: sig=RTMIN+%d code=%s value(tid of sender)=%d pid=%d\n", r - SIGRTMIN, si.si_code == SI_QUEUE ? "SI_QUEUE" : "?",
           si.si_value.sival_int, si.si_pid);
    int sig;
    sigwait(&set, &sig);
    printf("sigwait: %s\n", sig == SIGUSR2 ? "SIGUSR2" : "other");
    pthread_join(t, NULL);

    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        kill(getppid(), SIGUSR1);
        _exit(9);
    }
    int got_usr1 = 0, got_chld = 0;
    while (!got_usr1 || !got_chld) {
        to.tv_sec = 2;
        r = sigtimedwait(&set, &si, &to);
        if (r == SIGUSR1) {
            got_usr1 = 1;
            printf("SIGUSR1 from child pid=%d match=%d\n", si.si_pid, si.si_pid == c);
        } else if (r == SIGCHLD) {
            got_chld = 1;
            printf("SIGCHLD pid=%d status=%d code=%s\n", si.si_pid, si.si_status, si.si_code == CLD_EXITED ? "CLD_EXITED" : "?");
        } else {
            printf("unexpected %d\n", r);
            break;
        }
    }
    waitpid(c, NULL, 0);
    printf("EXIT-SUCCESS\n");
    return 0;
}
