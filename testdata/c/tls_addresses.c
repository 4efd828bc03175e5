// Tests thread-local storage: __thread initialized/zeroed variables and pthread_key_t values/destructors per thread; prints TLS addresses.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __thread int tls_init = 42;
static __thread long tls_zero;
static __thread char tls_buf[64];
static pthread_key_t key;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int destructor_calls;

static void destroy(void *p) {
    pthread_mutex_lock(&mu);
    destructor_calls++;
    pthread_mutex_unlock(&mu);
    free(p);
}

static void *worker(void *arg) {
    int id = (int)(long)arg;
    tls_init += id;
    tls_zero = id * 100;
    snprintf(tls_buf, sizeof tls_buf, "thread-%d", id);
    int *v = malloc(sizeof *v);
    *v = gettid();
    pthread_setspecific(key, v);
    void *fs;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(fs));
    pthread_mutex_lock(&mu);
    printf("thread %d: tid=%d &tls_init=%p tls_init=%d tls_zero=%ld buf=%s key->%d fs=%p\n", id, gettid(), (void *)&tls_init, tls_init,
           tls_zero, tls_buf, *(int *)pthread_getspecific(key), fs);
    pthread_mutex_unlock(&mu);
    return (void *)&tls_init;
}

int main(void) {
    pthread_key_create(&key, destroy);
    void *fs;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(fs));
    printf("main: &tls_init=%p tls_init=%d fs=%p\n", (void *)&tls_init, tls_init, fs);
    fflush(stdout);
    pthread_t t[3];
    for (long i = 0; i < 3; i++) {
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
        pthread_join(t[i], NULL); /* sequential, so the output order is fixed */
    }
    printf("main after threads: tls_init=%d tls_zero=%ld destructor calls=%d\n", tls_init, tls_zero, destructor_calls);
    printf("EXIT-SUCCESS\n");
    return 0;
}
