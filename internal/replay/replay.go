// Package replay re-executes a recorded trace: it runs the recorded
// program's own instructions, emulates its system calls from the trace
// (executing for real only those that shape the address space or the
// task tree), reproduces signals and trapped instructions, and checks the
// registers at every event, reporting a divergence when they disagree.
package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Options configure one replay.
type Options struct {
	Reader  *trace.Reader
	Stdout  io.Writer // receives the tracee's recorded stdout writes; nil drops them
	Stderr  io.Writer
	BindCPU int // -1: unbound
	Log     io.Writer
	// Tamper, if set, may modify each event before it is replayed (tests
	// use it to provoke a divergence).
	Tamper func(n uint64, ev *trace.Event)
	// Bundle, if set, holds the files the replayed processes map privately
	// (bundle.go): the engines of one debugging session share it.
	Bundle *FileBundle
}

// Result summarises a replay.
type Result struct {
	Status unix.WaitStatus // recorded wait status of the initial process
	Events uint64
	// Stops is how many ptrace stops of the tasks replay ran them to
	// (the calls it injects not counted): a measure of its cost.
	Stops uint64
	// Incomplete is set when the trace ended early (the recorder died).
	Incomplete error
}

// DivergenceError reports that replay did not follow the recording.
type DivergenceError struct {
	Event uint64
	Tid   int32
	What  string
	Diffs []string
}

func (e *DivergenceError) Error() string {
	s := fmt.Sprintf("replay diverged at event %d (tid %d, %s)", e.Event, e.Tid, e.What)
	for _, d := range e.Diffs {
		s += "\n  " + d
	}
	return s
}

type rtask struct {
	rec        int32
	real       int
	mem        *tracee.Mem
	proc       *rproc
	atEntry    bool // held at a syscall-entry stop
	executing  bool // that syscall runs for real
	entry      trace.Regs
	restart    bool // apply the kernel's syscall-restart adjustment on resume
	exitCall   bool
	gone       bool            // dead (exited for real)
	lastEntry  uint64          // number of this task's last syscall-entry event
	inCall     bool            // entered a syscall whose exit event is still to come
	execSaved  *trace.MemWrite // old-memory bytes the stub exec's arguments replaced
	restoreMem *trace.MemWrite
	execStub   bool
	rewritten  bool
	fileMap    *trace.Mapping
	mappedFile bool   // the executed mmap maps its file itself (prepare)
	pid        int    // tgid, once read (0: not yet)
	stepPushf  uint64 // single-stepping a pushf: the address after it (clear the trap flag it pushes)
	stepped    bool   // a single step of ours is under way
	stepAgain  bool   // a real signal passed over interrupted that step (passOver)
	// clearTid is the task's clear_child_tid address as the kernel has
	// it (CLONE_CHILD_CLEARTID, set_tid_address; 0 after exec), so that
	// a snapshot can give it back to the task's copy.
	clearTid uint64
	// trapped: the thread's kernel flags trap rdtsc, rdtscp and cpuid
	// (PR_SET_TSC, cpuid faulting where the CPU has it), as replay set
	// them; fork and clone copy them.
	trapped bool
	// othersSinceEntry (debugging): another task had an event after
	// this one's last syscall entry (it was blocked while they ran).
	othersSinceEntry bool
	// killed: the task's thread group was killed for real (a replayed
	// exit_group, fatal signal or SIGKILL), so the task is on its way to
	// its PTRACE_EVENT_EXIT stop; atExit: it is held there
	// (awaitExitStop), where events the recording took at its death
	// (the end of a write it was in) are replayed.
	killed, atExit bool
	// bufRun: a stretch of the task's buffered calls the stub replays
	// from the buffer, checked at the task's next stop (bufreplay.go);
	// bufRec: the size of the record the stub commits after the last
	// buffered call of the task that stopped (0: none yet).
	bufRun *bufRun
	// spare: the task's last stretch that has ended, whose slices its
	// next reuses (startBufRun).
	spare  *bufRun
	bufRec uint32
}

// thread is the task's real thread, for ptrace requests (from the
// replayer's locked OS thread only).
func (t *rtask) thread() ptrace.Thread { return ptrace.NewThread(t.real) }

type rproc struct {
	brk uint64 // the program break (0: not asked for yet)
	// resumeAt holds the addresses where a handled signal interrupted a
	// thread of this address space. The handler's return enters the
	// code there from nowhere the code shows: rt_sigreturn restores the
	// interrupted rip, and the Go runtime, which preempts a goroutine
	// with a signal, pushes that rip as the return address of
	// asyncPreempt and resumes the goroutine there later, on any of its
	// threads. A preemption point's pad must not cover such an address
	// inside its site (findByState, asyncpoint.ResumesInside).
	resumeAt map[uint64]bool
	// trap: the kernel traps rdtsc, rdtscp and cpuid in this address
	// space's threads, as it did in the recording (trace.ExecUntrapped,
	// trace.TrapsAfter); each thread is set so before its next event
	// (armTraps).
	trap bool
	// bundle: 1 if the process has the file bundle as bundleFd, -1 if not, 0
	// not known yet (hasBundle).
	bundle int8
}

// moveBrk sets the break to res, the result of a brk, and returns the
// break before (res itself for the first brk, which asks where it is)
// and whether the heap's last page moved: whether replay maps or unmaps
// pages for this brk.
func (p *rproc) moveBrk(res uint64) (old uint64, moved bool) {
	old = p.brk
	if old == 0 {
		old = res
	}
	p.brk = res
	return old, pageUp(old) != pageUp(res)
}

// clone copies p for a new address space (fork, a frozen copy).
func (p *rproc) clone() *rproc {
	c := *p
	c.resumeAt = maps.Clone(p.resumeAt)
	return &c
}

// interrupted notes that a handled signal interrupted a thread at rip.
func (p *rproc) interrupted(rip uint64) {
	if p.resumeAt == nil {
		p.resumeAt = map[uint64]bool{}
	}
	p.resumeAt[rip] = true
}

// resumes tells whether a signal interrupted a thread at addr.
func (p *rproc) resumes(addr uint64) bool { return p.resumeAt[addr] }

type replayer struct {
	opts    Options
	bufSpan []byte // scratch for a stretch's buffer records (bufScratch)
	q       queue
	tasks   map[int32]*rtask
	n       uint64
	initial int32
	stub    string
	status  unix.WaitStatus
	early   map[int]ptrace.Stop
	// Advance's run (engine.go): the constraints of the current call,
	// and the coroutine the event loop runs in (nil until the first
	// Advance and for Run); yield hands it a stop.
	c        Constraints
	notes    Notes // for the next stop
	adopted  *adoption
	next     func() (Stop, error, bool)
	stopPull func()
	yield    func(Stop, error) bool
	echoFrom uint64       // output of events up to this one was shown already
	point    *pointSearch // the run towards a preemption point under way
	evTime   uint64       // recording time of the last event (ns since its start)
	// Whether the replay stands at the boundary after lastEv (a session
	// may freeze it there, freeze.go).
	lastEv     *trace.Event
	atBoundary bool
	// The replay's copies of files mapped MAP_SHARED, by captured name
	// (memory.go), in emuDir.
	emu    map[string]string
	emuDir string
	emuFds map[int]map[string]int64 // tgid -> "flags:path" -> descriptor open in that process
	fdSeen map[int]map[string]bool  // those of emuFds known to be open still (openedIn)
	// realPaths: the absolute, symlink-free names of the files replay
	// maps (what /proc/PID/fd shows of their descriptors).
	realPaths map[string]string
	// takenAtDeath: the output of the recorded ends of calls of tasks an
	// execve killed, taken at their deaths (diesInExec).
	takenAtDeath map[*trace.Event][]byte
	// bufSlowTo: buffered calls up to this event stop one by one
	// (bufreplay.go).
	bufSlowTo uint64
	stops     uint64 // Result.Stops
}

// Replay runs the whole trace without a debugger.
func Replay(opts Options) (*Result, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if opts.BindCPU >= 0 {
		var set unix.CPUSet
		set.Set(opts.BindCPU)
		_ = unix.SchedSetaffinity(0, &set)
	}
	tmp, err := os.MkdirTemp("", "gorr-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if opts.Bundle == nil {
		if opts.Bundle, err = NewFileBundle(tmp); err != nil {
			return nil, err
		}
		defer opts.Bundle.Close()
	}
	rp := &replayer{opts: opts, q: newQueue(opts.Reader), tasks: map[int32]*rtask{}, early: map[int]ptrace.Stop{}}
	if rp.stub, err = tracee.WriteStub(tmp); err != nil {
		return nil, err
	}
	res, err := rp.loop()
	rp.killAll()
	return res, err
}

// loop replays events until the end of the trace, stopping where
// Advance's constraints ask (stopAt).
func (rp *replayer) loop() (*Result, error) {
	res := &Result{}
	for {
		ev, gap, err := rp.q.next()
		rp.n += gap // calls the stub replayed from their records (startBufRun)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, trace.ErrIncomplete) {
				res.Incomplete = err
				break
			}
			return nil, err
		}
		rp.n++
		rp.atBoundary = false
		if ev.Time != 0 {
			rp.evTime = ev.Time
		}
		if rp.opts.Tamper != nil {
			rp.opts.Tamper(rp.n, ev)
		}
		if err := rp.step(ev); err != nil {
			return nil, err
		}
		rp.lastEv, rp.atBoundary = ev, true
		if err := rp.eventDone(ev); err != nil {
			return nil, err
		}
		if rp.opts.Log != nil {
			if t := rp.tasks[ev.Tid]; t != nil {
				r, _ := t.thread().GetRegs()
				fmt.Fprintf(rp.opts.Log, "event %d kind %d tid %d sys %s: rip 0x%x rsp 0x%x rax 0x%x restart %v\n", rp.n, ev.Kind, ev.Tid, linux.Name(int(ev.Sysno)), r[ptrace.RIP], r[ptrace.RSP], r[ptrace.RAX], t.restart)
			}
		}
	}
	res.Events = rp.n
	res.Stops = rp.stops
	res.Status = rp.status
	return res, nil
}

func (rp *replayer) killAll() {
	var threads []ptrace.Thread
	for _, t := range rp.tasks {
		if !t.gone {
			threads = append(threads, t.thread())
		}
	}
	ptrace.KillAll(threads, 5*time.Second)
	for _, t := range rp.tasks {
		if !t.gone {
			_ = t.mem.Close()
		}
	}
	rp.tasks = map[int32]*rtask{}
}

func (rp *replayer) diverge(ev *trace.Event, what string, diffs ...string) error {
	return &DivergenceError{Event: rp.n, Tid: ev.Tid, What: what, Diffs: diffs}
}

func (rp *replayer) task(ev *trace.Event) (*rtask, error) {
	t := rp.tasks[ev.Tid]
	if t == nil {
		return nil, rp.diverge(ev, "event for a task that does not exist in replay")
	}
	return t, nil
}

func (rp *replayer) step(ev *trace.Event) error {
	if err := rp.armTraps(ev); err != nil {
		return err
	}
	if err := rp.dispatch(ev); err != nil {
		return err
	}
	if t := rp.tasks[ev.Tid]; t != nil {
		trapsAfter(t, ev)
	}
	return nil
}

// dispatch replays ev by its kind.
func (rp *replayer) dispatch(ev *trace.Event) error {
	switch ev.Kind {
	case trace.KindExec:
		return rp.exec(ev)
	case trace.KindSyscallEntry:
		return rp.syscallEntry(ev)
	case trace.KindSyscallExit:
		return rp.syscallExit(ev)
	case trace.KindNewTask:
		return rp.newTask(ev)
	case trace.KindSignal:
		return rp.signal(ev)
	case trace.KindInstruction:
		return rp.instruction(ev)
	case trace.KindExit:
		return rp.exit(ev)
	case trace.KindSched:
		return rp.preempt(ev)
	case trace.KindPtraceWrite:
		return rp.ptraceWrite(ev)
	}
	return rp.diverge(ev, fmt.Sprintf("unknown event kind %d", ev.Kind))
}

// compareRegs lists the registers that differ.
func compareRegs(want, got *trace.Regs) []string {
	var d []string
	for i := range want {
		w, g := want[i], got[i]
		if i == ptrace.EFLAGS || i == ptrace.R11 {
			// RF and TF (r11 holds rflags after a syscall instruction,
			// with TF when a debugger single-stepped onto it).
			w &^= 0x10100
			g &^= 0x10100
		}
		if w != g {
			d = append(d, fmt.Sprintf("%s: recorded 0x%x, replay 0x%x", ptrace.RegNames[i], w, g))
		}
	}
	return d
}

// resume restarts a held task, applying a pending syscall restart.
// resume restarts a held task (mode -1: only prepare it).
func (rp *replayer) resume(t *rtask, mode int) error {
	if t.restart {
		t.restart = false
		r, err := t.thread().GetRegs()
		if err != nil {
			return err
		}
		switch int64(r[ptrace.RAX]) {
		case -516: // ERESTART_RESTARTBLOCK
			r[ptrace.RAX] = unix.SYS_RESTART_SYSCALL
		default:
			r[ptrace.RAX] = r[ptrace.ORIGRAX]
		}
		r[ptrace.RIP] -= 2
		if err := t.thread().SetRegs(&r); err != nil {
			return err
		}
	}
	t.atEntry = false
	if mode < 0 {
		return nil
	}
	return t.thread().Resume(mode, 0)
}

// stepInsn single-steps t (a system call instruction stops at its entry
// without running). Stepping pushf pushes the trap flag the step set;
// waitStop clears it from the stack after the step, so that a later popf
// does not make the thread trap where the recorded one did not.
func (rp *replayer) stepInsn(t *rtask) error {
	var code [2]byte
	t.stepPushf, t.stepped = 0, true
	if r, err := t.thread().GetRegs(); err == nil && t.mem.ReadMem(r[ptrace.RIP], code[:]) == nil {
		switch {
		case code[0] == 0x9c:
			t.stepPushf = r[ptrace.RIP] + 1
		case (code[0] == 0x66 || code[0]&0xf0 == 0x40) && code[1] == 0x9c:
			t.stepPushf = r[ptrace.RIP] + 2
		}
	}
	return t.thread().Resume(ptrace.SysemuStep, 0)
}

// waitStop waits for the next stop of t, discarding asynchronous signals
// that replay does not deliver for real (SIGCHLD from replayed children
// and the like).
func (rp *replayer) waitStop(t *rtask, mode int) (ptrace.Stop, error) {
	return t.thread().WaitUntil(mode, func(st ptrace.Stop) (ptrace.Action, error) {
		rp.stops++
		if rp.keepStop(t, st) {
			return ptrace.Accept, nil
		}
		return rp.passOver(t)
	})
}

// keepStop does what any stop of t needs after a step (no trap flag the
// recorded thread did not have) and tells whether st is one for the
// engine: false for an asynchronous signal, which replay passes over.
func (rp *replayer) keepStop(t *rtask, st ptrace.Stop) bool {
	stepped := t.stepped
	if stepped {
		t.stepped = false
		if r, err := t.thread().GetRegs(); err == nil {
			if after := t.stepPushf; after != 0 && r[ptrace.RIP] == after {
				if v, err := t.mem.ReadU64(r[ptrace.RSP]); err == nil && v&0x100 != 0 {
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], v&^0x100)
					_ = t.mem.WriteMem(r[ptrace.RSP], b[:])
				}
			}
			if r[ptrace.EFLAGS]&0x100 != 0 {
				// A trap flag the kernel no longer counts as ours
				// (after stepping popf): the recorded thread never
				// had it.
				r[ptrace.EFLAGS] &^= 0x100
				_ = t.thread().SetRegs(&r)
			}
		}
		t.stepPushf = 0
	}
	if st.Kind == ptrace.StopSignal {
		si, err := t.thread().GetSigInfo()
		if err != nil || !syncSignal(&si) {
			t.stepAgain = stepped
			return false
		}
	}
	return true
}

// passOver resumes t past a stop keepStop did not keep. A real signal
// that stopped t during a single step of ours came before the step's
// instruction ran (the kernel reports the step's own SIGTRAP first when
// both are pending): the step is made again, not turned into a run with
// the run's mode (which would carry a debugger's stepi on to the next
// event).
func (rp *replayer) passOver(t *rtask) (ptrace.Action, error) {
	if !t.stepAgain {
		return ptrace.Again, nil
	}
	t.stepAgain = false
	if err := rp.stepInsn(t); err != nil {
		return ptrace.Accept, err
	}
	return ptrace.Resumed, nil
}

func syncSignal(si *ptrace.SigInfo) bool {
	switch unix.Signal(si.Signo()) {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP:
		return si.Code() > 0
	}
	return false // SIGSYS: seccomp filters are not installed in replay
}

// runTo resumes t until it stops with a stop of the wanted kind.
func (rp *replayer) runTo(ev *trace.Event, t *rtask, mode int, want ptrace.StopKind, sig int) (ptrace.Stop, error) {
	if t.killed {
		// Its process was killed: it can only die (the recording has
		// nothing for it but the end of a call and its exit).
		return ptrace.Stop{}, rp.diverge(ev, fmt.Sprintf("expected %v of a task whose process was killed", want))
	}
	stepping := rp.stepDue(t)
	rp.resuming(stepping)
	if rp.driven() && want != ptrace.StopSyscallExit && rp.rwApplies(t) {
		// Read watchpoints: run by steps, counted from this boundary.
		if err := rp.resume(t, -1); err != nil {
			return ptrace.Stop{}, err
		}
		r, _ := t.thread().GetRegs()
		first, err := rp.rwStart(t, Pos{Event: rp.n - 1, Tid: t.rec, Regs: r})
		if err != nil {
			return ptrace.Stop{}, err
		}
		stepping = first || stepping
	}
	if stepping {
		rp.stepStarted()
		if err := rp.resumeStep(t); err != nil {
			return ptrace.Stop{}, err
		}
	} else if err := rp.resume(t, mode); err != nil {
		return ptrace.Stop{}, err
	}
	restarting := false // a spurious restart of an executed call is under way
	st, err := t.thread().WaitUntil(mode, func(st ptrace.Stop) (ptrace.Action, error) {
		rp.stops++
		if !rp.keepStop(t, st) {
			return rp.passOver(t)
		}
		if rp.point != nil && st.Kind == ptrace.StopSignal && st.Signal == int(unix.SIGTRAP) {
			found, resumed, err := rp.pointTrap(t, mode, stepping)
			if err != nil {
				return ptrace.Accept, err
			}
			if found {
				if stepping {
					rp.stepEndsAtBoundary(t) // the step ends at the point
				}
				return ptrace.Accept, nil
			}
			if resumed {
				return ptrace.Resumed, nil
			}
		}
		if rp.driven() && st.Kind == ptrace.StopSignal && st.Signal == int(unix.SIGTRAP) {
			resumed, err := rp.debugTrap(t, mode, &stepping)
			if err != nil {
				return ptrace.Accept, err
			}
			if resumed {
				return ptrace.Resumed, nil
			}
		}
		if stepping && st.Kind == want {
			// The step ran into the stop this event expects: the step
			// completes when the event does.
			stepping = false
			if !rp.rwOnly(t) {
				rp.stepEndsAtBoundary(t)
			}
			if want == ptrace.StopSyscallEntry && mode == ptrace.Syscall {
				// SYSEMU_SINGLESTEP skipped a call that must run for
				// real: back up and enter it again.
				r, err := t.thread().GetRegs()
				if err != nil {
					return ptrace.Accept, err
				}
				r[ptrace.RIP] -= 2
				r[ptrace.RAX] = r[ptrace.ORIGRAX]
				if err := t.thread().SetRegs(&r); err != nil {
					return ptrace.Accept, err
				}
				return ptrace.ResumeOnce(ptrace.Syscall, 0), nil
			}
		}
		switch {
		case st.Kind == want && (want != ptrace.StopSignal || st.Signal == sig):
			return ptrace.Accept, nil
		case st.Kind == ptrace.StopSyscallExit && want == ptrace.StopSyscallEntry:
			// The exit of a call skipped by SYSEMU, reported because we
			// resumed with PTRACE_SYSCALL.
			return ptrace.Again, nil
		case st.Kind == ptrace.StopSyscallExit && want != ptrace.StopSyscallEntry && t.executing && spuriousRestart(ev, t):
			// Interrupted by a real signal replay does not deliver; the
			// kernel restarts the call once the signal is dequeued (and
			// discarded by keepStop).
			restarting = true
			return ptrace.ResumeOnce(ptrace.Syscall, 0), nil
		case st.Kind == ptrace.StopSyscallEntry && restarting:
			// The restarted call: into it again.
			restarting = false
			return ptrace.ResumeOnce(ptrace.Syscall, 0), nil
		case st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT:
			return ptrace.Accept, rp.diverge(ev, "task exited unexpectedly")
		default:
			r, _ := t.thread().GetRegs()
			return ptrace.Accept, rp.diverge(ev, fmt.Sprintf("expected %v, got %v at rip 0x%x (%s)", want, st.Kind, r[ptrace.RIP], describeStop(st, &r)))
		}
	})
	if t.bufRun != nil {
		// The stretch of buffered calls before this stop: a divergence
		// there comes first.
		if berr := rp.endBufRun(t); berr != nil {
			var de *DivergenceError
			if err != nil && errors.As(berr, &de) {
				de.Diffs = append(de.Diffs, "then: "+err.Error())
			}
			return st, berr
		}
	}
	return st, err
}

// spuriousRestart tells whether t, running a call for real (towards
// event ev: its NEW_TASK or its SYSCALL_EXIT), stands at that call's exit
// with a restart code the recording did not return. fork and clone give
// up with -ERESTARTNOINTR while any signal is pending for the thread,
// and replay's processes receive real signals replay does not deliver:
// above all the SIGCHLD the kernel sends a parent when replay reaps its
// child at the child's EXIT event (as the tracer, ptrace's
// EXIT_TRACE), which the recorder may have met, and written, while
// another thread of the parent was inside fork. In the recording that
// SIGCHLD came after fork's check; in replay it is pending before it.
func spuriousRestart(ev *trace.Event, t *rtask) bool {
	r, err := t.thread().GetRegs()
	if err != nil {
		return false
	}
	switch ret := int64(r[ptrace.RAX]); ret {
	case -512, -513, -514: // ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND: restarted when no handler runs
		switch ev.Kind {
		case trace.KindNewTask:
			return true // the recorded call created its task
		case trace.KindSyscallExit:
			return ev.Result != ret && ev.Sysno != unix.SYS_RT_SIGRETURN && int64(r[ptrace.ORIGRAX]) >= 0
		}
	}
	return false
}

func describeStop(st ptrace.Stop, r *trace.Regs) string {
	switch st.Kind {
	case ptrace.StopSyscallEntry:
		return "syscall " + linux.Name(int(int64(r[ptrace.ORIGRAX])))
	case ptrace.StopSyscallExit:
		return fmt.Sprintf("exit of %s = %d", linux.Name(int(int64(r[ptrace.ORIGRAX]))), int64(r[ptrace.RAX]))
	case ptrace.StopSignal:
		return "signal " + linux.SignalName(st.Signal)
	}
	return st.String()
}
