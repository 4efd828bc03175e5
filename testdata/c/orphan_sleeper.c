// Tests that recording ends when the initial process exits: a child that sleeps for 100 s outlives its parent and is killed by the recorder (rr's default without --wait).
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
	int p[2];
	if (pipe(p) < 0)
		return 1;
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		printf("child %d sleeps\n", getpid());
		fflush(stdout);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		close(p[0]);
		close(p[1]);
		sleep(100);
		return 0;
	}
	close(p[1]);
	char b;
	(void)read(p[0], &b, 1); /* EOF once the child closed its end */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("parent %d leaves child %d alive (%d) at %ld.%09ld\n", getpid(), c, kill(c, 0) == 0, (long)ts.tv_sec, ts.tv_nsec);
	printf("EXIT-SUCCESS\n");
	return 0;
}
