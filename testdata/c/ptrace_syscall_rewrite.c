// Tests emulated PTRACE_SYSCALL and PTRACE_SYSEMU: a tracer turns the child's getppid into gettid, fakes a random result at the exit stop, skips a call with SYSEMU, and reads PTRACE_GET_SYSCALL_INFO.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static long raw0(long nr) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
  return ret;
}

static void step(pid_t child, int req, const char *what) {
  int st;
  if (ptrace(req, child, 0, 0) != 0 || waitpid(child, &st, 0) != child || !WIFSTOPPED(st)) {
    printf("%s: failed\n", what);
    exit(1);
  }
  printf("%s: stop 0x%x\n", what, WSTOPSIG(st));
}

int main(void) {
  unsigned fake;
  getrandom(&fake, sizeof fake, 0);
  fake &= 0xffffff;
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    raise(SIGSTOP);
    long a = raw0(SYS_getppid); /* becomes gettid, then the fake value */
    long b = raw0(SYS_getuid);  /* skipped by SYSEMU: -ENOSYS */
    long c = raw0(SYS_getpid);  /* skipped by SYSEMU, result set at entry */
    printf("child: a=%ld (fake %u) b=%ld c=%ld\n", a, fake, b, c);
    fflush(stdout);
    _exit(a == (long)fake && b == -38 && c == 4242 ? 0 : 1);
  }
  int st;
  waitpid(child, &st, 0);
  printf("parent: child %d stopped by %d\n", child, WSTOPSIG(st));
  ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACESYSGOOD);
  struct user_regs_struct regs;
  struct __ptrace_syscall_info info;
  /* Walk to the entry of getppid (raise's own calls come first). */
  for (;;) {
    step(child, PTRACE_SYSCALL, "entry");
    ptrace(PTRACE_GETREGS, child, 0, &regs);
    long n = ptrace(PTRACE_GET_SYSCALL_INFO, child, sizeof info, &info);
    printf("  nr %lld info size %ld op %d nr %lld\n", regs.orig_rax, n, info.op, (long long)info.entry.nr);
    if (regs.orig_rax == SYS_getppid)
      break;
    step(child, PTRACE_SYSCALL, "exit");
  }
  regs.orig_rax = SYS_gettid;
  ptrace(PTRACE_SETREGS, child, 0, &regs);
  step(child, PTRACE_SYSCALL, "exit");
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  long n = ptrace(PTRACE_GET_SYSCALL_INFO, child, sizeof info, &info);
  printf("  gettid returned the child's tid: %d (info size %ld op %d rval matches %d)\n", regs.rax == (unsigned long)child, n, info.op,
         info.exit.rval == (long long)regs.rax);
  regs.rax = fake;
  ptrace(PTRACE_SETREGS, child, 0, &regs);
  /* getuid: skipped; seen at its exit with -ENOSYS. */
  step(child, PTRACE_SYSEMU, "sysemu entry");
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  printf("  nr %lld\n", regs.orig_rax);
  step(child, PTRACE_SYSCALL, "sysemu exit");
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  printf("  rax %lld\n", (long long)regs.rax);
  /* getpid: skipped, with a result set at the entry stop. */
  step(child, PTRACE_SYSEMU, "sysemu entry");
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  printf("  nr %lld\n", regs.orig_rax);
  regs.rax = 4242;
  ptrace(PTRACE_SETREGS, child, 0, &regs);
  ptrace(PTRACE_CONT, child, 0, 0);
  waitpid(child, &st, 0);
  printf("parent: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
    puts("EXIT-SUCCESS");
  return 0;
}
