// Tests pthread barriers (serial thread varies), rwlocks with concurrent readers and writers, trylock and spin-free timed locks.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define N 4
static pthread_barrier_t bar;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int shared_value;
static int serial_ids[3];
static int max_readers, cur_readers;
static int arrival[N * 3], narrival;

static void *worker(void *arg) {
    int id = (int)(long)arg;
    for (int round = 0; round < 3; round++) {
        usleep(100 * ((id + round) % N));
        pthread_mutex_lock(&mu);
        arrival[narrival++] = id;
        pthread_mutex_unlock(&mu);
        int r = pthread_barrier_wait(&bar);
        if (r == PTHREAD_BARRIER_SERIAL_THREAD) serial_ids[round] = id;
        if (id % 2 == 0) {
            pthread_rwlock_wrlock(&rw);
            shared_value = shared_value * 10 + id;
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_rdlock(&rw);
            pthread_mutex_lock(&mu);
            if (++cur_readers > max_readers) max_readers = cur_readers;
            pthread_mutex_unlock(&mu);
            usleep(200);
            pthread_mutex_lock(&mu);
            cur_readers--;
            pthread_mutex_unlock(&mu);
            pthread_rwlock_unlock(&rw);
        }
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(void) {
    pthread_barrier_init(&bar, NULL, N);
    pthread_t t[N];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("serial threads per round: %d %d %d\n", serial_ids[0], serial_ids[1], serial_ids[2]);
    printf("writer order value=%d max concurrent readers=%d\n", shared_value, max_readers);
    printf("arrival order:");
    for (int i = 0; i < narrival; i++) printf(" %d", arrival[i]);
    printf("\nelapsed %ld us\n", (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000);

    pthread_rwlock_rdlock(&rw);
    printf("tryrdlock while read-held: %d, trywrlock: %s\n", pthread_rwlock_tryrdlock(&rw),
           pthread_rwlock_trywrlock(&rw) == EBUSY ? "EBUSY" : "?");
    pthread_rwlock_unlock(&rw);
    pthread_rwlock_unlock(&rw);
    pthread_mutex_lock(&mu);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 1000000;
    if (dl.tv_nsec >= 1000000000) { dl.tv_sec++; dl.tv_nsec -= 1000000000; }
    printf("trylock held mutex: %s\n", pthread_mutex_trylock(&mu) == EBUSY ? "EBUSY" : "?");
    pthread_mutex_unlock(&mu);
    pthread_mutex_t em;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&em, &ma);
    pthread_mutex_lock(&em);
    printf("errorcheck relock: %s\n", pthread_mutex_lock(&em) == EDEADLK ? "EDEADLK" : "?");
    printf("timedlock on held errorcheck mutex: %s\n", pthread_mutex_timedlock(&em, &dl) == EDEADLK ? "EDEADLK" : "other");
    pthread_mutex_unlock(&em);
    printf("EXIT-SUCCESS\n");
    return 0;
}
