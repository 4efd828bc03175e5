// Tests POSIX timers: timer_create with SIGEV_SIGNAL (si_value, overrun) and SIGEV_THREAD callbacks; timer_gettime/delete.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int thread_calls;
static pid_t callback_tids[3];

static void thread_cb(union sigval v) {
    pthread_mutex_lock(&mu);
    if (thread_calls < 3) callback_tids[thread_calls] = gettid();
    thread_calls++;
    (void)v;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

int main(void) {
    /* SIGEV_SIGNAL: block SIGRTMIN and collect with sigwaitinfo */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &set, NULL);
    timer_t t1;
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
    sev.sigev_value.sival_int = getpid() & 0xffff;
    if (timer_create(CLOCK_MONOTONIC, &sev, &t1)) { perror("timer_create"); return 1; }
    struct itimerspec its = {.it_interval = {0, 1000000}, .it_value = {0, 1000000}};
    timer_settime(t1, 0, &its, NULL);
    for (int i = 0; i < 3; i++) {
        siginfo_t si;
        int sig = sigwaitinfo(&set, &si);
        printf("SIGEV_SIGNAL sig=RTMIN+%d code=%s value=%d overrun=%d\n", sig - SIGRTMIN, si.si_code == SI_TIMER ? "SI_TIMER" : "?",
               si.si_value.sival_int, si.si_overrun);
    }
    struct itimerspec cur;
    timer_gettime(t1, &cur);
    printf("timer_gettime interval=%ld remaining<=1ms: %d\n", cur.it_interval.tv_nsec, cur.it_value.tv_nsec <= 1000000);
    /* let it overrun while we do not collect */
    usleep(4000);
    siginfo_t si;
    sigwaitinfo(&set, &si);
    printf("after 4ms without collecting: overrun=%d getoverrun=%d\n", si.si_overrun, timer_getoverrun(t1));
    timer_delete(t1);

    /* SIGEV_THREAD */
    timer_t t2;
    struct sigevent tev;
    memset(&tev, 0, sizeof tev);
    tev.sigev_notify = SIGEV_THREAD;
    tev.sigev_notify_function = thread_cb;
    if (timer_create(CLOCK_REALTIME, &tev, &t2)) { perror("timer_create thread"); return 1; }
    its.it_value.tv_nsec = 500000;
    its.it_interval.tv_nsec = 1000000;
    timer_settime(t2, 0, &its, NULL);
    pthread_mutex_lock(&mu);
    while (thread_calls < 3) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    timer_delete(t2);
    printf("SIGEV_THREAD callbacks>=3; main tid=%d callback tids=%d %d %d (not main: %d)\n", gettid(), callback_tids[0],
           callback_tids[1], callback_tids[2], callback_tids[0] != gettid());
    printf("EXIT-SUCCESS\n");
    return 0;
}
