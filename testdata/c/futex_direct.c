// Tests raw futex syscalls (FUTEX_WAIT/FUTEX_WAKE, PRIVATE, timeout, EAGAIN) as a ping-pong between two threads.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic int turn = 0; /* 0: main's turn, 1: thread's turn */
static int log_[40];
static _Atomic int nlog = 0;

static long futex(_Atomic int *addr, int op, int val, const struct timespec *ts) {
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static void wait_for(int want) {
    int cur;
    while ((cur = atomic_load(&turn)) != want) futex(&turn, FUTEX_WAIT_PRIVATE, cur, NULL);
}

static void *pong(void *arg) {
    (void)arg;
    for (int i = 0; i < 10; i++) {
        wait_for(1);
        log_[atomic_fetch_add(&nlog, 1)] = 100 + i;
        atomic_store(&turn, 0);
        futex(&turn, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
    return NULL;
}

int main(void) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t t;
    pthread_create(&t, NULL, pong, NULL);
    for (int i = 0; i < 10; i++) {
        wait_for(0);
        log_[atomic_fetch_add(&nlog, 1)] = i;
        atomic_store(&turn, 1);
        long woke = futex(&turn, FUTEX_WAKE_PRIVATE, 1, NULL);
        if (i == 0) printf("first wake returned %ld (0 or 1)\n", woke >= 0 ? 0L : -1L);
    }
    wait_for(0);
    pthread_join(t, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("ping-pong log:");
    for (int i = 0; i < nlog; i++) printf(" %d", log_[i]);
    printf("\nping-pong took %ld ns\n", (t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec);

    _Atomic int word = 5;
    long r = futex(&word, FUTEX_WAIT_PRIVATE, 6, NULL);
    printf("wait with wrong value: %ld %s\n", r, errno == EAGAIN ? "EAGAIN" : strerror(errno));
    struct timespec to = {0, 1500000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = futex(&word, FUTEX_WAIT_PRIVATE, 5, &to);
    int e = errno;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("timed wait: %ld %s after %ld us\n", r, e == ETIMEDOUT ? "ETIMEDOUT" : strerror(e),
           (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000);
    printf("wake nobody: %ld\n", futex(&word, FUTEX_WAKE, 10, NULL));
    printf("EXIT-SUCCESS\n");
    return 0;
}
