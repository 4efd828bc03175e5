// Tests posix_spawn/posix_spawnp with file actions (redirect child stdout into a pipe and into a file) and spawn attributes.
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int main(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char arg[64];
    snprintf(arg, sizeof arg, "spawned-at-%ld.%09ld", (long)ts.tv_sec, ts.tv_nsec);
    int p[2];
    pipe(p);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    char *argv[] = {"echo", arg, NULL};
    pid_t pid;
    int r = posix_spawn(&pid, "/bin/echo", &fa, NULL, argv, environ);
    close(p[1]);
    char buf[256] = {0};
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    int st;
    waitpid(pid, &st, 0);
    printf("posix_spawn r=%d pid=%d exit=%d, pipe got %zd bytes: %s", r, pid, WEXITSTATUS(st), n, buf);
    posix_spawn_file_actions_destroy(&fa);

    /* posix_spawnp with output to a file, new process group, and a reset signal mask */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "spawn_out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t empty;
    sigemptyset(&empty);
    posix_spawnattr_setsigmask(&at, &empty);
    char *argv2[] = {"sh", "-c", "read -r pid comm state ppid pgid rest < /proc/$$/stat; echo pid=$pid pgid=$pgid", NULL};
    r = posix_spawnp(&pid, "sh", &fa, &at, argv2, environ);
    waitpid(pid, &st, 0);
    int fd = open("spawn_out.txt", O_RDONLY);
    memset(buf, 0, sizeof buf);
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    printf("posix_spawnp r=%d pid=%d exit=%d, file got: %s", r, pid, WEXITSTATUS(st), buf);
    r = posix_spawnp(&pid, "definitely-not-a-program", NULL, NULL, argv, environ);
    printf("spawn of missing program r=%d (%s)\n", r, strerror(r));
    unlink("spawn_out.txt");
    printf("EXIT-SUCCESS\n");
    return 0;
}
