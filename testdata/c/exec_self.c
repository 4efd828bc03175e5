// Tests execve of the program itself (via /proc/self/exe) with an extra argument, passing state via argv/env and an inherited fd.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--stage2") == 0) {
        int fd = atoi(argv[2]);
        char buf[64] = {0};
        lseek(fd, 0, SEEK_SET);
        ssize_t n = read(fd, buf, sizeof buf - 1);
        printf("stage2 pid=%d env GORR_STAGE=%s fd %d read %zd: %s\n", getpid(), getenv("GORR_STAGE"), fd, n, buf);
        const unsigned char *at = (const unsigned char *)getauxval(AT_RANDOM);
        printf("stage2 AT_RANDOM=%02x%02x%02x%02x stack=%p\n", at[0], at[1], at[2], at[3], (void *)&fd);
        int cl = open("cloexec.txt", O_RDONLY);
        printf("stage2 next free fd=%d (cloexec fd was closed)\n", cl);
        printf("EXIT-SUCCESS\n");
        return 0;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int fd = open("state.txt", O_RDWR | O_CREAT | O_TRUNC, 0600);
    dprintf(fd, "stage1 t=%ld.%09ld", (long)ts.tv_sec, ts.tv_nsec);
    int cfd = open("cloexec.txt", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    printf("stage1 pid=%d fd=%d cloexec fd=%d stack=%p\n", getpid(), fd, cfd, (void *)&fd);
    fflush(stdout);
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", fd);
    char *nargv[] = {argv[0], "--stage2", fdarg, NULL};
    setenv("GORR_STAGE", "two", 1);
    unlink("state.txt");
    execv("/proc/self/exe", nargv);
    perror("execv");
    return 1;
}
