// Tests preemption of threads inside long rep-string instructions (memset/memcpy of 2 MiB, which glibc does with rep stosb/movsb) with no system calls, racing each other.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define SIZE (2 << 20)
static volatile long progress[2];

static void *filler(void *arg) {
    unsigned char *buf = malloc(SIZE);
    unsigned seed;
    getrandom(&seed, sizeof seed, 0);
    unsigned long sum = 0;
    for (int i = 0; i < 150; i++) {
        memset(buf, (int)(seed + i), SIZE);
        sum += buf[(seed * 7919u + i) % SIZE];
        progress[0] = i;
    }
    long other = progress[1];
    printf("filler tid %ld seed %u sum %lu saw copier at %ld\n", (long)syscall(SYS_gettid), seed, sum, other);
    free(buf);
    return arg;
}

static void *copier(void *arg) {
    unsigned char *a = malloc(SIZE), *b = malloc(SIZE);
    getrandom(a, 4096, 0);
    for (int k = 4096; k < SIZE; k += 4096) memcpy(a + k, a, 4096);
    unsigned long sum = 0;
    for (int i = 0; i < 150; i++) {
        memcpy(b, a + (i & 7), SIZE - 8);
        sum = sum * 31 + b[(i * 4099) % (SIZE - 8)];
        progress[1] = i;
    }
    long other = progress[0];
    printf("copier tid %ld sum %lu saw filler at %ld\n", (long)syscall(SYS_gettid), sum, other);
    free(a);
    free(b);
    return arg;
}

int main(void) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t f, c;
    pthread_create(&f, 0, filler, 0);
    pthread_create(&c, 0, copier, 0);
    pthread_join(f, 0);
    pthread_join(c, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("pid %d elapsed %ld ns\n", getpid(), (long)((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec));
    printf("EXIT-SUCCESS\n");
    return 0;
}
