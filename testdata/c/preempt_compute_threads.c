// Tests N threads (argv[1], default 3) each doing ~60 ms of pure computation with no syscalls, publishing progress counters that the others sample mid-way and at the end.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define MAXT 16
#define ROUNDS 400
#define INNER 80000 /* ROUNDS*INNER mixing steps: ~60 ms natively per thread */

struct slot {
    _Atomic long round; /* published progress, written once per round */
    char pad[64 - sizeof(long)];
};

static struct slot progress[MAXT] __attribute__((aligned(64)));
static int nthreads;
static pthread_barrier_t start_barrier;

struct worker {
    int id;
    pid_t tid;
    uint64_t seed, result;
    struct timespec t_start, t_end;
    long seen_mid[MAXT]; /* others' progress when this thread was half done */
    long seen_end[MAXT]; /* others' progress when this thread finished */
};

static struct worker workers[MAXT];

static long ts_ns(const struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

static void *work(void *arg) {
    struct worker *w = arg;
    uint64_t data[64];
    w->tid = gettid();
    getrandom(data, sizeof data, 0);
    w->seed = data[0];
    pthread_barrier_wait(&start_barrier);

    clock_gettime(CLOCK_MONOTONIC, &w->t_start);
    /* From here to t_end: no system calls (clock_gettime is served by the vDSO). */
    uint64_t h = data[0] ^ (uint64_t)w->id;
    for (long r = 0; r < ROUNDS; r++) {
        for (long i = 0; i < INNER; i++) {
            h = (h ^ data[(i ^ r) & 63]) * 0x100000001b3ULL;
            h ^= h >> 29;
        }
        atomic_store_explicit(&progress[w->id].round, r + 1, memory_order_relaxed);
        if (r + 1 == ROUNDS / 2)
            for (int j = 0; j < nthreads; j++)
                w->seen_mid[j] = atomic_load_explicit(&progress[j].round, memory_order_relaxed);
    }
    for (int j = 0; j < nthreads; j++)
        w->seen_end[j] = atomic_load_explicit(&progress[j].round, memory_order_relaxed);
    clock_gettime(CLOCK_MONOTONIC, &w->t_end);
    w->result = h;

    /* Lines land in the stdio buffer in finishing order. */
    printf("thread %d finished; others' rounds at its end:", w->id);
    for (int j = 0; j < nthreads; j++) printf(" %ld", w->seen_end[j]);
    printf("\n");
    return NULL;
}

int main(int argc, char **argv) {
    nthreads = argc > 1 ? atoi(argv[1]) : 3;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > MAXT) nthreads = MAXT;
    pthread_barrier_init(&start_barrier, NULL, nthreads);
    pthread_t th[MAXT];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nthreads; i++) {
        workers[i].id = i;
        pthread_create(&th[i], NULL, work, &workers[i]);
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    printf("pid %d, %d threads x %d rounds\n", getpid(), nthreads, ROUNDS);
    int overlapped = 0;
    for (int i = 0; i < nthreads; i++) {
        struct worker *w = &workers[i];
        printf("thread %d tid %d seed %016llx result %016llx start +%ld ns took %ld ns\n", i, w->tid,
               (unsigned long long)w->seed, (unsigned long long)w->result, ts_ns(&w->t_start) - ts_ns(&t0),
               ts_ns(&w->t_end) - ts_ns(&w->t_start));
        printf("  others' rounds at its midpoint:");
        for (int j = 0; j < nthreads; j++) {
            printf(" %ld", w->seen_mid[j]);
            if (j != i && w->seen_mid[j] > 0 && w->seen_mid[j] < ROUNDS) overlapped = 1;
        }
        printf("\n");
    }
    printf("some thread saw another mid-computation: %s\n", overlapped ? "yes" : "no");
    printf("elapsed %ld ns\n", ts_ns(&t1) - ts_ns(&t0));
    printf("EXIT-SUCCESS\n");
    return 0;
}
