// Tests System V shared memory: shmget/shmat/shmdt, a fork child writing the segment the parent reads, two attachments of one segment sharing pages, shmdt after a partial munmap.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  long ps = sysconf(_SC_PAGESIZE);
  uint32_t seed;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) return 1;
  int id = shmget(IPC_PRIVATE, 3 * ps, IPC_CREAT | 0600);
  if (id < 0) return 1;
  uint32_t* a = shmat(id, NULL, 0);
  uint32_t* b = shmat(id, NULL, SHM_RDONLY);
  if (a == (void*)-1 || b == (void*)-1) return 1;
  printf("pid %d seed %08x attached at %p and %p\n", getpid(), seed, (void*)a, (void*)b);
  for (long i = 0; i < 3 * ps / 4; i++) a[i] = seed + i;
  pid_t c = fork();
  if (c == 0) {
    a[1] = (uint32_t)getpid() ^ seed;
    _exit(0);
  }
  int st;
  if (waitpid(c, &st, 0) != c) return 1;
  unsigned long sum = 0;
  for (long i = 0; i < 3 * ps / 4; i++) sum += b[i];
  printf("child %d wrote %08x, sum %lu\n", c, b[1], sum);
  if (munmap(a, ps) != 0 || shmdt(a) != 0) return 1;
  if (shmdt(b) != 0 || shmctl(id, IPC_RMID, NULL) != 0) return 1;
  uint32_t* again = mmap(a, ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  printf("range free again: %s\n", again == a ? "yes" : "no");
  puts("EXIT-SUCCESS");
  return 0;
}
