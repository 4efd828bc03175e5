/* Tests a parent writing random values into its child's memory through /proc/PID/mem with write, writev and pwritev; the child prints what it finds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long vals[3];

int main(void) {
  int go[2];
  char c;
  if (pipe(go)) return 1;
  printf("pid %d vals at %p\n", getpid(), (void *)vals);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (read(go[0], &c, 1) != 1) _exit(1);
    printf("child %d sees %016lx %016lx %016lx\n", getpid(), vals[0], vals[1], vals[2]);
    fflush(stdout);
    _exit(0);
  }
  unsigned long r[3];
  if (getrandom(r, sizeof r, 0) != sizeof r) return 1;
  char path[64];
  snprintf(path, sizeof path, (r[0] & 1) ? "/proc/%d/mem" : "/proc/%d/task/%d/mem", pid, pid);
  int fd = open(path, O_RDWR);
  if (fd < 0) {
    perror("open mem");
    return 1;
  }
  if (lseek(fd, (off_t)(unsigned long)&vals[0], SEEK_SET) < 0 || write(fd, &r[0], 8) != 8) return 1;
  struct iovec iov[2] = {{&r[1], 3}, {(char *)&r[1] + 3, 5}};
  if (writev(fd, iov, 2) != 8) return 1; /* continues at vals[1] */
  struct iovec one = {&r[2], 8};
  if (pwritev(fd, &one, 1, (off_t)(unsigned long)&vals[2]) != 8) return 1;
  close(fd);
  if (write(go[1], "g", 1) != 1) return 1;
  int st;
  if (waitpid(pid, &st, 0) != pid || st != 0) return 1;
  printf("parent wrote %016lx %016lx %016lx, its own %lx\n", r[0], r[1], r[2], vals[0]);
  puts("EXIT-SUCCESS");
  return 0;
}
