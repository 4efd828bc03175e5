/* Tests the rt_sigaction calls the syscall buffer makes in-process (sets of random actions, then raised signals that must reach the handler set or be ignored, and queries that write the old action back) and ioctl TCGETS (tcgetattr, isatty) on a pseudo-terminal with random settings and on a pipe, beside tcsetattr, which stays traced, and getrlimit (prlimit64 without a new limit) after a traced setrlimit of a random RLIMIT_CORE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

static volatile sig_atomic_t caught;
static void handler(int sig) { caught += sig; }

int main(void) {
  unsigned char rnd[32];
  if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) return 1;

  /* Random handlers and masks, set, raised and queried (all buffered
     but the signals). */
  for (int i = 0; i < 8; i++) {
    int sig = SIGRTMIN + i;
    struct sigaction sa = {0}, old;
    sa.sa_handler = (rnd[i] & 1) ? handler : SIG_IGN;
    sa.sa_flags = (rnd[i] & 2) ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    for (int b = 0; b < 8; b++)
      if (rnd[8 + i] & (1 << b)) sigaddset(&sa.sa_mask, SIGRTMIN + 8 + b);
    if (sigaction(sig, &sa, NULL) != 0) return 1;
    caught = 0;
    raise(sig);
    if (caught != ((rnd[i] & 1) ? sig : 0)) {
      printf("sig %d: handler saw %d\n", sig, (int)caught);
      return 1;
    }
    memset(&old, 0xa5, sizeof old);
    if (sigaction(sig, NULL, &old) != 0) return 1;
    unsigned mask = 0;
    for (int b = 0; b < 8; b++)
      if (sigismember(&old.sa_mask, SIGRTMIN + 8 + b)) mask |= 1u << b;
    printf("sig %d: %s restart=%d mask=%02x\n", sig,
           old.sa_handler == handler ? "handler" : old.sa_handler == SIG_IGN ? "ignored" : "other",
           !!(old.sa_flags & SA_RESTART), mask);
  }
  /* A query of an invalid signal fails without writing. */
  struct sigaction bad;
  memset(&bad, 0x5a, sizeof bad);
  int r = sigaction(0, NULL, &bad);
  int e = errno;
  printf("sigaction(0): %d %s untouched=%d\n", r, strerrorname_np(e), ((unsigned char *)&bad)[0] == 0x5a);

  /* A pseudo-terminal with random settings: tcsetattr is traced,
     tcgetattr (TCGETS) buffered. */
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) || unlockpt(m)) {
    printf("no pty: %s\n", strerrorname_np(errno));
  } else {
    int s = open(ptsname(m), O_RDWR | O_NOCTTY);
    struct termios t;
    if (s < 0 || tcgetattr(s, &t)) return 1;
    t.c_cc[VMIN] = rnd[16];
    t.c_cc[VTIME] = rnd[17];
    t.c_lflag = (rnd[18] & 1) ? t.c_lflag | ECHO : t.c_lflag & ~ECHO;
    cfsetospeed(&t, (rnd[19] & 1) ? B9600 : B38400);
    if (tcsetattr(s, TCSANOW, &t)) return 1;
    struct termios back;
    memset(&back, 0, sizeof back);
    if (tcgetattr(s, &back)) return 1;
    printf("pty: vmin=%u vtime=%u echo=%d speed=%s isatty=%d\n", back.c_cc[VMIN], back.c_cc[VTIME],
           !!(back.c_lflag & ECHO), cfgetospeed(&back) == B9600 ? "9600" : "38400", isatty(s));
    close(s);
    close(m);
  }
  int p[2];
  if (pipe(p)) return 1;
  errno = 0;
  r = isatty(p[0]);
  e = errno;
  printf("pipe: isatty=%d %s\n", r, strerrorname_np(e));
  /* getrlimit is a query (prlimit64 without a new limit), setrlimit
   * stays traced; replay, which does not set RLIMIT_CORE, must write
   * the queried value back. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_CORE, &rl)) return 1;
  rlim_t want = rl.rlim_max == RLIM_INFINITY ? 4096u * (1 + rnd[24] % 200) : rl.rlim_max / (2 + rnd[24] % 5);
  rl.rlim_cur = want;
  if (setrlimit(RLIMIT_CORE, &rl)) return 1;
  memset(&rl, 0, sizeof rl);
  if (getrlimit(RLIMIT_CORE, &rl)) return 1;
  printf("RLIMIT_CORE soft %llu (set %llu)\n", (unsigned long long)rl.rlim_cur, (unsigned long long)want);
  printf("pid %d token %02x%02x%02x%02x\n", getpid(), rnd[20], rnd[21], rnd[22], rnd[23]);
  printf("EXIT-SUCCESS\n");
  return 0;
}
