package session

import (
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// The driver's side of the engine's replay.Driver interface: the
// engine's questions and notices, answered from the run's debugger
// state.

// EventDone stops at the boundary after ev when a stop is due there
// (afterEvent) and takes a snapshot when one is due (snapshots.go).
func (d *driver) EventDone(ev *trace.Event) error {
	if err := d.afterEvent(ev); err != nil {
		return err
	}
	if d.snaps != nil {
		d.snaps.after(d, ev)
	}
	return nil
}

// StepDue tells whether t is to be single-stepped at its next resume.
func (d *driver) StepDue(t *replay.Task) bool { return d.stepTask == t.Rec() }

// Resuming notes whether the resume is the user's own step (rather than
// a goal's).
func (d *driver) Resuming(stepping bool) { d.userStep = stepping && d.goal == nil }

// StepStarted: the due single step is under way.
func (d *driver) StepStarted() { d.stepTask = 0 }

// StepEndsAtBoundary: t's step completes when the current event does.
func (d *driver) StepEndsAtBoundary(t *replay.Task) { d.stepping = t.Rec() }

// Trap handles a breakpoint hit or a completed step (timeline.go).
func (d *driver) Trap(t *replay.Task, mode int, stepping *bool) (bool, error) {
	return d.debugTrap(t, mode, stepping)
}

// BeforeExit, BeforeExec and SignalStop report the stops rr gives there.
func (d *driver) BeforeExit(t *replay.Task) error          { return d.beforeExit(t) }
func (d *driver) BeforeExec(t *replay.Task) error          { return d.beforeExec(t) }
func (d *driver) SignalStop(t *replay.Task, sig int) error { return d.signalStop(t, sig) }

// The read-watch stepping (readwatch.go).
func (d *driver) ReadWatching(t *replay.Task) bool        { return d.rwApplies(t) }
func (d *driver) ReadWatchStart(t *replay.Task, base Pos) { d.rwStart(t, base) }
func (d *driver) ReadWatchStepsFirst() bool               { return !d.rw.syscallNext }
func (d *driver) ReadWatchOnly(t *replay.Task) bool       { return d.rwOnly(t) }

// Breakpoints returns the breakpoints planted in t's address space
// (the debugged process's); nil for other processes.
func (d *driver) Breakpoints(t *replay.Task) map[uint64]byte {
	if t.Proc() != d.debugProc() {
		return nil
	}
	return d.bps
}

// AdoptBreakpoint takes over an int3 the engine planted at addr where the
// session has a breakpoint too.
func (d *driver) AdoptBreakpoint(addr uint64, orig byte) {
	if _, ok := d.bps[addr]; !ok {
		d.bps[addr] = orig
	}
}
