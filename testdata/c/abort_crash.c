// Tests abort(): the process dies from SIGABRT (signal 6) after printing state; the harness expects a signal death.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
    int local;
    void *heap = malloc(32);
    printf("about to abort: pid=%d stack=%p heap=%p\n", getpid(), (void *)&local, heap);
    fflush(stdout);
    fprintf(stderr, "calling abort()\n");
    abort();
}
