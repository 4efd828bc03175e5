// Tests a normal exit with status 3 after atexit handlers and stdio flushing at exit.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void at1(void) {
    printf("atexit handler 1 (runs last), pid=%d\n", getpid());
    printf("EXIT-SUCCESS\n");
}
static void at2(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("atexit handler 2 (runs first) at %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
}

int main(void) {
    atexit(at1);
    atexit(at2);
    printf("unflushed output before exit(3)\n");
    fprintf(stderr, "stderr line: exiting with 3\n");
    exit(3);
}
