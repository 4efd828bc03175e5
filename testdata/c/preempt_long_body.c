// Tests N threads (argv[1], default 3) each calling a function of some 700 straight-line instructions in a loop, no syscalls, so that a preemption point's search sees no address repeat for hundreds of steps, with a 3 ms tight loop now and then.
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
#define ROUNDS 250000 /* calls of mix: ~70 ms natively per thread */
#define PHASE 40000   /* a tight loop after every PHASE calls */
#define TIGHT 3000000 /* its iterations: ~3 ms */

struct slot {
    _Atomic long round;
    char pad[64 - sizeof(long)];
};

static struct slot progress[MAXT] __attribute__((aligned(64)));
static int nthreads;
static pthread_barrier_t start_barrier;
static uint64_t table[256];

struct worker {
    int id;
    pid_t tid;
    uint64_t seed, result, tight;
    long seen_mid[MAXT];
};

static struct worker workers[MAXT];

/* Four dependent operations on the state, one of them a load from the
   table: 64 of them in a row (some 700 instructions), no branch, no loop. */
#define M                                          \
    a = (a ^ table[b & 255]) * 0x100000001b3ULL;   \
    b = ((b << 13) | (b >> 51)) + a;               \
    c ^= a >> 7;                                   \
    d += c * 0x9e3779b97f4a7c15ULL;
#define M4 M M M M
#define M16 M4 M4 M4 M4
#define M64 M16 M16 M16 M16

struct state {
    uint64_t a, b, c, d;
};

__attribute__((noinline)) static void mix(struct state *s) {
    uint64_t a = s->a, b = s->b, c = s->c, d = s->d;
    M64
    s->a = a, s->b = b, s->c = c, s->d = d;
}

static void *work(void *arg) {
    struct worker *w = arg;
    struct state s;
    w->tid = gettid();
    getrandom(&s, sizeof s, 0);
    w->seed = s.a;
    pthread_barrier_wait(&start_barrier);
    uint64_t t = s.b;
    for (long r = 0; r < ROUNDS; r++) {
        mix(&s);
        if ((r + 1) % PHASE == 0)
            for (long i = 0; i < TIGHT; i++) t = (t ^ (uint64_t)i) * 0x100000001b3ULL;
        atomic_store_explicit(&progress[w->id].round, r + 1, memory_order_relaxed);
        if (r + 1 == ROUNDS / 2)
            for (int j = 0; j < nthreads; j++)
                w->seen_mid[j] = atomic_load_explicit(&progress[j].round, memory_order_relaxed);
    }
    w->result = s.a ^ s.b ^ s.c ^ s.d;
    w->tight = t;
    return NULL;
}

int main(int argc, char **argv) {
    nthreads = argc > 1 ? atoi(argv[1]) : 3;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > MAXT) nthreads = MAXT;
    getrandom(table, sizeof table, 0);
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

    printf("pid %d, %d threads x %d calls, table[0] %016llx\n", getpid(), nthreads, ROUNDS,
           (unsigned long long)table[0]);
    for (int i = 0; i < nthreads; i++) {
        struct worker *w = &workers[i];
        printf("thread %d tid %d seed %016llx result %016llx tight %016llx\n", i, w->tid,
               (unsigned long long)w->seed, (unsigned long long)w->result, (unsigned long long)w->tight);
        printf("  others' calls at its midpoint:");
        for (int j = 0; j < nthreads; j++) printf(" %ld", w->seen_mid[j]);
        printf("\n");
    }
    printf("elapsed %ld ns\n", (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    printf("EXIT-SUCCESS\n");
    return 0;
}
