// Tests _exit(4): buffered stdio output that was not flushed is lost and atexit handlers do not run.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void never(void) { printf("atexit handler ran (should not happen)\n"); }

int main(void) {
    atexit(never);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("pid=%d t=%ld.%09ld\n", getpid(), (long)ts.tv_sec, ts.tv_nsec);
    printf("EXIT-SUCCESS\n");
    fflush(stdout);
    printf("this buffered line is lost by _exit\n");
    _exit(4);
}
