// Tests truncate/ftruncate/fsync/fdatasync/fallocate and sparse reads of zeroes.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void) {
    srand(time(NULL) ^ getpid());
    int fd = open("trunc.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror("open"); return 1; }
    char data[8192];
    for (size_t i = 0; i < sizeof data; i++) data[i] = 'a' + rand() % 26;
    write(fd, data, sizeof data);
    long long t0 = now_ns();
    int r1 = fsync(fd);
    long long t1 = now_ns();
    int r2 = fdatasync(fd);
    long long t2 = now_ns();
    printf("fsync=%d (%lld ns) fdatasync=%d (%lld ns)\n", r1, t1 - t0, r2, t2 - t1);

    off_t cut = 1000 + rand() % 5000;
    printf("ftruncate to %lld = %d\n", (long long)cut, ftruncate(fd, cut));
    struct stat st;
    fstat(fd, &st);
    printf("size now %lld\n", (long long)st.st_size);

    printf("truncate grow to 20000 = %d\n", truncate("trunc.dat", 20000));
    char buf[64];
    ssize_t n = pread(fd, buf, sizeof buf, 15000);
    int zeros = 0;
    for (int i = 0; i < n; i++) zeros += buf[i] == 0;
    printf("pread in hole=%zd zeros=%d\n", n, zeros);
    n = pread(fd, buf, 10, cut - 5);
    printf("tail: %.*s\n", (int)n, buf);

    int fr = fallocate(fd, 0, 0, 65536);
    fstat(fd, &st);
    printf("fallocate=%d size=%lld\n", fr == 0 ? 0 : -1, (long long)st.st_size);
    close(fd);
    sync();
    unlink("trunc.dat");
    printf("EXIT-SUCCESS\n");
    return 0;
}
