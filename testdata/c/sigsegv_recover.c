// Tests SIGSEGV recovery with siglongjmp: faults on a PROT_NONE page, a read-only page and NULL, printing si_addr/si_code.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf jb;
static volatile void *fault_addr;
static volatile int fault_code;

static void h(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    fault_addr = si->si_addr;
    fault_code = si->si_code;
    siglongjmp(jb, 1);
}

static void try_access(const char *what, volatile char *p, int write) {
    if (sigsetjmp(jb, 1) == 0) {
        if (write) *p = 1;
        else (void)*p;
        printf("%-10s no fault\n", what);
    } else {
        printf("%-10s fault at %p (expected %p) code=%s\n", what, (void *)fault_addr, (void *)p,
               fault_code == SEGV_MAPERR ? "SEGV_MAPERR" : fault_code == SEGV_ACCERR ? "SEGV_ACCERR" : "?");
    }
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    long pg = sysconf(_SC_PAGESIZE);
    char *none = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *gone = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(gone, pg);
    try_access("PROT_NONE", none + 123, 0);
    try_access("read-only", ro + 77, 1);
    try_access("read ok", ro + 77, 0);
    try_access("unmapped", gone + 5, 1);
    try_access("NULL+16", (char *)16, 0);
    /* repeated faults after recovery */
    int faults = 0;
    for (int i = 0; i < 5; i++) {
        if (sigsetjmp(jb, 1) == 0) *(volatile char *)(none + i * 100) = 1;
        else faults++;
    }
    printf("repeated faults=%d\n", faults);
    mprotect(none, pg, PROT_READ | PROT_WRITE);
    try_access("after mprotect", none + 123, 1);
    printf("EXIT-SUCCESS\n");
    return 0;
}
