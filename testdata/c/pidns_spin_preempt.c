/* Tests preemption of a thread that spins without system calls inside a new PID namespace (the recorder's timeslice signal comes from outside it). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;
static volatile uint64_t spins;

static void *spin(void *arg) {
  uint64_t x = (uint64_t)(uintptr_t)arg;
  while (!stop) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    spins++;
  }
  return (void *)(uintptr_t)x;
}

int main(void) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0 && unshare(CLONE_NEWPID) != 0) {
    perror("unshare");
    return 1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    unsigned r;
    if (getrandom(&r, sizeof r, 0) != sizeof r) _exit(1);
    pthread_t t;
    pthread_create(&t, NULL, spin, (void *)(uintptr_t)r);
    /* The main thread waits for the spinner to make progress: it gets to
       run again only if the spinner is preempted. */
    while (spins < 1000) sched_yield();
    usleep(20000);
    stop = 1;
    void *res;
    pthread_join(t, &res);
    printf("in the namespace: pid %d, spinner result %016llx\n", getpid(), (unsigned long long)(uintptr_t)res);
    fflush(stdout);
    _exit(7);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid) return 1;
  printf("child %d exited %d\n", pid, WEXITSTATUS(st));
  puts("EXIT-SUCCESS");
  return 0;
}
