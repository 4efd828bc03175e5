// Tests a process killed by SIGKILL sent from its own forked child while the parent is blocked in read(); expected death by signal 9.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("parent pid=%d t=%ld.%09ld\n", getpid(), (long)ts.tv_sec, ts.tv_nsec);
    fflush(stdout);
    pid_t parent = getpid();
    pid_t c = fork();
    if (c == 0) {
        usleep(2000);
        printf("child %d sending SIGKILL to parent %d\n", getpid(), parent);
        fflush(stdout);
        kill(parent, SIGKILL);
        _exit(0);
    }
    /* block forever in read(): we hold the only write end of this pipe */
    int q[2];
    pipe(q);
    char buf[1];
    read(q[0], buf, 1);
    printf("not reached\n");
    return 0;
}
