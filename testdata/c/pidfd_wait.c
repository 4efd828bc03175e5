/* Tests pidfds: pidfd_open, pidfd_send_signal, pidfd_getfd, poll on a pidfd, waitid(P_PIDFD) and a failing waitid, which still zeroes the siginfo. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static volatile sig_atomic_t got;
static void on_usr1(int sig) { got = sig; }

int main(void) {
  int go[2], back[2];
  unsigned rnd;
  struct timespec ts;
  char c;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) return 1;
  printf("pid %d random %08x t %ld\n", getpid(), rnd, ts.tv_nsec);
  if (pipe(go) || pipe(back)) return 1;
  signal(SIGUSR1, on_usr1);
  pid_t child = fork();
  if (child == 0) {
    if (write(back[1], "r", 1) != 1) _exit(1);
    while (!got) pause();
    char msg[64];
    int n = snprintf(msg, sizeof msg, "child %d got signal %d\n", getpid(), (int)got);
    if (write(1, msg, n) != n) _exit(1);
    if (read(go[0], &c, 1) != 1) _exit(1);
    _exit(40 + (rnd & 7));
  }
  if (read(back[0], &c, 1) != 1) return 1;
  int pfd = syscall(SYS_pidfd_open, child, 0);
  if (pfd < 0) {
    printf("pidfd_open: %s\n", strerror(errno));
    return 1;
  }
  printf("child %d, pidfd %d\n", child, pfd);
  if (syscall(SYS_pidfd_send_signal, pfd, SIGUSR1, NULL, 0)) return 1;

  /* The child's write end of "go", taken from it through the pidfd. */
  int dup = syscall(SYS_pidfd_getfd, pfd, go[1], 0);
  printf("pidfd_getfd: %s\n", dup >= 0 ? "ok" : strerror(errno));
  struct pollfd p = {.fd = pfd, .events = POLLIN};
  printf("poll before exit: %d\n", poll(&p, 1, 0));
  if (write(dup >= 0 ? dup : go[1], "g", 1) != 1) return 1;
  int n = poll(&p, 1, 5000);
  printf("poll until exit: %d revents 0x%x\n", n, p.revents);

  siginfo_t info;
  memset(&info, 0x5a, sizeof info);
  int r = waitid(P_PIDFD, pfd, &info, WEXITED);
  printf("waitid: %d pid-matches %d code %d status %d\n", r, info.si_pid == child, info.si_code,
         info.si_status);
  memset(&info, 0x5a, sizeof info);
  r = waitid(P_PIDFD, pfd, &info, WEXITED | WNOHANG);
  printf("waitid again: %d (%s) signo %d pid %d code %d status %d\n", r, r ? strerror(errno) : "-",
         info.si_signo, info.si_pid, info.si_code, info.si_status);
  memset(&info, 0x5a, sizeof info);
  r = waitid(P_PIDFD, 1000000, &info, WEXITED);
  printf("waitid bad fd: %d (%s) signo %d pid %d\n", r, strerror(errno), info.si_signo, info.si_pid);
  puts("EXIT-SUCCESS");
  return 0;
}
