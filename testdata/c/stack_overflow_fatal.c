// Tests a stack overflow whose SIGSEGV handler cannot run (no alternate stack): the kernel kills the child with SIGSEGV; the parent prints the depth reached, random bytes and pids.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long *depth;

static long recurse(long salt) {
	volatile char pad[256];
	pad[0] = (char)salt;
	++*depth;
	return recurse(salt * 31 + pad[0]) + 1;
}

static void handler(int sig) {
	(void)sig;
	write(1, "handler ran, which it cannot\n", 29);
	_exit(1);
}

int main(void) {
	unsigned long seed;
	if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
		return 2;
	depth = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (depth == MAP_FAILED)
		return 2;
	pid_t c = fork();
	if (c == 0) {
		struct rlimit r = {256 * 1024 + (seed % 64) * 4096, 256 * 1024 + (seed % 64) * 4096};
		signal(SIGSEGV, handler);
		setrlimit(RLIMIT_STACK, &r);
		return (int)recurse((long)seed);
	}
	int st;
	if (waitpid(c, &st, 0) != c)
		return 2;
	printf("seed %016lx child %d signaled %d sig %d depth %ld\n", seed, c, WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0, *depth);
	return !(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
}
