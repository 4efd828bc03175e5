// Tests emulated ptrace of job-control-stopped tracees: ATTACH to a stopped child and SEIZE of a thread of a stopped process are reported at once, the tracer resumes them, ATTACH's own SIGSTOP follows, INTERRUPT stops a running thread.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[2];

static void *worker(void *arg) {
  (void)arg;
  pid_t tid = syscall(SYS_gettid);
  if (write(fds[1], &tid, sizeof tid) != sizeof tid)
    abort();
  for (;;)
    usleep(1000);
  return NULL;
}

static int wait_for(pid_t pid, const char *what) {
  int st = 0;
  pid_t got = waitpid(pid, &st, __WALL);
  printf("%s: waited %s, status 0x%x\n", what, got == pid ? "ok" : "wrong", st);
  return st;
}

int main(void) {
  struct timespec ts = {0, 50000000};
  unsigned r;
  getrandom(&r, sizeof r, 0);
  setvbuf(stdout, NULL, _IOLBF, 0);
  pid_t child = fork();
  if (child == 0) {
    kill(getpid(), SIGSTOP);
    printf("child %d: resumed, random %u\n", getpid(), r % 1000);
    fflush(stdout);
    _exit(3);
  }
  nanosleep(&ts, NULL);
  printf("parent: attach to stopped child %d: %ld\n", child, ptrace(PTRACE_ATTACH, child, 0, 0));
  wait_for(child, "attach stop");
  ptrace(PTRACE_CONT, child, 0, 0);
  int st = wait_for(child, "pending SIGSTOP");
  printf("  stop signal %d\n", WIFSTOPPED(st) ? WSTOPSIG(st) : -1);
  ptrace(PTRACE_DETACH, child, 0, 0);
  kill(child, SIGCONT);
  st = wait_for(child, "exit");
  printf("  exit code %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);

  /* A thread of a stopped process, seized. */
  if (pipe(fds) != 0)
    return 1;
  pid_t child2 = fork();
  if (child2 == 0) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
  }
  pid_t tid;
  if (read(fds[0], &tid, sizeof tid) != sizeof tid)
    return 1;
  kill(child2, SIGSTOP);
  nanosleep(&ts, NULL);
  printf("parent: seize thread of stopped process: %ld\n", ptrace(PTRACE_SEIZE, tid, 0, 0));
  st = wait_for(tid, "seize stop");
  printf("  stop signal %d event %d\n", WSTOPSIG(st), st >> 16);
  ptrace(PTRACE_CONT, tid, 0, 0);
  nanosleep(&ts, NULL);
  printf("parent: interrupt: %ld\n", ptrace(PTRACE_INTERRUPT, tid, 0, 0));
  st = wait_for(tid, "interrupt stop");
  printf("  stop signal %d event %d\n", WSTOPSIG(st), st >> 16);
  kill(child2, SIGKILL);
  wait_for(tid, "traced thread killed"); /* its tracer reaps it first */
  st = wait_for(child2, "killed");
  printf("  killed by %d, random %u\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1, r % 1000);
  puts("EXIT-SUCCESS");
  return 0;
}
