package replay

import "github.com/gorr-debugger/gorr/internal/trace"

// Driver is what a debugger session plugs into the engine (see
// internal/session): the engine asks it the questions it has about the
// debugger's plans and tells it what happens, and nothing else of the
// debugger's state reaches the engine. With no driver (an autopilot
// replay, -a) every answer is "nothing".
//
// The session runs as a coroutine inside the engine's event loop: it
// may pause in EventDone, Trap, BeforeExit, BeforeExec and SignalStop
// (serving the debugger's requests through the engine's exported
// operations on the same ptrace thread) before it returns.
type Driver interface {
	// EventDone: event ev completed and the replay stands at the
	// boundary after it (the session may stop there and take a
	// snapshot).
	EventDone(ev *trace.Event) error
	// StepDue tells whether t is to be single-stepped at its next
	// resume.
	StepDue(t *Task) bool
	// Resuming: a task resumes, single-stepped or not.
	Resuming(stepping bool)
	// StepStarted: the due single step is under way.
	StepStarted()
	// StepEndsAtBoundary: t's single step completes when the current
	// event does.
	StepEndsAtBoundary(t *Task)
	// Trap handles a SIGTRAP of t that is not the engine's (a
	// breakpoint, a completed step); it returns false for a trap that
	// is not the session's either. It resumes t itself when it handled
	// the trap (stepping says whether t is now single-stepped).
	Trap(t *Task, mode int, stepping *bool) (bool, error)
	// BeforeExit, BeforeExec and SignalStop come before the debugged
	// process exits, execs, or receives a fault, abort or fatal signal.
	BeforeExit(t *Task) error
	BeforeExec(t *Task) error
	SignalStop(t *Task, sig int) error
	// Read watchpoints (run by steps): whether t runs by steps; the
	// start of counting from base; whether the stepping steps before
	// the next system call; whether a step was made only for them.
	ReadWatching(t *Task) bool
	ReadWatchStart(t *Task, base Pos)
	ReadWatchStepsFirst() bool
	ReadWatchOnly(t *Task) bool
	// Breakpoints returns the breakpoints the session planted in t's
	// address space (address -> original byte); nil when there are
	// none. AdoptBreakpoint hands it an int3 the engine planted at addr
	// (over orig) where the session has a breakpoint too.
	Breakpoints(t *Task) map[uint64]byte
	AdoptBreakpoint(addr uint64, orig byte)
}

// The engine files (replay.go, syscall.go, tasks.go, memory.go,
// preempt.go, ptraceemu.go) ask and notify the driver only through the
// methods below.

// eventDone tells the driver that event ev completed.
func (rp *replayer) eventDone(ev *trace.Event) error {
	if rp.drv == nil {
		return nil
	}
	for _, t := range rp.tasks {
		switch {
		case t.rec != ev.Tid:
			t.othersSinceEntry = true
		case ev.Kind == trace.KindSyscallEntry:
			t.othersSinceEntry = false
		}
	}
	return rp.drv.EventDone(ev)
}

// driven tells whether a debugger session drives the replay.
func (rp *replayer) driven() bool { return rp.drv != nil }

func (rp *replayer) stepDue(t *rtask) bool { return rp.drv != nil && rp.drv.StepDue(t) }

func (rp *replayer) resuming(stepping bool) {
	if rp.drv != nil {
		rp.drv.Resuming(stepping)
	}
}

func (rp *replayer) stepStarted() { rp.drv.StepStarted() }

func (rp *replayer) stepEndsAtBoundary(t *rtask) { rp.drv.StepEndsAtBoundary(t) }

func (rp *replayer) rwStepsFirst() bool { return rp.drv.ReadWatchStepsFirst() }

func (rp *replayer) rwApplies(t *rtask) bool { return rp.drv != nil && rp.drv.ReadWatching(t) }

func (rp *replayer) rwStart(t *rtask, base Pos) { rp.drv.ReadWatchStart(t, base) }

func (rp *replayer) rwOnly(t *rtask) bool { return rp.drv.ReadWatchOnly(t) }

func (rp *replayer) debugTrap(t *rtask, mode int, stepping *bool) (bool, error) {
	return rp.drv.Trap(t, mode, stepping)
}

func (rp *replayer) beforeExit(t *rtask) error {
	if rp.drv == nil {
		return nil
	}
	return rp.drv.BeforeExit(t)
}

func (rp *replayer) beforeExec(t *rtask) error {
	if rp.drv == nil {
		return nil
	}
	return rp.drv.BeforeExec(t)
}

func (rp *replayer) signalStop(t *rtask, sig int) error {
	if rp.drv == nil {
		return nil
	}
	return rp.drv.SignalStop(t, sig)
}

func (rp *replayer) breakpointsOf(t *rtask) map[uint64]byte {
	if rp.drv == nil {
		return nil
	}
	return rp.drv.Breakpoints(t)
}

func (rp *replayer) adoptBreakpoint(addr uint64, orig byte) { rp.drv.AdoptBreakpoint(addr, orig) }
