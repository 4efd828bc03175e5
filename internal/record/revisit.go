package record

import (
	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/asyncpoint"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// revisit tells whether an asynchronous signal that stops a thread with
// the registers of its last event arrived at that event (it is then
// delivered there, as replay will: the thread ran no instruction since)
// or later (it is held for a point, like any signal met in user code).
//
// After a system call or a trapped instruction the question does not
// arise: the thread cannot come back to those registers without another
// event. After a preemption point, or the exit of an rt_sigreturn (the
// interrupted context, often inside a loop), it can: a loop whose
// registers repeat while it rewrites memory comes round to them again,
// with other memory (corpus async_signal_repeat). Telling that from a
// signal that came before the thread ran is done by single-stepping the
// thread's first instruction when the recorder resumes it from such an
// event (firstStep): a signal stop before the step's trap means the
// thread did not move.
type revisit uint8

const (
	revisitNo      revisit = iota // lastRegs cannot be come back to without an event
	revisitUnmoved                // the thread ran no instruction since its last event
	revisitMoved                  // it ran: a signal at lastRegs came after a loop brought it back
	revisitUnknown                // it was resumed unstepped; sigAtResume tells
)

// setLast records regs as the registers of t's last event; free: a place
// t may come back to with the same registers without another event.
func (t *task) setLast(regs trace.Regs, free bool) {
	t.lastRegs = regs
	t.revisit = revisitNo
	if free {
		t.revisit = revisitUnmoved
	}
	t.sigAtResume = false
}

// arrivedAtLast tells whether an asynchronous signal that stops t with
// registers regs arrived at t's last event.
func (t *task) arrivedAtLast(regs *trace.Regs) bool {
	if *regs != t.lastRegs {
		return false
	}
	switch t.revisit {
	case revisitNo, revisitUnmoved:
		return true
	case revisitUnknown:
		return t.sigAtResume
	}
	return false
}

// firstStep runs t's first instruction after an event it may come back
// to (revisitUnmoved), one single step, so that a later signal at the
// event's registers is known to have come after t moved. handled tells
// that the step met another stop: a signal that arrived before the
// instruction ran (handled: delivered at the event; and the next thread
// resumed), or a death or an event (left to the loop as if t had been
// resumed); if not, the caller resumes t as usual. Where stepping would
// disturb the instruction, or a signal is to be injected, t is resumed
// unstepped, and a signal at the event's registers counts as arriving
// at the event only if it was pending, unblocked, at the resume (the
// kernel delivers it before t runs).
func (r *recorder) firstStep(t *task) (handled bool, err error) {
	t.revisit = revisitUnknown
	if t.pendingSig != 0 {
		t.sigAtResume = false
		return false, nil
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return true, r.lost(t, err)
	}
	if regs != t.lastRegs {
		t.revisit = revisitMoved
		return false, nil
	}
	steppable := false
	if rax := int64(regs[ptrace.RAX]); rax < -516 || rax > -512 {
		// (A call to be restarted moves back to its syscall
		// instruction on resumption: a step would run it unseen.)
		code := make([]byte, 16)
		n := t.mem.ReadPartial(regs[ptrace.RIP], code)
		in, ok := asyncpoint.Decode(code[:n], regs[ptrace.RIP], &regs)
		steppable = ok && !in.Event && !in.PushesFlags
	}
	if !steppable {
		t.sigAtResume = tracee.PendingSignals(t.tid)&^tracee.BlockedSignals(t.tid) != 0
		return false, nil
	}
	st, lost, err := r.runUntil(t, ptrace.Step, 0, ptrace.AcceptAny)
	if lost || err != nil {
		return true, err
	}
	if st.Kind == ptrace.StopSignal && st.Signal == int(unix.SIGTRAP) {
		if si, err := t.thread().GetSigInfo(); err == nil && si.Code() == 2 /* TRAP_TRACE */ {
			t.revisit = revisitMoved
			return false, r.clearStepFlag(t)
		}
	}
	t.revisit = revisitUnmoved
	if st.Kind != ptrace.StopSignal {
		// A death or an event (a SIGKILL from outside took t out of
		// the step): handled as if t had been resumed as usual, by
		// the loop, which takes queued stops first.
		r.markRunning(t)
		r.queued = append([]ptrace.Stop{st}, r.queued...)
		return true, nil
	}
	if err := r.handle(st); err != nil {
		return true, err
	}
	return true, r.runNext()
}

// clearStepFlag clears the trap flag a step leaves visible in the
// registers after a stepped popf.
func (r *recorder) clearStepFlag(t *task) error {
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	if regs[ptrace.EFLAGS]&0x100 == 0 {
		return nil
	}
	regs[ptrace.EFLAGS] &^= 0x100
	return r.lost(t, t.thread().SetRegs(&regs))
}
