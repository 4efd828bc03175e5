// Tests MAP_SHARED file mappings: two mappings of one file share pages, pwrite/ftruncate/mremap show through a read-only mapping, a fork child writes the parent's view.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  long ps = sysconf(_SC_PAGESIZE);
  char name[] = "/tmp/gorr-shared-XXXXXX";
  int fd = mkstemp(name);
  if (fd < 0) return 1;
  unlink(name);
  uint32_t seed;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) return 1;
  if (ftruncate(fd, ps) != 0) return 1;
  uint32_t* w = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const uint32_t* r = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, 0);
  if (w == MAP_FAILED || r == MAP_FAILED) return 1;
  printf("pid %d seed %08x views %p %p\n", getpid(), seed, (void*)w, (void*)r);
  for (long i = 0; i < ps / 4; i++) w[i] = seed + i;
  unsigned long sum = 0;
  for (long i = 0; i < ps / 4; i++) sum += r[i];
  printf("sum through the read-only view %lu\n", sum);

  /* A write through the descriptor shows in both views. */
  uint32_t v = seed ^ 0xdeadbeef;
  if (pwrite(fd, &v, 4, 8) != 4) return 1;
  printf("after pwrite %08x %08x\n", r[2], w[2]);

  /* Grow the file and the read-only view; write the new page with pwrite. */
  if (ftruncate(fd, 3 * ps) != 0) return 1;
  r = mremap((void*)r, ps, 3 * ps, MREMAP_MAYMOVE);
  if (r == MAP_FAILED) return 1;
  for (long i = 0; i < ps / 4; i++) {
    uint32_t x = seed * 7 + i;
    if (pwrite(fd, &x, 4, 2 * ps + 4 * i) != 4) return 1;
  }
  sum = 0;
  for (long i = 0; i < 3 * ps / 4; i++) sum += r[i];
  printf("grown view at %p sum %lu\n", (void*)r, sum);

  /* A fork child writes through the shared view the parent reads. */
  pid_t c = fork();
  if (c == 0) {
    w[0] = (uint32_t)getpid();
    _exit(0);
  }
  int st;
  if (waitpid(c, &st, 0) != c) return 1;
  printf("child %d wrote %u\n", c, r[0]);

  /* A file shorter than a page, mapped over two pages: the tail of its
     only page reads zero, and extending it by pwrite shows the new page. */
  if (ftruncate(fd, 100) != 0) return 1;
  const uint8_t* s = mmap(NULL, 2 * ps, PROT_READ, MAP_SHARED, fd, 0);
  if (s == MAP_FAILED) return 1;
  uint8_t buf[256];
  memset(buf, (int)(seed & 0xff) | 1, sizeof buf);
  if (pwrite(fd, buf, sizeof buf, 2 * ps - sizeof buf) != (ssize_t)sizeof buf) return 1;
  printf("short file: %u %u %u\n", s[0], s[ps - 1], s[2 * ps - 1]);
  puts("EXIT-SUCCESS");
  return 0;
}
