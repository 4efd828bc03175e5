// Tests SIGTRAP from an int3 instruction handled in-process (RIP points after int3), plus raise(SIGTRAP).
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int traps, last_code;
static volatile unsigned long trap_rip;

static void h(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    traps++;
    last_code = si->si_code;
    trap_rip = uc->uc_mcontext.gregs[REG_RIP];
}

extern char after_int3[];

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGTRAP, &sa, NULL);
    __asm__ volatile("int3\n\t.globl after_int3\nafter_int3:\n\tnop");
    printf("int3: traps=%d code=%s rip after int3=%d rip=%#lx\n", traps, last_code == SI_KERNEL ? "SI_KERNEL" : "other",
           trap_rip == (unsigned long)after_int3, trap_rip);
    for (int i = 0; i < 3; i++) __asm__ volatile("int3");
    printf("after 3 more: traps=%d\n", traps);
    raise(SIGTRAP);
    printf("raise: traps=%d code=%s pid=%d\n", traps, last_code == SI_TKILL ? "SI_TKILL" : last_code == SI_USER ? "SI_USER" : "other",
           getpid());
    printf("EXIT-SUCCESS\n");
    return 0;
}
