// Tests prctl(PR_GET_SECCOMP) under the syscall buffer: the program sees no seccomp filter (0), as without gorr, although the buffer's filter is installed.
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int main(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int mode = prctl(PR_GET_SECCOMP);
	printf("seccomp mode %d pid %d time %ld\n", mode, getpid(), (long)ts.tv_nsec);
	return mode == 0 ? 0 : 1;
}
