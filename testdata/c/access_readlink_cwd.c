// Tests access/faccessat, readlink of /proc/self/exe and /proc/self/fd, getcwd, chdir/fchdir, realpath.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
    char cwd[PATH_MAX], buf[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) { perror("getcwd"); return 1; }
    printf("cwd=%s\n", cwd);
    printf("pid=%d\n", getpid());
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    const char *base = strrchr(buf, '/');
    printf("exe basename=%s\n", base ? base + 1 : buf);

    char name[64];
    snprintf(name, sizeof name, "file_%d.txt", getpid());
    int fd = open(name, O_CREAT | O_RDWR, 0600);
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("fd %d -> %s\n", fd, buf);

    printf("access R_OK=%d W_OK=%d X_OK=%d\n", access(name, R_OK), access(name, W_OK), access(name, X_OK));
    int fa = faccessat(AT_FDCWD, "missing.file", F_OK, 0);
    printf("faccessat missing=%d errno=%s\n", fa, strerror(errno));
    printf("access /bin/sh X_OK=%d\n", access("/bin/sh", X_OK));

    symlink(name, "the_link");
    n = readlink("the_link", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("readlink the_link=%s\n", buf);
    n = readlink(name, buf, sizeof buf);
    printf("readlink regular file: %zd errno=%s\n", n, strerror(errno));

    mkdir("subdir", 0755);
    int dfd = open(".", O_RDONLY | O_DIRECTORY);
    if (chdir("subdir") != 0) perror("chdir");
    getcwd(buf, sizeof buf);
    printf("after chdir ends with /subdir: %d\n", strlen(buf) > 7 && strcmp(buf + strlen(buf) - 7, "/subdir") == 0);
    char *rp = realpath("../the_link", NULL);
    printf("realpath ../the_link basename=%s\n", rp ? strrchr(rp, '/') + 1 : "(null)");
    free(rp);
    fchdir(dfd);
    getcwd(buf, sizeof buf);
    printf("after fchdir back: %d\n", strcmp(buf, cwd) == 0);
    rmdir("subdir");
    unlink("the_link");
    unlink(name);
    printf("EXIT-SUCCESS\n");
    return 0;
}
