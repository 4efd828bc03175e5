// Tests job control of a child: SIGSTOP/SIGCONT observed with waitpid(WUNTRACED|WCONTINUED) and waitid(WSTOPPED), then SIGTERM.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        for (;;) pause();
    }
    printf("child=%d\n", c);
    kill(c, SIGSTOP);
    int st;
    pid_t w = waitpid(c, &st, WUNTRACED);
    printf("waitpid stopped: %d stopped=%d sig=%s\n", w == c, WIFSTOPPED(st), WSTOPSIG(st) == SIGSTOP ? "SIGSTOP" : "?");
    kill(c, SIGCONT);
    w = waitpid(c, &st, WCONTINUED);
    printf("waitpid continued: %d continued=%d\n", w == c, WIFCONTINUED(st));
    kill(c, SIGTSTP);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    waitid(P_PID, c, &si, WSTOPPED);
    printf("waitid stopped: code=%s status=%s\n", si.si_code == CLD_STOPPED ? "CLD_STOPPED" : "?", si.si_status == SIGTSTP ? "SIGTSTP" : "?");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kill(c, SIGTERM); /* pending while stopped */
    kill(c, SIGCONT);
    w = waitpid(c, &st, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("final: signaled=%d sig=%s after %ld us\n", WIFSIGNALED(st), WTERMSIG(st) == SIGTERM ? "SIGTERM" : "?",
           (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000);
    printf("EXIT-SUCCESS\n");
    return 0;
}
