package replay

import (
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Emulated ptrace (see internal/record/ptraceemu.go): the tracer's ptrace
// and wait calls are emulated from the trace like any other call; what
// the tracer changed in its tracee arrives as KindPtraceWrite events,
// applied here to the tracee, which stands where its emulated stop left
// it.

// sigPtraceResumed (record.SigPtraceResumed): a signal delivered when the
// emulated tracer resumed the task; the task already stands at the
// position of its stop.
const sigPtraceResumed = 1 << 4

// ptraceWrite applies the memory, registers and extended state an
// emulated tracer wrote into a stopped tracee.
func (rp *replayer) ptraceWrite(ev *trace.Event) error {
	t, err := rp.task(ev)
	if err != nil {
		return err
	}
	if t.killed {
		// What the recorded kernel wrote as the killed task died, taken
		// at its exit stop: written at the same stop.
		if err := rp.awaitExitStop(ev, t); err != nil {
			return err
		}
	}
	for _, m := range ev.Mem {
		if err := t.mem.WriteMem(m.Addr, m.Data); err != nil {
			return rp.diverge(ev, "emulated PTRACE_POKEDATA: "+err.Error())
		}
	}
	if ev.Regs2 != nil {
		regs := *ev.Regs2
		if err := t.thread().SetRegs(&regs); err != nil {
			return err
		}
	}
	if len(ev.XState) > 0 {
		if err := t.thread().SetXState(ev.XState); err != nil {
			return err
		}
	}
	return nil
}

// ptraceResumed reports whether a signal event delivers a signal to a
// task already standing at its (emulated-ptrace) stop.
func ptraceResumed(ev *trace.Event) bool { return ev.Flags&sigPtraceResumed != 0 }
