package session

import (
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// The driver runs the engine stop by stop (drive), telling it what the
// run's debugger state asks of it in each Advance's constraints.

// drive advances the engine to the end of the trace, handling each stop
// it returns: the bookkeeping of every event boundary, the debugger's
// traps, the stops before an exit, an exec or a fault. Where a stop is
// due for the debugger, the handler pauses (serves the debugger's
// requests) until one resumes. It returns nil at the end of the trace,
// else the engine's error (a divergence) or the handler's (errKilled).
func (d *driver) drive() error {
	c := replay.Constraints{Boundaries: true, Marks: true}
	for {
		st, err := d.e.Advance(d.constraints(c))
		if err != nil {
			return err
		}
		d.notes(st.Notes)
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
		case replay.StopReadWatch:
			d.rwStart(st.Task, st.Base) // readwatch.go
			c.Trap = replay.TrapReply{Stepping: !d.rw.syscallNext}
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

// constraints are what the run's debugger state asks of the engine's
// next Advance (besides where to stop and a trap's answer).
func (d *driver) constraints(c replay.Constraints) replay.Constraints {
	c.Step, c.Breakpoints, c.Debugged = d.stepTask, d.bps, d.pid
	c.Goal, c.UserStep = d.goal != nil, d.userStep
	c.ReadWatch = d.started && len(d.rwWatches()) > 0 && (d.goal == nil || d.goal.kind == goalScan)
	c.ReadWatchTask = d.rw.t
	c.ReadWatchGoalOnly = d.rw.t != nil && d.goal != nil && d.rwOnly(d.rw.t)
	return c
}

// notes applies what the engine did for the constraints' steps since
// the previous stop.
func (d *driver) notes(n replay.Notes) {
	if n.StepStarted {
		d.stepTask = 0
	}
	if n.StepEnds != 0 {
		d.stepping = n.StepEnds
	}
	if n.UserStepSet {
		d.userStep = n.UserStep
	}
}
