// Tests memory calls whose effect replay must reproduce exactly: failing mprotect/madvise that changed pages before failing, mlock stopping MADV_DONTNEED, DONTNEED on a private file mapping, SIGBUS past the end of a mapped file.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

static sigjmp_buf env;
static void on_bus(int sig, siginfo_t* si, void* uc) {
  (void)uc;
  printf("caught signal %d at %p\n", sig, si->si_addr);
  siglongjmp(env, 1);
}

int main(void) {
  long ps = sysconf(_SC_PAGESIZE);
  uint8_t rnd[16];
  if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) return 1;
  printf("pid %d random %02x%02x%02x%02x\n", getpid(), rnd[0], rnd[1], rnd[2], rnd[3]);

  /* mprotect over a hole: the pages before the hole change, then ENOMEM. */
  uint8_t* base = mmap(NULL, 4 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return 1;
  munmap(base + 2 * ps, ps);
  int ret = mprotect(base, 4 * ps, PROT_READ | PROT_WRITE);
  printf("mprotect over a hole at %p: %d %s\n", (void*)base, ret, strerror(errno));
  base[ps] = rnd[1]; /* writable now although the call failed */
  printf("wrote %u\n", base[ps]);

  /* madvise(DONTNEED) over a hole: drops the mapped pages, then ENOMEM. */
  ret = madvise(base, 4 * ps, MADV_DONTNEED);
  printf("madvise over a hole: %d %s, page now %u\n", ret, strerror(errno), base[ps]);

  /* A locked page makes DONTNEED fail after the pages before it went. */
  uint8_t* p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  p[0] = rnd[2] | 1;
  p[ps] = rnd[3] | 1;
  if (mlock(p + ps, ps) != 0) return 1;
  ret = madvise(p, 2 * ps, MADV_DONTNEED);
  printf("madvise with a locked page: %d %s, pages %u %u\n", ret, strerror(errno), p[0], p[ps]);

  /* DONTNEED on a private file mapping brings the file back. */
  int fd = open("data", O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write(fd, rnd, sizeof rnd) != sizeof rnd) return 1;
  uint8_t* f = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (f == MAP_FAILED) return 1;
  memset(f, 0, 16);
  if (madvise(f, ps, MADV_DONTNEED) != 0) return 1;
  printf("file page at %p after DONTNEED: %02x%02x%02x%02x\n", (void*)f, f[0], f[1], f[2], f[3]);

  /* The second page lies past the end of the file: SIGBUS. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_bus;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGBUS, &sa, NULL);
  if (sigsetjmp(env, 1) == 0) {
    volatile uint8_t x = f[ps];
    printf("no SIGBUS, read %u\n", x);
  }
  puts("EXIT-SUCCESS");
  return 0;
}
