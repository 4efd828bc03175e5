/* Tests robust mutexes whose owner dies (a thread, a forked child killed by SIGKILL, a child calling _exit) with and without waiters: the survivors get EOWNERDEAD. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t *priv, *shared;
static int ready[2];

static void init_robust(pthread_mutex_t *m, int pshared) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (pshared) pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(m, &a);
}

static void *holder(void *arg) {
  (void)arg;
  if (pthread_mutex_lock(priv) != 0) abort();
  printf("thread %ld holds the private mutex\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  if (write(ready[1], "x", 1) != 1) abort();
  usleep(20000); /* let main block on the mutex (FUTEX_WAITERS) */
  return NULL;   /* dies holding it */
}

/* lock_after_death locks m, whose owner died: EOWNERDEAD, then makes it
   consistent and checks it works again. */
static void lock_after_death(pthread_mutex_t *m, const char *what) {
  int r = pthread_mutex_lock(m);
  printf("%s: lock after the owner's death: %s, word now 0x%x\n", what,
         r == EOWNERDEAD ? "EOWNERDEAD" : strerror(r), (unsigned)(*(int *)m & 0xc0000000));
  if (r != EOWNERDEAD) exit(1);
  pthread_mutex_consistent(m);
  if (pthread_mutex_unlock(m) || pthread_mutex_lock(m) || pthread_mutex_unlock(m)) exit(1);
}

static void child_dies(int killed) {
  char c;
  pid_t pid = fork();
  if (pid == 0) {
    if (pthread_mutex_lock(shared) != 0) abort();
    if (write(ready[1], "x", 1) != 1) abort();
    if (killed) pause();
    usleep(20000);
    _exit(3);
  }
  if (read(ready[0], &c, 1) != 1) abort();
  printf("child %d holds the shared mutex\n", pid);
  if (killed) kill(pid, SIGKILL);
  lock_after_death(shared, killed ? "shared, owner killed" : "shared, owner exited");
  int st;
  if (waitpid(pid, &st, 0) != pid) abort();
  printf("child status 0x%x\n", st);
}

int main(void) {
  struct timespec ts;
  unsigned rnd;
  char c;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) return 1;
  printf("pid %d time %ld.%09ld random %08x\n", getpid(), (long)ts.tv_sec, ts.tv_nsec, rnd);
  if (pipe(ready)) return 1;
  priv = malloc(sizeof *priv);
  shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (!priv || shared == MAP_FAILED) return 1;
  printf("mutexes at %p and %p\n", (void *)priv, (void *)shared);
  init_robust(priv, 0);
  init_robust(shared, 1);

  pthread_t t;
  pthread_create(&t, NULL, holder, NULL);
  if (read(ready[0], &c, 1) != 1) return 1;
  lock_after_death(priv, "private, thread exited");
  pthread_join(t, NULL);

  child_dies(1);
  child_dies(0);
  puts("EXIT-SUCCESS");
  return 0;
}
