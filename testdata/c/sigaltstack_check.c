// Tests sigaltstack: a SA_ONSTACK handler runs on the alternate stack (checked by address), also for a SIGSEGV from stack overflow.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static char *alt;
static size_t alt_size;
static volatile uintptr_t handler_sp;
static volatile int on_alt_flag;
static sigjmp_buf jb;

static void h(int sig) {
    int local;
    handler_sp = (uintptr_t)&local;
    stack_t cur;
    sigaltstack(NULL, &cur);
    on_alt_flag = (cur.ss_flags & SS_ONSTACK) != 0;
    if (sig == SIGSEGV) siglongjmp(jb, 1);
}

#pragma GCC diagnostic ignored "-Winfinite-recursion"
static int recurse(int n) { /* overflows the stack on purpose */
    volatile char pad[4096];
    pad[0] = (char)n;
    return recurse(n + 1) + pad[0];
}

int main(void) {
    alt_size = SIGSTKSZ * 4;
    alt = malloc(alt_size);
    stack_t ss = {.ss_sp = alt, .ss_size = alt_size, .ss_flags = 0};
    printf("sigaltstack=%d alt=[%p,%p)\n", sigaltstack(&ss, NULL), (void *)alt, (void *)(alt + alt_size));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    int main_local;
    raise(SIGUSR1);
    int inside = handler_sp >= (uintptr_t)alt && handler_sp < (uintptr_t)alt + alt_size;
    printf("handler sp=%#lx main sp=%p inside alt=%d SS_ONSTACK=%d\n", (unsigned long)handler_sp, (void *)&main_local, inside, on_alt_flag);

    /* without SA_ONSTACK the handler runs on the normal stack */
    sa.sa_flags = 0;
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    inside = handler_sp >= (uintptr_t)alt && handler_sp < (uintptr_t)alt + alt_size;
    printf("no SA_ONSTACK: inside alt=%d SS_ONSTACK=%d\n", inside, on_alt_flag);

    /* stack overflow caught on the alternate stack */
    struct rlimit rl = {256 * 1024, 256 * 1024};
    setrlimit(RLIMIT_STACK, &rl);
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    if (sigsetjmp(jb, 1) == 0) {
        recurse(0);
    } else {
        inside = handler_sp >= (uintptr_t)alt && handler_sp < (uintptr_t)alt + alt_size;
        printf("stack overflow SIGSEGV handled on alt stack=%d\n", inside);
    }
    stack_t cur;
    sigaltstack(NULL, &cur);
    printf("after: ss_flags=%d disable=%d\n", cur.ss_flags, sigaltstack(&(stack_t){.ss_flags = SS_DISABLE}, NULL));
    printf("EXIT-SUCCESS\n");
    return 0;
}
