// Tests death by the default SIGPIPE action (signal 13) when writing to a pipe whose reader (a child) has exited.
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    int p[2];
    pipe(p);
    pid_t c = fork();
    if (c == 0) {
        close(p[1]);
        char buf[16];
        read(p[0], buf, sizeof buf); /* read one chunk, then exit, closing the read end */
        _exit(0);
    }
    close(p[0]);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("writer pid=%d child=%d t=%ld\n", getpid(), c, ts.tv_nsec);
    fflush(stdout);
    write(p[1], "first", 5);
    waitpid(c, NULL, 0);
    write(p[1], "second", 6); /* SIGPIPE kills us here */
    printf("not reached\n");
    return 0;
}
