// Tests poll, ppoll, select and pselect on pipes written by a thread after random delays, plus timeouts.
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static int p1[2], p2[2];
static unsigned char delays[8];

static void *writer(void *arg) {
    (void)arg;
    for (int i = 0; i < 6; i++) {
        usleep(200 + delays[i] * 10);
        int *p = (delays[i] & 1) ? p1 : p2;
        char c = '0' + i;
        write(p[1], &c, 1);
    }
    return NULL;
}

static long elapsed_us(struct timespec *a) {
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a->tv_sec) * 1000000 + (b.tv_nsec - a->tv_nsec) / 1000;
}

int main(void) {
    getrandom(delays, sizeof delays, 0);
    pipe(p1);
    pipe(p2);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = poll(NULL, 0, 3);
    printf("poll timeout r=%d after >=3ms: %d\n", r, elapsed_us(&t0) >= 3000);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    int got = 0;
    /* first three events via poll, the rest via select */
    while (got < 3) {
        struct pollfd fds[2] = {{p1[0], POLLIN, 0}, {p2[0], POLLIN, 0}};
        r = poll(fds, 2, 1000);
        for (int i = 0; i < 2; i++)
            if (fds[i].revents & POLLIN) {
                char c;
                read(fds[i].fd, &c, 1);
                printf("poll r=%d: pipe%d got %c\n", r, i + 1, c);
                got++;
            }
    }
    while (got < 6) {
        fd_set rs;
        FD_ZERO(&rs);
        FD_SET(p1[0], &rs);
        FD_SET(p2[0], &rs);
        struct timeval tv = {1, 0};
        r = select((p1[0] > p2[0] ? p1[0] : p2[0]) + 1, &rs, NULL, NULL, &tv);
        int *ps[2] = {p1, p2};
        for (int i = 0; i < 2; i++)
            if (FD_ISSET(ps[i][0], &rs)) {
                char c;
                read(ps[i][0], &c, 1);
                printf("select r=%d tv_left=%ldus: pipe%d got %c\n", r, tv.tv_sec * 1000000 + tv.tv_usec, i + 1, c);
                got++;
            }
    }
    pthread_join(t, NULL);

    /* ppoll/pselect with signal masks and timeouts; write-readiness */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    struct timespec ts = {0, 2000000};
    struct pollfd wfd = {p1[1], POLLOUT, 0};
    r = ppoll(&wfd, 1, &ts, &mask);
    printf("ppoll POLLOUT r=%d revents=%#x\n", r, wfd.revents);
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(p1[0], &rs);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = pselect(p1[0] + 1, &rs, NULL, NULL, &ts, &mask);
    printf("pselect timeout r=%d elapsed %ld us\n", r, elapsed_us(&t0));
    close(p2[1]);
    struct pollfd hup = {p2[0], POLLIN, 0};
    r = poll(&hup, 1, 0);
    printf("poll after close r=%d revents=%#x\n", r, hup.revents);
    printf("EXIT-SUCCESS\n");
    return 0;
}
