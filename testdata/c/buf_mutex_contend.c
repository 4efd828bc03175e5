/* Tests threads contending a pthread mutex (futex waits probed by the syscall buffer, waits that block made traced) under short timeslices. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NTHREADS 4
#define ITERS 3000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static int order[NTHREADS * ITERS];
static volatile unsigned long sink;

static void *worker(void *arg) {
	long id = (long)arg;
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&mu);
		/* Work inside the lock, so that a timeslice often ends there
		   and the other threads' lock calls wait on the futex. */
		for (int k = 0; k < 2000; k++)
			sink += (unsigned long)k * (unsigned long)(id + 1);
		order[counter++] = (int)id;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(void) {
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[NTHREADS];
	for (long t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
			return 1;
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* The interleaving differs between runs: a hash of the order in
	   which the threads took the lock, and the number of switches. */
	unsigned long h = 1469598103934665603UL;
	long switches = 0;
	for (long i = 0; i < counter; i++) {
		h = (h ^ (unsigned long)order[i]) * 1099511628211UL;
		if (i > 0 && order[i] != order[i - 1])
			switches++;
	}
	printf("counter %ld (want %d)\n", counter, NTHREADS * ITERS);
	printf("order hash %016lx switches %ld\n", h, switches);
	printf("pid %d elapsed %ld us\n", getpid(), (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
	if (counter != NTHREADS * ITERS)
		return 1;
	printf("EXIT-SUCCESS\n");
	return 0;
}
