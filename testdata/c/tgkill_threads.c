// Tests tgkill/pthread_kill between threads: each worker, blocked in nanosleep, receives a signal aimed at its tid; handlers record gettid().
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 3
static volatile pid_t tids[N];
static volatile pid_t handled_in[N];
static volatile sig_atomic_t handled_count[N];
static volatile int stop;
static pthread_barrier_t bar;

static void h(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    int idx = si->si_value.sival_int;
    (void)sig;
    pid_t me = gettid();
    for (int i = 0; i < N; i++)
        if (tids[i] == me) {
            handled_in[i] = me;
            handled_count[i]++;
        }
    (void)idx;
}

static void *worker(void *arg) {
    int id = (int)(long)arg;
    tids[id] = gettid();
    pthread_barrier_wait(&bar);
    while (!stop) usleep(100);
    return NULL;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_barrier_init(&bar, NULL, N + 1);
    pthread_t t[N];
    for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_barrier_wait(&bar);
    printf("main pid=%d tids: %d %d %d\n", getpid(), tids[0], tids[1], tids[2]);
    /* tgkill to worker 0 and 2 (raw syscall), pthread_kill to worker 1 */
    printf("tgkill w0=%ld\n", syscall(SYS_tgkill, getpid(), tids[0], SIGUSR1));
    printf("pthread_kill w1=%d\n", pthread_kill(t[1], SIGUSR1));
    printf("tgkill w2=%ld\n", syscall(SYS_tgkill, getpid(), tids[2], SIGUSR1));
    for (int i = 0; i < N; i++)
        while (!handled_count[i]) usleep(100);
    stop = 1;
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++) printf("worker %d handled %d signal(s) in tid %d (own tid: %d)\n", i, handled_count[i], handled_in[i], handled_in[i] == tids[i]);
    printf("tgkill to wrong tgid=%ld\n", syscall(SYS_tgkill, getpid() + 100000, tids[0], 0));
    printf("tkill(self tid, 0)=%ld\n", syscall(SYS_tkill, gettid(), 0));
    printf("EXIT-SUCCESS\n");
    return 0;
}
