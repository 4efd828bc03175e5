/* Tests a SIGILL whose handler frame cannot be pushed (rsp points at unmapped memory): the kernel forces a SIGSEGV, whose handler runs on an alternate stack. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <ucontext.h>
#include <unistd.h>

static char altstack[64 * 1024];
static volatile int segv_sig, segv_code, ill_count;
static volatile uint64_t segv_rsp;

static void on_ill(int sig) {
  (void)sig;
  ill_count++; /* never runs: its frame cannot be built */
}

static void on_segv(int sig, siginfo_t *si, void *uc_) {
  ucontext_t *uc = uc_;
  segv_sig = sig;
  segv_code = si->si_code;
  segv_rsp = uc->uc_mcontext.gregs[REG_RSP];
  uc->uc_mcontext.gregs[REG_RIP] += 2; /* skip the ud2 */
}

int main(void) {
  unsigned r[4];
  if (getrandom(r, sizeof r, 0) != sizeof r) return 1;
  printf("pid %d altstack %p\n", getpid(), (void *)altstack);
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  if (sigaltstack(&ss, NULL)) return 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_ill;
  sigaction(SIGILL, &sa, NULL);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
  for (int i = 0; i < 3; i++) {
    uint64_t bad = (uint64_t)(r[i] % 15 + 1) << 12; /* below mmap_min_addr */
    asm volatile("mov %%rsp, %%rbx\n\t"
                 "mov %0, %%rsp\n\t"
                 "ud2\n\t"
                 "mov %%rbx, %%rsp\n\t"
                 :
                 : "r"(bad)
                 : "rbx", "memory");
    printf("round %d: bad rsp 0x%llx -> signal %d code 0x%x rsp seen 0x%llx, SIGILL handler ran %d times\n",
           i, (unsigned long long)bad, segv_sig, segv_code, (unsigned long long)segv_rsp, ill_count);
  }
  puts("EXIT-SUCCESS");
  return 0;
}
