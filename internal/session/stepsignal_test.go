package session_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/session"
)

// stepSignalSrc forks children that exit while the parent has SIGCHLD
// blocked; the parent unblocks it after a nanosleep, so the recording
// delivers each SIGCHLD at that rt_sigprocmask. In replay the parent's
// mask is emulated: the real SIGCHLD the kernel sends the parent when
// replay reaps the child is pending when the parent next runs, which is
// a debugger's single step through the instructions after the
// nanosleep. body is straight-line code for the parent (its child takes
// the jz), and steptab lists the address of each of its instructions.
const stepSignalSrc = `#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
struct args { struct timespec ts; unsigned long set; };
void body(struct args *a);
asm(".macro S insn:vararg\n"
    "771:\n"
    "  .pushsection steptab,\"a\"\n"
    "  .quad 771b\n"
    "  .popsection\n"
    "  \\insn\n"
    ".endm\n"
    "  .pushsection steptab,\"a\"\n"
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
    "  .pushsection steptab,\"a\"\n"
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
`

// A real signal that stops a thread during a debugger's single step (the
// SIGCHLD of a child replay reaps) is passed over without ending or
// widening the step: each step moves the thread exactly one
// instruction. (The engine used to resume the thread with its run's
// mode, so the step ran on to the thread's next system call.)
func TestStepPastRealSignal(t *testing.T) {
	dir, syms := recordC(t, stepSignalSrc, nil, "body", "steptab_begin", "steptab_end")
	s, _ := openSession(t, dir, session.SnapshotOptions{Off: true})
	deadline(t, time.Minute, "stepping body", func(r *report) {
		if err := s.SetBreakpoint(syms["body"]); err != nil {
			r.Errorf("break: %v", err)
			return
		}
		for call := 0; call < 3; call++ {
			st, err := s.Continue()
			if err != nil || st.Kind != session.StopBreakpoint {
				r.Errorf("call %d: continue: %+v %v", call, st, err)
				return
			}
			b, err := s.ReadMem(syms["steptab_begin"], int(syms["steptab_end"]-syms["steptab_begin"]))
			if err != nil || len(b) < 16 {
				r.Errorf("reading steptab: %v", err)
				return
			}
			var tab []uint64
			for i := 0; i+8 <= len(b); i += 8 {
				tab = append(tab, binary.LittleEndian.Uint64(b[i:]))
			}
			s.ClearBreakpoint(syms["body"])
			for i := 1; i < len(tab); i++ {
				st, err := s.Step(st.Tid)
				if err != nil || st.Kind != session.StopStep {
					r.Errorf("call %d: step %d: %+v %v", call, i, st, err)
					return
				}
				regs, _, _ := s.Regs(st.Tid)
				if regs[ptrace.RIP] != tab[i] {
					r.Errorf("call %d: step %d from 0x%x went to 0x%x, want 0x%x (event %d)", call, i, tab[i-1], regs[ptrace.RIP], tab[i], s.Position().Event)
					return
				}
			}
			s.SetBreakpoint(syms["body"])
		}
	})
}
