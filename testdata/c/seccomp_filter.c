// Tests a seccomp filter installed by the program: SECCOMP_RET_ERRNO results (also for a call gorr answers itself), SIGSYS from SECCOMP_RET_TRAP with its siginfo, in the parent and an inheriting child killed by SECCOMP_RET_KILL_PROCESS.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int traps;
static volatile long trap_nr, trap_arg;

static void on_sigsys(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  ucontext_t *ctx = uc;
  traps++;
  trap_nr = si->si_syscall;
  trap_arg = ctx->uc_mcontext.gregs[REG_RDI];
  ctx->uc_mcontext.gregs[REG_RAX] = 4242; /* the call's result */
}

int main(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned rnd;
  if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
    return 1;
  printf("pid %d time %ld.%09ld random %08x\n", getpid(), (long)ts.tv_sec, ts.tv_nsec, rnd);
  fflush(stdout);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSYS, &sa, NULL);

  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 77),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setaffinity, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 55),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setpriority, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    perror("seccomp");
    return 1;
  }
  printf("PR_GET_SECCOMP %d\n", prctl(PR_GET_SECCOMP));

  for (int i = 0; i < 3; i++) {
    errno = 0;
    long r = syscall(SYS_getppid);
    printf("getppid -> %ld errno %d\n", r, errno);
    long arg = (rnd >> (8 * i)) & 0xff;
    r = syscall(SYS_getpriority, arg, 0);
    printf("getpriority(%ld) -> %ld, traps %d nr %ld arg %ld\n", arg, r, traps, trap_nr, trap_arg);
  }

  /* gorr answers sched_setaffinity itself; the filter must still judge it. */
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(0, &cpus);
  errno = 0;
  long r = sched_setaffinity(0, sizeof cpus, &cpus);
  printf("sched_setaffinity -> %ld errno %d\n", r, errno);

  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    printf("child %d calls setpriority\n", getpid());
    fflush(stdout);
    syscall(SYS_setpriority, 0, 0, 0);
    printf("child survived\n");
    return 0;
  }
  int status;
  waitpid(child, &status, 0);
  printf("child signaled %d sig %d\n", WIFSIGNALED(status), WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  printf("end %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
  puts("EXIT-SUCCESS");
  return 0;
}
