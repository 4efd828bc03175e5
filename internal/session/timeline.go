package session

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

type goalKind int

const (
	goalReach      goalKind = iota // stop at target
	goalScan                       // find the last user breakpoint hit before target
	goalCountSteps                 // count Tid's steps from boundary Event to target (or to its next syscall)
)

// goal drives a run to a position without stopping on the way.
type goal struct {
	kind   goalKind
	target Pos
	toCall bool   // goalCountSteps: stop at Tid's next system call instead of a base
	from   uint64 // goalCountSteps: the boundary to step from
	// Watchpoints: goalCountSteps with watchTrack notes the step after
	// which a watched value last changed (firstChange: stop at the first);
	// goalScan notes the last event that changed one.
	watchTrack, firstChange bool
	lastChange              int
	changed                 Watch
	lastWatchEvent          uint64
	lastWatchTid            int32
	lastWatchUser           bool
	changedInTarget         bool
	maxSteps                int  // goalCountSteps: stop after this many steps (0: no limit)
	skipUntil               int  // goalCountSteps+watchTrack: ignore changes up to this step
	waitBase                *Pos // goalCountSteps+watchTrack: ignore changes until this position
	extra                   int  // goalCountSteps: steps still to go after the base matched
	// progress
	baseReached bool
	baseKind    trace.Kind // goalCountSteps: the event that ends at the base, and its task
	baseTid     int32
	stepsLeft   int
	counted     int
	last        *Pos   // goalScan result
	lastRW      *Watch // goalScan: last is an access to this read/access watchpoint
	done        bool
	stopKind    StopKind
}

// arrive is called when tid arrives at addr (about to execute it) at a
// breakpoint trap (bp) or after a single step; it counts the arrival and
// returns the position.
func (d *driver) arrive(tid int32, addr uint64) Pos {
	k := hitKey{tid, addr}
	if _, ok := d.bps[addr]; ok || d.ever[addr] {
		d.hits[k]++
	}
	r := d.e.RegsOf(tid)
	return Pos{Event: d.e.Event(), Tid: tid, Addr: addr, Hits: d.hits[k], Regs: r}
}

// liveTid returns tid if replay has that task, else the lowest live
// recorded tid (0 if there is none).
func (d *driver) liveTid(tid int32) int32 {
	if d.e.Task(tid) != nil {
		return tid
	}
	best := int32(0)
	for _, t := range d.e.Tasks() {
		rec := t.Rec()
		if best == 0 || rec < best {
			best = rec
		}
	}
	return best
}

// debugTrap handles the engine's stop at a breakpoint hit or a
// completed single step of rs.Task (rs.Mode is the mode its run goes on
// with, *stepping whether it was single-stepped). When a user (or goal)
// stop is due it pauses; then it resumes the task as the debugger says
// (*stepping: single-stepped).
func (d *driver) debugTrap(rs replay.Stop, stepping *bool) error {
	t, mode := rs.Task, rs.Mode
	var stop *DebugStop
	switch {
	case rs.Kind == replay.StopBreakpoint:
		pos := d.arrive(t.Rec(), rs.Addr)
		stop = d.onArrival(t, pos, false)
	case d.rw.t == t:
		// A step while read watchpoints are set.
		r, err := t.Thread().GetRegs()
		if err != nil {
			return err
		}
		st, resumed, err := d.rwTrap(t, &r, mode, stepping)
		if err != nil || resumed && st == nil {
			return err
		}
		if st != nil {
			stop = st
			break
		}
		*stepping = false
		pos := d.arrive(t.Rec(), r[ptrace.RIP])
		if d.goal == nil && d.pos.Tid == t.Rec() {
			pos = d.pos
			pos.Steps++
		}
		d.userStep = false
		stop = d.onArrival(t, pos, true)
	default: // a step done
		*stepping = false
		d.userStep = false
		pos := d.arrive(t.Rec(), rs.Addr)
		if d.goal == nil && d.pos.Tid == t.Rec() {
			pos = d.pos // same base, one more step
			pos.Steps++
		}
		stop = d.onArrival(t, pos, true)
	}
	if stop == nil {
		// A goal run passing by: keep going (a step, if the goal wants one).
		return d.resumeFromTrap(t, mode, stepping)
	}
	c, err := d.pause(*stop)
	if err != nil {
		return err
	}
	if c.kind == cmdStep {
		*stepping = true
		d.userStep = true
		if d.rw.t == t {
			d.rwDecode(t, nil) // the user may have changed registers or memory
		}
		return d.e.StepInsn(t)
	}
	return d.resumeFromTrap(t, mode, stepping)
}

// resumeFromTrap continues t after a trap, stepping when a goal needs
// steps or when t sits on one of our breakpoints (so it is not counted
// twice).
func (d *driver) resumeFromTrap(t *replay.Task, mode int, stepping *bool) error {
	r, _ := t.Thread().GetRegs()
	_, onBp := d.bps[r[ptrace.RIP]]
	g := d.goal
	if g != nil && (g.stepsLeft > 0 || g.kind == goalCountSteps && g.baseReached) {
		*stepping = true
		return d.stepOver(t, onBp)
	}
	d.userStep = false
	if d.rwApplies(t) && d.rw.t != t && g == nil {
		// Read watchpoints set while stopped here: count steps from here.
		d.rwStart(t, d.pos)
	}
	if onBp {
		// Step off the breakpoint, then continue.
		*stepping = true
		d.skipReport = true
		return d.stepOver(t, true)
	}
	if d.rwApplies(t) && d.rw.t == t {
		// Read watchpoints: go on by steps.
		return d.rwResume(t, mode, stepping)
	}
	return t.Thread().Resume(mode, 0)
}

// stepOver single-steps t with the breakpoint under it (if any) lifted.
func (d *driver) stepOver(t *replay.Task, onBp bool) error {
	r, _ := t.Thread().GetRegs()
	at := r[ptrace.RIP]
	if onBp {
		orig := d.bps[at]
		_ = t.Mem().WriteMem(at, []byte{orig})
		d.restoreAt = at
	}
	return d.e.StepInsn(t)
}

// onArrival decides whether an arrival is a stop for the debugger (or
// for the goal), and records the position.
func (d *driver) onArrival(t *replay.Task, pos Pos, step bool) *DebugStop {
	if d.restoreAt != 0 {
		_ = t.Mem().WriteMem(d.restoreAt, []byte{0xcc})
		d.restoreAt = 0
	}
	if d.skipReport {
		// The step off a breakpoint by a continue: not a stop.
		d.skipReport = false
		if pos.Addr != 0 {
			if _, ok := d.bps[pos.Addr]; ok && !step {
				return d.arrivalStop(t, pos, step)
			}
		}
		return nil
	}
	return d.arrivalStop(t, pos, step)
}

func (d *driver) arrivalStop(t *replay.Task, pos Pos, step bool) *DebugStop {
	g := d.goal
	if g == nil {
		if step || d.user[pos.Addr] {
			if w, ok := d.watchChanged(); ok {
				// A watched value changed earlier in this run of user
				// code: that comes first.
				return &DebugStop{Kind: StopWatch, Tid: t.Rec(), Addr: w.Addr, Watch: w, WatchEvent: d.e.Event(), WatchUser: true}
			}
			d.pos = pos
			kind := StopBreakpoint
			if step {
				kind = StopStep
			}
			return &DebugStop{Kind: kind, Tid: t.Rec(), Addr: pos.Addr}
		}
		return nil
	}
	return d.goalArrival(t, pos, step)
}

// goalArrival advances a goal run at an arrival.
func (d *driver) goalArrival(t *replay.Task, pos Pos, step bool) *DebugStop {
	g := d.goal
	switch g.kind {
	case goalCountSteps:
		if !g.baseReached || t.Rec() != g.target.Tid {
			return nil
		}
		g.counted++
		tracking := g.watchTrack
		if g.skipUntil > 0 && g.counted <= g.skipUntil {
			tracking = false
			if g.counted == g.skipUntil {
				d.snapshotWatches()
			}
		}
		if b := g.waitBase; b != nil {
			tracking = false
			if pos.Addr == b.Addr && d.e.Event() == b.Event && sameRegs(&pos.Regs, &b.Regs) {
				g.waitBase = nil
				g.skipUntil = g.counted + b.Steps
				if b.Steps == 0 {
					d.snapshotWatches()
				}
			}
		}
		if tracking {
			if w, ok := d.watchChanged(); ok {
				g.lastChange, g.changed = g.counted, w
				if g.firstChange {
					g.done = true
					d.pos = Pos{Event: g.from, Tid: t.Rec(), Steps: g.counted}
					return &DebugStop{Kind: StopWatch, Tid: t.Rec(), Addr: w.Addr, Watch: w}
				}
			}
		}
		if g.extra > 0 {
			g.extra--
			if g.extra == 0 {
				g.done = true
				return &DebugStop{Kind: StopStep, Tid: t.Rec()}
			}
			return nil
		}
		if g.maxSteps > 0 && g.counted >= g.maxSteps {
			g.done = true
			return &DebugStop{Kind: StopStep, Tid: t.Rec()}
		}
		if !g.toCall && pos.Addr == g.target.Addr && d.e.Event() == g.target.Event && sameRegs(&pos.Regs, &g.target.Regs) {
			if g.target.Steps > 0 && g.watchTrack {
				g.extra = g.target.Steps
				return nil
			}
			g.done = true
			d.pos = pos
			return &DebugStop{Kind: StopStep, Tid: t.Rec()}
		}
		return nil
	}
	if g.stepsLeft > 0 && step && t.Rec() == g.target.Tid {
		g.stepsLeft--
		if g.stepsLeft == 0 {
			return d.goalDone(t, pos)
		}
		if g.kind == goalScan && d.user[pos.Addr] {
			// A breakpoint address met while stepping from the target's
			// base to the target: a hit before the target (the target's
			// base plus the steps taken so far).
			p := g.target
			p.Steps -= g.stepsLeft
			g.last, g.lastRW = &p, nil
		}
		return nil
	}
	tg := g.target
	if !g.baseReached && tg.Addr != 0 && t.Rec() == tg.Tid && pos.Addr == tg.Addr && pos.Watch == tg.Watch && d.e.Event() == tg.Event &&
		pos.Hits >= tg.Hits && sameRegs(&pos.Regs, &tg.Regs) {
		g.baseReached = true
		if tg.Steps == 0 {
			return d.goalDone(t, pos)
		}
		g.stepsLeft = tg.Steps
		return nil
	}
	if g.kind == goalScan && !step && (d.user[pos.Addr] || pos.Watch) && !g.baseReached {
		p := pos
		g.last, g.lastRW = &p, nil
	}
	return nil
}

func (d *driver) goalDone(t *replay.Task, pos Pos) *DebugStop {
	g := d.goal
	g.done = true
	if g.kind == goalScan {
		if w, ok := d.watchChanged(); ok {
			g.changedInTarget, g.changed = true, w
		}
	}
	d.pos = g.target // the position as the debugger knows it (base + steps)
	kind := g.stopKind
	if kind == 0 {
		kind = StopStep
		if pos.Steps == 0 && pos.Addr != 0 && d.user[pos.Addr] {
			kind = StopBreakpoint
		}
	}
	return &DebugStop{Kind: kind, Tid: t.Rec(), Addr: pos.Addr}
}

// afterEvent reports stops due at event boundaries and advances goals.
func (d *driver) afterEvent(ev *trace.Event) error {
	clear(d.hits)
	if len(ev.Mem) > 0 || len(ev.Maps) > 0 {
		d.refreshBreakpoints()
	}
	var stop *DebugStop
	boundary := Pos{Event: d.e.Event(), Tid: ev.Tid}
	if len(d.watches) > 0 && d.started {
		d.watchAfterEvent(ev)
		if d.goal == nil && d.watchStop != nil {
			stop, d.watchStop = d.watchStop, nil
		}
	}
	switch {
	case !d.started && d.startsDebugging(ev):
		d.started = true
		if ev.Kind == trace.KindExec {
			d.pid = ev.NewTid
			d.noteExe(ev)
		} else { // a fork: the child runs its parent's program
			d.pid = ev.NewTid
			d.dbgExe, d.dbgExeName = d.procExe[ev.Tid], d.procExeName[ev.Tid]
		}
		for a := range d.user {
			_ = d.insertBreakpoint(a)
		}
		d.snapshotWatches()
		if g := d.goal; g != nil && g.target.Addr != 0 && !markedAddr(g.target.Addr) && !g.target.Watch {
			// An internal breakpoint to see the target's base arrive (the
			// debugger's breakpoint there may have been a temporary one).
			_ = d.insertBreakpoint(g.target.Addr)
		}
		boundary.Tid = d.pid
		if d.goal == nil {
			stop = &DebugStop{Kind: StopStart, Tid: ev.NewTid}
		}
	case d.goal == nil && ev.Kind == trace.KindExit && ev.Tid == d.pid:
		stop = &DebugStop{Kind: StopExited, Tid: ev.Tid, Status: unix.WaitStatus(ev.Result)}
	case d.goal == nil && d.started && d.interrupt != nil && d.interrupt.CompareAndSwap(true, false):
		// gdb's Ctrl-C: stop at this boundary.
		tid := ev.Tid
		if t := d.e.Task(tid); t == nil || t.Gone() || t.Proc() != d.debugProc() {
			if t := d.debugTask(); t != nil {
				tid = t.Rec()
			}
		}
		boundary.Tid = tid
		stop = &DebugStop{Kind: StopSignal, Tid: tid, Signal: int(unix.SIGINT)}
	case d.stepping != 0 && ev.Tid == d.stepping && ev.Kind != trace.KindSyscallEntry && !d.inCall(ev.Tid):
		// (A step into a system call ends when the call returns, not at
		// the events inside it: fork's NEW_TASK.)
		d.stepping = 0
		if g := d.goal; g != nil {
			if g.kind == goalCountSteps && g.baseReached && ev.Tid == g.target.Tid {
				g.counted++
				if g.toCall {
					g.done = true
					stop = &DebugStop{Kind: StopStep, Tid: ev.Tid}
					break
				}
				d.stepTask = ev.Tid
			} else if g.stepsLeft > 0 && ev.Tid == g.target.Tid {
				g.stepsLeft--
				if g.stepsLeft == 0 {
					t := d.e.Task(ev.Tid)
					boundary.Regs = d.e.RegsOf(ev.Tid)
					stop = d.goalDone(t, boundary)
				} else {
					d.stepTask = ev.Tid
				}
			}
			break
		}
		stop = &DebugStop{Kind: StopStep, Tid: ev.Tid}
	}
	if g := d.goal; g != nil && !g.baseReached && stop == nil &&
		(g.kind == goalCountSteps && d.e.Event() == g.from || g.kind != goalCountSteps && d.e.Event() == g.target.Event && g.target.Addr == 0) {
		// A boundary base.
		g.baseReached = true
		switch {
		case g.kind == goalCountSteps:
			d.stepTask = g.target.Tid
			d.snapshotWatches()
			g.baseKind, g.baseTid = ev.Kind, ev.Tid
			if tg := g.target; !g.toCall && tg.Event == d.e.Event()+1 && tg.Steps == 0 {
				// The target may be the boundary itself (a handler's
				// first instruction after a signal): zero steps.
				// (orig_rax still names the call the signal followed; it
				// reads -1 once the thread runs.)
				r := d.e.RegsOf(tg.Tid)
				r[ptrace.ORIGRAX] = tg.Regs[ptrace.ORIGRAX]
				if r[ptrace.RIP] == tg.Addr && sameRegs(&r, &tg.Regs) {
					d.stepTask = 0
					g.done = true
					stop = &DebugStop{Kind: StopStep, Tid: tg.Tid}
				}
			}
		case g.target.Steps == 0:
			boundary.Tid = g.target.Tid
			if d.e.Task(boundary.Tid) == nil {
				// A goto names the thread the session was on, which
				// need not exist at this boundary: report it on a live
				// one.
				boundary.Tid = d.liveTid(ev.Tid)
			}
			boundary.Regs = d.e.RegsOf(boundary.Tid)
			stop = d.goalDone(d.e.Task(boundary.Tid), boundary)
		default:
			g.stepsLeft = g.target.Steps
			d.stepTask = g.target.Tid
		}
	}
	d.noteMaps(ev) // files.go
	if stop == nil {
		return nil
	}
	if d.goal == nil {
		boundary.Regs = d.e.RegsOf(boundary.Tid)
		d.pos = boundary
	}
	c, err := d.pause(*stop)
	if err != nil {
		return err
	}
	if c.kind == cmdStep {
		tid := c.tid
		if tid <= 0 || d.e.Task(tid) == nil {
			tid = stop.Tid
		}
		t := d.e.Task(tid)
		if t == nil {
			return nil
		}
		if t.InCall() {
			// Inside a system call: the step ends when it returns.
			d.stepping = tid
		} else {
			d.stepTask = tid
		}
		if d.pos.Tid != tid {
			d.pos = Pos{Event: d.e.Event(), Tid: tid, Regs: d.e.RegsOf(tid)}
		}
	}
	return nil
}

// inCall tells whether task tid is inside a system call whose exit event
// is still to come.
func (d *driver) inCall(tid int32) bool {
	t := d.e.Task(tid)
	return t != nil && t.InCall()
}

// atBeginning is the position of the start stop.
func (s *Session) atBeginning() (DebugStop, error) {
	st, err := s.startRun(nil)
	st.Kind = StopStart
	return st, err
}

// ReverseContinue goes back to the last time a breakpoint was hit before
// the current position, or to the start of the recording (StopStart).
// It replays twice: once to find that hit (backwards from snapshot to
// snapshot, see scanBack), once to reach it.
func (s *Session) ReverseContinue() (DebugStop, error) {
	target := s.pos
	if s.stop.Kind == StopExited || s.stop.Kind == StopEnd {
		target = Pos{Event: ^uint64(0) >> 1}
	}
	g, err := s.scanBack(target) // snapshots.go
	if err != nil {
		return DebugStop{}, err
	}
	if g.changedInTarget || g.lastWatchEvent != 0 && (g.last == nil || g.lastWatchEvent >= g.last.Event) {
		return s.reverseToWatch(g, target)
	}
	if g.last == nil {
		return s.atBeginning()
	}
	if w := g.lastRW; w != nil {
		st, err := s.startRun(&goal{kind: goalReach, target: *g.last, stopKind: StopWatch})
		st.Addr, st.Watch = w.Addr, *w
		s.stop = st
		return st, err
	}
	if g.last.Addr == signalAddr {
		return s.startRun(&goal{kind: goalReach, target: *g.last})
	}
	return s.startRun(&goal{kind: goalReach, target: *g.last, stopKind: StopBreakpoint})
}

// ReverseStep goes back one instruction of the current thread.
func (s *Session) ReverseStep() (DebugStop, error) {
	cur := s.pos
	if cur.Addr == exitingAddr && cur.Killed && cur.Steps == 0 {
		// Dying of a signal: the instruction before is the one before
		// the signal's stop.
		cur.Addr, cur.Killed = signalAddr, false
	}
	switch {
	case cur.Addr == signalAddr && cur.Steps == 0:
		// A signal stop is at the instruction that faulted (or, for a
		// signal sent by a system call, the one after it): count the
		// thread's steps from the start of its run to the signal.
		g := &goal{kind: goalCountSteps, target: cur, from: cur.Event - 1}
		if _, err := s.startRun(g); err != nil && !isEnd(err) {
			return DebugStop{}, err
		}
		if g.done && g.counted > 0 {
			return s.startRun(&goal{kind: goalReach, target: Pos{Event: cur.Event - 1, Tid: cur.Tid, Steps: g.counted - 1}, stopKind: StopStep})
		}
		if !g.done {
			return DebugStop{}, fmt.Errorf("replay did not reach the signal stop at event %d again", cur.Event)
		}
		var blocked bool
		_ = s.do(func() {
			if t := s.cur.d.e.Task(cur.Tid); t != nil {
				blocked = t.OthersSinceEntry() && t.LastEntry() < cur.Event-1
			}
		})
		if blocked {
			// The thread sat in a system call while other threads ran
			// (and one of them sent the signal): the instant before the
			// signal is the boundary before it, after everything they
			// did, with the thread still in its call. (One more step
			// back is that call's syscall instruction.)
			return s.startRun(&goal{kind: goalReach, target: Pos{Event: cur.Event - 1, Tid: cur.Tid}, stopKind: StopStep})
		}
	case (cur.Addr == exitingAddr || cur.Addr == execAddr) && cur.Steps == 0:
		// The stop just before the process exits (or execs) is at its
		// exit (execve) call:
		// the instruction before is that call's syscall instruction, the
		// last of the run that ends at this event.
		g := &goal{kind: goalCountSteps, toCall: true, target: Pos{Event: cur.Event - 1, Tid: cur.Tid}, from: cur.Event - 1}
		if _, err := s.startRun(g); err != nil && !isEnd(err) {
			return DebugStop{}, err
		}
		if g.done && g.counted > 0 {
			return s.startRun(&goal{kind: goalReach, target: Pos{Event: cur.Event - 1, Tid: cur.Tid, Steps: g.counted - 1}, stopKind: StopStep})
		}
		return s.atBeginning()
	case cur.Steps > 0:
		t := cur
		t.Steps--
		return s.startRun(&goal{kind: goalReach, target: t, stopKind: StopStep})
	case cur.Addr != 0:
		// Count the thread's instructions from the start of its run.
		// (Event is the event being processed when the hit happened: its
		// run of user code starts at the boundary after Event-1.)
		g := &goal{kind: goalCountSteps, target: cur, from: cur.Event - 1}
		if _, err := s.startRun(g); err != nil && !isEnd(err) {
			return DebugStop{}, err
		}
		if g.done && g.counted > 0 {
			return s.startRun(&goal{kind: goalReach, target: Pos{Event: cur.Event - 1, Tid: cur.Tid, Steps: g.counted - 1}, stopKind: StopStep})
		}
		if g.done && g.baseKind == trace.KindSignal && g.baseTid == cur.Tid && cur.Event >= 2 {
			// At a handler's first instruction: before it, the thread
			// stood where the signal was delivered (the boundary before
			// the signal event).
			return s.startRun(&goal{kind: goalReach, target: Pos{Event: cur.Event - 2, Tid: cur.Tid}, stopKind: StopStep})
		}
	}
	// At the start of the thread's run: the previous instruction is the
	// system call that ended its previous run.
	var entry uint64
	_ = s.do(func() {
		if t := s.cur.d.e.Task(cur.Tid); t != nil {
			entry = t.LastEntry()
		}
	})
	if entry == 0 || entry > cur.Event {
		return s.atBeginning()
	}
	g := &goal{kind: goalCountSteps, toCall: true, target: Pos{Event: entry - 1, Tid: cur.Tid}, from: entry - 1}
	if _, err := s.startRun(g); err != nil && !isEnd(err) {
		return DebugStop{}, err
	}
	if !g.done || g.counted == 0 {
		return s.atBeginning()
	}
	return s.startRun(&goal{kind: goalReach, target: Pos{Event: entry - 1, Tid: cur.Tid, Steps: g.counted - 1}, stopKind: StopStep})
}

// Restart goes back to the start of the recording.
func (s *Session) Restart() (DebugStop, error) { return s.atBeginning() }

// Goto runs to the boundary after event n.
func (s *Session) Goto(n uint64) (DebugStop, error) {
	if n <= 1 {
		return s.atBeginning()
	}
	tid := s.pos.Tid
	return s.startRun(&goal{kind: goalReach, target: Pos{Event: n, Tid: tid}, stopKind: StopStep})
}

// Checkpoint remembers the current position and returns its number.
func (s *Session) Checkpoint() (int, Pos) {
	s.nckpt++
	s.ckpts[s.nckpt] = s.pos
	s.pinSnapshot(s.nckpt) // snapshots.go
	return s.nckpt, s.pos
}

// Checkpoints lists the checkpoints by number.
func (s *Session) Checkpoints() map[int]Pos { return s.ckpts }

// DeleteCheckpoint forgets a checkpoint.
func (s *Session) DeleteCheckpoint(n int) bool {
	_, ok := s.ckpts[n]
	s.unpinSnapshot(n) // snapshots.go
	delete(s.ckpts, n)
	return ok
}

// RestartCheckpoint goes to checkpoint n.
func (s *Session) RestartCheckpoint(n int) (DebugStop, error) {
	p, ok := s.ckpts[n]
	if !ok {
		return DebugStop{}, fmt.Errorf("no checkpoint %d", n)
	}
	if p.Event <= 1 && p.Addr == 0 && p.Steps == 0 {
		return s.atBeginning()
	}
	return s.startRun(&goal{kind: goalReach, target: p, stopKind: StopStep})
}

// Position is where the current stop is.
func (s *Session) Position() Pos { return s.pos }

func isEnd(err error) bool { return errors.Is(err, io.EOF) }

// sameRegs compares registers as divergence checks do (ignoring the trap
// and resume flags a debugger's single steps leave behind).
func sameRegs(a, b *trace.Regs) bool { return replay.SameRegs(a, b) }

// userCodeEvent says whether replaying ev ran the task's user code (as
// opposed to applying what the kernel did).
func userCodeEvent(ev *trace.Event) bool {
	switch ev.Kind {
	case trace.KindSyscallEntry, trace.KindSignal, trace.KindInstruction, trace.KindSched:
		return true
	}
	return false
}

// watchAfterEvent checks the watched bytes after an event.
func (d *driver) watchAfterEvent(ev *trace.Event) {
	w, ok := d.watchChanged()
	if !ok {
		return
	}
	if g := d.goal; g != nil {
		if g.kind == goalScan && !g.baseReached {
			g.lastWatchEvent, g.lastWatchTid, g.lastWatchUser, g.changed = d.e.Event(), ev.Tid, userCodeEvent(ev), w
		}
		if g.kind == goalCountSteps && g.watchTrack && g.baseReached && ev.Tid == g.target.Tid {
			// Changed by the system call that ended the stepped run.
			g.lastChange, g.changed = -1, w
			if g.firstChange {
				g.done = true
			}
		}
		return
	}
	d.pos = Pos{Event: d.e.Event(), Tid: ev.Tid, Regs: d.e.RegsOf(ev.Tid)}
	d.watchStop = &DebugStop{Kind: StopWatch, Tid: ev.Tid, Addr: w.Addr, Watch: w, WatchEvent: d.e.Event(), WatchUser: userCodeEvent(ev)}
}

// findWatchWrite turns a watch stop found at an event boundary into the
// exact instruction that changed the value (forwards: just after it), by
// single-stepping that run of user code again.
func (s *Session) findWatchWrite(st DebugStop, prev Pos) (DebugStop, error) {
	if !st.WatchUser {
		return st, nil
	}
	g := &goal{kind: goalCountSteps, toCall: true, watchTrack: true, firstChange: true,
		target: Pos{Event: st.WatchEvent - 1, Tid: st.Tid}, from: st.WatchEvent - 1}
	// Changes before the position we continued from do not count.
	if prev.Tid == st.Tid {
		switch {
		case prev.Addr == 0 && prev.Event == st.WatchEvent-1:
			g.skipUntil = prev.Steps
		case prev.Addr != 0 && !markedAddr(prev.Addr) && prev.Event == st.WatchEvent:
			p := prev
			g.waitBase = &p
		}
	}
	got, err := s.startRun(g)
	if err != nil && !isEnd(err) {
		return got, err
	}
	if g.done && g.lastChange > 0 {
		got.Kind, got.Addr, got.Watch = StopWatch, st.Addr, st.Watch
		return got, nil
	}
	// Not found by stepping (a signal frame, say): stop after the event.
	got, err = s.startRun(&goal{kind: goalReach, target: Pos{Event: st.WatchEvent, Tid: st.Tid}, stopKind: StopWatch})
	got.Addr, got.Watch = st.Addr, st.Watch
	return got, err
}

// reverseToWatch goes to just before the last change of a watched value
// before the current position, found by scan g.
func (s *Session) reverseToWatch(g *goal, cur Pos) (DebugStop, error) {
	var from uint64
	var tid int32
	if g.changedInTarget {
		from, tid = cur.Event-1, cur.Tid
	} else {
		from, tid = g.lastWatchEvent-1, g.lastWatchTid
		if !g.lastWatchUser {
			// Written by the kernel at that event: stop just before it.
			st, err := s.startRun(&goal{kind: goalReach, target: Pos{Event: from, Tid: tid}, stopKind: StopWatch})
			st.Addr, st.Watch = g.changed.Addr, g.changed
			return st, err
		}
	}
	cg := &goal{kind: goalCountSteps, watchTrack: true, target: cur, from: from}
	switch {
	case !g.changedInTarget:
		cg.toCall, cg.target = true, Pos{Event: from, Tid: tid}
	case cur.Addr == 0:
		// The current position is the boundary plus cur.Steps steps.
		cg.maxSteps = cur.Steps
	}
	if _, err := s.startRun(cg); err != nil && !isEnd(err) {
		return DebugStop{}, err
	}
	steps := cg.lastChange - 1
	if cg.lastChange <= 0 {
		steps = 0
	}
	st, err := s.startRun(&goal{kind: goalReach, target: Pos{Event: from, Tid: tid, Steps: steps}, stopKind: StopWatch})
	st.Addr, st.Watch = g.changed.Addr, g.changed
	return st, err
}

// startsDebugging says whether ev is where the debugger takes over: the
// first exec (default), the exec of the process given by
// Options.OnProcess (a pid or a command name), or the fork of the
// process given by Options.OnFork.
func (d *driver) startsDebugging(ev *trace.Event) bool {
	o := d.opts
	switch {
	case ev.Kind == trace.KindExec:
		d.rememberExe(ev)
	case ev.Kind == trace.KindNewTask && ev.Flags&unix.CLONE_THREAD == 0:
		d.procExe[ev.NewTid], d.procExeName[ev.NewTid] = d.procExe[ev.Tid], d.procExeName[ev.Tid]
		d.procAuxv[ev.NewTid] = d.procAuxv[ev.Tid]
	}
	switch {
	case o.OnFork != 0:
		return ev.Kind == trace.KindNewTask && ev.NewTid == o.OnFork && ev.Flags&unix.CLONE_THREAD == 0
	case o.OnProcess != "":
		if ev.Kind != trace.KindExec {
			return false
		}
		if strconv.Itoa(int(ev.NewTid)) == o.OnProcess {
			return true
		}
		exe, cmd, _ := strings.Cut(ev.Text, "\x00\x00")
		argv0, _, _ := strings.Cut(cmd, "\x00")
		return filepath.Base(exe) == o.OnProcess || filepath.Base(argv0) == o.OnProcess
	}
	return ev.Kind == trace.KindExec
}

// rememberExe notes each process's captured executable (for -f).
func (d *driver) rememberExe(ev *trace.Event) {
	saveExe, saveName := d.dbgExe, d.dbgExeName
	d.noteExe(ev)
	d.procExe[ev.NewTid], d.procExeName[ev.NewTid] = d.dbgExe, d.dbgExeName
	d.dbgExe, d.dbgExeName = saveExe, saveName
	if t := d.e.Task(ev.NewTid); t != nil {
		d.procAuxv[ev.NewTid] = readAuxv(t)
	}
}

// readAuxv finds the auxiliary vector above argv and envp on the initial
// stack of a task that has just exec'd.
func readAuxv(t *replay.Task) []byte {
	regs, err := t.Thread().GetRegs()
	if err != nil {
		return nil
	}
	word := func(a uint64) (uint64, bool) {
		v, err := t.Mem().ReadU64(a)
		return v, err == nil
	}
	sp := regs[ptrace.RSP]
	argc, ok := word(sp)
	if !ok || argc > 1<<20 {
		return nil
	}
	p := sp + 8 + 8*(argc+1)
	for i := 0; i < 1<<16; i++ { // envp
		v, ok := word(p)
		if !ok {
			return nil
		}
		p += 8
		if v == 0 {
			break
		}
	}
	start := p
	for i := 0; i < 256; i++ {
		k, ok := word(p)
		if !ok {
			return nil
		}
		p += 16
		if k == 0 {
			break
		}
	}
	b := make([]byte, p-start)
	if t.Mem().ReadMem(start, b) != nil {
		return nil
	}
	return b
}
