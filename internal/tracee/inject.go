package tracee

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Inject runs system call nr with args in stopped task tid by pointing
// its instruction pointer at a `syscall` instruction at scAddr, then
// restores its registers. The task must be stopped where resuming runs
// user code (a signal stop or a syscall-exit stop). Signals that arrive
// meanwhile are returned so the caller can decide what to do with them.
func Inject(tid int, scAddr uint64, nr int, args ...uint64) (int64, []int, error) {
	th := ptrace.NewThread(tid)
	saved, err := th.GetRegs()
	if err != nil {
		return 0, nil, err
	}
	r := saved
	var a [6]uint64
	copy(a[:], args)
	ptrace.SetSyscallArgs(&r, a)
	r[ptrace.RAX] = uint64(nr)
	r[ptrace.ORIGRAX] = ^uint64(0)
	r[ptrace.RIP] = scAddr
	if err := th.SetRegs(&r); err != nil {
		return 0, nil, err
	}
	var pending []int
	phase := ptrace.StopSyscallEntry
	if _, err := th.RunUntil(ptrace.Syscall, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		switch st.Kind {
		case ptrace.StopExited:
			return ptrace.Accept, fmt.Errorf("inject %d into tid %d: %w", nr, tid, ErrGone)
		case ptrace.StopSignal:
			pending = append(pending, st.Signal)
			return ptrace.Again, nil
		case ptrace.StopSyscallExit:
			if phase == ptrace.StopSyscallEntry {
				// The exit of a call the task was held in by
				// PTRACE_SYSEMU (skipped): ours comes next.
				return ptrace.Again, nil
			}
			return ptrace.Accept, nil
		case ptrace.StopSyscallEntry:
			if phase != ptrace.StopSyscallEntry {
				return ptrace.Accept, fmt.Errorf("inject %d into tid %d: unexpected %v", nr, tid, st)
			}
			phase = ptrace.StopSyscallExit
			return ptrace.Again, nil
		case ptrace.StopEvent:
			return ptrace.Again, nil
		}
		return ptrace.Accept, fmt.Errorf("inject %d into tid %d: unexpected %v", nr, tid, st)
	}); err != nil {
		return 0, pending, err
	}
	out, err := th.GetRegs()
	if err != nil {
		return 0, pending, err
	}
	if err := th.SetRegs(&saved); err != nil {
		return 0, pending, err
	}
	return int64(out[ptrace.RAX]), pending, nil
}

// MustInject is Inject that turns a negative result into an error.
func MustInject(tid int, scAddr uint64, nr int, args ...uint64) (int64, error) {
	ret, _, err := Inject(tid, scAddr, nr, args...)
	if err != nil {
		return 0, err
	}
	if ret < 0 && ret > -4096 {
		return ret, fmt.Errorf("injected syscall %d in tid %d failed: %w", nr, tid, unix.Errno(-ret))
	}
	return ret, nil
}

// RegsOf is a small helper used by callers that only need a register copy.
func RegsOf(tid int) (trace.Regs, error) { return ptrace.NewThread(tid).GetRegs() }
