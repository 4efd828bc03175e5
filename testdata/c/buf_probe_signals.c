/* Tests probed waits (poll, epoll_wait, futex with a timeout) under a storm of signals with a handler: a signal can interrupt the zero-timeout probe itself. */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 100

static volatile sig_atomic_t handled;
static volatile int done;
static pthread_t waiter_th;
static int word;

static void on_usr1(int sig) {
	(void)sig;
	handled++;
}

static void *waiter(void *arg) {
	(void)arg;
	int p[2];
	if (pipe(p) != 0)
		return NULL;
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	long eintr = 0, zero = 0, timedout = 0, other = 0;
	for (int i = 0; i < ROUNDS; i++) {
		struct pollfd pfd = {.fd = p[0], .events = POLLIN};
		int n = poll(&pfd, 1, 1);
		if (n == 0)
			zero++;
		else if (n < 0 && errno == EINTR)
			eintr++;
		else
			other++;
		struct epoll_event out;
		n = epoll_wait(ep, &out, 1, 1);
		if (n == 0)
			zero++;
		else if (n < 0 && errno == EINTR)
			eintr++;
		else
			other++;
		struct timespec ts = {0, 300 * 1000};
		long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		if (r < 0 && errno == ETIMEDOUT)
			timedout++;
		else if (r < 0 && errno == EINTR)
			eintr++;
		else
			other++;
	}
	done = 1;
	printf("waits: zero %ld timedout %ld eintr %ld other %ld\n", zero, timedout, eintr, other);
	return NULL;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&waiter_th, NULL, waiter, NULL);
	long sent = 0;
	while (!done) {
		pthread_kill(waiter_th, SIGUSR1);
		sent++;
		for (volatile int k = 0; k < 20000; k++)
			;
	}
	pthread_join(waiter_th, NULL);
	printf("sent %ld handled %d\n", sent, (int)handled);
	/* The count sent can repeat between two runs (with -n every wait is
	   interrupted); the pid cannot. */
	printf("pid %d\n", (int)getpid());
	printf("EXIT-SUCCESS\n");
	return 0;
}
