// Tests emulated ptrace: PTRACE_ATTACH to a sleeping child, SIGCHLD to the tracer, a SIGSEGV stop the tracer repairs with SETREGS, PTRACE_SEIZE, DETACH and waitid.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int sigchlds;
static volatile unsigned long secret;

static void on_chld(int sig) { (void)sig; sigchlds++; }

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s (errno %d)\n", what, errno);
    exit(1);
  }
}

// Loads from address 0 in a way the tracer can skip: a 3-byte mov.
static unsigned long crash(void) {
  unsigned long v = 0;
  asm volatile("xor %%eax, %%eax\n\t"
               "mov (%%rax), %%rax\n\t"
               "mov %%rax, %0"
               : "=r"(v)
               :
               : "rax", "memory");
  return v;
}

int main(void) {
  int pfd[2], back[2];
  check(pipe(pfd) == 0 && pipe(back) == 0, "pipe");
  signal(SIGCHLD, on_chld);
  pid_t child = fork();
  if (child == 0) {
    char c;
    check(read(pfd[0], &c, 1) == 1, "child read");
    unsigned long v = crash();
    printf("child %d: load from NULL gave %lx, secret %lx\n", getpid(), v, secret);
    fflush(stdout);
    check(write(back[1], "y", 1) == 1, "child write");
    check(read(pfd[0], &c, 1) == 1, "child read 2");
    _exit(3);
  }
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  check(ptrace(PTRACE_ATTACH, child, 0, 0) == 0, "attach");
  int st;
  while (waitpid(child, &st, 0) != child)
    check(errno == EINTR, "waitpid");
  check(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "attach stop");
  check(ptrace(PTRACE_ATTACH, child, 0, 0) == -1 && errno == EPERM, "second attach fails");
  unsigned long rnd;
  check(getrandom(&rnd, sizeof rnd, 0) == sizeof rnd, "getrandom");
  check(ptrace(PTRACE_POKEDATA, child, (void *)&secret, (void *)rnd) == 0, "poke");
  check(ptrace(PTRACE_CONT, child, 0, 0) == 0, "cont");
  check(write(pfd[1], "x", 1) == 1, "write");
  siginfo_t si;
  while (waitid(P_PID, child, &si, WSTOPPED | WEXITED) != 0)
    check(errno == EINTR, "waitid");
  check(si.si_code == CLD_TRAPPED && si.si_status == SIGSEGV && si.si_pid == child, "segv stop");
  struct user_regs_struct regs;
  check(ptrace(PTRACE_GETREGS, child, 0, &regs) == 0, "getregs");
  regs.rip += 3;  // skip the faulting mov
  regs.rax = rnd ^ 0xffff;
  check(ptrace(PTRACE_SETREGS, child, 0, &regs) == 0, "setregs");
  check(ptrace(PTRACE_DETACH, child, 0, 0) == 0, "detach");
  check(ptrace(PTRACE_CONT, child, 0, 0) == -1 && errno == ESRCH, "cont after detach fails");
  printf("parent: child %d repaired, expect %lx and secret %lx\n", child, rnd ^ 0xffff, rnd);
  fflush(stdout);
  char c;
  while (read(back[0], &c, 1) != 1)
    check(errno == EINTR, "read");
  check(ptrace(PTRACE_SEIZE, child, 0, 0) == 0, "seize");
  check(ptrace(PTRACE_KILL, child, 0, 0) == 0, "kill");
  while (waitpid(child, &st, 0) != child)
    check(errno == EINTR, "waitpid exit");
  check(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "killed");
  printf("parent: child killed, %s SIGCHLD\n", sigchlds > 0 ? "got" : "no");
  puts("EXIT-SUCCESS");
  return 0;
}
