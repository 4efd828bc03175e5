// Tests SIGTERM killing a forked child that is in a pure compute loop (no syscalls); the parent waits for the child to start, sleeps 30 ms, kills and reaps it.
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 1000
#define INNER 1000000 /* ~2 s natively in total; the child is killed long before */

struct shared {
    _Atomic long round; /* child's progress, one store per round */
    uint64_t seed;
};

static long ts_ns(const struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

int main(void) {
    struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) { perror("mmap"); return 1; }
    uint64_t pr;
    getrandom(&pr, sizeof pr, 0);
    printf("parent pid %d random %016llx\n", getpid(), (unsigned long long)pr);
    fflush(stdout);

    int pfd[2];
    if (pipe(pfd) != 0) { perror("pipe"); return 1; }
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t child = fork();
    if (child < 0) { perror("fork"); return 1; }
    if (child == 0) {
        uint64_t data[64];
        getrandom(data, sizeof data, 0);
        sh->seed = data[0];
        close(pfd[0]);
        if (write(pfd[1], "s", 1) != 1) _exit(2);
        /* Pure computation from here: no system calls until the loop ends. */
        uint64_t h = data[0];
        for (long r = 0; r < ROUNDS; r++) {
            for (long i = 0; i < INNER; i++) {
                h = (h ^ data[(i + r) & 63]) * 0x100000001b3ULL;
                h ^= h >> 29;
            }
            atomic_store_explicit(&sh->round, r + 1, memory_order_relaxed);
        }
        sh->seed ^= h;
        _exit(3); /* only reached if SIGTERM never came */
    }
    close(pfd[1]);
    char c;
    if (read(pfd[0], &c, 1) != 1) { perror("read"); return 1; }
    struct timespec d = {0, 30000000};
    nanosleep(&d, NULL);
    long at_kill = atomic_load(&sh->round);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    kill(child, SIGTERM);
    int st;
    pid_t w = waitpid(child, &st, 0);
    clock_gettime(CLOCK_MONOTONIC, &t2);

    printf("child pid %d (waitpid returned %d) seed %016llx\n", child, w, (unsigned long long)sh->seed);
    if (WIFSIGNALED(st))
        printf("child killed by signal %d (%s)%s\n", WTERMSIG(st), strsignal(WTERMSIG(st)), WCOREDUMP(st) ? " core" : "");
    else if (WIFEXITED(st))
        printf("child exited with status %d\n", WEXITSTATUS(st));
    printf("child rounds: %ld at kill, %ld at death (of %d)\n", at_kill, atomic_load(&sh->round), ROUNDS);
    printf("fork to kill %ld ns, kill to reaped %ld ns\n", ts_ns(&t1) - ts_ns(&t0), ts_ns(&t2) - ts_ns(&t1));
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM) return 1;
    printf("EXIT-SUCCESS\n");
    return 0;
}
