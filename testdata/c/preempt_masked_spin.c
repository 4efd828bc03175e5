// Tests preemption of a thread that spins with every signal blocked (the recorder's timeslice signal cannot reach it) until another thread sets a flag; prints the spin count and random bytes.
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

static _Atomic int flag;
static unsigned long seed;

static void *setter(void *arg) {
	(void)arg;
	volatile unsigned long h = seed;
	for (long i = 0; i < 2000000; i++)
		h = h * 6364136223846793005UL + 1442695040888963407UL;
	atomic_store(&flag, (int)(h | 1));
	return NULL;
}

int main(void) {
	if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
		return 2;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t th;
	pthread_create(&th, NULL, setter, NULL);
	unsigned long spins = 0;
	while (!atomic_load(&flag))
		spins++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_join(th, NULL);
	printf("seed %016lx flag %08x spun %s (%lu)\n", seed, (unsigned)flag, spins > 0 ? "yes" : "no", spins);
	return 0;
}
