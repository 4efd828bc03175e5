// Tests memfd_create with file seals, mmap of the memfd shared with a forked child, and /proc/self/fd naming.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    int fd = memfd_create("gorr-memfd", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    printf("memfd=%d\n", fd);
    ftruncate(fd, 4096);
    unsigned char r[8];
    getrandom(r, sizeof r, 0);
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    snprintf(m, 64, "memfd-%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
    char link[64], target[128] = {0};
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    readlink(link, target, sizeof target - 1);
    printf("fd link=%s\n", target);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        /* child appends to the shared mapping */
        size_t l = strlen(m);
        snprintf(m + l, 64, "+child%d", getpid());
        _exit(0);
    }
    waitpid(c, NULL, 0);
    char buf[128] = {0};
    pread(fd, buf, sizeof buf - 1, 0);
    printf("after child: %s\n", buf);
    printf("add seals=%d\n", fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
    printf("seals=%#x\n", fcntl(fd, F_GET_SEALS));
    int tr = ftruncate(fd, 100);
    printf("shrink after F_SEAL_SHRINK: %d %s\n", tr, tr ? strerror(errno) : "");
    munmap(m, 4096);
    printf("F_SEAL_WRITE=%d\n", fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
    ssize_t w = pwrite(fd, "x", 1, 0);
    printf("write after F_SEAL_WRITE: %zd %s\n", w, w < 0 ? strerror(errno) : "");
    printf("EXIT-SUCCESS\n");
    return 0;
}
