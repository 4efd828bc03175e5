// Tests exit() from main while 4 other threads are blocked in nanosleep/read/futex waits (exit_group kills them).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int p[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;

static void mark(void) {
    pthread_mutex_lock(&mu);
    started++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void *sleeper(void *arg) {
    (void)arg;
    mark();
    for (;;) sleep(10);
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    mark();
    char c;
    read(p[0], &c, 1); /* never written */
    return NULL;
}

static void *waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&mu);
    started++;
    pthread_cond_broadcast(&cv);
    for (;;) pthread_cond_wait(&cv, &mu);
    return NULL;
}

int main(void) {
    pipe(p);
    pthread_t t;
    pthread_create(&t, NULL, sleeper, NULL);
    pthread_create(&t, NULL, sleeper, NULL);
    pthread_create(&t, NULL, reader, NULL);
    pthread_create(&t, NULL, waiter, NULL);
    pthread_mutex_lock(&mu);
    while (started < 4) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    usleep(2000);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("all 4 threads blocked at t=%ld.%09ld, pid=%d; calling exit(0)\n", (long)ts.tv_sec, ts.tv_nsec, getpid());
    printf("EXIT-SUCCESS\n");
    exit(0);
}
