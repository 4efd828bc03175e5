// Tests fcntl record locks (F_SETLK/F_SETLKW/F_GETLK, F_OFD_*) between a parent and a forked child; prints the holder pid.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int setlk(int fd, int cmd, short type, off_t start, off_t len) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    return fcntl(fd, cmd, &fl);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = open("locks.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    ftruncate(fd, 4096);
    printf("parent pid=%d\n", getpid());
    int p2c[2], c2p[2];
    pipe(p2c);
    pipe(c2p);
    pid_t child = fork();
    if (child == 0) {
        char c;
        if (setlk(fd, F_SETLK, F_WRLCK, 0, 100) != 0) perror("child F_SETLK");
        write(c2p[1], "L", 1);
        read(p2c[0], &c, 1); /* wait for parent to probe */
        setlk(fd, F_SETLK, F_UNLCK, 0, 100);
        _exit(0);
    }
    char c;
    read(c2p[0], &c, 1);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 50, .l_len = 10};
    fcntl(fd, F_GETLK, &fl);
    printf("F_GETLK: type=%s start=%lld len=%lld holder_is_child=%d holder=%d\n", fl.l_type == F_WRLCK ? "WRLCK" : "other",
           (long long)fl.l_start, (long long)fl.l_len, fl.l_pid == child, fl.l_pid);
    errno = 0;
    int r = setlk(fd, F_SETLK, F_RDLCK, 0, 10);
    printf("F_SETLK conflicting: %d errno=%s\n", r, (errno == EAGAIN || errno == EACCES) ? "EAGAIN/EACCES" : strerror(errno));
    printf("F_SETLK non-overlapping: %d\n", setlk(fd, F_SETLK, F_WRLCK, 200, 10));
    write(p2c[1], "U", 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = setlk(fd, F_SETLKW, F_WRLCK, 0, 100); /* blocks until the child unlocks */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("F_SETLKW: %d waited %ld ns\n", r, (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    int st;
    waitpid(child, &st, 0);
    printf("child exited %d\n", WEXITSTATUS(st));

    /* open file description locks */
    int fd2 = open("locks.dat", O_RDWR);
    printf("OFD lock fd: %d\n", setlk(fd, F_OFD_SETLK, F_WRLCK, 1000, 10));
    errno = 0;
    r = setlk(fd2, F_OFD_SETLK, F_WRLCK, 1000, 10);
    printf("OFD lock fd2 conflicting: %d errno=%s\n", r, strerror(errno));
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1000, .l_len = 1};
    fcntl(fd2, F_OFD_GETLK, &q);
    printf("F_OFD_GETLK pid=%d type=%d\n", q.l_pid, q.l_type == F_WRLCK);
    close(fd2);
    close(fd);
    unlink("locks.dat");
    printf("EXIT-SUCCESS\n");
    return 0;
}
