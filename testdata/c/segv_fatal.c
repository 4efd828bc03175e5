// Tests an unhandled SIGSEGV (write through a bad pointer): the process dies with signal 11.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

int main(void) {
    uintptr_t r;
    getrandom(&r, sizeof r, 0);
    volatile int *bad = (volatile int *)(uintptr_t)(0x1000 + (r & 0xfff0)); /* below mmap_min_addr: never mapped */
    printf("pid=%d writing to %p\n", getpid(), (void *)bad);
    fflush(stdout);
    *bad = 42;
    printf("not reached\n");
    return 0;
}
