// Tests getrlimit/setrlimit/prlimit (incl. on a child pid) and that a lowered RLIMIT_NOFILE makes open fail with EMFILE.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *name, int res) {
    struct rlimit rl;
    getrlimit(res, &rl);
    printf("%-14s cur=%lld max=%lld\n", name, rl.rlim_cur == RLIM_INFINITY ? -1LL : (long long)rl.rlim_cur,
           rl.rlim_max == RLIM_INFINITY ? -1LL : (long long)rl.rlim_max);
}

int main(void) {
    show("RLIMIT_NOFILE", RLIMIT_NOFILE);
    show("RLIMIT_STACK", RLIMIT_STACK);
    show("RLIMIT_CORE", RLIMIT_CORE);
    show("RLIMIT_AS", RLIMIT_AS);
    show("RLIMIT_NPROC", RLIMIT_NPROC);

    unsigned char r;
    getrandom(&r, 1, 0);
    struct rlimit old, nl;
    getrlimit(RLIMIT_NOFILE, &old);
    nl.rlim_cur = 20 + r % 20;
    nl.rlim_max = old.rlim_max;
    printf("setrlimit NOFILE cur=%lld: %d\n", (long long)nl.rlim_cur, setrlimit(RLIMIT_NOFILE, &nl));
    int opened = 0, last = -1;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0) {
            printf("open failed after %d opens, last fd=%d: %s\n", opened, last, errno == EMFILE ? "EMFILE" : strerror(errno));
            break;
        }
        opened++;
        last = fd;
    }
    for (int fd = 3; fd <= last; fd++) close(fd);
    setrlimit(RLIMIT_NOFILE, &old);

    struct rlimit core = {0, 0}, prev;
    printf("prlimit self CORE: %d\n", prlimit(0, RLIMIT_CORE, &core, &prev));
    int p[2];
    pipe(p);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        read(p[0], &c, 1);
        struct rlimit cl;
        getrlimit(RLIMIT_CPU, &cl);
        _exit(cl.rlim_cur == (rlim_t)(5 + r % 10) ? 0 : 1);
    }
    struct rlimit cpu = {5 + r % 10, RLIM_INFINITY}, got;
    printf("prlimit child %d CPU=%d: %d\n", pid, 5 + r % 10, prlimit(pid, RLIMIT_CPU, &cpu, NULL));
    prlimit(pid, RLIMIT_CPU, NULL, &got);
    printf("prlimit read back %lld\n", (long long)got.rlim_cur);
    write(p[1], "g", 1);
    int st;
    waitpid(pid, &st, 0);
    printf("child saw its new limit: %s\n", WEXITSTATUS(st) == 0 ? "yes" : "no");
    printf("EXIT-SUCCESS\n");
    return 0;
}
