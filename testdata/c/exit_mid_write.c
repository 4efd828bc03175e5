// Tests threads killed while blocked in a partly done write (a full pipe): by the process's exit_group, in a child by a fatal SIGABRT, in another by a sibling's execve; the writes' partial results are recorded at the threads' deaths.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WRITERS 8
#define CHUNK (1 << 20)

static volatile int ready;
static char buf[CHUNK];

// Each writer fills a pipe nobody reads: write returns only when the
// process dies, having written what the pipe holds.
static void *writer(void *arg) {
	(void)arg;
	int p[2];
	if (pipe(p) != 0) {
		perror("pipe");
		exit(1);
	}
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	ssize_t n = write(p[1], buf, sizeof buf);
	printf("write returned %zd\n", n); // never reached
	return NULL;
}

static void start_writers(void) {
	pthread_t th[WRITERS];
	for (int i = 0; i < WRITERS; i++) {
		if (pthread_create(&th[i], NULL, writer, NULL) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < WRITERS)
		usleep(1000);
	usleep(20000); // let them fill their pipes and block
}

static void report(pid_t child) {
	int status;
	if (waitpid(child, &status, 0) != child) {
		perror("waitpid");
		exit(1);
	}
	if (WIFSIGNALED(status))
		printf("child killed by signal %d\n", WTERMSIG(status));
	else
		printf("child exited with %d\n", WEXITSTATUS(status));
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "after-exec") == 0) {
		printf("child %d exec'd with %d writers killed\n", getpid(), WRITERS);
		return 7;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	memset(buf, (int)(ts.tv_nsec & 0x7f) | 1, sizeof buf);
	setvbuf(stdout, NULL, _IONBF, 0);

	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		start_writers();
		printf("child %d aborts with %d writers blocked\n", getpid(), WRITERS);
		abort();
	}
	report(child);

	if ((child = fork()) < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		start_writers();
		execl("/proc/self/exe", argv[0], "after-exec", (char *)NULL);
		perror("execl");
		_exit(1);
	}
	report(child);

	start_writers();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("pid %d exits at %ld.%09ld with %d writers blocked\n", getpid(), (long)ts.tv_sec, ts.tv_nsec, WRITERS);
	printf("EXIT-SUCCESS\n");
	exit(0);
}
