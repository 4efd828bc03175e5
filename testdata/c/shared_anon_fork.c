// Tests MAP_SHARED|MAP_ANONYMOUS memory shared between a parent and forked children: atomic counters, a racy counter and a process-shared mutex.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
    pthread_mutex_t mu;
    _Atomic long atomic_counter;
    long racy_counter;
    long locked_counter;
    int order[64];
    int norder;
    pid_t first_pid;
};

int main(void) {
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&sh->mu, &ma);
    printf("shared region at %p parent pid %d\n", (void *)sh, getpid());
    fflush(stdout);
    enum { KIDS = 3, ITERS = 300 };
    pid_t kids[KIDS];
    for (int k = 0; k < KIDS; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            for (int i = 0; i < ITERS; i++) {
                atomic_fetch_add(&sh->atomic_counter, 1);
                long v = sh->racy_counter;
                if (i % 16 == 0) sched_yield();
                sh->racy_counter = v + 1;
                pthread_mutex_lock(&sh->mu);
                sh->locked_counter++;
                if (sh->first_pid == 0) sh->first_pid = getpid();
                if (i % 50 == 0 && sh->norder < 64) sh->order[sh->norder++] = k;
                pthread_mutex_unlock(&sh->mu);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < KIDS; k++) waitpid(kids[k], NULL, 0);
    printf("atomic=%ld locked=%ld (expected %d) racy=%ld\n", (long)sh->atomic_counter, sh->locked_counter, KIDS * ITERS,
           sh->racy_counter);
    int first = -1;
    for (int k = 0; k < KIDS; k++)
        if (kids[k] == sh->first_pid) first = k;
    printf("first child to take the lock: #%d (pid %d)\n", first, sh->first_pid);
    printf("lock order sample:");
    for (int i = 0; i < sh->norder; i++) printf(" %d", sh->order[i]);
    printf("\n");
    printf("EXIT-SUCCESS\n");
    return 0;
}
