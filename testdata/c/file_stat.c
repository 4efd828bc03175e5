// Tests stat/fstat/lstat/statx/utimensat on files whose size and timestamps vary per run.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    unsigned short r;
    getrandom(&r, sizeof r, 0);
    size_t size = 100 + r % 5000;
    int fd = open("stat_me.txt", O_WRONLY | O_CREAT | O_TRUNC, 0640);
    char *junk = calloc(1, size);
    write(fd, junk, size);
    free(junk);

    struct stat st;
    if (fstat(fd, &st) != 0) { perror("fstat"); return 1; }
    printf("fstat size=%lld mode=%o nlink=%lu ino=%llu\n", (long long)st.st_size, st.st_mode & 07777,
           (unsigned long)st.st_nlink, (unsigned long long)st.st_ino);
    printf("mtime=%lld.%09ld\n", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    close(fd);

    if (stat("stat_me.txt", &st) != 0) { perror("stat"); return 1; }
    printf("stat size=%lld blocks=%lld\n", (long long)st.st_size, (long long)st.st_blocks);

    symlink("stat_me.txt", "stat_link");
    if (lstat("stat_link", &st) != 0) { perror("lstat"); return 1; }
    printf("lstat islink=%d linksize=%lld\n", S_ISLNK(st.st_mode), (long long)st.st_size);

    struct statx sx;
    if (statx(AT_FDCWD, "stat_link", 0, STATX_ALL, &sx) != 0) { perror("statx"); return 1; }
    printf("statx size=%llu mask=%x btime-present=%d\n", (unsigned long long)sx.stx_size, sx.stx_mask & STATX_BASIC_STATS,
           !!(sx.stx_mask & STATX_BTIME));
    printf("statx mtime=%lld.%09u\n", (long long)sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec);

    struct timespec ts[2] = {{.tv_sec = 1000000000 + r, .tv_nsec = 0}, {.tv_sec = 1234567890 + r, .tv_nsec = 5}};
    utimensat(AT_FDCWD, "stat_me.txt", ts, 0);
    stat("stat_me.txt", &st);
    printf("after utimensat mtime=%lld atime=%lld\n", (long long)st.st_mtim.tv_sec, (long long)st.st_atim.tv_sec);

    if (stat("does-not-exist", &st) != 0) perror("stat missing");
    unlink("stat_link");
    unlink("stat_me.txt");
    printf("EXIT-SUCCESS\n");
    return 0;
}
