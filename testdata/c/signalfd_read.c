// Tests signalfd: blocked SIGUSR1/SIGUSR2/SIGCHLD read from a signalfd (with ssi_pid of a forked child), polled with poll.
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGUSR2);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    printf("pid=%d signalfd=%d\n", getpid(), sfd);
    fflush(stdout);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        kill(parent, SIGUSR1);
        usleep(1000);
        kill(parent, SIGUSR2);
        _exit(7);
    }
    int seen = 0;
    while (seen < 3) {
        struct pollfd pfd = {sfd, POLLIN, 0};
        if (poll(&pfd, 1, 2000) <= 0) { printf("poll timeout\n"); break; }
        struct signalfd_siginfo si;
        ssize_t n = read(sfd, &si, sizeof si);
        if (n != sizeof si) break;
        printf("signal %s from pid %u (child=%d) code=%d", si.ssi_signo == SIGUSR1 ? "USR1" : si.ssi_signo == SIGUSR2 ? "USR2" : "CHLD",
               si.ssi_pid, (pid_t)si.ssi_pid == child, si.ssi_code);
        if (si.ssi_signo == SIGCHLD) printf(" status=%d", si.ssi_status);
        printf("\n");
        seen++;
    }
    waitpid(child, NULL, 0);
    /* self-sent signal with sigqueue value */
    union sigval v = {.sival_int = getpid() ^ 0x5a5a};
    sigqueue(getpid(), SIGUSR1, v);
    struct signalfd_siginfo si;
    read(sfd, &si, sizeof si);
    printf("sigqueue value=%d matches=%d code=%d\n", si.ssi_int, si.ssi_int == (getpid() ^ 0x5a5a), si.ssi_code);
    printf("EXIT-SUCCESS\n");
    return 0;
}
