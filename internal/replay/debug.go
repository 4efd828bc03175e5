package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// StopKind says why a debugged replay stopped.
type StopKind int

const (
	StopStart      StopKind = iota + 1 // at the debugged program's first instruction
	StopBreakpoint                     // a software breakpoint was hit
	StopStep                           // a single step completed
	StopExiting                        // the debugged process is about to exit (reported as SIGKILL, as rr does)
	StopExited                         // the debugged process exited
	StopEnd                            // the end of the trace
)

// DebugStop describes where a debugged replay stopped.
type DebugStop struct {
	Kind   StopKind
	Tid    int32 // recorded thread id of the stopped thread
	Pid    int32 // recorded pid of the debugged process
	Addr   uint64
	Status unix.WaitStatus // StopExited
	Event  uint64          // events completed so far
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
}

type result struct {
	stop DebugStop
	err  error
}

// Session is a replay driven by a debugger: it runs until a stop, then
// waits for commands. All tracee access happens on the replay goroutine's
// locked thread; Session methods hand work to it.
type Session struct {
	rp      *replayer
	cmds    chan command
	results chan result
	done    bool
}

// debugState is the replayer's side of a Session.
type debugState struct {
	s        *Session
	bps      map[uint64]byte // breakpoint address -> original byte
	stepTask int32           // task to single-step at its next resume (0: none)
	stepping int32           // task whose step completes at its next event boundary
	pid      int32           // recorded pid of the debugged process
	started  bool
}

// StartSession starts replaying opts.Reader under a debugger and returns
// at the first instruction of the recorded program.
func StartSession(opts Options) (*Session, DebugStop, error) {
	s := &Session{cmds: make(chan command), results: make(chan result)}
	rp := &replayer{opts: opts, q: queue{r: opts.Reader}, tasks: map[int32]*rtask{}, early: map[int]ptrace.Stop{}}
	rp.dbg = &debugState{s: s, bps: map[uint64]byte{}}
	s.rp = rp
	go s.loop()
	r := <-s.results
	return s, r.stop, r.err
}

func (s *Session) loop() {
	runtime.LockOSThread()
	rp := s.rp
	if rp.opts.BindCPU >= 0 {
		var set unix.CPUSet
		set.Set(rp.opts.BindCPU)
		_ = unix.SchedSetaffinity(0, &set)
	}
	tmp, err := os.MkdirTemp("", "gorr-replay-")
	if err == nil {
		defer os.RemoveAll(tmp)
		rp.stub, err = tracee.WriteStub(tmp)
	}
	if err == nil {
		_, err = rp.run()
	}
	rp.killAll()
	if errors.Is(err, errKilled) {
		err = nil
	}
	if err == nil {
		err = io.EOF
	}
	// Report the end, then answer commands until the session is closed.
	end := result{stop: DebugStop{Kind: StopEnd, Pid: rp.dbg.pid, Event: rp.n, Status: rp.status}, err: err}
	s.results <- end
	for c := range s.cmds {
		switch c.kind {
		case cmdDo:
			close(c.done)
			s.results <- result{}
		case cmdKill:
			return
		default:
			s.results <- end
		}
	}
}

// pause reports a stop and serves commands until one resumes execution.
func (rp *replayer) pause(st DebugStop) (command, error) {
	d := rp.dbg
	st.Pid = d.pid
	st.Event = rp.n
	d.s.results <- result{stop: st}
	for c := range d.s.cmds {
		switch c.kind {
		case cmdDo:
			c.fn()
			close(c.done)
			d.s.results <- result{}
		case cmdKill:
			return c, errKilled
		default:
			return c, nil
		}
	}
	return command{}, errKilled
}

func (s *Session) do(fn func()) error {
	if s.done {
		return errors.New("replay session is closed")
	}
	c := command{kind: cmdDo, fn: fn, done: make(chan struct{})}
	s.cmds <- c
	<-c.done
	<-s.results
	return nil
}

func (s *Session) resume(c command) (DebugStop, error) {
	if s.done {
		return DebugStop{Kind: StopEnd}, io.EOF
	}
	s.cmds <- c
	r := <-s.results
	return r.stop, r.err
}

// Continue replays until the next stop.
func (s *Session) Continue() (DebugStop, error) { return s.resume(command{kind: cmdContinue}) }

// Step executes one instruction of thread tid (0 or -1: the current one).
func (s *Session) Step(tid int32) (DebugStop, error) {
	return s.resume(command{kind: cmdStep, tid: tid})
}

// Close kills the replay.
func (s *Session) Close() {
	if s.done {
		return
	}
	s.done = true
	select {
	case s.cmds <- command{kind: cmdKill}:
	default:
	}
	close(s.cmds)
}

// Threads lists the recorded thread ids of the debugged process.
func (s *Session) Threads() []int32 {
	var out []int32
	_ = s.do(func() {
		for _, t := range s.rp.debugTasks() {
			out = append(out, t.rec)
		}
	})
	return out
}

// Regs returns the general registers and the FXSAVE area of a thread.
func (s *Session) Regs(tid int32) (regs trace.Regs, fx []byte, err error) {
	err = errors.New("no such thread")
	_ = s.do(func() {
		t := s.rp.tasks[tid]
		if t == nil {
			return
		}
		if regs, err = ptrace.GetRegs(t.real); err != nil {
			return
		}
		fx = make([]byte, 512)
		_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETFPREGS, uintptr(t.real), 0, uintptr(unsafe.Pointer(&fx[0])), 0, 0)
		if e != 0 {
			err = fmt.Errorf("PTRACE_GETFPREGS: %w", e)
		}
	})
	return
}

// ReadMem reads the debugged process's memory as the recording had it
// (breakpoints hidden).
func (s *Session) ReadMem(addr uint64, n int) ([]byte, error) {
	var buf []byte
	err := errors.New("no process")
	_ = s.do(func() {
		t := s.rp.debugTask()
		if t == nil {
			return
		}
		buf = make([]byte, n)
		got := t.mem.ReadPartial(addr, buf)
		if got == 0 && n > 0 {
			err = fmt.Errorf("cannot read 0x%x", addr)
			return
		}
		buf, err = buf[:got], nil
		for a, orig := range s.rp.dbg.bps {
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
	_ = s.do(func() { err = s.rp.insertBreakpoint(addr) })
	return err
}

// ClearBreakpoint removes a software breakpoint.
func (s *Session) ClearBreakpoint(addr uint64) error {
	var err error
	_ = s.do(func() {
		orig, ok := s.rp.dbg.bps[addr]
		if !ok {
			return
		}
		delete(s.rp.dbg.bps, addr)
		if t := s.rp.debugTask(); t != nil {
			err = t.mem.WriteMem(addr, []byte{orig})
		}
	})
	return err
}

// ExecFile returns the path of the captured executable of the debugged
// process (inside the trace), and its original path.
func (s *Session) ExecFile() (captured, original string) {
	_ = s.do(func() { captured, original = s.rp.dbgExe, s.rp.dbgExeName })
	return
}

func (rp *replayer) insertBreakpoint(addr uint64) error {
	t := rp.debugTask()
	if t == nil {
		return errors.New("no process")
	}
	var b [1]byte
	if err := t.mem.ReadMem(addr, b[:]); err != nil {
		return err
	}
	if _, ok := rp.dbg.bps[addr]; !ok {
		rp.dbg.bps[addr] = b[0]
	}
	return t.mem.WriteMem(addr, []byte{0xcc})
}

// refreshBreakpoints re-plants breakpoints after replay wrote memory.
func (rp *replayer) refreshBreakpoints() {
	t := rp.debugTask()
	if t == nil {
		return
	}
	for addr := range rp.dbg.bps {
		var b [1]byte
		if t.mem.ReadMem(addr, b[:]) != nil || b[0] == 0xcc {
			continue
		}
		rp.dbg.bps[addr] = b[0]
		_ = t.mem.WriteMem(addr, []byte{0xcc})
	}
}

// debugTasks lists the live tasks of the debugged process.
func (rp *replayer) debugTasks() []*rtask {
	lead := rp.tasks[rp.dbg.pid]
	var out []*rtask
	for _, t := range rp.tasks {
		if !t.gone && lead != nil && t.proc == lead.proc {
			out = append(out, t)
		}
	}
	return out
}

func (rp *replayer) debugTask() *rtask {
	if t := rp.tasks[rp.dbg.pid]; t != nil && !t.gone {
		return t
	}
	if ts := rp.debugTasks(); len(ts) > 0 {
		return ts[0]
	}
	return nil
}

// resumeStep executes one instruction of t; a system call instruction
// stops at its entry without running (PTRACE_SYSEMU_SINGLESTEP).
func (rp *replayer) resumeStep(t *rtask) error {
	if err := rp.resume(t, -1); err != nil {
		return err
	}
	return ptrace.Resume(t.real, unix.PTRACE_SYSEMU_SINGLESTEP, 0)
}

// debugTrap handles a SIGTRAP met while running t: a breakpoint hit or a
// completed single step is reported to the debugger and t resumed as it
// says. It returns false for traps that are not the debugger's.
func (rp *replayer) debugTrap(t *rtask, mode int, stepping *bool) (bool, error) {
	si, err := ptrace.GetSigInfo(t.real)
	if err != nil {
		return false, nil
	}
	r, err := ptrace.GetRegs(t.real)
	if err != nil {
		return false, err
	}
	var stop DebugStop
	switch {
	case si.Code() == 0x80: // int3
		if _, ok := rp.dbg.bps[r[ptrace.RIP]-1]; !ok {
			return false, nil
		}
		r[ptrace.RIP]--
		if err := ptrace.SetRegs(t.real, &r); err != nil {
			return false, err
		}
		stop = DebugStop{Kind: StopBreakpoint, Tid: t.rec, Addr: r[ptrace.RIP]}
	case *stepping && si.Code() == 2: // TRAP_TRACE
		stop = DebugStop{Kind: StopStep, Tid: t.rec}
	default:
		return false, nil
	}
	*stepping = false
	c, err := rp.pause(stop)
	if err != nil {
		return false, err
	}
	if c.kind == cmdStep {
		*stepping = true
		return true, ptrace.Resume(t.real, unix.PTRACE_SYSEMU_SINGLESTEP, 0)
	}
	return true, ptrace.Resume(t.real, mode, 0)
}

// afterEvent reports stops due at event boundaries.
func (rp *replayer) afterEvent(ev *trace.Event) error {
	d := rp.dbg
	if len(ev.Mem) > 0 || len(ev.Maps) > 0 {
		rp.refreshBreakpoints()
	}
	var stop *DebugStop
	switch {
	case ev.Kind == trace.KindExec && !d.started:
		d.started = true
		d.pid = ev.NewTid
		rp.noteExe(ev)
		rp.refreshBreakpoints()
		stop = &DebugStop{Kind: StopStart, Tid: ev.NewTid}
	case ev.Kind == trace.KindExit && ev.Tid == d.pid:
		stop = &DebugStop{Kind: StopExited, Tid: ev.Tid, Status: unix.WaitStatus(ev.Result)}
	case d.stepping != 0 && ev.Tid == d.stepping && ev.Kind != trace.KindSyscallEntry:
		d.stepping = 0
		stop = &DebugStop{Kind: StopStep, Tid: ev.Tid}
	}
	if stop == nil {
		return nil
	}
	c, err := rp.pause(*stop)
	if err != nil {
		return err
	}
	if c.kind == cmdStep {
		tid := c.tid
		if tid <= 0 || rp.tasks[tid] == nil {
			tid = stop.Tid
		}
		if rp.tasks[tid] == nil {
			return nil
		}
		t := rp.tasks[tid]
		if t.atEntry {
			// Held inside a system call: the step ends when it returns.
			d.stepping = tid
		} else {
			d.stepTask = tid
		}
	}
	return nil
}

// beforeExit reports the synthetic SIGKILL stop rr gives just before the
// debugged process exits, so the user can still look around (and, later,
// go backwards).
func (rp *replayer) beforeExit(t *rtask) error {
	if rp.dbg == nil || !rp.dbg.started || t.proc != rp.debugProc() {
		return nil
	}
	_, err := rp.pause(DebugStop{Kind: StopExiting, Tid: t.rec})
	return err
}

func (rp *replayer) debugProc() *rproc {
	if t := rp.tasks[rp.dbg.pid]; t != nil {
		return t.proc
	}
	return nil
}

// noteExe remembers the captured executable of an exec event.
func (rp *replayer) noteExe(ev *trace.Event) {
	exe := ev.Text
	if i := indexNul(exe); i >= 0 {
		exe = exe[:i]
	}
	rp.dbgExeName = exe
	for _, m := range ev.Maps {
		if m.Name == exe && m.File != "" {
			rp.dbgExe = rp.opts.Reader.Path(m.File)
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
