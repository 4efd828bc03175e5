/* Tests futex wakes made through the syscall buffer: two threads hand a random token back and forth with a mutex and condition variables (pthread_cond_signal, mutex unlock wakes) while a third contends for the mutex. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 300

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv[2] = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};
static int turn;
static uint64_t token, contended;

static void *player(void *arg) {
  int me = (int)(long)arg;
  for (int i = 0; i < ROUNDS; i++) {
    pthread_mutex_lock(&mu);
    while (turn != me) pthread_cond_wait(&cv[me], &mu);
    token = token * 6364136223846793005ULL + 1442695040888963407ULL + (uint64_t)me;
    turn = !me;
    pthread_cond_signal(&cv[!me]);
    pthread_mutex_unlock(&mu);
  }
  return NULL;
}

static void *bystander(void *arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; i++) {
    pthread_mutex_lock(&mu);
    contended += token & 1;
    pthread_mutex_unlock(&mu);
    if (i % 16 == 0) sched_yield();
  }
  return NULL;
}

int main(void) {
  if (getrandom(&token, sizeof token, 0) != sizeof token) return 1;
  printf("start token %016llx\n", (unsigned long long)token);
  pthread_t th[3];
  for (long i = 0; i < 2; i++) pthread_create(&th[i], NULL, player, (void *)i);
  pthread_create(&th[2], NULL, bystander, NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  printf("end token %016llx odd seen %llu t %ld.%09ld pid %d\n", (unsigned long long)token, (unsigned long long)contended,
         (long)ts.tv_sec, ts.tv_nsec, getpid());
  puts("EXIT-SUCCESS");
  return 0;
}
