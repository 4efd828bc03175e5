/* Tests a software perf counter (perf_event_open): its ioctls (ENABLE, DISABLE, RESET, ID) and reads of its varying value. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  struct perf_event_attr pe;
  memset(&pe, 0, sizeof pe);
  pe.size = sizeof pe;
  pe.type = PERF_TYPE_SOFTWARE;
  pe.config = PERF_COUNT_SW_TASK_CLOCK;
  pe.disabled = 1;
  pe.exclude_kernel = 1;
  pe.read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
  int fd = syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
  if (fd < 0) {
    perror("perf_event_open");
    return 1;
  }
  printf("pid %d fd %d\n", getpid(), fd);
  if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) return 1;
  volatile uint64_t x = 0;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    for (int i = 0; i < 100000; i++) x += i;
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec < 2000000);
  if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0)) return 1;
  uint64_t v[3], id = 0;
  if (read(fd, v, sizeof v) != sizeof v) return 1;
  if (ioctl(fd, PERF_EVENT_IOC_ID, &id)) return 1;
  printf("task clock %llu ns (enabled %llu ns), id matches %d\n", (unsigned long long)v[0],
         (unsigned long long)v[1], id == v[2]);
  if (ioctl(fd, PERF_EVENT_IOC_RESET, 0)) return 1;
  if (read(fd, v, sizeof v) != sizeof v) return 1;
  printf("after reset %llu, sum %llu\n", (unsigned long long)v[0], (unsigned long long)x);
  close(fd);
  puts("EXIT-SUCCESS");
  return 0;
}
