// Tests SIGKILL from the parent reaching a child whose main thread spins in a one-instruction loop (stopped at a preemption point when the parent runs) while its second thread sleeps, then writes to a pipe the parent waits on; the parent exits without waiting for the child, which the recording then ends with.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static int fds[2];

static void *sleeper(void *arg) {
    (void)arg;
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    uint32_t v;
    getrandom(&v, sizeof v, 0);
    if (write(fds[1], &v, sizeof v) != sizeof v) _exit(3);
    for (;;) pause();
    return NULL;
}

int main(void) {
    if (pipe(fds) != 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        pthread_t th;
        pthread_create(&th, NULL, sleeper, NULL);
        for (;;) __asm__ volatile("" ::: "memory");
    }
    uint32_t v;
    if (read(fds[0], &v, sizeof v) != sizeof v) return 2;
    printf("child %d sent %08x\n", (int)child, v);
    printf("EXIT-SUCCESS\n");
    fflush(stdout);
    kill(child, SIGKILL);
    /* Exit before the child's death is reported. */
    return 0;
}
