// Tests SIGILL from the ud2 instruction handled by skipping it via the ucontext RIP, and via siglongjmp.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int count, code;
static void *volatile fault_ip;
static sigjmp_buf jb;
static volatile int use_jmp;

static void h(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    count++;
    code = si->si_code;
    fault_ip = si->si_addr;
    if (use_jmp) siglongjmp(jb, 1);
    uc->uc_mcontext.gregs[REG_RIP] += 2; /* skip the 2-byte ud2 */
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &sa, NULL);
    int after = 0;
    __asm__ volatile("ud2\n\tmovl $7, %0" : "=r"(after));
    printf("skipped ud2: count=%d code=%s after=%d\n", count, code == ILL_ILLOPN ? "ILL_ILLOPN" : code == ILL_ILLOPC ? "ILL_ILLOPC" : "?",
           after);
    printf("fault ip=%p (varies with ASLR)\n", fault_ip);
    use_jmp = 1;
    if (sigsetjmp(jb, 1) == 0) {
        __asm__ volatile("ud2");
        printf("not reached\n");
    } else {
        printf("siglongjmp out of SIGILL: count=%d\n", count);
    }
    printf("EXIT-SUCCESS\n");
    return 0;
}
