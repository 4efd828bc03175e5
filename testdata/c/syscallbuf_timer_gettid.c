// Tests a 1 ms timer's SIGALRM landing in a loop of buffered gettid calls whose registers repeat: a signal right after a call must not be taken for one at the thread's last event.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t caught;
static volatile long counter, total, handled;
static volatile int iter;
static volatile pid_t tid;

static void on_alarm(int sig) {
	caught = sig;
	handled++;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
	// Every variable lives in memory, so the registers at each gettid
	// (and at each handler's return into the loop) are the same.
	for (iter = 0; iter < 200; iter++) {
		caught = 0;
		for (counter = 0; !caught; counter++)
			tid = syscall(SYS_gettid);
		total += counter;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("tid %d signals %ld calls %ld at %ld.%09ld\n", (int)tid, (long)handled, (long)total, (long)ts.tv_sec, ts.tv_nsec);
	puts("EXIT-SUCCESS");
	return 0;
}
