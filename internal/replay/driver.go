package replay

import "github.com/gorr-debugger/gorr/internal/trace"

// Driver is what a debugger session plugs into the engine (see
// internal/session): the questions the engine has about the debugger's
// plans, and notices of what it did for them; nothing else of the
// debugger's state reaches the engine. With no driver (an autopilot
// replay, -a) every answer is "nothing". None of them pauses: the stops
// a session handles (event boundaries, its traps, the process about to
// exit, exec or receive a fault) are where Advance returns (engine.go).
type Driver interface {
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

// debugTrap stops Advance at a SIGTRAP of t that is not the engine's
// (t runs with mode, single-stepped or not); the next Advance's
// Constraints.Trap says whether the session took it and resumed t.
func (rp *replayer) debugTrap(t *rtask, mode int, stepping *bool) (bool, error) {
	if rp.yield == nil {
		return false, nil // Run: nobody to take it
	}
	if err := rp.stopAt(Stop{Kind: StopTrap, Task: t, Mode: mode, Stepping: *stepping}); err != nil {
		return false, err
	}
	reply := rp.c.Trap
	rp.c.Trap = TrapReply{}
	*stepping = reply.Stepping
	return reply.Handled, nil
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

func (rp *replayer) breakpointsOf(t *rtask) map[uint64]byte {
	if rp.drv == nil {
		return nil
	}
	return rp.drv.Breakpoints(t)
}

func (rp *replayer) adoptBreakpoint(addr uint64, orig byte) { rp.drv.AdoptBreakpoint(addr, orig) }
