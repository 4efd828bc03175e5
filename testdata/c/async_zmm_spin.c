// Tests a preemption point in a spin whose only changing state is the upper 256 bits of a zmm register and an AVX-512 opmask (general registers, ymm halves and memory repeat); prints the counts kept there. Skips with a message where the CPU has no AVX-512F.
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#define HASH_ITERS (16L << 20) /* ~30 ms natively */

static volatile int flag;
static sem_t started;
static uint64_t data[512];
static uint64_t zmm_out[8] __attribute__((aligned(64)));
static uint16_t mask_out;

static int have_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

static void *spinner(void *arg) {
    (void)arg;
    /* adds to the fifth qword only: bits 256-319, beyond any ymm register */
    static const uint64_t inc[8] __attribute__((aligned(64))) = {0, 0, 0, 0, 1, 0, 0, 0};
    sem_post(&started);
    /* zmm1 counts in its fifth qword; k1 is shifted left by one every
       iteration and refilled with ones when it empties, so it holds the
       iteration count modulo 17 in unary. The loop's general registers
       and the memory it reads are the same every time. */
    __asm__ volatile(
        "vpxord %%zmm1, %%zmm1, %%zmm1\n\t"
        "vmovdqu64 %2, %%zmm2\n\t"
        "kxnorw %%k1, %%k1, %%k1\n\t"
        "1: vpaddq %%zmm2, %%zmm1, %%zmm1\n\t"
        "kshiftlw $1, %%k1, %%k1\n\t"
        "kortestw %%k1, %%k1\n\t"
        "jnz 2f\n\t"
        "kxnorw %%k1, %%k1, %%k1\n\t"
        "2: mov %3, %%eax\n\t"
        "test %%eax, %%eax\n\t"
        "je 1b\n\t"
        "vmovdqu64 %%zmm1, %0\n\t"
        "kmovw %%k1, %%eax\n\t"
        "mov %%ax, %1\n\t"
        "vzeroupper\n\t"
        : "=m"(zmm_out), "=m"(mask_out)
        : "m"(inc), "m"(flag)
        : "rax", "xmm1", "xmm2", "memory", "cc");
    return NULL;
}

int main(void) {
    if (!have_avx512()) {
        getrandom(data, sizeof data, 0);
        printf("skip: this CPU has no AVX-512F (seed %016llx)\nEXIT-SUCCESS\n", (unsigned long long)data[0]);
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
    printf("spins kept in zmm1 bits 256-319: %llu (others %llu %llu)\n", (unsigned long long)zmm_out[4],
           (unsigned long long)zmm_out[0], (unsigned long long)zmm_out[7]);
    printf("k1 after the spin: %04x\n", mask_out);
    printf("EXIT-SUCCESS\n");
    return 0;
}
