// Tests threads that stay blocked in a system call (read, futex, nanosleep) until their process ends them: by exit_group, by another thread's execve, by a fatal signal.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *in_read(void *arg) {
	char c;
	(void)arg;
	if (read(fds[0], &c, 1) >= 0) /* nobody writes: blocked until the end */
		puts("read returned");
	return NULL;
}

static void *in_futex(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu); /* never signalled */
	return NULL;
}

static void *in_sleep(void *arg) {
	(void)arg;
	struct timespec ts = {1000, 0};
	nanosleep(&ts, NULL);
	puts("slept");
	return NULL;
}

static void start_blocked(void) {
	pthread_t th;
	void *(*fns[])(void *) = {in_read, in_futex, in_sleep};
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th, NULL, fns[i], NULL) != 0)
			exit(1);
	usleep(2000); /* let them block */
}

static void stamp(const char *who) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("%s pid=%d t=%ld.%09ld\n", who, getpid(), (long)ts.tv_sec, ts.tv_nsec);
	fflush(stdout);
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "execd") == 0) {
		stamp("after exec");
		return 0;
	}
	if (pipe(fds) != 0)
		return 1;
	/* A child whose blocked threads are killed by its main thread's exec. */
	pid_t c = fork();
	if (c == 0) {
		start_blocked();
		stamp("child before exec");
		execl("/proc/self/exe", argv[0], "execd", (char *)NULL);
		_exit(2);
	}
	int st;
	waitpid(c, &st, 0);
	printf("exec child exited %d\n", WEXITSTATUS(st));
	fflush(stdout);
	/* A child whose blocked threads die with it of SIGTERM. */
	c = fork();
	if (c == 0) {
		start_blocked();
		stamp("child before SIGTERM");
		kill(getpid(), SIGTERM);
		pause();
		_exit(3);
	}
	waitpid(c, &st, 0);
	printf("signal child: signalled=%d sig=%d\n", WIFSIGNALED(st), WTERMSIG(st));
	/* Our own blocked threads, killed by exit_group. */
	start_blocked();
	long sum = 0;
	for (int i = 0; i < 2000; i++)
		sum += getppid();
	stamp("parent exiting");
	printf("sum=%ld\n", sum);
	exit(0);
}
