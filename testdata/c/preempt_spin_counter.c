// Tests preemption of a thread spinning on `lock add` of a global counter plus a flag load (identical registers every iteration, no syscalls) while main hashes ~30 ms; prints the run-dependent spin count.
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
static _Atomic long spins;
static sem_t started;
static pid_t spinner_tid;
static long spin_ns;
static uint64_t data[512];

static long ns_between(const struct timespec *a, const struct timespec *b) {
    return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

static void *spinner(void *arg) {
    (void)arg;
    struct timespec t0, t1;
    spinner_tid = gettid();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sem_post(&started);
    /* Compiles to: lock addq $1,spins(%rip); mov flag(%rip),%eax; test; je -- the
       register state is the same on every iteration; only memory changes. */
    while (!atomic_load(&flag))
        atomic_fetch_add(&spins, 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    spin_ns = ns_between(&t0, &t1);
    return NULL;
}

int main(void) {
    getrandom(data, sizeof data, 0);
    sem_init(&started, 0, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th;
    pthread_create(&th, NULL, spinner, NULL);
    sem_wait(&started);

    uint64_t h = data[0];
    long seen_mid = 0;
    for (long i = 0; i < HASH_ITERS; i++) {
        h = (h ^ data[i & 511]) * 0x100000001b3ULL;
        h ^= h >> 29;
        if (i == HASH_ITERS / 2) seen_mid = atomic_load(&spins);
    }
    long seen_end = atomic_load(&spins);
    atomic_store(&flag, 1);
    pthread_join(th, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    printf("seed %016llx hash %016llx\n", (unsigned long long)data[0], (unsigned long long)h);
    printf("pid %d spinner tid %d\n", getpid(), spinner_tid);
    printf("spins seen by main: mid %ld, end %ld\n", seen_mid, seen_end);
    printf("spins total %ld in %ld ns\n", atomic_load(&spins), spin_ns);
    printf("elapsed %ld ns\n", ns_between(&t0, &t1));
    printf("EXIT-SUCCESS\n");
    return 0;
}
