// Tests forks racing the deaths of earlier children: a child's exit may be recorded while its parent is inside fork, and replay's reaping of it (a real SIGCHLD) must not make that fork fail.
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 200

// Each child tells the parent it runs, then exits at once; the parent,
// woken by that byte, forks the next child right away, while the
// previous one is still dying. A thread forking in the window between
// its fork's entry and its new task's birth is what python3 -m test -j2
// does (test_threading forks from threads while other children exit).
int main(void) {
  int p[2];
  if (pipe(p) != 0) {
    perror("pipe");
    return 1;
  }
  long pidsum = 0;
  int statsum = 0;
  pid_t prev = -1;
  for (int i = 0; i < ROUNDS; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      char c = (char)i;
      if (write(p[1], &c, 1) != 1)
        _exit(100);
      _exit(i % 50);
    }
    pidsum += pid;
    if (prev > 0) {
      int st;
      if (waitpid(prev, &st, 0) != prev) {
        perror("waitpid");
        return 1;
      }
      statsum += WEXITSTATUS(st);
    }
    char c;
    if (read(p[0], &c, 1) != 1 || c != (char)i) {
      fprintf(stderr, "round %d: bad byte\n", i);
      return 1;
    }
    prev = pid;
  }
  int st;
  if (waitpid(prev, &st, 0) != prev) {
    perror("waitpid");
    return 1;
  }
  statsum += WEXITSTATUS(st);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  printf("forked %d children, pid sum %ld, status sum %d, time %ld.%09ld\n", ROUNDS, pidsum, statsum, (long)ts.tv_sec, ts.tv_nsec);
  printf("EXIT-SUCCESS\n");
  return 0;
}
