// Tests a buffered read interrupted by two nested SA_RESTART handlers (the second signal lands as the first handler starts): the read is restarted after the outer handler returns and must be recorded.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int to_thread[2], to_main[2];
static volatile sig_atomic_t handled[2];

static void handler(int sig) {
	char msg[64];
	int n = snprintf(msg, sizeof msg, "handler %s\n", sig == SIGUSR1 ? "USR1" : "USR2");
	handled[sig == SIGUSR2] = 1;
	if (write(1, msg, n) != n)
		_exit(3);
}

static void *thread(void *p) {
	(void)p;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &s, NULL);
	char c;
	if (read(to_thread[0], &c, 1) != 1)
		_exit(4);
	
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR2);

	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long v = (unsigned long)ts.tv_nsec ^ (unsigned long)getpid();
	if (write(to_main[1], &v, sizeof v) != sizeof v)
		_exit(5);
	return NULL;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	if (pipe(to_thread) || pipe(to_main))
		return 1;
	pthread_t t;
	pthread_create(&t, NULL, thread, NULL);
	if (write(to_thread[1], "g", 1) != 1)
		return 1;
	for (int round = 0; round < 1; round++) {
		unsigned long v = 0;
		ssize_t n = read(to_main[0], &v, sizeof v); // interrupted, restarted
		printf("read %zd value %lu handled %d %d\n", n, v, handled[0], handled[1]);
	}
	pthread_join(t, NULL);
	// More buffered calls after the restart: their results must replay too.
	unsigned long r;
	if (syscall(SYS_getrandom, &r, sizeof r, 0) != sizeof r)
		return 1;
	printf("random %lu pid %d\n", r, getpid());
	return 0;
}
