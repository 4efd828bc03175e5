/* A thread blocked in a (buffered) pipe read while another installs an
 * allow-all seccomp filter with SECCOMP_FILTER_FLAG_TSYNC: the filter
 * reaches the blocked thread too, which must see PR_GET_SECCOMP == 2
 * (mode filter) once it wakes, though gorr answers 0 while only its own
 * syscall-buffer filter is installed. Prints the pid and the time. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static int seen_by_reader = -1;

static void *reader(void *arg) {
	char c;
	if (read(fds[0], &c, 1) != 1)
		return NULL;
	seen_by_reader = prctl(PR_GET_SECCOMP);
	return arg;
}

int main(void) {
	struct timespec ts;
	if (pipe(fds) != 0)
		return 1;
	int before = prctl(PR_GET_SECCOMP);
	pthread_t th;
	pthread_create(&th, NULL, reader, NULL);
	usleep(20000); /* the reader blocks in its read */
	struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {.len = 1, .filter = allow};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		perror("seccomp");
		return 1;
	}
	int after = prctl(PR_GET_SECCOMP);
	if (write(fds[1], "x", 1) != 1)
		return 1;
	pthread_join(th, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("seccomp mode before %d, after %d, in the reader %d; pid %d at %ld.%09ld\n", before, after, seen_by_reader,
	       (int)getpid(), (long)ts.tv_sec, ts.tv_nsec);
	return before == 0 && after == 2 && seen_by_reader == 2 ? 0 : 2;
}
