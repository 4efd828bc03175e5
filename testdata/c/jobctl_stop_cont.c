// Tests job-control stops: SIGSTOP/SIGTSTP stop a child (one- and multi-threaded), the parent sees WUNTRACED/WCONTINUED and SIGCHLD, SIGCONT resumes it.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static volatile sig_atomic_t chld;
static void on_chld(int sig) { (void)sig; chld++; }

static void *sleeper(void *arg) {
	(void)arg;
	struct timespec ts = {0, 30 * 1000 * 1000};
	nanosleep(&ts, NULL); /* interrupted by the stop, restarted after SIGCONT */
	return NULL;
}

static void check(int ok, const char *what) {
	if (!ok) {
		printf("FAILED: %s (errno %d)\n", what, errno);
		exit(1);
	}
}

static void round_trip(int sig, int threaded) {
	long t0 = now_us();
	fflush(stdout);
	pid_t c = fork();
	check(c >= 0, "fork");
	if (c == 0) {
		pthread_t th;
		/* A group of its own, not orphaned (its parent's group is another
		 * one of the session), so that SIGTSTP is not discarded. */
		setpgid(0, 0);
		if (threaded)
			pthread_create(&th, NULL, sleeper, NULL);
		kill(getpid(), sig);
		if (threaded)
			pthread_join(th, NULL);
		printf("child %d resumed after stop by %d\n", getpid(), sig);
		fflush(stdout);
		_exit(40 + threaded);
	}
	int st;
	check(waitpid(c, &st, WUNTRACED) == c, "waitpid WUNTRACED");
	check(WIFSTOPPED(st) && WSTOPSIG(st) == sig, "stopped by the signal");
	check(waitpid(c, &st, WNOHANG | WUNTRACED) == 0, "stop reported once");
	printf("parent: child %d stopped by %d after %ld us\n", c, WSTOPSIG(st), now_us() - t0);
	check(kill(c, SIGCONT) == 0, "SIGCONT");
	check(waitpid(c, &st, WCONTINUED) == c, "waitpid WCONTINUED");
	check(WIFCONTINUED(st), "continued");
	check(waitpid(c, &st, 0) == c, "waitpid exit");
	check(WIFEXITED(st) && WEXITSTATUS(st) == 40 + threaded, "exit status");
	printf("parent: child %d exited %d, %ld us in all\n", c, WEXITSTATUS(st), now_us() - t0);
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	printf("pid %d\n", getpid());
	round_trip(SIGSTOP, 0);
	round_trip(SIGTSTP, 0);
	round_trip(SIGSTOP, 1);
	/* A stopped child killed without SIGCONT. */
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		raise(SIGSTOP);
		_exit(1);
	}
	int st;
	check(waitpid(c, &st, WUNTRACED) == c && WIFSTOPPED(st), "stopped");
	kill(c, SIGKILL);
	check(waitpid(c, &st, 0) == c && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "killed while stopped");
	printf("SIGCHLDs: %d\n", chld > 0);
	printf("EXIT-SUCCESS\n");
	return 0;
}
