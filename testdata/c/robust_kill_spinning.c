/* Tests a robust mutex whose owner, a forked child, is SIGKILLed while it spins in user code (so the recorder holds it stopped at a preemption point when the kill comes): the parent, waiting on the mutex, gets EOWNERDEAD. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
  pthread_mutex_t m;
  volatile unsigned long spins;
};

int main(void) {
  struct timespec ts;
  unsigned rnd;
  int ready[2];
  char c;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) return 1;
  printf("pid %d time %ld.%09ld random %08x\n", getpid(), (long)ts.tv_sec, ts.tv_nsec, rnd);
  fflush(stdout);
  struct shared *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED || pipe(ready)) return 1;
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(&s->m, &a);
  for (int round = 0; round < 3; round++) {
    pid_t pid = fork();
    if (pid == 0) {
      if (pthread_mutex_lock(&s->m) != 0 && errno != EOWNERDEAD) abort();
      if (write(ready[1], "x", 1) != 1) abort();
      for (;;) s->spins++; /* killed here, holding the mutex */
    }
    if (read(ready[0], &c, 1) != 1) return 1;
    while (s->spins < 1000000) {
    }
    kill(pid, SIGKILL);
    int r = pthread_mutex_lock(&s->m);
    printf("round %d: child %d killed after %lu spins; lock: %s, word 0x%x\n", round, pid, s->spins,
           r == EOWNERDEAD ? "EOWNERDEAD" : strerror(r), (unsigned)(*(int *)&s->m & 0xc0000000));
    if (r != EOWNERDEAD) return 1;
    pthread_mutex_consistent(&s->m);
    pthread_mutex_unlock(&s->m);
    int st;
    if (waitpid(pid, &st, 0) != pid) return 1;
    printf("child status 0x%x\n", st);
    s->spins = 0;
  }
  puts("EXIT-SUCCESS");
  return 0;
}
