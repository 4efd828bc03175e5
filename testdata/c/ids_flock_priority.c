// Tests identity and misc process syscalls: get[e]uid/gid, getgroups, umask, getpriority/setpriority(nice), flock between two fds, getresuid.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    getresuid(&ru, &eu, &su);
    getresgid(&rg, &eg, &sg);
    printf("uid=%d euid=%d resuid=%d/%d/%d gid=%d resgid=%d/%d/%d\n", getuid(), geteuid(), ru, eu, su, getgid(), rg, eg, sg);
    gid_t groups[64];
    int ng = getgroups(64, groups);
    printf("groups=%d\n", ng);
    mode_t old = umask(027);
    printf("umask old=%03o new=%03o\n", old, umask(027));
    int fd = open("umask_test", O_CREAT | O_WRONLY, 0666);
    struct stat st;
    fstat(fd, &st);
    printf("file created with 0666 has mode %03o\n", st.st_mode & 0777);

    errno = 0;
    int prio = getpriority(PRIO_PROCESS, 0);
    printf("priority=%d\n", prio);
    int nv = nice(3);
    printf("nice(3)=%d getpriority=%d\n", nv, getpriority(PRIO_PROCESS, 0));

    int a = open("umask_test", O_RDONLY), b = open("umask_test", O_RDONLY);
    printf("flock a EX=%d\n", flock(a, LOCK_EX));
    int r = flock(b, LOCK_EX | LOCK_NB);
    printf("flock b EX|NB=%d %s\n", r, errno == EWOULDBLOCK ? "EWOULDBLOCK" : strerror(errno));
    flock(a, LOCK_UN);
    printf("after unlock b=%d\n", flock(b, LOCK_SH | LOCK_NB));
    printf("pid=%d ppid=%d pgid=%d sid=%d\n", getpid(), getppid(), getpgid(0), getsid(0));
    unlink("umask_test");
    printf("EXIT-SUCCESS\n");
    return 0;
}
