// Tests process groups and sessions (setpgid/getpgid/setsid/getsid), kill of a process group, and waitid with WEXITED/WNOHANG/WNOWAIT.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("pid=%d pgrp=%d sid=%d\n", getpid(), getpgrp(), getsid(0));
    int p[2];
    pipe(p);
    /* child 1: becomes a session leader */
    pid_t c1 = fork();
    if (c1 == 0) {
        pid_t s = setsid();
        char line[128];
        int len = snprintf(line, sizeof line, "c1 setsid=%d sid=%d pgrp=%d is_self=%d\n", s, getsid(0), getpgrp(), s == getpid());
        write(p[1], line, len);
        _exit(5);
    }
    /* children 2 and 3 share a new process group led by child 2 */
    pid_t c2 = fork();
    if (c2 == 0) {
        setpgid(0, 0);
        pause();
        _exit(0);
    }
    setpgid(c2, c2);
    pid_t c3 = fork();
    if (c3 == 0) {
        setpgid(0, c2);
        pause();
        _exit(0);
    }
    setpgid(c3, c2);
    close(p[1]);
    char buf[256] = {0};
    read(p[0], buf, sizeof buf - 1);
    printf("%s", buf);
    printf("c2=%d pgid(c2)=%d pgid(c3)=%d same=%d\n", c2, getpgid(c2), getpgid(c3), getpgid(c2) == getpgid(c3));

    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = waitid(P_PID, c1, &si, WEXITED | WNOWAIT);
    printf("waitid WNOWAIT r=%d pid=%d code=%s status=%d\n", r, si.si_pid, si.si_code == CLD_EXITED ? "CLD_EXITED" : "?", si.si_status);
    memset(&si, 0, sizeof si);
    r = waitid(P_PID, c1, &si, WEXITED);
    printf("waitid again r=%d pid matches=%d status=%d\n", r, si.si_pid == c1, si.si_status);
    memset(&si, 0, sizeof si);
    r = waitid(P_PGID, c2, &si, WEXITED | WNOHANG);
    printf("waitid WNOHANG on live group r=%d si_pid=%d\n", r, si.si_pid);
    printf("kill(-pgrp, SIGTERM)=%d\n", kill(-c2, SIGTERM));
    for (int i = 0; i < 2; i++) {
        memset(&si, 0, sizeof si);
        waitid(P_PGID, c2, &si, WEXITED);
        printf("reaped %s code=%s sig=%d\n", si.si_pid == c2 ? "c2" : si.si_pid == c3 ? "c3" : "?",
               si.si_code == CLD_KILLED ? "CLD_KILLED" : "?", si.si_status);
    }
    r = waitid(P_ALL, 0, &si, WEXITED);
    printf("waitid with no children r=%d\n", r);
    printf("EXIT-SUCCESS\n");
    return 0;
}
