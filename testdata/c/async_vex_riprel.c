// Tests a preemption point in a spin made of VEX instructions that load a constant relative to rip (as libm's log does): the pad that replay plants at the site must run them with their displacement moved; prints the sum they build, which a wrongly moved load would change.
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
static const double one = 1.0, two = 2.0;
static double sum;

static int have_avx(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}

static void *spinner(void *arg) {
    (void)arg;
    sem_post(&started);
    /* Every instruction but the flag test and the branch is a VEX vaddsd
       or vmovsd with a rip-relative operand; xmm1 is the only state that
       changes. */
    __asm__ volatile(
        "vxorpd %%xmm1, %%xmm1, %%xmm1\n\t"
        "1: vaddsd %[one], %%xmm1, %%xmm1\n\t"
        "vmovsd %[two], %%xmm2\n\t"
        "vaddsd %[one], %%xmm1, %%xmm1\n\t"
        "vaddsd %%xmm2, %%xmm1, %%xmm1\n\t"
        "vaddsd %[one], %%xmm1, %%xmm1\n\t"
        "cmpl $0, %[flag]\n\t"
        "je 1b\n\t"
        "vmovsd %%xmm1, %[sum]\n\t"
        : [sum] "=m"(sum)
        : [one] "m"(one), [two] "m"(two), [flag] "m"(flag)
        : "xmm1", "xmm2", "memory", "cc");
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
    /* Each iteration adds 5; a load from the wrong place adds something else. */
    printf("seed %016llx hash %016llx\n", (unsigned long long)data[0], (unsigned long long)h);
    printf("sum %.1f, a multiple of 5: %s\n", sum, (uint64_t)sum % 5 == 0 && sum == (double)(uint64_t)sum ? "yes" : "no");
    printf("EXIT-SUCCESS\n");
    return 0;
}
