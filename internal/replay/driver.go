package replay

import "github.com/gorr-debugger/gorr/internal/trace"

// What the engine asks of the debugger session that drives it (nil
// replayer.dbg: an autopilot replay, which answers "nothing"). The
// engine files (replay.go, syscall.go, tasks.go, memory.go, preempt.go,
// ptraceemu.go) do not read the session's state (debugState) directly;
// every question goes through these methods. With the session's hooks
// the engine calls (debugTrap, beforeExit, signalStop, resumeStep,
// rwApplies, rwStart, rwOnly) they are the boundary a separate session
// package would implement.

// eventDone tells the session that event ev completed and the replay
// stands at the boundary after it: it may stop there for the debugger
// (afterEvent) and take a snapshot (snapshot.go).
func (rp *replayer) eventDone(ev *trace.Event) error {
	if rp.dbg != nil {
		if err := rp.afterEvent(ev); err != nil {
			return err
		}
	}
	if rp.snaps != nil {
		rp.snaps.after(rp, ev)
	}
	return nil
}

// driven tells whether a debugger session drives the replay.
func (rp *replayer) driven() bool { return rp.dbg != nil }

// stepDue tells whether t is to be single-stepped at its next resume.
func (rp *replayer) stepDue(t *rtask) bool { return rp.dbg != nil && rp.dbg.stepTask == t.rec }

// resuming tells the session that a task resumes, single-stepped or not
// (whether a step is the user's own rather than a goal's matters to it).
func (rp *replayer) resuming(stepping bool) {
	if rp.dbg != nil {
		rp.dbg.userStep = stepping && rp.dbg.goal == nil
	}
}

// stepStarted: the due single step of the task is under way.
func (rp *replayer) stepStarted() { rp.dbg.stepTask = 0 }

// stepEndsAtBoundary: t's single step completes when the current event
// does.
func (rp *replayer) stepEndsAtBoundary(t *rtask) { rp.dbg.stepping = t.rec }

// rwStepsFirst tells whether read-watch stepping steps before the task's
// next system call (rather than running to it).
func (rp *replayer) rwStepsFirst() bool { return !rp.dbg.rw.syscallNext }

// breakpointsOf returns the breakpoints the session planted in t's
// address space (address -> original byte); nil when there are none.
// The map is the session's: adoptBreakpoint adds to it.
func (rp *replayer) breakpointsOf(t *rtask) map[uint64]byte {
	if rp.dbg == nil || t.proc != rp.debugProc() {
		return nil
	}
	return rp.dbg.bps
}

// adoptBreakpoint hands an int3 the engine planted at addr (over the
// original byte orig) to the session, which has a breakpoint there too.
func (rp *replayer) adoptBreakpoint(addr uint64, orig byte) {
	if _, ok := rp.dbg.bps[addr]; !ok {
		rp.dbg.bps[addr] = orig
	}
}
