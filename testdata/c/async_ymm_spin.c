// Tests a preemption point in a spin whose only changing state is the upper half of a ymm register (general registers and memory repeat every iteration); prints the iteration count kept there, which a misplaced point would change.
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

static volatile int flag;
static sem_t started;
static uint64_t data[512];
static uint64_t upper[4];

static int have_avx(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}

static void *spinner(void *arg) {
    (void)arg;
    static const uint64_t inc[4] = {0, 0, 1, 0}; /* adds to the upper half only */
    sem_post(&started);
    /* ymm1 counts in its third qword; ymm2 holds the increment. The loop's
       general registers and the memory it reads are the same every time. */
    __asm__ volatile(
        "vpxor %%xmm1, %%xmm1, %%xmm1\n\t"
        "vmovdqu %1, %%ymm2\n\t"
        "1: vpaddq %%ymm2, %%ymm1, %%ymm1\n\t"
        "mov %2, %%eax\n\t"
        "test %%eax, %%eax\n\t"
        "je 1b\n\t"
        "vmovdqu %%ymm1, %0\n\t"
        "vzeroupper\n\t"
        : "=m"(upper)
        : "m"(inc), "m"(flag)
        : "rax", "xmm1", "xmm2", "memory", "cc");
    return NULL;
}

int main(void) {
    if (!have_avx()) {
        printf("skip: no AVX\nEXIT-SUCCESS\n");
        return 0;
    }
    getrandom(data, sizeof data, 0);
    sem_init(&started, 0, 0);
    pthread_t th;
    pthread_create(&th, NULL, spinner, NULL);
    sem_wait(&started);
    uint64_t h = data[0];
    for (long i = 0; i < HASH_ITERS; i++) {
        h = (h ^ data[i & 511]) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    flag = 1;
    pthread_join(th, NULL);
    printf("seed %016llx hash %016llx\n", (unsigned long long)data[0], (unsigned long long)h);
    printf("spins kept in ymm1 upper half: %llu (lower %llu %llu)\n", (unsigned long long)upper[2],
           (unsigned long long)upper[0], (unsigned long long)upper[1]);
    printf("EXIT-SUCCESS\n");
    return 0;
}
