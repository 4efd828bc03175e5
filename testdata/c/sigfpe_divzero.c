// Tests SIGFPE from integer division by zero (and INT_MIN/-1) handled with siglongjmp; prints si_code and faulting address.
#define _GNU_SOURCE
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static sigjmp_buf jb;
static volatile int code;
static void *volatile addr;

static void h(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    code = si->si_code;
    addr = si->si_addr;
    siglongjmp(jb, 1);
}

__attribute__((noinline)) static int divide(int a, int b) { return a / b; }

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGFPE, &sa, NULL);
    int r;
    getrandom(&r, sizeof r, 0);
    r = (r & 0xffff) + 1;
    printf("divide(%d, 7) = %d\n", r, divide(r, 7));
    volatile int zero = 0;
    if (sigsetjmp(jb, 1) == 0) {
        printf("no fault: %d\n", divide(r, zero));
    } else {
        printf("SIGFPE code=%s addr in divide()=%d\n", code == FPE_INTDIV ? "FPE_INTDIV" : "?",
               (char *)addr >= (char *)divide && (char *)addr < (char *)divide + 64);
    }
    volatile int minus1 = -1, minint = INT_MIN;
    if (sigsetjmp(jb, 1) == 0) {
        printf("no fault: %d\n", divide(minint, minus1));
    } else {
        printf("INT_MIN/-1 SIGFPE code=%d\n", code);
    }
    volatile int count = 0, sink = 0;
    for (volatile int i = 0; i < 3; i++) {
        if (sigsetjmp(jb, 1) != 0) count++;
        else sink = divide(i, zero);
    }
    (void)sink;
    printf("handled %d more, pid=%d\n", count, getpid());
    printf("EXIT-SUCCESS\n");
    return 0;
}
