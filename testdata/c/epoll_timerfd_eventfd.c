// Tests epoll (ctl/wait/pwait) over a timerfd, an eventfd written by a thread, and a pipe.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int efd;
static long post_ns[3];

static void *poster(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        usleep(1500);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        post_ns[i] = ts.tv_nsec;
        uint64_t one = 1; /* eventfd adds up values; several posts may be read at once */
        write(efd, &one, sizeof one);
    }
    return NULL;
}

int main(void) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    efd = eventfd(0, EFD_NONBLOCK);
    int p[2];
    pipe(p);
    struct itimerspec its = {.it_interval = {0, 1000000}, .it_value = {0, 1000000}};
    timerfd_settime(tfd, 0, &its, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    ev.data.u32 = 2;
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
    ev.data.u32 = 3;
    ev.events = EPOLLIN | EPOLLET;
    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
    printf("fds: ep=%d tfd=%d efd=%d\n", ep, tfd, efd);

    pthread_t t;
    pthread_create(&t, NULL, poster, NULL);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    uint64_t ticks = 0, events = 0;
    int wakeups = 0, pipe_seen = 0, efd_reads = 0;
    while (events < 3 || !pipe_seen) {
        struct epoll_event out[4];
        int n = epoll_wait(ep, out, 4, 1000);
        wakeups++;
        if (n <= 0) {
            printf("epoll_wait returned %d: giving up\n", n);
            return 1;
        }
        for (int i = 0; i < n; i++) {
            uint64_t v;
            if (out[i].data.u32 == 1) {
                read(tfd, &v, sizeof v);
                ticks += v;
                if (ticks >= 3 && ticks - v < 3) write(p[1], "!", 1);
            } else if (out[i].data.u32 == 2) {
                read(efd, &v, sizeof v);
                events += v;
                efd_reads++;
            } else {
                char c;
                read(p[0], &c, 1);
                pipe_seen = 1;
                printf("pipe edge event after %llu ticks\n", (unsigned long long)ticks);
            }
        }
    }
    pthread_join(t, NULL);
    printf("eventfd: %llu posts in %d reads, posted at ns %ld %ld %ld\n", (unsigned long long)events, efd_reads, post_ns[0], post_ns[1],
           post_ns[2]);
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct itimerspec cur;
    timerfd_gettime(tfd, &cur);
    printf("ticks=%llu wakeups=%d elapsed=%ld us next-expiry=%ld ns\n", (unsigned long long)ticks, wakeups,
           (now.tv_sec - start.tv_sec) * 1000000 + (now.tv_nsec - start.tv_nsec) / 1000, cur.it_value.tv_nsec);

    /* absolute realtime timer and epoll_pwait timeout */
    int rt = timerfd_create(CLOCK_REALTIME, 0);
    struct timespec rnow;
    clock_gettime(CLOCK_REALTIME, &rnow);
    struct itimerspec abs = {.it_value = {rnow.tv_sec, rnow.tv_nsec + 2000000}};
    if (abs.it_value.tv_nsec >= 1000000000) { abs.it_value.tv_sec++; abs.it_value.tv_nsec -= 1000000000; }
    timerfd_settime(rt, TFD_TIMER_ABSTIME, &abs, NULL);
    uint64_t exp;
    read(rt, &exp, sizeof exp);
    printf("realtime abs timer expirations=%llu at %ld\n", (unsigned long long)exp, (long)rnow.tv_sec);
    epoll_ctl(ep, EPOLL_CTL_DEL, tfd, NULL);
    struct epoll_event out[2];
    printf("epoll_pwait timeout: %d\n", epoll_pwait(ep, out, 2, 2, NULL));
    printf("EXIT-SUCCESS\n");
    return 0;
}
