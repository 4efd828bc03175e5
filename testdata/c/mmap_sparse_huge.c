// Tests huge sparse file mappings (a 64 GiB file with three written pages, a 1 TiB memfd): record and replay must touch only the written pages.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  const off_t size = (off_t)64 << 30;
  uint64_t rnd;
  if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) return 1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int fd = open("big", O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 1;
  off_t offs[3] = {0, size / 3 & ~4095L, size - 4096};
  for (int i = 0; i < 3; i++) {
    uint64_t v = rnd + i;
    if (pwrite(fd, &v, 8, offs[i] + 8) != 8) return 1;
  }
  uint8_t* shr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  uint8_t* priv = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (priv == MAP_FAILED || shr == MAP_FAILED) return 1;
  shr[size / 2] = (uint8_t)rnd | 1;
  uint64_t sum = 0;
  for (int i = 0; i < 3; i++) sum += *(uint64_t*)(priv + offs[i] + 8);
  printf("maps %p %p sum %lx middle %u\n", (void*)priv, (void*)shr, (unsigned long)sum, priv[size / 2]);

  int m = memfd_create("huge", 0);
  if (m < 0 || ftruncate(m, (off_t)1 << 40) != 0 || write(m, &rnd, 8) != 8) return 1;
  uint64_t* h = mmap(NULL, (size_t)1 << 40, PROT_READ, MAP_SHARED, m, 0);
  if (h == MAP_FAILED) return 1;
  printf("memfd map %p first word %lx\n", (void*)h, (unsigned long)h[0]);
  munmap(h, (size_t)1 << 40);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("took %ld ms\n", (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
  puts("EXIT-SUCCESS");
  return 0;
}
