package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// stepiSigchldProg forks children that exit while the parent has SIGCHLD
// blocked; after a nanosleep the parent unblocks it, so the recording
// delivers each SIGCHLD at that rt_sigprocmask. In replay the parent's
// signal mask is emulated: the real SIGCHLD the kernel sends the parent
// when replay reaps its child is pending when the parent next runs,
// which is gdb's stepi through the instructions after the nanosleep.
// body is straight-line code in the parent (the child takes the jz).
// (internal/session's TestStepPastRealSignal steps the same program
// through the session's API.)
const stepiSigchldProg = `#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
struct args { struct timespec ts; unsigned long set; };
void body(struct args *a);
asm("  .text\n"
    "  .globl body\n"
    "  .type body,@function\n"
    "body:\n"
    "  mov %rdi, %r9\n"
    "  mov $14, %eax\n" /* rt_sigprocmask(SIG_BLOCK, &a->set, 0, 8) */
    "  xor %edi, %edi\n"
    "  lea 16(%r9), %rsi\n"
    "  xor %edx, %edx\n"
    "  mov $8, %r10d\n"
    "  syscall\n"
    "  mov $57, %eax\n" /* fork */
    "  syscall\n"
    "  test %rax, %rax\n"
    "  jz 2f\n"
    "  mov %r9, %rdi\n"
    "  xor %esi, %esi\n"
    "  mov $35, %eax\n" /* nanosleep: the child exits meanwhile */
    "  syscall\n"
    "  mov $14, %eax\n" /* rt_sigprocmask(SIG_UNBLOCK, ...) */
    "  mov $1, %edi\n"
    "  lea 16(%r9), %rsi\n"
    "  xor %edx, %edx\n"
    "  mov $8, %r10d\n"
    "  syscall\n"
    "  nop\n"
    "  add $1, %rdx\n"
    "  mov $39, %eax\n" /* getpid */
    "  syscall\n"
    "  nop\n"
    "  ret\n"
    "2:\n"
    "  mov $60, %eax\n"
    "  xor %edi, %edi\n"
    "  syscall\n");
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
`

// stepiBodyLen is the number of stepi from body's first instruction to
// its ret.
const stepiBodyLen = 26

// Each gdb stepi through body moves exactly one instruction, to the one
// x/2i showed after it, although a real SIGCHLD stops the parent during
// some of the steps (replay used to resume it with the run's mode then,
// and the stepi ran on to the next system call). A stepi over a system
// call lands after it (fork's included).
func TestGDBStepiPastRealSignal(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "stepi_sigchld", stepiSigchldProg)
	cmds := []string{"break *body"}
	for call := 0; call < 3; call++ {
		cmds = append(cmds, "continue")
		for i := 0; i < stepiBodyLen; i++ {
			cmds = append(cmds, fmt.Sprintf("echo STEP %d %d\\n", call, i), "x/2i $pc", "stepi", "p/x $pc")
		}
	}
	cmds = append(cmds, "continue")
	out := gdbBatch(t, traceDir, cmds...)
	if want := strings.TrimSpace(string(rec.Stdout)); !strings.Contains(out, want) || strings.Contains(out, "diverged") {
		t.Fatalf("want the recorded output %q at the end:\n%s", want, out)
	}
	insn := regexp.MustCompile(`^(?:=> )?\s*0x([0-9a-f]+)(?: <[^>]*>)?:\s+(.*)$`)
	pc := regexp.MustCompile(`^\$\d+ = 0x([0-9a-f]+)$`)
	steps := strings.Split(out, "STEP ")[1:]
	if len(steps) != 3*stepiBodyLen {
		t.Fatalf("%d steps in gdb's output, want %d:\n%s", len(steps), 3*stepiBodyLen, out)
	}
	for _, s := range steps {
		lines := strings.Split(s, "\n")
		var addrs, texts, got []string
		for _, l := range lines[1:] {
			if m := insn.FindStringSubmatch(strings.TrimRight(l, " ")); m != nil {
				addrs, texts = append(addrs, m[1]), append(texts, m[2])
			}
			if m := pc.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				got = append(got, m[1])
			}
		}
		if len(addrs) != 2 || len(got) != 1 {
			t.Fatalf("step %s: cannot read gdb's x/2i and $pc:\n%s", lines[0], s)
		}
		if got[0] != addrs[1] && !(strings.HasPrefix(texts[0], "j") && strings.Contains(texts[0], "0x"+got[0])) {
			t.Fatalf("stepi %s from 0x%s (%s) went to 0x%s, want 0x%s:\n%s", lines[0], addrs[0], texts[0], got[0], addrs[1], out)
		}
	}
}
