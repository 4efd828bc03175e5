package replay

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Replay traps rdtsc, rdtscp and cpuid by kernel where the recording
// did (record/traps.go): from an exec without trace.ExecUntrapped, and
// from a system-call exit marked trace.TrapsAfter on, in every thread of
// the address space. Each thread is set before it runs user code again:
// at the start of its next event, which is where replay runs it from.
// Trapping in a thread where the recording had not yet is harmless (no
// untrapped code runs one of these instructions but through its int3),
// so the thread may be set a little earlier than the recorded one was.

// armTraps sets the kernel traps in the task of ev before its event is
// replayed, if its address space traps and the task does not yet.
func (rp *replayer) armTraps(ev *trace.Event) error {
	t := rp.tasks[ev.Tid]
	if t == nil || t.trapped || !t.proc.trap || t.gone || t.killed || t.executing || t.bufRun.owns(rp.n) {
		return nil
	}
	switch ev.Kind {
	case trace.KindExec, trace.KindExit:
		return nil // exec sets them; a dying thread runs no more code
	}
	if err := setTraps(t, true); err != nil {
		return fmt.Errorf("event %d: tid %d: %w", rp.n, ev.Tid, err)
	}
	return nil
}

// trapsAfter notes a system-call exit after which t's address space
// traps the instructions (trace.TrapsAfter).
func trapsAfter(t *rtask, ev *trace.Event) {
	if ev.Kind == trace.KindSyscallExit && ev.Flags&trace.TrapsAfter != 0 {
		t.proc.trap = true
	}
}

// setTraps turns the kernel traps on or off in stopped task t by calls
// made from a `syscall` instruction written over the one at its rip for
// the time (cpuid faulting may not exist: its call may fail).
func setTraps(t *rtask, on bool) (err error) {
	regs, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	at := regs[ptrace.RIP]
	var orig [2]byte
	if err := t.mem.ReadMem(at, orig[:]); err != nil {
		return err
	}
	if err := t.mem.WriteMem(at, []byte{0x0f, 0x05}); err != nil {
		return err
	}
	defer func() {
		if werr := t.mem.WriteMem(at, orig[:]); err == nil {
			err = werr
		}
	}()
	tsc, cpuid := uint64(unix.PR_TSC_ENABLE), uint64(1)
	if on {
		tsc, cpuid = unix.PR_TSC_SIGSEGV, 0
	}
	if _, err := tracee.MustInject(t.real, at, unix.SYS_PRCTL, unix.PR_SET_TSC, tsc); err != nil {
		return fmt.Errorf("set rdtsc trapping: %w", err)
	}
	if _, _, err := tracee.Inject(t.real, at, unix.SYS_ARCH_PRCTL, 0x1012, cpuid); err != nil { // ARCH_SET_CPUID
		return fmt.Errorf("set cpuid faulting: %w", err)
	}
	t.trapped = on
	return nil
}
