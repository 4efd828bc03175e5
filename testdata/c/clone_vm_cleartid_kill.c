/* Tests CLONE_CHILD_CLEARTID of a CLONE_VM child (another thread group) killed by a signal: the kernel zeroes the tid word and wakes the parent's futex wait on it. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t ctid;
static volatile unsigned shared_val;

static int child(void *arg) {
  shared_val = (unsigned)(unsigned long)arg;
  for (;;) pause();
  return 0;
}

int main(void) {
  size_t size = 256 * 1024;
  char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return 1;
  printf("pid %d\n", getpid());
  int sigs[2] = {SIGKILL, SIGTERM};
  for (int i = 0; i < 2; i++) {
    unsigned r;
    if (getrandom(&r, sizeof r, 0) != sizeof r) return 1;
    r |= 1;
    shared_val = 0;
    pid_t pid = clone(child, stack + size, CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD,
                      (void *)(unsigned long)r, &ctid, NULL, &ctid);
    if (pid < 0) return 1;
    while (shared_val == 0) sched_yield();
    printf("child %d (tid word %d) wrote %08x\n", pid, ctid, shared_val);
    kill(pid, sigs[i]);
    pid_t seen;
    while ((seen = ctid) != 0) syscall(SYS_futex, &ctid, FUTEX_WAIT, seen, NULL, NULL, 0);
    printf("tid word cleared after signal %d\n", sigs[i]);
    int st;
    if (waitpid(pid, &st, __WALL) != pid) return 1;
    printf("status: signaled %d by %d\n", WIFSIGNALED(st), WTERMSIG(st));
  }
  puts("EXIT-SUCCESS");
  return 0;
}
