// Single steps through straight-line code while a real SIGCHLD (of a child replay reaps) is pending: each step must move one instruction.
//
// The program forks children that exit while the parent has SIGCHLD
// blocked; after a nanosleep the parent unblocks it, so the recording
// delivers each SIGCHLD at that rt_sigprocmask. In replay the parent's
// signal mask is emulated: the real SIGCHLD the kernel sends the parent
// when replay reaps its child is pending when the parent next runs,
// which is a debugger's single step through the instructions after the
// nanosleep. body is straight-line code for the parent (its child takes
// the jz), and steptab lists the address of each of its instructions.
// Read by internal/session's TestStepPastRealSignal (steps through the
// session's API) and e2e's TestGDBStepiPastRealSignal (gdb's stepi).
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
struct args { struct timespec ts; unsigned long set; };
void body(struct args *a);
asm(".macro S insn:vararg\n"
    "771:\n"
    "  .pushsection steptab,\"aw\"\n"
    "  .quad 771b\n"
    "  .popsection\n"
    "  \\insn\n"
    ".endm\n"
    "  .pushsection steptab,\"aw\"\n"
    "  .globl steptab_begin\n"
    "steptab_begin:\n"
    "  .popsection\n"
    "  .text\n"
    "  .globl body\n"
    "  .type body,@function\n"
    "body:\n"
    "  S mov %rdi, %r9\n"
    "  S mov $14, %eax\n" /* rt_sigprocmask(SIG_BLOCK, &a->set, 0, 8) */
    "  S xor %edi, %edi\n"
    "  S lea 16(%r9), %rsi\n"
    "  S xor %edx, %edx\n"
    "  S mov $8, %r10d\n"
    "  S syscall\n"
    "  S mov $57, %eax\n" /* fork */
    "  S syscall\n"
    "  S test %rax, %rax\n"
    "  S jz 2f\n"
    "  S mov %r9, %rdi\n"
    "  S xor %esi, %esi\n"
    "  S mov $35, %eax\n" /* nanosleep: the child exits meanwhile */
    "  S syscall\n"
    "  S mov $14, %eax\n" /* rt_sigprocmask(SIG_UNBLOCK, ...) */
    "  S mov $1, %edi\n"
    "  S lea 16(%r9), %rsi\n"
    "  S xor %edx, %edx\n"
    "  S mov $8, %r10d\n"
    "  S syscall\n"
    "  S nop\n"
    "  S add $1, %rdx\n"
    "  S mov $39, %eax\n" /* getpid */
    "  S syscall\n"
    "  S nop\n"
    "  S ret\n"
    "2:\n"
    "  mov $60, %eax\n"
    "  xor %edi, %edi\n"
    "  syscall\n"
    "  .pushsection steptab,\"aw\"\n"
    "  .globl steptab_end\n"
    "steptab_end:\n"
    "  .popsection\n");
int main(void) {
	struct args a = {{0, 30 * 1000 * 1000}, 1ul << (SIGCHLD - 1)};
	struct timespec t0;
	for (int i = 0; i < 3; i++)
		body(&a);
	int n = 0;
	while (wait(NULL) > 0)
		n++;
	clock_gettime(CLOCK_REALTIME, &t0);
	printf("%d children reaped by %d at %ld.%09ld\n", n, getpid(), (long)t0.tv_sec, t0.tv_nsec);
	return 0;
}
