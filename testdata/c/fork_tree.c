// Tests a process tree: fork of several children and a grandchild, getpid/getppid, wait/waitpid/wait4 with exit codes and rusage.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pid_t me = getpid();
    printf("root pid=%d\n", me);
    int p[2];
    pipe(p);
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            close(p[0]);
            char line[160];
            int len;
            if (i == 1) {
                /* child 1 forks a grandchild and reports its pid */
                pid_t g = fork();
                if (g == 0) {
                    struct timespec ts;
                    clock_gettime(CLOCK_MONOTONIC, &ts);
                    len = snprintf(line, sizeof line, "grandchild pid=%d ppid=%d t=%ld\n", getpid(), getppid(), ts.tv_nsec);
                    write(p[1], line, len);
                    _exit(42);
                }
                int st;
                waitpid(g, &st, 0);
                len = snprintf(line, sizeof line, "child1 reaped grandchild %d status=%d\n", g, WEXITSTATUS(st));
                write(p[1], line, len);
            }
            len = snprintf(line, sizeof line, "child%d pid=%d ppid_is_root=%d\n", i, getpid(), getppid() == me);
            write(p[1], line, len);
            exit(10 + i);
        }
    }
    close(p[1]);
    /* collect all the messages (order depends on scheduling) */
    char buf[4096];
    size_t total = 0;
    ssize_t n;
    while ((n = read(p[0], buf + total, sizeof buf - 1 - total)) > 0) total += n;
    buf[total] = 0;
    printf("--- messages in arrival order ---\n%s---\n", buf);
    int st;
    pid_t w = waitpid(kids[2], &st, 0);
    printf("waitpid(child2)=%d matches=%d exit=%d\n", w, w == kids[2], WEXITSTATUS(st));
    struct rusage ru;
    w = wait4(kids[0], &st, 0, &ru);
    printf("wait4(child0)=%d exit=%d maxrss>0=%d\n", w, WEXITSTATUS(st), ru.ru_maxrss > 0);
    w = wait(&st);
    printf("wait()=%d is child1=%d exit=%d\n", w, w == kids[1], WEXITSTATUS(st));
    w = wait(&st);
    printf("wait() with no children=%d\n", w);
    printf("EXIT-SUCCESS\n");
    return 0;
}
