/* Tests a 20 GiB sparse memfd holding code, mapped executable (as .NET's double mapping does): the recording must not read the whole file. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  int fd = memfd_create("double_mapper", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 20LL << 30)) return 1;
  unsigned r;
  if (getrandom(&r, sizeof r, 0) != sizeof r) return 1;
  /* mov $r, %eax; ret */
  unsigned char code[6] = {0xb8, 0, 0, 0, 0, 0xc3};
  memcpy(code + 1, &r, 4);
  off_t off = (off_t)(r % 1024) << 24; /* somewhere in the first 16 GiB */
  if (pwrite(fd, code, sizeof code, off) != sizeof code) return 1;
  unsigned (*fn)(void) = (unsigned (*)(void))mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off);
  if ((void *)fn == MAP_FAILED) return 1;
  unsigned got = fn();
  clock_gettime(CLOCK_MONOTONIC, &b);
  long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
  printf("code at %p (file offset 0x%llx) returned %08x, %s\n", (void *)fn, (unsigned long long)off, got,
         got == r ? "as written" : "WRONG");
  printf("took %s\n", ms < 5000 ? "under 5 s" : "too long");
  close(fd);
  puts("EXIT-SUCCESS");
  return 0;
}
