// Tests emulated PTRACE_SYSCALL as strace uses it: after TRACEME and a SIGSTOP stop, the tracer counts the child's syscall-entry and -exit stops until it exits.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    raise(SIGSTOP);
    printf("child %d: running\n", getpid());
    _exit(0);
  }
  int st, stops = 0;
  waitpid(child, &st, 0);
  printf("parent: child %d stopped by %d\n", child, WSTOPSIG(st));
  fflush(stdout);
  while (ptrace(PTRACE_SYSCALL, child, 0, 0) == 0 && waitpid(child, &st, 0) == child && WIFSTOPPED(st))
    stops++;
  printf("parent: %d syscall stops\n", stops);
  puts("EXIT-SUCCESS");
  return 0;
}
