package replay

import (
	"errors"
	"fmt"
	"iter"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// The operations a debugger session (internal/session) uses to drive
// the engine: Advance, and the rest at the stops where it returns, all
// on the engine's ptrace thread.

// Engine is one replay of a trace, the replayer (the alias keeps the
// engine files' own names).
type Engine = replayer

// Task is a replayed task: a recorded thread and the real one that
// re-executes it.
type Task = rtask

// Proc is the engine's state of one replayed address space; tasks with
// the same *Proc share their memory.
type Proc = rproc

// NewEngine prepares a replay of opts.Reader, which runs the replay
// stub at stub; the output of events up to echoFrom is not written again
// (a debugger went back over it).
func NewEngine(opts Options, stub string, echoFrom uint64) *Engine {
	return &replayer{opts: opts, q: newQueue(opts.Reader), tasks: map[int32]*rtask{}, early: map[int]ptrace.Stop{},
		echoFrom: echoFrom, stub: stub}
}

// Run replays events until the end of the trace (io.EOF is not an
// error) or a divergence, without stopping.
func (rp *replayer) Run() (*Result, error) { return rp.loop() }

// StopKind says why Advance returned.
type StopKind int

const (
	// StopBoundary: event Stop.Ev (number Stop.Event) completed and the
	// replay stands at the boundary after it.
	StopBoundary StopKind = iota + 1
	// StopBreakpoint: Stop.Task arrived at Stop.Addr, one of
	// Constraints.Breakpoints (its int3 trapped; the pc is back on it),
	// and StopStepped: the task's single step completed at Stop.Addr;
	// both met while the engine runs the task with Stop.Mode
	// (Stop.Stepping: single-stepped) to the stop its event expects. The
	// caller resumes the task itself before the next Advance
	// (Constraints.Trap).
	StopBreakpoint
	StopStepped
	// StopReadWatch: read-watch stepping (Constraints.ReadWatch) starts
	// counting the steps of Stop.Task from Stop.Base, before the task
	// runs to its event's stop; the next Advance's Constraints.Trap.Stepping
	// says whether it runs by a step first (else up to its system call).
	StopReadWatch
	// StopExiting, StopExec, StopSignal: the process of Stop.Task is
	// about to exit (exit_group, a fatal signal), to execve, or to
	// receive the fault, abort or fatal signal Stop.Signal
	// (Constraints.Marks).
	StopExiting
	StopExec
	StopSignal
	// StopEnd: the trace ended (Stop.Result).
	StopEnd
)

func (k StopKind) String() string {
	names := [...]string{StopBoundary: "boundary", StopBreakpoint: "breakpoint", StopStepped: "step done",
		StopReadWatch: "read-watch start", StopExiting: "exiting", StopExec: "exec", StopSignal: "signal", StopEnd: "end"}
	if k > 0 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("stop kind %d", int(k))
}

// Stop is where and why Advance stopped.
type Stop struct {
	Kind     StopKind
	Event    uint64       // the event being replayed, or at a boundary the last one
	Ev       *trace.Event // StopBoundary: the event that completed
	Task     *Task
	Addr     uint64 // StopBreakpoint, StopStepped: the task's pc
	Mode     int    // StopBreakpoint, StopStepped: the resume mode of the run the trap interrupted
	Stepping bool   // StopBreakpoint, StopStepped: the task was single-stepped
	Signal   int    // StopSignal
	Base     Pos    // StopReadWatch
	Result   *Result
	Notes
}

// Notes tell what became of the constraints' steps since the previous
// stop.
type Notes struct {
	StepStarted bool  // the due single step (Constraints.Step) got under way
	StepEnds    int32 // this task's single step completes at the next boundary of one of its events outside a system call
	// UserStepSet: a task resumed, by the user's own step if UserStep
	// (Constraints.UserStep).
	UserStepSet, UserStep bool
}

// Constraints say where Advance stops (besides the end of the trace and
// the traps a driver's breakpoints and steps cause).
type Constraints struct {
	// Boundaries: stop at every event boundary; else at the boundary
	// after event Event only (0: none).
	Boundaries bool
	Event      uint64
	// Marks: stop before exits, execs and fault, abort or fatal signals.
	Marks bool
	// Step: the task (recorded tid) to single-step at its next resume
	// (0: none).
	Step int32
	// Breakpoints: the debugger's int3s (address -> original byte),
	// planted in the address space of recorded process Debugged.
	Breakpoints map[uint64]byte
	Debugged    int32
	// Goal: the run goes to a goal of the session's, not where the user
	// steps; UserStep: the step under way is the user's (the engine
	// notes each resume: Stop.UserStep).
	Goal, UserStep bool
	// Read watchpoints: ReadWatch, the debugged process's tasks run by
	// steps (StopReadWatch); ReadWatchTask, the task whose steps they
	// count; ReadWatchGoalOnly, in a goal run, a step of that task is
	// made only for them (a step neither the user's nor the goal's does
	// not end at the boundary of the event it runs into).
	ReadWatch         bool
	ReadWatchTask     *Task
	ReadWatchGoalOnly bool
	// Trap answers the StopBreakpoint or StopStepped the previous
	// Advance returned.
	Trap TrapReply
}

// TrapReply is a caller's answer to a StopBreakpoint or StopStepped: it
// resumed the task, single-stepped if Stepping.
type TrapReply struct {
	Stepping bool
}

// errAbandoned unwinds an event loop left at a stop (Abandon).
var errAbandoned = errors.New("replay abandoned at a stop")

// Advance replays until a stop c asks for, a trap of the driver's, the
// end of the trace (StopEnd) or an error (a divergence). A stop may come
// in the middle of an event (a breakpoint trap, a process about to
// exit): the event loop runs as a coroutine (iter.Pull) on the calling
// goroutine's locked OS thread, so its state in that event stays where
// it is and the next Advance resumes it there; between calls the caller
// uses the engine's other operations (registers, memory, steps,
// snapshots) on the same thread. Every call must come from the
// goroutine of the first.
func (rp *replayer) Advance(c Constraints) (Stop, error) {
	rp.c = c
	if rp.next == nil {
		rp.next, rp.stopPull = iter.Pull2(func(yield func(Stop, error) bool) {
			rp.yield = yield
			defer func() { rp.yield = nil }()
			res, err := rp.loop()
			if errors.Is(err, errAbandoned) {
				return
			}
			yield(Stop{Kind: StopEnd, Event: rp.n, Result: res}, err)
		})
	}
	st, err, ok := rp.next()
	if !ok {
		return Stop{Kind: StopEnd, Event: rp.n}, errors.New("replay already ended")
	}
	return st, err
}

// stopAt hands st to Advance's caller and waits to be advanced again (no
// stop without Advance).
func (rp *replayer) stopAt(st Stop) error {
	if rp.yield == nil {
		return nil
	}
	st.Event = rp.n
	st.Notes, rp.notes = rp.notes, Notes{}
	if !rp.yield(st, nil) {
		return errAbandoned
	}
	return nil
}

// Abandon ends the event loop of Advance where it stands (an error
// unwinds it); the engine cannot be advanced any more.
func (rp *replayer) Abandon() {
	if rp.stopPull != nil {
		rp.stopPull()
		rp.stopPull = nil
	}
}

// KillAll abandons the replay and kills and reaps every replayed task.
func (rp *replayer) KillAll() {
	rp.Abandon()
	rp.killAll()
}

// Options are the engine's options.
func (rp *replayer) Options() Options { return rp.opts }

// SetReader starts the event stream again from rd (a fresh run).
func (rp *replayer) SetReader(rd *trace.Reader) {
	rp.opts.Reader = rd
	rp.q = newQueue(rd)
}

// Event is the number of the event being replayed, or, at a boundary,
// of the last one replayed.
func (rp *replayer) Event() uint64 { return rp.n }

// Status is the recorded wait status of the initial process (once it
// exited).
func (rp *replayer) Status() unix.WaitStatus { return rp.status }

// EventTime is the recording time of the last event (ns since the
// start of the recording; 0 for traces without event times).
func (rp *replayer) EventTime() uint64 { return rp.evTime }

// Boundary returns the last event when the replay stands at the
// boundary after it, else nil.
func (rp *replayer) Boundary() *trace.Event {
	if !rp.atBoundary {
		return nil
	}
	return rp.lastEv
}

// Task returns the replayed task of recorded thread tid (nil if replay
// has none).
func (rp *replayer) Task(tid int32) *Task { return rp.tasks[tid] }

// Tasks lists the replayed tasks by recorded tid.
func (rp *replayer) Tasks() []*Task {
	out := make([]*Task, 0, len(rp.tasks))
	for _, t := range rp.tasks {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Task) int { return int(a.rec) - int(b.rec) })
	return out
}

// RegsOf returns the general registers of recorded thread tid (zero if
// replay has no such task).
func (rp *replayer) RegsOf(tid int32) trace.Regs {
	if t := rp.tasks[tid]; t != nil {
		r, _ := t.thread().GetRegs()
		return r
	}
	return trace.Regs{}
}

// StepInsn single-steps t (see stepInsn).
func (rp *replayer) StepInsn(t *Task) error { return rp.stepInsn(t) }

// ResumeStep executes one instruction of t held at a stop (applying a
// pending system-call restart first); a system call instruction stops
// at its entry without running (PTRACE_SYSEMU_SINGLESTEP).
func (rp *replayer) ResumeStep(t *Task) error {
	if err := rp.resume(t, -1); err != nil {
		return err
	}
	return rp.stepInsn(t)
}

// Logf writes to the replay's verbose log.
func (rp *replayer) Logf(format string, args ...any) { rp.logf(format, args...) }

// Preemption-point searches (preempt.go) borrow code bytes that the
// debugger's breakpoints and steps must know about.

// InPad tells whether rip is inside the pad of the search under way (a
// debugger's single steps pass through it without stopping).
func (rp *replayer) InPad(rip uint64) bool { return rp.inPad(rip) }

// PadAt returns the original code of the site a search's pad relocates
// when t stands at that site (pc), which then runs as one step.
func (rp *replayer) PadAt(t *Task, pc uint64) ([]byte, bool) {
	if ps := rp.point; ps != nil && ps.pad != nil && ps.t == t && pc == ps.pad.Site {
		return ps.padOrig, true
	}
	return nil, false
}

// PausePoint stops the clock of a search under way while the debugger's
// user looks at a stop; the returned function starts it again.
func (rp *replayer) PausePoint() (restart func()) {
	if ps := rp.point; ps != nil && ps.timer != nil {
		ps.timer.Stop()
		return func() { ps.timer.Reset(pointDeadline) }
	}
	return func() {}
}

// MakeRoomForBreakpoint prepares a search under way in t's address
// space for a debugger breakpoint at addr (the caller plants it). When
// the search has its own int3 at addr, the breakpoint takes it over:
// adopted, with the original byte under it.
func (rp *replayer) MakeRoomForBreakpoint(t *Task, addr uint64) (orig byte, adopted bool, err error) {
	if ps := rp.point; ps != nil && ps.t.proc == t.proc {
		rp.adopted = nil
		err = rp.pointYield(ps, addr)
		if a := rp.adopted; a != nil && a.addr == addr {
			orig, adopted = a.orig, true
		}
		rp.adopted = nil
	}
	return orig, adopted, err
}

// ReclaimBreakpoint removes the debugger's breakpoint at addr (original
// byte orig) in p when it lies in the site of a search under way there;
// it returns false (and does nothing) otherwise.
func (rp *replayer) ReclaimBreakpoint(p *Proc, addr uint64, orig byte) (bool, error) {
	if ps := rp.point; ps != nil && ps.t.proc == p && addr >= ps.site && addr < ps.site+uint64(ps.n) {
		return true, rp.pointReclaim(ps, addr, orig)
	}
	return false, nil
}

// PointOrig returns the original bytes under the pad or breakpoint of a
// search under way in t's address space, which a diversion's copy gets
// back (nil: none).
func (rp *replayer) PointOrig(t *Task) map[uint64][]byte {
	if ps := rp.point; ps != nil && ps.t.proc == t.proc {
		return pointOrig(ps)
	}
	return nil
}

// pointOrig is the original bytes under the pad or breakpoint of a
// preemption-point search under way.
func pointOrig(ps *pointSearch) map[uint64][]byte {
	if ps == nil {
		return nil
	}
	if ps.pad != nil {
		return map[uint64][]byte{ps.pad.Site: ps.padOrig}
	}
	if ps.ownBp {
		return map[uint64][]byte{ps.site: {ps.orig}}
	}
	return nil
}

// SameRegs compares registers as divergence checks do (ignoring the
// trap and resume flags a debugger's single steps leave behind).
func SameRegs(a, b *trace.Regs) bool { return len(compareRegs(a, b)) == 0 }

// Rec is the task's recorded tid.
func (t *rtask) Rec() int32 { return t.rec }

// Real is the tid of the real thread that replays the task.
func (t *rtask) Real() int { return t.real }

// Thread is the real thread's ptrace handle.
func (t *rtask) Thread() ptrace.Thread { return t.thread() }

// Mem is the task's memory.
func (t *rtask) Mem() *tracee.Mem { return t.mem }

// Proc is the task's address space.
func (t *rtask) Proc() *Proc { return t.proc }

// Gone tells whether the task has exited for real.
func (t *rtask) Gone() bool { return t.gone }

// InCall tells whether the task entered a system call whose exit event
// is still to come.
func (t *rtask) InCall() bool { return t.inCall }

// Executing tells whether the system call the task is held at runs for
// real.
func (t *rtask) Executing() bool { return t.executing }

// LastEntry is the number of the task's last syscall-entry event.
func (t *rtask) LastEntry() uint64 { return t.lastEntry }

// OthersSinceEntry tells whether another task had an event after this
// one's last syscall entry (it was blocked while they ran); kept when a
// driver is set.
func (t *rtask) OthersSinceEntry() bool { return t.othersSinceEntry }

func (rp *replayer) resumeStep(t *rtask) error { return rp.ResumeStep(t) }
