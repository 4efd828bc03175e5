// Tests emulated ptrace: PTRACE_TRACEME, signal stops seen by waitpid, PEEKDATA/POKEDATA of a random word, GETREGS/SETREGS of a syscall result, CONT with a signal, PTRACE_O_TRACEEXIT.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long word = 0x5eed;
static volatile int handled;

static void on_usr1(int sig) { handled = sig; }

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    exit(1);
  }
}

int main(void) {
  unsigned long rnd;
  check(getrandom(&rnd, sizeof rnd, 0) == sizeof rnd, "getrandom");
  pid_t child = fork();
  if (child == 0) {
    check(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0, "traceme");
    check(ptrace(PTRACE_TRACEME, 0, 0, 0) == -1, "second traceme fails");
    signal(SIGUSR1, on_usr1);
    long r = syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGSTOP);
    printf("child %d: tgkill returned %ld (set by the tracer), word %lx\n", getpid(), r, word);
    raise(SIGUSR1);
    printf("child: handler saw signal %d\n", handled);
    fflush(stdout);
    _exit(7);
  }
  int st;
  check(waitpid(child, &st, 0) == child, "wait for SIGSTOP");
  check(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "stopped by SIGSTOP");
  errno = 0;
  long v = ptrace(PTRACE_PEEKDATA, child, (void *)&word, 0);
  check(errno == 0 && v == 0x5eed, "peekdata");
  check(ptrace(PTRACE_POKEDATA, child, (void *)&word, (void *)rnd) == 0, "pokedata");
  struct user_regs_struct regs;
  check(ptrace(PTRACE_GETREGS, child, 0, &regs) == 0, "getregs");
  check(regs.rax == 0 && regs.orig_rax == SYS_tgkill, "stopped after tgkill");
  long fake = (long)(rnd >> 33);
  regs.rax = fake;
  check(ptrace(PTRACE_SETREGS, child, 0, &regs) == 0, "setregs");
  errno = 0;
  long rax = ptrace(PTRACE_PEEKUSER, child, (void *)offsetof(struct user_regs_struct, rax), 0);
  check(errno == 0 && rax == fake, "peekuser");
  check(ptrace(PTRACE_SETOPTIONS, child, 0, (void *)PTRACE_O_TRACEEXIT) == 0, "setoptions");
  printf("parent: child %d stopped, poked %lx, set rax %ld\n", child, rnd, fake);
  fflush(stdout);
  check(ptrace(PTRACE_CONT, child, 0, 0) == 0, "cont");
  check(waitpid(child, &st, 0) == child, "wait for SIGUSR1");
  check(WIFSTOPPED(st) && WSTOPSIG(st) == SIGUSR1, "stopped by SIGUSR1");
  siginfo_t si;
  check(ptrace(PTRACE_GETSIGINFO, child, 0, &si) == 0 && si.si_signo == SIGUSR1, "getsiginfo");
  check(ptrace(PTRACE_CONT, child, 0, (void *)SIGUSR1) == 0, "cont with SIGUSR1");
  check(waitpid(child, &st, 0) == child, "wait for exit event");
  check(WIFSTOPPED(st) && st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)), "exit event stop");
  unsigned long msg;
  check(ptrace(PTRACE_GETEVENTMSG, child, 0, &msg) == 0, "geteventmsg");
  printf("parent: exit event, message 0x%lx\n", msg);
  check(ptrace(PTRACE_CONT, child, 0, 0) == 0, "cont to exit");
  check(waitpid(child, &st, 0) == child && WIFEXITED(st), "wait for exit");
  printf("parent: child exited with %d\n", WEXITSTATUS(st));
  puts("EXIT-SUCCESS");
  return 0;
}
