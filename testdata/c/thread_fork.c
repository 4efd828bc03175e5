// Tests fork() called from a non-main thread while other threads hold no locks: the child has one thread and reports its state.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int counter = 100;

static int count_threads(void) {
    char buf[256];
    int n = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "Threads:", 8)) n = atoi(buf + 8);
    fclose(f);
    return n;
}

static void *forker(void *arg) {
    (void)arg;
    counter++;
    pid_t self_tid = gettid();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        printf("child pid=%d tid=%d ppid=%d threads=%d counter=%d forked-from-tid=%d t=%ld\n", getpid(), gettid(), getppid(),
               count_threads(), counter, self_tid, ts.tv_nsec);
        fflush(stdout);
        _exit(counter - 100);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("forking thread tid=%d reaped child %d exit=%d\n", self_tid, pid, WEXITSTATUS(st));
    return NULL;
}

static void *idle(void *arg) {
    (void)arg;
    usleep(20000);
    return NULL;
}

int main(void) {
    printf("parent pid=%d\n", getpid());
    pthread_t a, b, c;
    pthread_create(&a, NULL, idle, NULL);
    pthread_create(&b, NULL, idle, NULL);
    pthread_create(&c, NULL, forker, NULL);
    pthread_join(c, NULL);
    printf("parent threads while idle ones sleep=%d counter=%d\n", count_threads(), counter);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("EXIT-SUCCESS\n");
    return 0;
}
