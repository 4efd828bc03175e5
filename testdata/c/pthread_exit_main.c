// Tests pthread_exit from main: the process keeps running until the last worker thread finishes, then exits with status 0.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;

static void *worker(void *arg) {
    int id = (int)(long)arg;
    usleep(2000 * id);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("worker %d tid=%d done at %ld.%09ld\n", id, gettid(), (long)ts.tv_sec, ts.tv_nsec);
    if (id == 3) {
        /* main is a zombie thread now; joining it is allowed */
        int r = pthread_join(main_thread, NULL);
        printf("worker 3 joined main thread: %d\n", r);
        printf("EXIT-SUCCESS\n");
        fflush(stdout);
    }
    return NULL;
}

int main(void) {
    main_thread = pthread_self();
    printf("main tid=%d starting workers then calling pthread_exit\n", gettid());
    fflush(stdout);
    pthread_t t;
    for (long i = 1; i <= 3; i++) {
        pthread_create(&t, NULL, worker, (void *)i);
        pthread_detach(t);
    }
    pthread_exit(NULL);
}
