// Tests pthread_cancel of threads blocked in read() and in pthread_cond_wait, with cleanup handlers, and PTHREAD_CANCEL_DISABLE.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int p[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int cleanups, ready;
static long cleanup_ns[2];

static void cleanup(void *arg) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    cleanup_ns[(long)arg] = ts.tv_nsec;
    __sync_fetch_and_add(&cleanups, 1);
}

static void unlock(void *arg) {
    (void)arg;
    pthread_mutex_unlock(&mu);
}

static void *reader(void *arg) {
    (void)arg;
    pthread_cleanup_push(cleanup, (void *)0);
    __sync_fetch_and_add(&ready, 1);
    char c;
    read(p[0], &c, 1); /* cancellation point */
    pthread_cleanup_pop(0);
    return NULL;
}

static void *waiter(void *arg) {
    (void)arg;
    pthread_cleanup_push(cleanup, (void *)1);
    pthread_mutex_lock(&mu);
    pthread_cleanup_push(unlock, NULL);
    __sync_fetch_and_add(&ready, 1);
    for (;;) pthread_cond_wait(&cv, &mu);
    pthread_cleanup_pop(1);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *stubborn(void *arg) {
    (void)arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    __sync_fetch_and_add(&ready, 1);
    usleep(3000); /* not cancelled while disabled */
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    pthread_testcancel();
    return (void *)42;
}

int main(void) {
    pipe(p);
    pthread_t a, b, c;
    pthread_create(&a, NULL, reader, NULL);
    pthread_create(&b, NULL, waiter, NULL);
    pthread_create(&c, NULL, stubborn, NULL);
    while (ready < 3) usleep(100);
    usleep(500);
    pthread_cancel(a);
    pthread_cancel(b);
    pthread_cancel(c);
    void *ra, *rb, *rc;
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    pthread_join(c, &rc);
    printf("reader canceled=%d waiter canceled=%d stubborn canceled=%d cleanups=%d\n", ra == PTHREAD_CANCELED, rb == PTHREAD_CANCELED,
           rc == PTHREAD_CANCELED, cleanups);
    printf("cleanup times (ns part): %ld %ld\n", cleanup_ns[0], cleanup_ns[1]);
    printf("mutex free after cancel: %d\n", pthread_mutex_trylock(&mu) == 0);
    printf("EXIT-SUCCESS\n");
    return 0;
}
