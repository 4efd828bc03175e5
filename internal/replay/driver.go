package replay

import (
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Driver is what a debugger session plugs into the engine (see
// internal/session) besides the Constraints of each Advance: the
// read-watch stepping's questions and the notices it and the preemption
// points' breakpoints need, which come between stops; nothing else of
// the debugger's state reaches the engine. With no driver (an autopilot
// replay, -a) every answer is "nothing". None of them pauses: the stops
// a session handles are where Advance returns (engine.go).
type Driver interface {
	// Resuming: a task resumes, single-stepped or not.
	Resuming(stepping bool)
	// Read watchpoints (run by steps): whether t runs by steps; the
	// start of counting from base; whether the stepping steps before
	// the next system call; whether a step was made only for them.
	ReadWatching(t *Task) bool
	ReadWatchStart(t *Task, base Pos)
	ReadWatchStepsFirst() bool
	ReadWatchOnly(t *Task) bool
	// AdoptBreakpoint hands the session an int3 the engine planted at
	// addr (over orig) where the session has a breakpoint too
	// (Constraints.Breakpoints).
	AdoptBreakpoint(addr uint64, orig byte)
}

// The engine files (replay.go, syscall.go, tasks.go, memory.go,
// preempt.go, ptraceemu.go) ask and notify the driver only through the
// methods below.

// eventDone notes that event ev completed: the replay stands at the
// boundary after it, where Advance stops when asked to.
func (rp *replayer) eventDone(ev *trace.Event) error {
	if rp.drv != nil {
		for _, t := range rp.tasks {
			switch {
			case t.rec != ev.Tid:
				t.othersSinceEntry = true
			case ev.Kind == trace.KindSyscallEntry:
				t.othersSinceEntry = false
			}
		}
	}
	if !rp.c.Boundaries && (rp.c.Event == 0 || rp.c.Event != rp.n) {
		return nil
	}
	return rp.stopAt(Stop{Kind: StopBoundary, Ev: ev})
}

// driven tells whether a debugger session drives the replay.
func (rp *replayer) driven() bool { return rp.drv != nil }

// stepDue tells whether t is to be single-stepped at its next resume
// (Constraints.Step).
func (rp *replayer) stepDue(t *rtask) bool {
	return rp.drv != nil && rp.c.Step != 0 && rp.c.Step == t.rec
}

func (rp *replayer) resuming(stepping bool) {
	if rp.drv != nil {
		rp.drv.Resuming(stepping)
	}
}

// stepStarted: the due single step is under way (Stop.StepStarted).
func (rp *replayer) stepStarted() {
	rp.c.Step = 0
	rp.notes.StepStarted = true
}

// stepEndsAtBoundary: t's step completes when the current event does
// (Stop.StepEnds).
func (rp *replayer) stepEndsAtBoundary(t *rtask) { rp.notes.StepEnds = t.rec }

func (rp *replayer) rwStepsFirst() bool { return rp.drv.ReadWatchStepsFirst() }

func (rp *replayer) rwApplies(t *rtask) bool { return rp.drv != nil && rp.drv.ReadWatching(t) }

func (rp *replayer) rwStart(t *rtask, base Pos) { rp.drv.ReadWatchStart(t, base) }

func (rp *replayer) rwOnly(t *rtask) bool { return rp.drv.ReadWatchOnly(t) }

// debugTrap stops Advance at a SIGTRAP of t that is the debugger's (t
// runs with mode, single-stepped or not): an int3 at one of
// Constraints.Breakpoints (StopBreakpoint, with t's pc moved back onto
// it) or a completed single step (StopStepped). A step that ends inside
// a preemption point's pad is no instruction of the program: it steps
// on. The caller resumes t itself before the next Advance, whose
// Constraints.Trap says whether single-stepped. It returns false for a
// trap that is not the debugger's.
func (rp *replayer) debugTrap(t *rtask, mode int, stepping *bool) (bool, error) {
	if rp.yield == nil {
		return false, nil // Run: no debugger
	}
	si, err := t.thread().GetSigInfo()
	if err != nil {
		return false, nil
	}
	r, err := t.thread().GetRegs()
	if err != nil {
		return false, err
	}
	st := Stop{Task: t, Mode: mode, Stepping: *stepping}
	switch {
	case si.Code() == 0x80: // int3
		if _, ok := rp.c.Breakpoints[r[ptrace.RIP]-1]; !ok {
			return false, nil
		}
		r[ptrace.RIP]--
		if err := t.thread().SetRegs(&r); err != nil {
			return false, err
		}
		st.Kind, st.Addr = StopBreakpoint, r[ptrace.RIP]
	case *stepping && si.Code() == 2 && rp.inPad(r[ptrace.RIP]): // TRAP_TRACE
		return true, rp.stepInsn(t)
	case *stepping && si.Code() == 2:
		st.Kind, st.Addr = StopStepped, r[ptrace.RIP]
	default:
		return false, nil
	}
	if err := rp.stopAt(st); err != nil {
		return false, err
	}
	*stepping = rp.c.Trap.Stepping
	rp.c.Trap = TrapReply{}
	return true, nil
}

// beforeExit, beforeExec and signalStop stop Advance before the process
// of t exits, execs, or receives a fault, abort or fatal signal, when
// the constraints ask for these stops (Constraints.Marks).
func (rp *replayer) beforeExit(t *rtask) error { return rp.markStop(Stop{Kind: StopExiting, Task: t}) }

func (rp *replayer) beforeExec(t *rtask) error { return rp.markStop(Stop{Kind: StopExec, Task: t}) }

func (rp *replayer) signalStop(t *rtask, sig int) error {
	return rp.markStop(Stop{Kind: StopSignal, Task: t, Signal: sig})
}

func (rp *replayer) markStop(st Stop) error {
	if !rp.c.Marks {
		return nil
	}
	return rp.stopAt(st)
}

// breakpointsOf returns the debugger's breakpoints planted in t's
// address space (Constraints.Breakpoints, in the debugged process's);
// nil for other processes.
func (rp *replayer) breakpointsOf(t *rtask) map[uint64]byte {
	if rp.drv == nil {
		return nil
	}
	if lead := rp.tasks[rp.c.Debugged]; lead == nil || t.proc != lead.proc {
		return nil
	}
	return rp.c.Breakpoints
}

func (rp *replayer) adoptBreakpoint(addr uint64, orig byte) { rp.drv.AdoptBreakpoint(addr, orig) }
