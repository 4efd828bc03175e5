/* Grows and shrinks the heap with sbrk, a page or more at a time, with
   buffered calls (a write, a getppid) in between: in a recording with the
   syscall buffer, the brk calls are buffered, and replay has the stub move
   the heap itself. Prints values that differ between runs (a random seed,
   the heap's addresses) and a sum over the heap's bytes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	unsigned seed = 0;
	if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
		return 1;
	int fd = open("/dev/null", O_WRONLY);
	char *start = sbrk(0);
	uint64_t sum = 0;
	for (int i = 0; i < rounds; i++) {
		intptr_t grow = 4096 * (1 + (seed + 7u * i) % 5) + (i % 3) * 100;
		char *p = sbrk(grow);
		if (p == (void *)-1) {
			perror("sbrk");
			return 1;
		}
		for (intptr_t k = 0; k < grow; k += 256)
			p[k] = (char)(seed + i + k);
		for (intptr_t k = 0; k < grow; k += 256)
			sum = sum * 31 + (unsigned char)p[k];
		if (write(fd, p, 16) != 16)
			return 1;
		if (i % 2 && sbrk(-(grow / 2)) == (void *)-1) {
			perror("sbrk");
			return 1;
		}
		sum += getppid() > 0;
	}
	printf("seed %u heap %p..%p sum %016llx\n", seed, (void *)start, sbrk(0), (unsigned long long)sum);
	return 0;
}
