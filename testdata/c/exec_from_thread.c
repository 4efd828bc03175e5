// Tests execve from a non-main thread while other threads are blocked: the exec'd image (this program with an argument) runs as the thread-group leader.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static pid_t orig_pid;

static void *blocker(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

static void *execer(void *arg) {
    (void)arg;
    char pidbuf[16], tidbuf[16];
    snprintf(pidbuf, sizeof pidbuf, "%d", orig_pid);
    snprintf(tidbuf, sizeof tidbuf, "%d", gettid());
    printf("thread tid=%d (pid %d) calling execv\n", gettid(), orig_pid);
    fflush(stdout);
    char *argv[] = {"exec_from_thread", "--after-exec", pidbuf, tidbuf, NULL};
    execv("/proc/self/exe", argv);
    perror("execv");
    return NULL;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--after-exec") == 0) {
        printf("after exec: pid=%d (was %s) tid=%d (exec thread was %s) pid unchanged=%d\n", getpid(), argv[2], gettid(), argv[3],
               getpid() == atoi(argv[2]));
        char buf[256];
        FILE *f = fopen("/proc/self/status", "r");
        while (fgets(buf, sizeof buf, f))
            if (!strncmp(buf, "Threads:", 8)) printf("after exec %s", buf);
        fclose(f);
        const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
        printf("new AT_RANDOM %02x%02x%02x%02x\n", r[0], r[1], r[2], r[3]);
        printf("EXIT-SUCCESS\n");
        return 0;
    }
    orig_pid = getpid();
    pthread_t t;
    pthread_create(&t, NULL, blocker, NULL);
    pthread_create(&t, NULL, blocker, NULL);
    pthread_create(&t, NULL, execer, NULL);
    for (;;) pause();
}
