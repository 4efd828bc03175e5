// Tests an intentionally racy unsynchronized counter incremented by 4 threads with sched_yield between read and write (lost updates vary).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

static volatile long counter;
static volatile int last_writer;
static int order[64];
static volatile int norder;

static void *incr(void *arg) {
    int id = (int)(long)arg;
    for (int i = 0; i < 200; i++) {
        long v = counter;
        sched_yield(); /* widen the race window; also a syscall so the thread can be switched */
        counter = v + 1;
        last_writer = id;
        int k = norder;
        if (k < 64 && i % 10 == 0) {
            order[k] = id;
            norder = k + 1;
        }
    }
    return NULL;
}

int main(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, incr, (void *)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    printf("counter=%ld of 800 (lost %ld), last writer=%d\n", counter, 800 - counter, last_writer);
    printf("sampled order:");
    for (int i = 0; i < norder; i++) printf(" %d", order[i]);
    printf("\npid=%d\n", getpid());
    printf("EXIT-SUCCESS\n");
    return 0;
}
