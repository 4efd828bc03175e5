/* Tests readers blocked in poll and epoll_wait on pipes (buffered, probed with timeout 0) while another thread computes and then writes. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static int p1[2], p2[2];
static volatile unsigned long sink;

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void *poller(void *arg) {
	(void)arg;
	for (int round = 0; round < 5; round++) {
		struct pollfd pfd = {.fd = p1[0], .events = POLLIN};
		long t0 = now_us();
		int n = poll(&pfd, 1, 5000);
		unsigned char b[8];
		ssize_t got = n == 1 ? read(p1[0], b, sizeof b) : -1;
		printf("poll round %d: n=%d revents=0x%x got=%zd first=%02x waited=%ld us\n", round, n, pfd.revents, got, got > 0 ? b[0] : 0, now_us() - t0);
	}
	return NULL;
}

static void *epoller(void *arg) {
	(void)arg;
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1234abcd};
	if (epoll_ctl(ep, EPOLL_CTL_ADD, p2[0], &ev) != 0) {
		perror("epoll_ctl");
		exit(1);
	}
	for (int round = 0; round < 5; round++) {
		struct epoll_event out[4];
		memset(out, 0, sizeof out);
		long t0 = now_us();
		int n;
		do
			n = epoll_wait(ep, out, 4, 5000);
		while (n < 0 && errno == EINTR);
		unsigned char b[8];
		ssize_t got = n == 1 ? read(p2[0], b, sizeof b) : -1;
		printf("epoll round %d: n=%d events=0x%x data=%llx got=%zd first=%02x waited=%ld us\n", round, n, n > 0 ? out[0].events : 0, n > 0 ? (unsigned long long)out[0].data.u64 : 0ULL, got, got > 0 ? b[0] : 0, now_us() - t0);
	}
	/* Nothing ready and timeout 0: answered at once. */
	struct epoll_event out[1];
	printf("epoll empty: %d\n", epoll_wait(ep, out, 1, 0));
	close(ep);
	return NULL;
}

int main(void) {
	if (pipe(p1) != 0 || pipe(p2) != 0)
		return 1;
	pthread_t a, b;
	pthread_create(&a, NULL, poller, NULL);
	pthread_create(&b, NULL, epoller, NULL);
	for (int round = 0; round < 5; round++) {
		/* Compute for a while (the readers are blocked meanwhile), then
		   write random bytes to both pipes. */
		for (long k = 0; k < 3000000; k++)
			sink += k ^ (sink << 1);
		unsigned char r[16];
		if (getrandom(r, sizeof r, 0) != sizeof r)
			return 1;
		if (write(p1[1], r, 8) != 8 || write(p2[1], r + 8, 8) != 8)
			return 1;
		printf("main round %d wrote %02x %02x\n", round, r[0], r[8]);
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("EXIT-SUCCESS\n");
	return 0;
}
