// Tests preemption of a thread spinning through pushf/popf (single steps must not leak the trap flag into the flags it saves and restores) while main computes.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

static atomic_int flag;
static volatile long spins;
static volatile unsigned long tf_seen;

static void *spinner(void *a) {
    while (!atomic_load(&flag)) {
        unsigned long f;
        __asm__ volatile("pushf\n\tpopf\n\tpushf\n\tpop %0" : "=r"(f));
        tf_seen |= f & 0x100;
        spins++;
    }
    return a;
}

int main(void) {
    uint64_t x;
    getrandom(&x, sizeof x, 0);
    pthread_t t;
    pthread_create(&t, 0, spinner, 0);
    for (long i = 0; i < 30000000L; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    atomic_store(&flag, 1);
    pthread_join(t, 0);
    printf("pid %d x %016llx spins %ld tf_seen %lx\n", getpid(), (unsigned long long)x, spins, tf_seen);
    printf("EXIT-SUCCESS\n");
    return 0;
}
