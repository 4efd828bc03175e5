// Tests a process-directed SIGTERM (default action) killing the process while its main thread is in a pure compute loop; a helper thread sleeps 30 ms and sends it.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 1500
#define INNER 1000000 /* ~3 s natively in total; SIGTERM arrives after ~30 ms */

static _Atomic long progress; /* main's compute rounds, one store per round */

static void *killer(void *arg) {
    (void)arg;
    struct timespec d = {0, 30000000}, now;
    nanosleep(&d, NULL);
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("killer tid %d: main at round %ld, time %ld.%09ld, sending SIGTERM\n", gettid(),
           atomic_load(&progress), (long)now.tv_sec, now.tv_nsec);
    fflush(stdout);
    kill(getpid(), SIGTERM);
    return NULL;
}

int main(void) {
    uint64_t data[64];
    getrandom(data, sizeof data, 0);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    printf("pid %d tid %d seed %016llx stack %p start %ld.%09ld\n", getpid(), gettid(),
           (unsigned long long)data[0], (void *)&t0, (long)t0.tv_sec, t0.tv_nsec);
    fflush(stdout);

    pthread_t th;
    pthread_create(&th, NULL, killer, NULL);
    /* Pure computation: no system calls in the loop. */
    uint64_t h = data[0];
    for (long r = 0; r < ROUNDS; r++) {
        for (long i = 0; i < INNER; i++) {
            h = (h ^ data[(i + r) & 63]) * 0x100000001b3ULL;
            h ^= h >> 29;
        }
        atomic_store_explicit(&progress, r + 1, memory_order_relaxed);
    }
    printf("computation finished without being killed: %016llx\n", (unsigned long long)h);
    return 1;
}
