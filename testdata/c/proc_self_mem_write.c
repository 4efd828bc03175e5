// Tests writing the program's own memory through pwrite64 on /proc/self/mem (a random word on the stack and in a global); prints the values read back.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

static volatile uint64_t global;

int main(void) {
	volatile uint64_t local = 0;
	uint64_t r[2];
	if (getrandom(r, sizeof r, 0) != sizeof r)
		return 2;
	int fd = open("/proc/self/mem", O_RDWR);
	if (fd < 0)
		return 2;
	if (pwrite(fd, &r[0], 8, (off_t)(uintptr_t)&local) != 8 || pwrite(fd, &r[1], 8, (off_t)(uintptr_t)&global) != 8)
		return 3;
	close(fd);
	printf("local %016llx global %016llx match %d\n", (unsigned long long)local, (unsigned long long)global,
	       local == r[0] && global == r[1]);
	return !(local == r[0] && global == r[1]);
}
