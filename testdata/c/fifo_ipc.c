// Tests a named FIFO (mkfifo with a random name) between a parent and a forked child.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    char name[64];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(name, sizeof name, "fifo_%ld_%d", ts.tv_nsec, getpid());
    if (mkfifo(name, 0600) != 0) { perror("mkfifo"); return 1; }
    struct stat st;
    stat(name, &st);
    printf("fifo %s isfifo=%d\n", name, S_ISFIFO(st.st_mode));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(name, O_WRONLY); /* blocks until the parent opens for reading */
        for (int i = 0; i < 5; i++) {
            char msg[64];
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            int len = snprintf(msg, sizeof msg, "msg %d t=%ld.%09ld\n", i, (long)t.tv_sec, t.tv_nsec);
            write(fd, msg, len);
            usleep(1000);
        }
        close(fd);
        _exit(0);
    }
    int fd = open(name, O_RDONLY);
    char buf[512];
    ssize_t n;
    int reads = 0;
    size_t total = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        reads++;
        total += n;
        fwrite(buf, 1, n, stdout);
    }
    close(fd);
    waitpid(pid, NULL, 0);
    printf("reads=%d total=%zu\n", reads, total);
    /* non-blocking open for write without a reader fails with ENXIO */
    int w = open(name, O_WRONLY | O_NONBLOCK);
    printf("nonblock open for write without reader: %d\n", w);
    unlink(name);
    printf("EXIT-SUCCESS\n");
    return 0;
}
