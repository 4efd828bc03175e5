/* The dynamic loader times its start-up with rdtsc (eight reads in every
   dynamically linked process; gorr redirects them to its stub, which
   buffers each as a call) and prints the cycle counts with
   LD_DEBUG=statistics. They differ from run to run: the replay must give
   back the recorded counter values. Three children exec /bin/true so;
   a fourth first installs a seccomp filter that kills the process at
   gorr's own rdtsc call number (1000), which the kernel never sees from
   a process running a filter of its own. The parent reads the counter
   itself too (an int3 site). */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void kill_at_1000(void) {
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1000, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("seccomp");
		_exit(2);
	}
}

int main(void) {
	setenv("LD_DEBUG", "statistics", 1);
	for (int i = 0; i < 4; i++) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			if (i == 3)
				kill_at_1000();
			execl("/bin/true", "true", (char *)0);
			_exit(127);
		}
		int st;
		waitpid(p, &st, 0);
		printf("child %d: status 0x%x\n", i, st);
	}
	unsigned lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	printf("tsc %llu\n", (unsigned long long)hi << 32 | lo);
	return 0;
}
