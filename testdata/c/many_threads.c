// Tests 200 short-lived threads created in batches of 8 (joined) plus 40 detached threads; prints tid range and stack address spread.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int detached_done;
static pid_t min_tid = 1 << 30, max_tid;
static uintptr_t min_stack = UINTPTR_MAX, max_stack;

static void note(void) {
    int local;
    pid_t tid = gettid();
    pthread_mutex_lock(&mu);
    if (tid < min_tid) min_tid = tid;
    if (tid > max_tid) max_tid = tid;
    if ((uintptr_t)&local < min_stack) min_stack = (uintptr_t)&local;
    if ((uintptr_t)&local > max_stack) max_stack = (uintptr_t)&local;
    pthread_mutex_unlock(&mu);
}

static void *joined(void *arg) {
    note();
    return (void *)((intptr_t)arg * 2);
}

static void *detached(void *arg) {
    (void)arg;
    note();
    pthread_mutex_lock(&mu);
    detached_done++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(void) {
    long sum = 0;
    for (int batch = 0; batch < 25; batch++) {
        pthread_t t[8];
        for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, joined, (void *)(intptr_t)(batch * 8 + i));
        for (int i = 0; i < 8; i++) {
            void *ret;
            pthread_join(t[i], &ret);
            sum += (intptr_t)ret;
        }
    }
    printf("200 joined threads, sum of results=%ld\n", sum);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 64 * 1024);
    for (int i = 0; i < 40; i++) {
        pthread_t t;
        pthread_create(&t, &at, detached, NULL);
    }
    pthread_mutex_lock(&mu);
    while (detached_done < 40) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    printf("40 detached threads done\n");
    printf("tids %d..%d (main %d), stacks %#lx..%#lx\n", min_tid, max_tid, getpid(), (unsigned long)min_stack, (unsigned long)max_stack);
    printf("EXIT-SUCCESS\n");
    return 0;
}
