// Tests a preemption point in a spin whose only changing state is the x87 register stack (general registers and memory repeat every iteration); prints the count accumulated in st(1), which a misplaced point would change.
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
static long double count;

static void *spinner(void *arg) {
    (void)arg;
    sem_post(&started);
    /* st(1) += st(0) = 1.0 each iteration: only the x87 stack changes. */
    __asm__ volatile(
        "fldz\n\t"
        "fld1\n\t"
        "1: fadd %%st(0), %%st(1)\n\t"
        "mov %1, %%eax\n\t"
        "test %%eax, %%eax\n\t"
        "je 1b\n\t"
        "fstp %%st(0)\n\t"
        "fstpt %0\n\t"
        : "=m"(count)
        : "m"(flag)
        : "rax", "memory", "cc", "st", "st(1)");
    return NULL;
}

int main(void) {
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
    printf("spins kept in st(1): %.0Lf\n", count);
    printf("EXIT-SUCCESS\n");
    return 0;
}
