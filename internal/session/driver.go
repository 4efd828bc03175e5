package session

import (
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// The driver runs the engine stop by stop (drive) and is the engine's
// replay.Driver: it answers the engine's questions from the run's
// debugger state.

// drive advances the engine to the end of the trace, handling each stop
// it returns: the bookkeeping of every event boundary, the debugger's
// traps, the stops before an exit, an exec or a fault. Where a stop is
// due for the debugger, the handler pauses (serves the debugger's
// requests) until one resumes. It returns nil at the end of the trace,
// else the engine's error (a divergence) or the handler's (errKilled).
func (d *driver) drive() error {
	c := replay.Constraints{Boundaries: true, Marks: true}
	for {
		c.Step, c.Breakpoints, c.Debugged = d.stepTask, d.bps, d.pid
		st, err := d.e.Advance(c)
		if err != nil {
			return err
		}
		if st.StepStarted {
			d.stepTask = 0
		}
		if st.StepEnds != 0 {
			d.stepping = st.StepEnds
		}
		c.Trap = replay.TrapReply{}
		switch st.Kind {
		case replay.StopEnd:
			return nil
		case replay.StopBoundary:
			err = d.eventDone(st.Ev)
		case replay.StopBreakpoint, replay.StopStepped:
			stepping := st.Stepping
			err = d.debugTrap(st, &stepping) // timeline.go
			c.Trap = replay.TrapReply{Stepping: stepping}
		case replay.StopExiting:
			err = d.beforeExit(st.Task)
		case replay.StopExec:
			err = d.beforeExec(st.Task)
		case replay.StopSignal:
			err = d.signalStop(st.Task, st.Signal)
		}
		if err != nil {
			return err
		}
	}
}

// eventDone stops at the boundary after ev when a stop is due there
// (afterEvent) and takes a snapshot when one is due (snapshots.go).
func (d *driver) eventDone(ev *trace.Event) error {
	if err := d.afterEvent(ev); err != nil {
		return err
	}
	if d.snaps != nil {
		d.snaps.after(d, ev)
	}
	return nil
}

// Resuming notes whether the resume is the user's own step (rather than
// a goal's).
func (d *driver) Resuming(stepping bool) { d.userStep = stepping && d.goal == nil }

// The read-watch stepping (readwatch.go).
func (d *driver) ReadWatching(t *replay.Task) bool        { return d.rwApplies(t) }
func (d *driver) ReadWatchStart(t *replay.Task, base Pos) { d.rwStart(t, base) }
func (d *driver) ReadWatchStepsFirst() bool               { return !d.rw.syscallNext }
func (d *driver) ReadWatchOnly(t *replay.Task) bool       { return d.rwOnly(t) }

// AdoptBreakpoint takes over an int3 the engine planted at addr where the
// session has a breakpoint too.
func (d *driver) AdoptBreakpoint(addr uint64, orig byte) {
	if _, ok := d.bps[addr]; !ok {
		d.bps[addr] = orig
	}
}
