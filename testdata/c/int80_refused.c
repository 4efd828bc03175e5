// Tests that a 32-bit system call made with int $0x80 from 64-bit code is refused at record with a clear error (not recorded with the x86-64 table).
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  printf("pid %d time %ld\n", getpid(), (long)time(NULL));
  fflush(stdout);
  char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  strcpy(low, "int80 write\n");
  int ret;
  /* i386 write(1, low, 12): number 4 is stat in the x86-64 table. */
  asm volatile("int $0x80" : "=a"(ret) : "a"(4), "b"(1), "c"((unsigned)(unsigned long)low), "d"(12) : "memory");
  printf("ret %d\n", ret);
  puts("EXIT-SUCCESS");
  return 0;
}
