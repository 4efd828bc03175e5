// Package session is a replay driven by a debugger (rr's ReplayTimeline
// and the debugger side of its ReplaySession): it advances the replay
// engine (internal/replay) stop by stop (driver.go) and adds breakpoints,
// watchpoints (read and access ones by stepping, readwatch.go), steps,
// exact positions and going backwards by re-replay from snapshots
// (timeline.go, snapshots.go), the glue to diversions (divert.go, the
// copies themselves are internal/diversion), the files a debugger may
// ask for (files.go), all on one ptrace thread per session (worker.go).
// internal/debugserver drives a *Session through its own interface.
package session

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/gorr-debugger/gorr/internal/diversion"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Options configure a debug session: the engine's options and the
// session's own.
type Options struct {
	replay.Options
	// OnProcess (a pid or a command name) and OnFork (a pid) choose the
	// process to debug, as rr's -p and -f; by default the first exec'd one.
	OnProcess string
	OnFork    int32
	// Reopen opens the trace again for a debugger that restarts or goes
	// backwards (nil: not possible).
	Reopen func() (*trace.Reader, error)
	// Snapshots configure the snapshots the session takes to go
	// backwards quickly (snapshots.go).
	Snapshots SnapshotOptions
}

// errKilled unwinds the replay goroutine when the debugger kills it.
var errKilled = errors.New("replay killed by the debugger")

type cmdKind int

const (
	cmdDo cmdKind = iota
	cmdContinue
	cmdStep
	cmdKill
)

type command struct {
	kind cmdKind
	tid  int32
	fn   func()
	done chan struct{}
	// worker: run fn even after the run ended (it only needs the
	// session's ptrace thread, not the replay)
	worker bool
}

type result struct {
	stop DebugStop
	err  error
}

// Session is a replay driven by a debugger: it runs until a stop, then
// waits for commands. All tracee access happens on the replay goroutine's
// locked thread; Session methods hand work to it. Going backwards (or
// restarting) starts a new replay of the same trace that runs to the
// wanted position (see timeline.go).
type Session struct {
	opts    Options
	cur     *run
	user    map[uint64]bool // the debugger's breakpoints, kept across runs
	watches []Watch         // the debugger's watchpoints, kept across runs
	ever    map[uint64]bool // every address the debugger ever broke at
	pos     Pos             // where the current stop is
	stop    DebugStop
	ckpts   map[int]Pos
	ckptAt  map[int]uint64 // boundary whose snapshot a checkpoint keeps
	nckpt   int
	started bool
	shown   uint64 // furthest event whose output was reproduced

	// div is the live copy a diversion runs in (diversion.go).
	div *diversion.Copy

	w     *ptraceWorker // the thread that traces every process of the session
	snaps *snapshots    // snapshots.go

	// mapEv: the mappings the debugged process made (files.go).
	mapEv *mapEvents

	// interrupt asks the running replay to stop at the next event
	// (Interrupt: gdb's Ctrl-C).
	interrupt atomic.Bool
}

// EventCount is the number of events in the recording (0 if the trace
// is incomplete and does not know it).
func (s *Session) EventCount() uint64 {
	h := s.opts.Reader.Header()
	if !h.Complete {
		return 0
	}
	return h.EventCount
}

// ElapsedTime is how long the recording had been running at the current
// position's event (rr's elapsed-time); 0 for traces without event times.
func (s *Session) ElapsedTime() time.Duration {
	var ns uint64
	_ = s.do(func() { ns = s.cur.d.e.EventTime() })
	return time.Duration(ns)
}

// Interrupt asks a running Continue or Step to stop at the next event
// boundary, with a SIGINT stop (as gdb expects after Ctrl-C). It may be
// called from any goroutine; it has no effect when nothing runs.
func (s *Session) Interrupt() { s.interrupt.Store(true) }

// run is one replay goroutine.
type run struct {
	d       *driver
	cmds    chan command
	results chan result
	exited  chan struct{}
	rd      *trace.Reader
}

// driver is a Session's side of one run: it advances the engine and
// handles its stops (drive), and keeps the run's debugger state.
type driver struct {
	e        *replay.Engine
	opts     Options // the session's, with this run's reader
	r        *run
	snaps    *snapshots      // the session's (snapshots.go)
	bps      map[uint64]byte // installed breakpoint address -> original byte
	user     map[uint64]bool
	ever     map[uint64]bool
	watches  []Watch
	wvals    map[Watch]string // watched bytes at the last stop or boundary
	hits     map[hitKey]int   // arrivals at ever/bp addresses since the last event
	stepTask int32            // task to single-step at its next resume (0: none)
	stepping int32            // task whose step completes at its next event boundary
	pid      int32            // recorded pid of the debugged process
	started  bool
	pos      Pos   // position of the last stop
	goal     *goal // where this run is going, nil when driven by the user
	// restoreAt is a breakpoint lifted for a step; skipReport marks the
	// step off a breakpoint that a continue makes.
	restoreAt  uint64
	skipReport bool
	watchStop  *DebugStop // a watchpoint triggered by the last event
	interrupt  *atomic.Bool
	// Read and access watchpoints (readwatch.go): the stepping state, and
	// whether the pending step was asked by the user.
	rw       rwState
	userStep bool
	// The last signal stop: its event and thread (an exit that follows
	// in the same event is the signal killing the process).
	sigStopAt  uint64
	sigStopTid int32
	maps       *mapEvents // the session's (files.go)
	// The captured executable of the debugged process, and of each
	// process by recorded pid (for debugging a fork), and their
	// auxiliary vectors.
	dbgExe, dbgExeName   string
	procExe, procExeName map[int32]string
	procAuxv             map[int32][]byte
}

type hitKey struct {
	tid  int32
	addr uint64
}

// StartSession starts replaying opts.Reader under a debugger and returns
// at the first instruction of the recorded program.
func StartSession(opts Options) (*Session, DebugStop, error) {
	s := &Session{opts: opts, user: map[uint64]bool{}, ever: map[uint64]bool{}, ckpts: map[int]Pos{},
		ckptAt: map[int]uint64{}, snaps: newSnapshots(opts.Snapshots), mapEv: newMapEvents()}
	var err error
	if s.w, err = newPtraceWorker(opts.BindCPU); err != nil {
		return nil, DebugStop{}, err
	}
	st, err := s.startRun(nil)
	return s, st, err
}

// startRun replaces the current replay by a new one driven towards g
// (nil: stop at the start), from the latest snapshot before what g needs
// or else from the start of the trace.
func (s *Session) startRun(g *goal) (DebugStop, error) {
	return s.startRunFrom(g, s.snaps.forGoal(g))
}

// startRunFrom replaces the current replay by a new one from snapshot sn
// (nil: from the start of the trace), driven towards g.
func (s *Session) startRunFrom(g *goal, sn *snapshot) (DebugStop, error) {
	if s.w == nil {
		return DebugStop{}, errors.New("replay session is closed")
	}
	rd := s.opts.Reader
	if s.started {
		if s.opts.Reopen == nil {
			return DebugStop{}, errors.New("this replay cannot be restarted")
		}
		var err error
		if rd, err = s.opts.Reopen(); err != nil {
			return DebugStop{}, err
		}
	}
	s.started = true
	s.closeRun()
	r := &run{cmds: make(chan command), results: make(chan result), exited: make(chan struct{}), rd: rd}
	opts := s.opts
	opts.Reader = rd
	d := &driver{opts: opts, r: r, snaps: s.snaps, bps: map[uint64]byte{}, user: map[uint64]bool{}, ever: map[uint64]bool{}, hits: map[hitKey]int{}, goal: g,
		interrupt: &s.interrupt, maps: s.mapEv, procExe: map[int32]string{}, procExeName: map[int32]string{}, procAuxv: map[int32][]byte{}}
	opts.Options.Bundle = s.w.bundle
	d.e = replay.NewEngine(opts.Options, s.w.stub, s.shown)
	for a := range s.user {
		d.user[a] = true
	}
	for a := range s.ever {
		d.ever[a] = true
	}
	d.watches = append([]Watch(nil), s.watches...)
	d.wvals = map[Watch]string{}
	r.d = d
	s.cur = r
	s.w.start(func() { r.loop(sn) })
	res := <-r.results
	s.stop = res.stop
	s.shown = max(s.shown, res.stop.Event)
	_ = s.do(func() { s.pos = r.d.pos })
	return res.stop, res.err
}

func (s *Session) closeRun() {
	s.EndDiversion()
	if s.cur == nil {
		return
	}
	s.cur.cmds <- command{kind: cmdKill}
	close(s.cur.cmds)
	<-s.cur.exited
	if rd := s.cur.rd; rd != nil && rd != s.opts.Reader {
		_ = rd.Close()
	}
	s.cur = nil
}

// loop runs the replay on the session's ptrace worker: from snapshot sn
// when it can be restored, else from the start of the trace.
func (r *run) loop(sn *snapshot) {
	defer close(r.exited)
	d := r.d
	var err error
	if sn != nil {
		t0 := time.Now()
		err = d.restore(sn, r.rd)
		d.snaps.note(func(st *SnapshotStats) { st.RestoreTime += time.Since(t0) })
		if err != nil {
			d.e.Logf("%v; replaying from the start", err)
			d.snaps.drop(sn)
			// A fresh run from the start (the reader was moved).
			var rd *trace.Reader
			if rd, err = d.opts.Reopen(); err == nil {
				_ = r.rd.Close()
				r.rd, d.opts.Reader = rd, rd
				d.e.SetReader(rd)
				sn = nil
			}
		} else {
			d.snaps.note(func(st *SnapshotStats) { st.Restored++ })
		}
	}
	if err == nil {
		from := uint64(0)
		if sn != nil {
			from = sn.event
		}
		d.snaps.startRun(from)
		if sn != nil {
			// The bookkeeping of the boundary the snapshot stands at (a
			// goal's base may be right there).
			err = d.afterEvent(sn.last)
		}
	}
	if err == nil {
		err = d.drive() // driver.go
	}
	d.e.KillAll()
	if errors.Is(err, errKilled) {
		for range r.cmds {
		}
		return
	}
	if err == nil {
		err = io.EOF
	}
	// Report the end, then answer commands until the run is closed.
	end := result{stop: DebugStop{Kind: StopEnd, Pid: d.pid, Event: d.e.Event(), Status: d.e.Status()}, err: err}
	r.results <- end
	for c := range r.cmds {
		switch c.kind {
		case cmdDo:
			if c.worker {
				c.fn()
			}
			close(c.done)
			r.results <- result{}
		case cmdKill:
		default:
			r.results <- end
		}
	}
}

// pause reports a stop and serves commands until one resumes execution.
func (d *driver) pause(st DebugStop) (command, error) {
	st.Pid = d.pid
	st.Event = d.e.Event()
	d.goal = nil
	d.snapshotWatches()
	// The user's time at a stop does not count against a preemption
	// point's search.
	defer d.e.PausePoint()()
	d.r.results <- result{stop: st}
	for c := range d.r.cmds {
		switch c.kind {
		case cmdDo:
			c.fn()
			close(c.done)
			d.r.results <- result{}
		case cmdKill:
			return c, errKilled
		default:
			return c, nil
		}
	}
	return command{}, errKilled
}

func (s *Session) do(fn func()) error {
	if s.cur == nil {
		return errors.New("replay session is closed")
	}
	c := command{kind: cmdDo, fn: fn, done: make(chan struct{})}
	s.cur.cmds <- c
	<-c.done
	<-s.cur.results
	return nil
}

// onWorker runs fn on the session's ptrace thread: inside the current
// run (paused or ended), or directly when there is none.
func (s *Session) onWorker(fn func()) {
	if s.cur == nil {
		s.w.call(fn)
		return
	}
	c := command{kind: cmdDo, fn: fn, done: make(chan struct{}), worker: true}
	s.cur.cmds <- c
	<-c.done
	<-s.cur.results
}

func (s *Session) resume(c command) (DebugStop, error) {
	defer s.interrupt.Store(false) // an interrupt ends with the request it interrupted
	s.EndDiversion()               // replay resumes only once a diversion is over
	if s.cur == nil {
		return DebugStop{Kind: StopEnd}, io.EOF
	}
	if s.stop.Kind == StopExec {
		// As rr: no further forwards than the exec (debug the new
		// program with -p); backwards works.
		return s.stop, nil
	}
	prev := s.pos
	s.cur.cmds <- c
	r := <-s.cur.results
	s.stop = r.stop
	s.shown = max(s.shown, r.stop.Event)
	_ = s.do(func() { s.pos = s.cur.d.pos })
	if r.err == nil && r.stop.Kind == StopWatch && r.stop.WatchUser {
		return s.findWatchWrite(r.stop, prev)
	}
	return r.stop, r.err
}

// Continue replays until the next stop.
func (s *Session) Continue() (DebugStop, error) { return s.resume(command{kind: cmdContinue}) }

// Step executes one instruction of thread tid (0 or -1: the current one).
func (s *Session) Step(tid int32) (DebugStop, error) {
	return s.resume(command{kind: cmdStep, tid: tid})
}

// Close kills the replay and the snapshots.
func (s *Session) Close() {
	s.closeRun()
	if s.w != nil {
		s.w.call(s.snaps.killAll)
		s.w.stop()
		s.w = nil
	}
}

// Threads lists the recorded thread ids of the debugged process.
func (s *Session) Threads() []int32 {
	var out []int32
	_ = s.do(func() {
		for _, t := range s.cur.d.debugTasks() {
			out = append(out, t.Rec())
		}
	})
	return out
}

// Regs returns the general registers and the FXSAVE area of a thread.
func (s *Session) Regs(tid int32) (regs trace.Regs, fx []byte, err error) {
	err = errors.New("no such thread")
	_ = s.do(func() {
		if d := s.div; d != nil && d.Tid() == tid {
			regs, fx, err = d.Regs()
			return
		}
		t := s.cur.d.e.Task(tid)
		if t == nil {
			return
		}
		if regs, err = t.Thread().GetRegs(); err != nil {
			return
		}
		fx, err = t.Thread().GetFPRegs()
	})
	return
}

// ReadMem reads the debugged process's memory as the recording had it
// (breakpoints hidden).
func (s *Session) ReadMem(addr uint64, n int) ([]byte, error) {
	var buf []byte
	err := errors.New("no process")
	_ = s.do(func() {
		if s.div != nil {
			buf, err = s.div.ReadMem(addr, n)
			return
		}
		t := s.cur.d.debugTask()
		if t == nil {
			return
		}
		buf = make([]byte, n)
		got := t.Mem().ReadPartial(addr, buf)
		if got == 0 && n > 0 {
			err = fmt.Errorf("cannot read 0x%x", addr)
			return
		}
		buf, err = buf[:got], nil
		for a, orig := range s.cur.d.bps {
			if a >= addr && a < addr+uint64(got) {
				buf[a-addr] = orig
			}
		}
	})
	return buf, err
}

// SetBreakpoint plants a software breakpoint.
func (s *Session) SetBreakpoint(addr uint64) error {
	err := errors.New("no process")
	s.user[addr], s.ever[addr] = true, true
	_ = s.do(func() {
		s.cur.d.user[addr], s.cur.d.ever[addr] = true, true
		err = s.cur.d.insertBreakpoint(addr)
		if d := s.div; d != nil && err == nil {
			err = d.SetBreakpoint(addr) // mirrored into the diversion, as rr does
		}
	})
	return err
}

// ClearBreakpoint removes a software breakpoint.
func (s *Session) ClearBreakpoint(addr uint64) error {
	var err error
	delete(s.user, addr)
	_ = s.do(func() {
		delete(s.cur.d.user, addr)
		err = s.cur.d.removeBreakpoint(addr)
		if d := s.div; d != nil && err == nil {
			err = d.ClearBreakpoint(addr)
		}
	})
	return err
}

// Auxv returns the auxiliary vector of the debugged process.
func (s *Session) Auxv() []byte {
	var b []byte
	_ = s.do(func() { b = s.cur.d.procAuxv[s.cur.d.pid] })
	return b
}

// ExecFile returns the path of the captured executable of the debugged
// process (inside the trace), and its original path.
func (s *Session) ExecFile() (captured, original string) {
	_ = s.do(func() { captured, original = s.cur.d.dbgExe, s.cur.d.dbgExeName })
	return
}

func (d *driver) removeBreakpoint(addr uint64) error {
	orig, ok := d.bps[addr]
	if !ok {
		return nil
	}
	delete(d.bps, addr)
	if handled, err := d.e.ReclaimBreakpoint(d.debugProc(), addr, orig); handled {
		return err
	}
	if t := d.debugTask(); t != nil {
		return t.Mem().WriteMem(addr, []byte{orig})
	}
	return nil
}

func (d *driver) insertBreakpoint(addr uint64) error {
	t := d.debugTask()
	if t == nil {
		return errors.New("no process")
	}
	orig, adopted, err := d.e.MakeRoomForBreakpoint(t, addr)
	if err != nil {
		return err
	}
	if _, ok := d.bps[addr]; adopted && !ok {
		// A preemption point's int3 there, now the breakpoint's.
		d.bps[addr] = orig
	}
	var b [1]byte
	if err := t.Mem().ReadMem(addr, b[:]); err != nil {
		return err
	}
	if _, ok := d.bps[addr]; !ok {
		d.bps[addr] = b[0]
	}
	return t.Mem().WriteMem(addr, []byte{0xcc})
}

// refreshBreakpoints re-plants breakpoints after replay wrote memory or
// changed the mappings, and plants those whose address was not mapped
// until now (a breakpoint in a library, in a run from the start: at the
// start of debugging only ld.so and the executable are mapped).
func (d *driver) refreshBreakpoints() {
	t := d.debugTask()
	if t == nil {
		return
	}
	for addr := range d.bps {
		var b [1]byte
		if t.Mem().ReadMem(addr, b[:]) != nil || b[0] == 0xcc {
			continue
		}
		d.bps[addr] = b[0]
		_ = t.Mem().WriteMem(addr, []byte{0xcc})
	}
	if !d.started {
		return
	}
	for a := range d.user {
		if _, ok := d.bps[a]; !ok {
			_ = d.insertBreakpoint(a)
		}
	}
	if g := d.goal; g != nil && g.target.Addr != 0 && !markedAddr(g.target.Addr) && !g.target.Watch {
		if _, ok := d.bps[g.target.Addr]; !ok {
			_ = d.insertBreakpoint(g.target.Addr)
		}
	}
}

// debugTasks lists the live tasks of the debugged process.
func (d *driver) debugTasks() []*replay.Task {
	lead := d.e.Task(d.pid)
	var out []*replay.Task
	for _, t := range d.e.Tasks() {
		if !t.Gone() && lead != nil && t.Proc() == lead.Proc() {
			out = append(out, t)
		}
	}
	return out
}

func (d *driver) debugTask() *replay.Task {
	if t := d.e.Task(d.pid); t != nil && !t.Gone() {
		return t
	}
	if ts := d.debugTasks(); len(ts) > 0 {
		return ts[0]
	}
	return nil
}

// beforeExit reports the synthetic SIGKILL stop rr gives just before the
// debugged process exits, so the user can still look around (and go
// backwards).
func (d *driver) beforeExit(t *replay.Task) error {
	if !d.started || t.Proc() != d.debugProc() {
		return nil
	}
	here := Pos{Event: d.e.Event(), Tid: t.Rec(), Addr: exitingAddr, Regs: d.e.RegsOf(t.Rec())}
	if d.sigStopAt == d.e.Event() && d.sigStopTid == t.Rec() {
		here.Killed = true
	}
	return d.markedStop(here, DebugStop{Kind: StopExiting, Tid: t.Rec()})
}

// beforeExec reports the stop rr gives just before the debugged process
// execs a new program (at its execve, in the old image); replay does not
// go past it forwards (Session.resume), only backwards.
func (d *driver) beforeExec(t *replay.Task) error {
	if !d.started || t.Proc() != d.debugProc() {
		return nil
	}
	here := Pos{Event: d.e.Event(), Tid: t.Rec(), Addr: execAddr, Regs: d.e.RegsOf(t.Rec())}
	return d.markedStop(here, DebugStop{Kind: StopExec, Tid: t.Rec()})
}

// signalStop reports a fault (or abort, or fatal) signal of the debugged
// process before its delivery, as gdb expects ("Program received signal
// SIGSEGV"), at the faulting instruction.
func (d *driver) signalStop(t *replay.Task, sig int) error {
	if !d.started || t.Proc() != d.debugProc() {
		return nil
	}
	d.sigStopAt, d.sigStopTid = d.e.Event(), t.Rec()
	here := Pos{Event: d.e.Event(), Tid: t.Rec(), Addr: signalAddr, Regs: d.e.RegsOf(t.Rec())}
	return d.markedStop(here, DebugStop{Kind: StopSignal, Tid: t.Rec(), Signal: sig})
}

// markedStop reports a stop at a position that is not an instruction
// arrival (a signal about to be delivered, the process about to exit),
// or advances the goal run passing it: a run to it stops there, and so
// do a scan and a step count that have it as their target (going
// backwards from such a stop must not look past it: what follows, the
// exit unmapping watched memory say, is not before it).
func (d *driver) markedStop(here Pos, st DebugStop) error {
	if g := d.goal; g != nil {
		tg := g.target
		isTarget := tg.Addr == here.Addr && tg.Event == here.Event && tg.Tid == here.Tid
		switch {
		case isTarget && g.kind == goalReach:
			g.done = true
		case isTarget && g.kind == goalScan && !g.baseReached:
			g.baseReached, g.done = true, true
			if w, ok := d.watchChanged(); ok {
				g.changedInTarget, g.changed = true, w
			}
			here = tg
		case isTarget && g.kind == goalCountSteps && !g.toCall && g.baseReached:
			g.done = true
		default:
			if g.kind == goalScan && !g.baseReached && here.Addr == signalAddr && st.Signal != 0 {
				p := here
				g.last, g.lastRW = &p, nil // a signal stop is a stop going backwards too
			}
			return nil
		}
	}
	d.pos = here
	_, err := d.pause(st)
	return err
}

// signalAddr marks the position of a signal stop (the event delivering it).
const signalAddr = ^uint64(0) - 1

// exitingAddr marks the position of the stop before the debugged process
// exits (the end of its last run of user code).
const exitingAddr = ^uint64(0)

// execAddr marks the position of the stop before the debugged process
// execs (at its execve, the end of its last run of user code in the old
// image).
const execAddr = ^uint64(0) - 2

// markedAddr says whether a position's Addr is one of the marks above,
// not an instruction.
func markedAddr(a uint64) bool { return a == exitingAddr || a == signalAddr || a == execAddr }

func (d *driver) debugProc() *replay.Proc {
	if t := d.e.Task(d.pid); t != nil {
		return t.Proc()
	}
	return nil
}

// noteExe remembers the captured executable of an exec event.
func (d *driver) noteExe(ev *trace.Event) {
	exe := ev.Text
	if i := indexNul(exe); i >= 0 {
		exe = exe[:i]
	}
	d.dbgExeName = exe
	for _, m := range ev.Maps {
		if m.Name == exe && m.File != "" {
			d.dbgExe = d.opts.Reader.Path(m.File)
			return
		}
	}
}

func indexNul(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

// SetWatchpoint adds a watchpoint (at most four). Watchpoints are done in
// software: replay compares the watched bytes at every event and, when they
// changed, finds the instruction (or the system call) that changed them by
// single-stepping that one run of user code again; debug registers are
// not needed (and do not work in some VMs). Read watchpoints are treated
// as access watchpoints that trigger on changes only.
func (s *Session) SetWatchpoint(w Watch) error {
	if len(s.watches) >= 4 {
		return errors.New("no free debug register")
	}
	switch w.Size {
	case 1, 2, 4, 8:
	default:
		return fmt.Errorf("watchpoint size %d unsupported", w.Size)
	}
	if w.Addr%uint64(w.Size) != 0 {
		return fmt.Errorf("watchpoint at 0x%x is not aligned to its size", w.Addr)
	}
	s.watches = append(s.watches, w)
	_ = s.do(func() {
		s.cur.d.watches = append([]Watch(nil), s.watches...)
		s.cur.d.snapshotWatches()
	})
	return nil
}

// ClearWatchpoint removes a watchpoint.
func (s *Session) ClearWatchpoint(w Watch) error {
	for i, o := range s.watches {
		if o == w {
			s.watches = append(s.watches[:i], s.watches[i+1:]...)
			break
		}
	}
	_ = s.do(func() {
		s.cur.d.watches = append([]Watch(nil), s.watches...)
		s.cur.d.snapshotWatches()
	})
	return nil
}

// watchValues reads the watched bytes.
func (d *driver) watchValues() map[Watch]string {
	t := d.debugTask()
	out := map[Watch]string{}
	if t == nil {
		return out
	}
	for _, w := range d.watches {
		if w.Kind == 3 || w.Kind == 4 {
			continue // found by stepping (readwatch.go)
		}
		b := make([]byte, w.Size)
		n := t.Mem().ReadPartial(w.Addr, b)
		out[w] = string(b[:n])
	}
	return out
}

// snapshotWatches remembers the watched bytes as they are now.
func (d *driver) snapshotWatches() { d.wvals = d.watchValues() }

// watchChanged compares the watched bytes with the snapshot, returns the
// first watch that changed, and takes a new snapshot.
func (d *driver) watchChanged() (Watch, bool) {
	if len(d.watches) == 0 {
		return Watch{}, false
	}
	now := d.watchValues()
	defer func() { d.wvals = now }()
	for _, w := range d.watches {
		if old, ok := d.wvals[w]; ok && old != now[w] && w.Kind != 3 && w.Kind != 4 {
			return w, true
		}
	}
	return Watch{}, false
}
