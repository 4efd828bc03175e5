// Tests vfork + execve of /bin/echo with a random argument and environment, and execvp of a missing program (exit 127).
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    unsigned char r[4];
    getrandom(r, sizeof r, 0);
    char arg[64];
    snprintf(arg, sizeof arg, "echoed-%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
    printf("parent pid=%d arg=%s\n", getpid(), arg);
    fflush(stdout);
    pid_t pid = vfork();
    if (pid == 0) {
        char *argv[] = {"echo", "from", "vfork:", arg, NULL};
        char *envp[] = {"GORR_TEST=1", NULL};
        execve("/bin/echo", argv, envp);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("echo child %d exited %d\n", pid, WEXITSTATUS(st));
    fflush(stdout);
    pid = vfork();
    if (pid == 0) {
        char *argv[] = {"no-such-program-gorr", NULL};
        execvp(argv[0], argv);
        _exit(127);
    }
    waitpid(pid, &st, 0);
    printf("missing program child exited %d\n", WEXITSTATUS(st));
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "echo sh says pid=$$ ppid=$PPID; exit 3", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &st, 0);
    printf("sh child exited %d\n", WEXITSTATUS(st));
    printf("EXIT-SUCCESS\n");
    return 0;
}
