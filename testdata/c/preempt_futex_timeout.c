// Tests 5 ms FUTEX_WAIT timeouts (10 in a row) in one thread while another thread runs a fixed ~100 ms pure compute loop with no syscalls.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 500
#define INNER 105000 /* ROUNDS*INNER mixing steps: ~100 ms natively */
#define WAITS 10

static _Atomic long progress; /* compute rounds done, written once per round */
static int futex_word;        /* stays 0; nobody wakes it */
static pid_t tid_a, tid_b;
static uint64_t seed, result;
static long compute_ns;
static int timeouts, eintrs, others;
static long wait_ns[WAITS], seen[WAITS];

static long ts_ns(const struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

static void *computer(void *arg) {
    (void)arg;
    uint64_t data[64];
    tid_a = gettid();
    getrandom(data, sizeof data, 0);
    seed = data[0];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t h = data[0];
    for (long r = 0; r < ROUNDS; r++) {
        for (long i = 0; i < INNER; i++) {
            h = (h ^ data[(i + r) & 63]) * 0x100000001b3ULL;
            h ^= h >> 29;
        }
        atomic_store_explicit(&progress, r + 1, memory_order_relaxed);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    result = h;
    compute_ns = ts_ns(&t1) - ts_ns(&t0);
    return NULL;
}

static void *waiter(void *arg) {
    (void)arg;
    tid_b = gettid();
    for (int i = 0; i < WAITS; i++) {
        struct timespec to = {0, 5000000}, t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
        int e = errno;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (r == -1 && e == ETIMEDOUT) timeouts++;
        else if (r == -1 && e == EINTR) eintrs++;
        else others++;
        wait_ns[i] = ts_ns(&t1) - ts_ns(&t0);
        seen[i] = atomic_load_explicit(&progress, memory_order_relaxed);
    }
    return NULL;
}

int main(void) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t a, b;
    pthread_create(&a, NULL, computer, NULL);
    pthread_create(&b, NULL, waiter, NULL);
    pthread_join(b, NULL);
    pthread_join(a, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    printf("pid %d computer tid %d waiter tid %d\n", getpid(), tid_a, tid_b);
    printf("compute seed %016llx result %016llx (%d rounds) in %ld ns\n", (unsigned long long)seed,
           (unsigned long long)result, ROUNDS, compute_ns);
    printf("futex waits: %d ETIMEDOUT, %d EINTR, %d other\n", timeouts, eintrs, others);
    printf("compute rounds seen after each wait:");
    for (int i = 0; i < WAITS; i++) printf(" %ld", seen[i]);
    printf("\nwait durations (us):");
    for (int i = 0; i < WAITS; i++) printf(" %ld", wait_ns[i] / 1000);
    printf("\nelapsed %ld ns\n", ts_ns(&t1) - ts_ns(&t0));
    printf("EXIT-SUCCESS\n");
    return 0;
}
