// Tests *at syscalls relative to a directory fd (openat/mkdirat/renameat2/linkat/unlinkat/fstatat), O_TMPFILE, and mkstemp in /tmp.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
    char tmpl[] = "/tmp/gorr-test-XXXXXX";
    int tfd = mkstemp(tmpl);
    printf("mkstemp suffix=%s fd=%d\n", tmpl + 15, tfd);
    dprintf(tfd, "pid %d\n", getpid());
    unlink(tmpl);
    close(tfd);

    mkdir("base", 0755);
    int dfd = open("base", O_RDONLY | O_DIRECTORY);
    mkdirat(dfd, "inner", 0700);
    int a = openat(dfd, "inner/a.txt", O_CREAT | O_WRONLY, 0644);
    dprintf(a, "A-%d", getpid());
    close(a);
    int b = openat(dfd, "b.txt", O_CREAT | O_WRONLY, 0644);
    dprintf(b, "B-file");
    close(b);
    int r = renameat2(dfd, "inner/a.txt", dfd, "b.txt", RENAME_EXCHANGE);
    int e = errno;
    printf("renameat2 RENAME_EXCHANGE=%d %s\n", r, r ? strerror(e) : "");
    char buf[64] = {0};
    int fd = openat(dfd, "b.txt", O_RDONLY);
    read(fd, buf, sizeof buf - 1);
    close(fd);
    printf("b.txt now: %s\n", buf);
    r = renameat2(dfd, "b.txt", dfd, "inner/a.txt", RENAME_NOREPLACE);
    printf("RENAME_NOREPLACE onto existing=%d %s\n", r, errno == EEXIST ? "EEXIST" : strerror(errno));

    /* O_TMPFILE: anonymous file, later given a name with linkat */
    int tf = openat(dfd, ".", O_TMPFILE | O_RDWR, 0600);
    if (tf >= 0) {
        dprintf(tf, "tmpfile-%d", getpid());
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", tf);
        r = linkat(AT_FDCWD, path, dfd, "materialized", AT_SYMLINK_FOLLOW);
        struct stat st;
        fstatat(dfd, "materialized", &st, 0);
        printf("O_TMPFILE linkat=%d size=%lld nlink=%lu\n", r, (long long)st.st_size, (unsigned long)st.st_nlink);
        close(tf);
    } else {
        printf("O_TMPFILE unsupported here (%s)\n", strerror(errno));
    }
    struct stat st;
    r = fstatat(dfd, "inner", &st, AT_SYMLINK_NOFOLLOW);
    printf("fstatat inner isdir=%d mode=%o\n", S_ISDIR(st.st_mode), st.st_mode & 0777);
    unlinkat(dfd, "materialized", 0);
    unlinkat(dfd, "b.txt", 0);
    unlinkat(dfd, "inner/a.txt", 0);
    r = unlinkat(dfd, "inner", AT_REMOVEDIR);
    printf("unlinkat dir=%d\n", r);
    close(dfd);
    printf("rmdir base=%d\n", rmdir("base"));
    printf("EXIT-SUCCESS\n");
    return 0;
}
