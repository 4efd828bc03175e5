/* Two threads compute and make a buffered getpid every 1024 iterations,
 * logging their turns in a shared array. With the syscall buffer, a
 * timeslice that ends while a thread computes ends at its next buffered
 * call (the recorder asks the stub to trace it) rather than at an
 * asynchronous preemption point. Prints a fingerprint of the
 * interleaving, the pid and the time taken: all differ between runs. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define LOG 65536
static unsigned char turns[LOG];
static unsigned long next_turn;

static void *work(void *arg) {
	long id = (long)arg;
	unsigned long h = 1469598103934665603ul ^ (unsigned long)id;
	for (long i = 0; i < 20000000; i++) {
		h = (h ^ (unsigned long)i) * 1099511628211ul;
		if ((i & 1023) == 0) {
			h ^= (unsigned long)getpid();
			unsigned long k = __atomic_fetch_add(&next_turn, 1, __ATOMIC_RELAXED);
			turns[k % LOG] = (unsigned char)id;
		}
	}
	return (void *)h;
}

int main(void) {
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, work, (void *)(i + 1));
	unsigned long hs[2];
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], (void **)&hs[i]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* The interleaving: how often the turn passed between the threads,
	 * and a hash of the order. */
	unsigned long fp = 14695981039346656037ul, switches = 0;
	unsigned long n = next_turn < LOG ? next_turn : LOG;
	for (unsigned long i = 0; i < n; i++) {
		fp = (fp ^ turns[i]) * 1099511628211ul;
		if (i > 0 && turns[i] != turns[i - 1])
			switches++;
	}
	printf("hashes %lx %lx turns %lu switches %lu order %lx pid %d took %ld us\n", hs[0], hs[1], next_turn, switches, fp,
	       (int)getpid(), (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
	return 0;
}
