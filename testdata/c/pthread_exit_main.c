// Tests pthread_exit from main: the process keeps running until the last worker thread finishes, then exits with status 0.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread, workers[2];

static void *worker(void *arg) {
    int id = (int)(long)arg;
    usleep(2000 * id);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("worker %d tid=%d done at %ld.%09ld\n", id, gettid(), (long)ts.tv_sec, ts.tv_nsec);
    return NULL;
}

static void *last(void *arg) {
    (void)arg;
    /* main is a zombie thread after pthread_exit; joining it is allowed */
    int r = pthread_join(main_thread, NULL);
    printf("last thread tid=%d joined main thread: %d\n", gettid(), r);
    for (int i = 0; i < 2; i++) pthread_join(workers[i], NULL);
    printf("last thread joined both workers\n");
    printf("EXIT-SUCCESS\n");
    fflush(stdout);
    return NULL; /* the process exits with status 0 when this last thread returns */
}

int main(void) {
    main_thread = pthread_self();
    printf("main tid=%d starting threads then calling pthread_exit\n", gettid());
    fflush(stdout);
    for (long i = 0; i < 2; i++) pthread_create(&workers[i], NULL, worker, (void *)(i + 1));
    pthread_t t;
    pthread_create(&t, NULL, last, NULL);
    pthread_detach(t);
    pthread_exit(NULL);
}
