package replay

import (
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// What the engine asks of the debugger's plans, and what it tells of
// them, goes through the Constraints of each Advance and the Stops it
// returns (engine.go); nothing else of the debugger's state reaches the
// engine. The engine files (replay.go, syscall.go, tasks.go, memory.go,
// preempt.go, ptraceemu.go) reach them only through the methods below.
// Without Advance (Run, an autopilot replay) every answer is "nothing".

// eventDone notes that event ev completed: the replay stands at the
// boundary after it, where Advance stops when asked to.
func (rp *replayer) eventDone(ev *trace.Event) error {
	if rp.driven() {
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

// driven tells whether a debugger session drives the replay (Advance).
func (rp *replayer) driven() bool { return rp.yield != nil }

// stepDue tells whether t is to be single-stepped at its next resume
// (Constraints.Step).
func (rp *replayer) stepDue(t *rtask) bool {
	return rp.driven() && rp.c.Step != 0 && rp.c.Step == t.rec
}

// resuming notes whether a resume of a task is the user's own step
// (Constraints.UserStep, Stop.UserStep).
func (rp *replayer) resuming(stepping bool) {
	if rp.driven() {
		rp.c.UserStep = stepping && !rp.c.Goal
		rp.notes.UserStepSet, rp.notes.UserStep = true, rp.c.UserStep
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

// rwApplies tells whether t, a task of the debugged process, runs by
// steps for read watchpoints (Constraints.ReadWatch).
func (rp *replayer) rwApplies(t *rtask) bool {
	if !rp.driven() || !rp.c.ReadWatch {
		return false
	}
	lead := rp.tasks[rp.c.Debugged]
	return lead != nil && t.proc == lead.proc
}

// rwStart stops Advance where read-watch stepping starts counting t's
// steps from base (StopReadWatch); it returns whether the stepping
// steps before t's next system call (Constraints.Trap.Stepping).
func (rp *replayer) rwStart(t *rtask, base Pos) (bool, error) {
	if err := rp.stopAt(Stop{Kind: StopReadWatch, Task: t, Base: base}); err != nil {
		return false, err
	}
	first := rp.c.Trap.Stepping
	rp.c.Trap = TrapReply{}
	return first, nil
}

// rwOnly tells whether a step of t was made only for read watchpoints:
// t is the task they count (Constraints.ReadWatchTask) and the step is
// neither the user's nor a goal's.
func (rp *replayer) rwOnly(t *rtask) bool {
	if t != rp.c.ReadWatchTask {
		return false
	}
	if rp.c.Goal {
		return rp.c.ReadWatchGoalOnly
	}
	return !rp.c.UserStep
}

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
	if !rp.driven() {
		return nil
	}
	if lead := rp.tasks[rp.c.Debugged]; lead == nil || t.proc != lead.proc {
		return nil
	}
	return rp.c.Breakpoints
}

// adoption is a preemption point's int3 at addr (over orig) that a
// debugger breakpoint at the same address takes over.
type adoption struct {
	addr uint64
	orig byte
}

// adoptBreakpoint hands the int3 the engine planted at addr (over orig)
// to the debugger's breakpoint there (MakeRoomForBreakpoint returns it).
func (rp *replayer) adoptBreakpoint(addr uint64, orig byte) {
	rp.adopted = &adoption{addr, orig}
}
