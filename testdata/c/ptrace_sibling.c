// Tests emulated ptrace of a process that is not the tracer's child: ATTACH to a sibling, waitpid for its stop (blocks in ppoll until SIGCHLD) and for its exit, GETREGS/PEEKDATA.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long token;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s (errno %d)\n", what, errno);
    _exit(1);
  }
}

int main(void) {
  int p[2];
  check(pipe(p) == 0, "pipe");
  check(getrandom(&token, sizeof token, 0) == sizeof token, "getrandom");
  pid_t b = fork();
  if (b == 0) {
    char c;
    check(read(p[0], &c, 1) == 1, "tracee read");
    _exit(42);
  }
  pid_t a = fork();
  if (a == 0) {
    int st;
    check(ptrace(PTRACE_ATTACH, b, 0, 0) == 0, "attach");
    check(waitpid(b, &st, 0) == b, "wait for stop");
    check(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "SIGSTOP stop");
    errno = 0;
    long v = ptrace(PTRACE_PEEKDATA, b, (void *)&token, 0);
    check(errno == 0 && (unsigned long)v == token, "peek token");
    struct user_regs_struct regs;
    check(ptrace(PTRACE_GETREGS, b, 0, &regs) == 0, "getregs");
    printf("tracer %d: sibling %d stopped in syscall %lld, token %lx\n", getpid(), b, regs.orig_rax, (unsigned long)v);
    fflush(stdout);
    check(ptrace(PTRACE_CONT, b, 0, 0) == 0, "cont");
    check(write(p[1], "x", 1) == 1, "write");
    check(waitpid(b, &st, 0) == b, "wait for exit");
    check(WIFEXITED(st) && WEXITSTATUS(st) == 42, "exit status");
    printf("tracer: sibling exited with %d\n", WEXITSTATUS(st));
    fflush(stdout);
    _exit(0);
  }
  int st;
  check(waitpid(a, &st, 0) == a && WIFEXITED(st) && WEXITSTATUS(st) == 0, "tracer exit");
  check(waitpid(b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 42, "tracee exit");
  printf("parent %d: both children done\n", getpid());
  puts("EXIT-SUCCESS");
  return 0;
}
