// Tests preemption of a thread that spins on an atomic flag with no system calls while the main thread hashes random data (~30 ms) and then sets the flag.
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define HASH_ITERS (16L << 20) /* ~30 ms natively */

static _Atomic int flag;
static sem_t started;
static pid_t spinner_tid;
static long spin_ns, spin_cpu_ns;
static uint64_t data[512];

static long ns_between(const struct timespec *a, const struct timespec *b) {
    return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

static void *spinner(void *arg) {
    (void)arg;
    struct timespec t0, t1, c1;
    spinner_tid = gettid();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sem_post(&started);
    /* Pure spin: no system calls until the main thread sets the flag. */
    while (!atomic_load(&flag)) {
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    spin_ns = ns_between(&t0, &t1);
    spin_cpu_ns = c1.tv_sec * 1000000000L + c1.tv_nsec;
    return NULL;
}

int main(void) {
    getrandom(data, sizeof data, 0);
    sem_init(&started, 0, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th;
    pthread_create(&th, NULL, spinner, NULL);
    sem_wait(&started); /* the spinner is now (about to be) spinning */

    uint64_t h = data[0];
    for (long i = 0; i < HASH_ITERS; i++) {
        h = (h ^ data[i & 511]) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    atomic_store(&flag, 1);
    pthread_join(th, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    printf("seed %016llx hash %016llx after %ld rounds\n", (unsigned long long)data[0], (unsigned long long)h, HASH_ITERS);
    printf("pid %d spinner tid %d\n", getpid(), spinner_tid);
    printf("spinner spun %ld ns wall, thread cpu %ld ns\n", spin_ns, spin_cpu_ns);
    printf("elapsed %ld ns\n", ns_between(&t0, &t1));
    printf("EXIT-SUCCESS\n");
    return 0;
}
