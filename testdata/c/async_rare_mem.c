// Tests a preemption point in a spin whose registers repeat every 256 iterations (a byte counter wraps) and which touches a global only then, while another thread is blocked in read(); prints the global, which a misplaced point would change.
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define HASH_ITERS (16L << 20) /* ~30 ms natively */

static volatile int flag;
static sem_t started;
static uint64_t data[512];
static volatile uint64_t wraps;
static int pipefd[2];
static char got[64];

static void *reader(void *arg) {
    (void)arg;
    sem_post(&started);
    ssize_t n = read(pipefd[0], got, sizeof got - 1); /* blocks until main writes */
    if (n > 0) got[n] = 0;
    return NULL;
}

static void *spinner(void *arg) {
    (void)arg;
    sem_post(&started);
    /* cl counts in a register and wraps; only on a wrap is memory written. */
    __asm__ volatile(
        "xor %%ecx, %%ecx\n\t"
        "1: inc %%cl\n\t"
        "jnz 2f\n\t"
        "incq %0\n\t"
        "2: mov %1, %%eax\n\t"
        "test %%eax, %%eax\n\t"
        "je 1b\n\t"
        : "+m"(wraps)
        : "m"(flag)
        : "rax", "rcx", "memory", "cc");
    return NULL;
}

int main(void) {
    getrandom(data, sizeof data, 0);
    if (pipe(pipefd) != 0) return 1;
    sem_init(&started, 0, 0);
    pthread_t rd, th;
    pthread_create(&rd, NULL, reader, NULL);
    sem_wait(&started);
    usleep(2000); /* let the reader block in read() */
    pthread_create(&th, NULL, spinner, NULL);
    sem_wait(&started);
    uint64_t h = data[0];
    for (long i = 0; i < HASH_ITERS; i++) {
        h = (h ^ data[i & 511]) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    flag = 1;
    pthread_join(th, NULL);
    char msg[64];
    snprintf(msg, sizeof msg, "wraps %llu", (unsigned long long)wraps);
    if (write(pipefd[1], msg, strlen(msg)) < 0) return 1;
    pthread_join(rd, NULL);
    printf("seed %016llx hash %016llx\n", (unsigned long long)data[0], (unsigned long long)h);
    printf("reader got: %s\n", got);
    printf("EXIT-SUCCESS\n");
    return 0;
}
