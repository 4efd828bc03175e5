// Tests file-backed mmap: MAP_SHARED writes visible through read(), msync, MAP_PRIVATE copy-on-write not reaching the file, mapping beyond EOF.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
    long pg = sysconf(_SC_PAGESIZE);
    int fd = open("mapped.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    unsigned char rnd[64];
    getrandom(rnd, sizeof rnd, 0);
    ftruncate(fd, 3 * pg);
    char *s = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("shared map at %p\n", (void *)s);
    int len = sprintf(s, "shared-%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3]);
    sprintf(s + 2 * pg, "third-page-%02x", rnd[4]);
    printf("msync=%d\n", msync(s, 3 * pg, MS_SYNC));
    char buf[64] = {0};
    pread(fd, buf, len, 0);
    printf("read() sees: %s\n", buf);
    pread(fd, buf, 13, 2 * pg);
    printf("read() page 3: %.13s\n", buf);

    /* write() through the fd is visible in the mapping */
    pwrite(fd, "WRITTEN", 7, 100);
    printf("mapping sees pwrite: %.7s\n", s + 100);

    char *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    printf("private map at %p sees: %.15s\n", (void *)p, p);
    memcpy(p, "PRIVATE", 7);
    memset(buf, 0, sizeof buf);
    pread(fd, buf, 7, 0);
    printf("after private write, file has: %.7s, private has %.7s\n", buf, p);

    /* mapping at an offset, read-only */
    char *o = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 2 * pg);
    printf("offset map sees: %.13s\n", o);

    /* grow file with ftruncate and see it via a new mapping */
    ftruncate(fd, 4 * pg);
    s[3 * pg - 1] = 'Z';
    struct stat st;
    fstat(fd, &st);
    printf("size=%lld last byte of page 3 via read: ", (long long)st.st_size);
    pread(fd, buf, 1, 3 * pg - 1);
    printf("%c\n", buf[0]);
    munmap(s, 3 * pg);
    munmap(p, pg);
    munmap(o, pg);
    close(fd);
    unlink("mapped.dat");
    printf("EXIT-SUCCESS\n");
    return 0;
}
