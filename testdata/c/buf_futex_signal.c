/* Tests futex waits made through the syscall buffer: one interrupted by a signal with a handler (EINTR), and timed waits (relative, absolute bitset) that expire. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int word;
static volatile sig_atomic_t handled;
static volatile long handler_at;
static volatile int waiting;

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void on_usr1(int sig) {
	(void)sig;
	handled++;
	handler_at = now_us();
}

static void *waiter(void *arg) {
	(void)arg;
	waiting = 1;
	long t0 = now_us();
	long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	int e = errno;
	printf("untimed wait: r=%ld errno=%s handled=%d after %ld us (handler at +%ld)\n", r, r < 0 ? strerror(e) : "-", (int)handled, now_us() - t0, handler_at - t0);
	return NULL;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1; /* no SA_RESTART: the wait ends with EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t th;
	pthread_create(&th, NULL, waiter, NULL);
	while (!waiting)
		sched_yield();
	usleep(20000); /* the waiter is blocked in the futex by now */
	pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);

	/* A relative timeout that expires. */
	struct timespec rel = {0, 15 * 1000 * 1000};
	long t0 = now_us();
	long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
	printf("relative 15 ms: r=%ld errno=%s waited %ld us\n", r, r < 0 ? strerror(errno) : "-", now_us() - t0);

	/* An absolute CLOCK_MONOTONIC timeout (FUTEX_WAIT_BITSET) that expires. */
	struct timespec abs;
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_nsec += 10 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	t0 = now_us();
	r = syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL, FUTEX_BITSET_MATCH_ANY);
	printf("absolute +10 ms: r=%ld errno=%s waited %ld us\n", r, r < 0 ? strerror(errno) : "-", now_us() - t0);

	/* The word differs from the expected value: EAGAIN at once. */
	word = 7;
	r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 3, &rel, NULL, 0);
	printf("changed word: r=%ld errno=%s pid %d\n", r, r < 0 ? strerror(errno) : "-", getpid());
	printf("EXIT-SUCCESS\n");
	return 0;
}
