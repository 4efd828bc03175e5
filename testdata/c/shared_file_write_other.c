/* Tests writes through a file descriptor by a process that does not map the file, seen by another process's MAP_SHARED mapping of it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  char path[] = "/tmp/gorr-sfwo-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  unlink(path);
  char zero[8192] = {0};
  if (write(fd, zero, sizeof zero) != sizeof zero) return 1;
  unsigned char *map = mmap(NULL, sizeof zero, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return 1;
  printf("pid %d map %p\n", getpid(), (void *)map);
  for (int round = 0; round < 3; round++) {
    pid_t pid = fork();
    if (pid == 0) {
      unsigned char r[16];
      if (getrandom(r, sizeof r, 0) != sizeof r) _exit(1);
      if (round != 1 && munmap(map, sizeof zero)) _exit(1); /* round 1: still mapped here */
      if (pwrite(fd, r, 8, 100 * round) != 8) _exit(1);
      if (lseek(fd, 4096 + 100 * round, SEEK_SET) < 0 || write(fd, r + 8, 8) != 8) _exit(1);
      _exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || st != 0) return 1;
    printf("round %d (child %d):", round, pid);
    for (int i = 0; i < 8; i++) printf(" %02x", map[100 * round + i]);
    printf(" |");
    for (int i = 0; i < 8; i++) printf(" %02x", map[4096 + 100 * round + i]);
    printf("\n");
  }
  puts("EXIT-SUCCESS");
  return 0;
}
