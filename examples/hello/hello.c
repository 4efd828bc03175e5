// The bundled example: every line it prints differs from run to run, yet
// `gorr replay -a` reproduces the recorded run byte for byte.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char order[64];
static int pos;

static void *worker(void *arg) {
	for (int i = 0; i < 5; i++) {
		pthread_mutex_lock(&mu);
		order[pos++] = *(char *)arg;
		pthread_mutex_unlock(&mu);
		usleep(100 + rand() % 300);
	}
	return NULL;
}

int main(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned char r[8];
	getrandom(r, sizeof r, 0);
	srand(ts.tv_nsec);
	printf("pid %d, time %ld.%09ld\n", getpid(), (long)ts.tv_sec, ts.tv_nsec);
	printf("random bytes %02x%02x%02x%02x%02x%02x%02x%02x\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
	void *heap = malloc(32);
	printf("heap %p, stack %p\n", heap, (void *)&ts);
	pthread_t a, b;
	char ca = 'a', cb = 'b';
	pthread_create(&a, NULL, worker, &ca);
	pthread_create(&b, NULL, worker, &cb);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("thread interleaving %s\n", order);
	return 0;
}
