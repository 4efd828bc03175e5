/* Tests buffered reads and writes that block on pipes between two threads (a ping-pong): blocked calls are made again traced and their descriptors remembered. */
#include <pthread.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 300

static int a[2], b[2];

static void *echo(void *x) {
	unsigned char c;
	for (int i = 0; i < ROUNDS; i++) {
		if (read(a[0], &c, 1) != 1)
			return NULL;
		c = (unsigned char)(c * 31 + 7);
		if (write(b[1], &c, 1) != 1)
			return NULL;
	}
	return x;
}

int main(void) {
	if (pipe(a) != 0 || pipe(b) != 0)
		return 1;
	unsigned char c;
	if (getrandom(&c, 1, 0) != 1)
		return 1;
	printf("start %02x\n", c);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t t;
	pthread_create(&t, NULL, echo, NULL);
	unsigned sum = 0;
	for (int i = 0; i < ROUNDS; i++) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
		sum = sum * 131 + c;
	}
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("last %02x sum %08x\n", c, sum);
	printf("elapsed %ld us\n", (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
	printf("EXIT-SUCCESS\n");
	return 0;
}
