// Package record runs a program under ptrace and writes everything it
// could not recompute into a trace: system-call results and the memory
// they wrote, signals, trapped instructions, address-space snapshots at
// exec and the order in which threads ran. Exactly one tracee thread runs
// user code at any time; threads blocked in the kernel do not hold up
// the others.
package record

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/prefault"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/sched"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Options configure one recording.
type Options struct {
	Argv []string // program and arguments; Argv[0] resolved through PATH
	Env  []string // the tracee's environment
	// Writer is the trace recorded into. OpenWriter, used when Writer
	// is nil, returns it once the program has stopped at its exec: the
	// caller may create the trace while the program starts.
	Writer     *trace.Writer
	OpenWriter func() (*trace.Writer, error)
	BindCPU    int // CPU to bind tracer and tracees to; -1 leaves them unbound
	Stdin      *os.File
	Stdout     *os.File
	Stderr     *os.File
	Log        io.Writer // verbose log, may be nil
	// Warn receives warnings about what the recording may miss (nil:
	// none are written).
	Warn io.Writer
	// Portable limits the CPUID features tracees see to cpu.Baseline.
	Portable bool
	// Timeslice is how long one thread may run user code without a
	// system call while another thread is ready before it is preempted
	// (0: DefaultTimeslice); SignalSlice the same while a signal waits
	// for it (0: DefaultSignalSlice).
	Timeslice, SignalSlice time.Duration
	// Checksum stores a checksum of the process's writable memory with
	// every system-call exit; replay compares it.
	Checksum bool
	// Chaos picks a random ready thread at every scheduling point
	// (seeded by ChaosSeed); the choices are part of the trace.
	Chaos     bool
	ChaosSeed uint64
	// SiteCache is a directory where the rdtsc/cpuid sites found in mapped
	// files are kept between recordings ("": no cache).
	SiteCache string
	// WaitAll keeps recording until every recorded process has exited
	// (rr's --wait); by default the processes still alive when the
	// initial process has exited are killed, as rr does.
	WaitAll bool
	// SyscallBuffer maps gorr's in-process system-call buffer into every
	// process (internal/syscallbuf): the common calls are made and
	// recorded without a ptrace stop each.
	SyscallBuffer bool
	// AlwaysTrap has the kernel trap rdtsc, rdtscp and cpuid in every
	// process, not only in those with code the recorder did not scan
	// (traps.go).
	AlwaysTrap bool
}

// Result summarises a finished recording.
type Result struct {
	Status unix.WaitStatus // wait status of the initial process
	Events uint64
	// Points counts the preemption points (threads switched or signals
	// delivered between system calls).
	Points uint64
	// SiteRuns counts the point searches that ran the thread to their
	// sites at native speed (runToSites), SiteHits those that arrived.
	SiteRuns, SiteHits uint64
	// Yields counts the timeslices that ended at a system call the
	// syscall buffer's stub traced when asked (no point needed).
	Yields uint64
	// CPUIDFaulting tells whether cpuid was trapped by the kernel in
	// some process (Intel CPUs and some VMs have cpuid faulting).
	CPUIDFaulting bool
	// Processes counts the address spaces exec'd; TrappedAtExec those
	// of them that trapped rdtsc and cpuid by kernel from their exec,
	// TrappedLater the processes that started to later (traps.go).
	Processes, TrappedAtExec, TrappedLater int
	// Stats are the recorder's wall time by phase (record --stats).
	Stats []PhaseStat
	// BufferedCalls counts the calls recorded through the syscall buffer.
	BufferedCalls uint64
	// Calls counts the calls by number and path (record --stats).
	Calls []CallCount
	// SharedFiles are the captured files that a MAP_SHARED mapping used
	// (trace.Header.SharedFiles), sorted.
	SharedFiles []string
}

type tstate int

const (
	stReady   tstate = iota // stopped and handled; may run user code
	stRunning               // running user code (at most one task)
	stKernel                // inside a system call or exiting
	stStopped               // in a job-control group-stop, until SIGCONT
)

type stopAt int

const (
	atSignal stopAt = iota // resume runs user code; pendingSig is delivered
	atExit                 // syscall-exit stop
)

type task struct {
	tid        int
	tgid       int // its process (kept: /proc forgets it once the task is reaped)
	vmWith     int // a vfork child until it execs: the parent's tgid (its address space)
	state      tstate
	at         stopAt
	pendingSig int
	mem        *tracee.Mem
	sc         uint64 // address of a syscall instruction (patched vDSO)
	sysno      int
	sc0        *linux.Syscall
	entry      trace.Regs
	lastRegs   trace.Regs // registers at the task's last event (setLast)
	nullify    bool
	nullRet    int64
	deferred   []ptrace.SigInfo // async signals re-raised at the next syscall
	reraised   map[int]ptrace.SigInfo
	execed     bool
	exFormer   int
	dying      bool
	runStart   time.Time
	// toSites: t runs to the sites of a point search (runToSites); a
	// search that its stops start meanwhile only single-steps.
	toSites    bool
	tscSigsegv bool // the program set PR_TSC_SIGSEGV (syscall.go prctlTSC)
	// kern is what the thread's kernel flags trap, uncovered whether its
	// process has executable memory the recorder did not scan (traps.go).
	kern      traps
	uncovered bool
	groupSig  int      // the signal of the task's last group-stop
	emu       *emuTask // emulated ptrace state (ptraceemu.go)
	// interrupted is the call a signal interrupted with
	// -ERESTART_RESTARTBLOCK, which restart_syscall resumes (syscall.go).
	interrupted *interruptedCall
	buf         *bufState  // the address space's syscall buffer (syscallbuf.go)
	forceTrace  bool       // a stub call may be restarted: stop at every call (markTraced)
	yielded     bool       // the stub took the watchdog's yield: its next stop is that traced call (takeYield)
	writeOpen   bool       // the trace has the entry of a write of t and not yet its exit (exitDuringWrite)
	segRegs     trace.Regs // registers at t's last drain (their segment and base registers, for a drain at a stop t already left)
	// ownFilter: the thread runs a seccomp filter of the program's own.
	// Its ERRNO, TRAP and KILL verdicts take precedence over the buffer
	// filter's TRACE, so such a thread is resumed to stop at every call
	// (syscall-entry stops come before any filter).
	ownFilter bool
	// robust holds the robust futex words the kernel marked as the task
	// died (robust.go); its exit event carries them.
	robust []trace.MemWrite
	// victims are the stopped tasks the SIGKILL of the call t is in
	// kills (kill.go).
	victims []killVictim
	// clearTid is the task's clear_child_tid address as the kernel has
	// it (CLONE_CHILD_CLEARTID, set_tid_address; 0 after exec).
	clearTid uint64
	// exitHeld: the task waits at its PTRACE_EVENT_EXIT stop until no
	// other task runs user code (robust.go releaseExits).
	exitHeld bool

	// revisit: whether a signal stopping the task at lastRegs arrived
	// there (firstStep, onSignal).
	revisit     revisit
	sigAtResume bool // a signal was pending, unblocked, when the task was resumed unstepped (revisitUnknown)
}

// thread is the task's thread, for ptrace requests (from the recorder's
// locked OS thread only).
func (t *task) thread() ptrace.Thread { return ptrace.NewThread(t.tid) }

// inExecve reports whether t is in the kernel in an execve or execveat.
func (t *task) inExecve() bool {
	return t.state == stKernel && (t.sysno == unix.SYS_EXECVE || t.sysno == unix.SYS_EXECVEAT)
}

type recorder struct {
	opts          Options
	w             *trace.Writer
	tasks         map[int]*task
	early         map[int]ptrace.Stop // stops of tasks not yet announced
	running       *task
	fast          *task
	sched         *sched.Scheduler
	initial       int
	status        unix.WaitStatus
	gotStatus     bool
	stdio         [3]unix.Stat_t
	xsaveSize     int
	cpuidFaulting bool
	// noCpuidFaulting: ARCH_SET_CPUID failed at the first exec, so the
	// CPU has no cpuid faulting (not asked again).
	noCpuidFaulting bool
	// elfCode caches whether a file version has code sections
	// (traps.go coveredMapping); trapCount counts the processes by how
	// they trap.
	elfCode   map[codeKey]bool
	trapCount trapCounts
	// tscProbed: whether PR_SET_TSC traps rdtsc here, 0 not asked yet,
	// 1 yes, 2 no (tscprobe.go); tscWarned: warnUntrappedTSC has warned.
	tscProbed int
	tscWarned bool
	// vdso rewrites each new process's vDSO (worked out once).
	vdso tracee.VDSOPatcher
	// vdsoClockSource: whether the kernel's clock source is one the vDSO
	// reads without a system call (0 not read yet, 1 yes, 2 no).
	vdsoClockSource int8
	sites           map[string][]patch.Site // by captured file
	cpuidFiles      map[string]cpuidFile    // constant cpuid sites by captured file (cpuidsites.go)
	dog             watchdog
	sharedFiles     map[uint64]string // inodes of files mapped by mmap: their last capture
	// everShared holds the inodes ever mapped MAP_SHARED (mmap, shmat) in
	// this recording: only they can be mapped shared by some process, so
	// a file mapping of any other inode needs no scan of every process's
	// maps (exec.go sharedElsewhere).
	everShared map[uint64]bool
	// sharers holds the processes (tgids) that may have a MAP_SHARED
	// mapping of a file or a shared memory segment: those that made one,
	// the children they forked since, and both sides of a clone that
	// shares the address space but not the thread group. sharedElsewhere
	// reads the maps of these only; a process that has gone is dropped.
	sharers map[int]bool
	// stdioShared holds the processes that share their address space
	// but not their descriptor table with another process, or the other
	// way round (a vfork child until it execs, clone with CLONE_VM or
	// CLONE_FILES alone): their buffer's HdrStdio bits say nothing of
	// the other's descriptors, so the recorder never clears them there
	// (stdioBits).
	stdioShared map[int]bool
	// interruptedAt holds the addresses where a handled signal
	// interrupted a thread (any process: a superset of what replay
	// tracks per address space). The handler's return, or the Go
	// runtime resuming the goroutine it preempted with the signal, may
	// enter the code there later, so no preemption point's site has one
	// after its first byte (asyncPoint): replay's jump over the site
	// would be entered in its middle.
	interruptedAt map[uint64]bool
	stats         phaseStats // time by phase (stats.go)
	// captures are the files captured in this recording by identity,
	// their copies open (exec.go capture); spare are copies opened for a
	// single use.
	captures map[captureKey]capturedFile
	spare    []*os.File
	// cpuid caches the emulated cpuid results by leaf and subleaf when
	// the recorder is bound to one CPU (they are then constant).
	cpuid map[[2]uint32][4]uint32
	// cpuidTrapped holds the leaves and subleaves of the cpuids emulated
	// at a trap, which the lookup trampolines answer from then on
	// (cpuidTable).
	cpuidTrapped map[[2]uint32]bool
	// vdsoBufSites are the sites of the rewritten vDSO (r.vdso.Patched),
	// found once.
	vdsoBufSites []syscallbuf.Site
	// cpuidLookup is the lookup routine of cpuidTable, made again when
	// cpuidTrapped has grown since (it only grows).
	cpuidLookup struct {
		code    []byte
		trapped int
	}
	// diffBuf and diffWant are diffPages's read buffers, reused.
	diffBuf, diffWant []byte
	points            uint64                       // preemption points recorded
	siteRuns          uint64                       // runToSites runs
	siteHits          uint64                       // runToSites runs that arrived at a site
	yields            uint64                       // timeslices ended at a call the stub traced (askYield)
	rng               *rand.Rand                   // chaos mode: random timeslices
	chaosStepTime     time.Duration                // chaos mode: time spent in chaosSteps
	start             time.Time                    // when the recording started (event times)
	targets           map[string][]uint64          // direct branch targets of mapped files, sorted (preempt.go)
	stopped           int                          // tasks in stStopped
	queued            []ptrace.Stop                // stops of other tasks met while waiting for one (waitFor)
	heldExits         []heldExit                   // deaths by signal of threads whose process still has live threads
	shutdown          bool                         // the initial process is gone and the rest were killed
	tty               *os.File                     // the controlling terminal the tracee's group was given (nil: none)
	pgid              int                          // the tracee's process group
	bufOn             bool                         // the syscall buffer is used (Options.SyscallBuffer)
	filterOn          bool                         // its seccomp filter is installed
	bufSites          map[string][]syscallbuf.Site // by captured file
	bufCalls          uint64
	drainBytes        []byte          // drainBuf's scratch: the buffer's new bytes
	drainAhead        prefault.Ahead  // how much of drainBytes is populated
	zeros             []byte          // populateBuf's source (bufAhead bytes)
	runFlags          []trace.RunFlag // drainBuf's scratch: the run's exit flags
	sharedRels        map[string]bool // captured files a MAP_SHARED mapping used (Result.SharedFiles)
	calls             callStats       // by number and path (stats.go)
}

// Default timeslices (see Options).
const (
	DefaultTimeslice   = 10 * time.Millisecond
	DefaultSignalSlice = 2 * time.Millisecond
)

// Record runs opts.Argv to completion under recording.
func Record(opts Options) (*Result, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if opts.Timeslice <= 0 {
		opts.Timeslice = DefaultTimeslice
	}
	if opts.SignalSlice <= 0 {
		opts.SignalSlice = min(DefaultSignalSlice, opts.Timeslice)
	}
	sc := sched.New(50)
	var rng *rand.Rand
	if opts.Chaos {
		sc = sched.NewChaos(50, opts.ChaosSeed)
		rng = rand.New(rand.NewPCG(opts.ChaosSeed^0x5851f42d4c957f2d, opts.ChaosSeed))
	}
	r := &recorder{opts: opts, sched: sc, w: opts.Writer, tasks: map[int]*task{}, early: map[int]ptrace.Stop{}, xsaveSize: 8192, sites: map[string][]patch.Site{}, cpuidFiles: map[string]cpuidFile{}, sharedFiles: map[uint64]string{}, everShared: map[uint64]bool{}, sharers: map[int]bool{}, stdioShared: map[int]bool{}, interruptedAt: map[uint64]bool{}, captures: map[captureKey]capturedFile{}, cpuid: map[[2]uint32][4]uint32{}, cpuidTrapped: map[[2]uint32]bool{}, rng: rng, start: time.Now(), targets: map[string][]uint64{}, bufOn: opts.SyscallBuffer, bufSites: map[string][]syscallbuf.Site{}, sharedRels: map[string]bool{}, elfCode: map[codeKey]bool{}}
	for i, f := range []*os.File{opts.Stdin, opts.Stdout, opts.Stderr} {
		if f != nil {
			_ = unix.Fstat(int(f.Fd()), &r.stdio[i])
		}
	}
	if opts.BindCPU >= 0 {
		var set unix.CPUSet
		set.Set(opts.BindCPU)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return nil, fmt.Errorf("bind to CPU %d: %w", opts.BindCPU, err)
		}
	}
	path, err := exec.LookPath(opts.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("cannot run %s: %w", opts.Argv[0], err)
	}
	// The tracee runs in a process group of its own, so that signals a
	// recorded program sends to its group (kill(0, ...)) do not reach
	// gorr; it becomes the terminal's foreground group if gorr was.
	tty := foregroundTerminal()
	if tty != nil {
		defer tty.Close()
	}
	holder, pgid := startGroupHolder()
	if holder != nil {
		// Killed as soon as the loop ends (below), so that it is dead,
		// and its reaping does not wait, when the recording is over.
		defer func() { _ = holder.Kill(); _, _ = holder.Wait() }()
	}
	stdio := []*os.File{opts.Stdin, opts.Stdout, opts.Stderr}
	for i, f := range stdio {
		if f == nil { // as os/exec does
			mode := os.O_WRONLY
			if i == 0 {
				mode = os.O_RDONLY
			}
			if stdio[i], err = osfile.Open(os.DevNull, mode, 0); err != nil {
				return nil, fmt.Errorf("start %s: %w", opts.Argv[0], err)
			}
			defer stdio[i].Close()
		}
	}
	prog, err := startChild(path, opts.Argv, opts.Env, stdio, &syscall.SysProcAttr{Ptrace: true, Setpgid: true, Pgid: pgid})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", opts.Argv[0], err)
	}
	pid := prog.pid
	r.initial = pid
	defer r.closeCaptures()
	if pgid == 0 {
		pgid = pid
	}
	r.pgid = pgid
	// Shield gorr from the signals a recorded program may send to its
	// parent or its group, as rr does. Set only now, after the start:
	// the tracee must begin with its caller's dispositions.
	signal.Ignore(shielded...)
	defer signal.Reset(shielded...)
	// Every stop of a tracee sends gorr a SIGCHLD, which Go's handler
	// takes on some thread (10% of a recording of the shell loop).
	// Restored before the group holder is waited for (the deferred
	// calls run in reverse order).
	defer ptrace.IgnoreSIGCHLD()()
	if tty != nil {
		if err := unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, pgid); err == nil {
			r.tty = tty
			defer restoreForeground(tty)
		}
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	defer close(done)
	defer signal.Stop(term)
	go func() {
		select {
		case s := <-term:
			_ = unix.Kill(pid, s.(syscall.Signal))
		case <-done:
			return
		}
		// As rr: a program that has not exited 5 s after the signal is
		// killed (the recording then ends with its death).
		select {
		case <-time.After(5 * time.Second):
			_ = unix.Kill(pid, unix.SIGKILL)
		case <-done:
		}
	}()
	r.dog.desched.Store(r.bufOn)
	// Chaos mode switches threads at the random moments it drew, not at
	// the next call a yield would wait for.
	r.dog.yield.Store(r.bufOn && !opts.Chaos)
	r.dog.kick = make(chan struct{}, 1)
	// The watchdog's goroutine (and the thread it locks) starts when a
	// timeslice can first end: never for a single-threaded program.
	r.dog.start = func() { go r.dog.watch(opts.Timeslice, opts.SignalSlice, done) }
	th := ptrace.NewThread(pid)
	st, err := th.Wait()
	if err != nil {
		return nil, err
	}
	if st.Kind != ptrace.StopSignal || st.Signal != int(unix.SIGTRAP) {
		return nil, fmt.Errorf("%s did not stop after exec (%v)", opts.Argv[0], st)
	}
	traceOpts := ptrace.Options
	if r.bufOn {
		// The buffer's filter sends every other call to a seccomp stop.
		traceOpts |= unix.PTRACE_O_TRACESECCOMP
	}
	if err := th.SetOptions(traceOpts); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return nil, err
	}
	if r.w == nil {
		if r.w, err = opts.OpenWriter(); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			return nil, err
		}
	}
	// The trace names the strategy its points are taken with, whoever
	// built its header.
	if err := r.w.SetPointStrategy(takePoints.Name()); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return nil, fmt.Errorf("trace header: %w", err)
	}
	t := &task{tid: pid, at: atSignal}
	r.add(t)
	if err := r.onExecDone(t, pid); err != nil {
		r.killAll()
		return nil, err
	}
	if err := r.loop(); err != nil {
		r.killAll()
		_ = r.flushExits(0)
		_ = r.w.Flush()
		return nil, err
	}
	if holder != nil {
		// Every recorded process is gone: the group needs no holder.
		_ = holder.Kill()
	}
	if err := r.flushExits(0); err != nil {
		return nil, err
	}
	if err := r.w.Flush(); err != nil {
		return nil, err
	}
	return &Result{Status: r.status, Events: r.w.EventCount(), Points: r.points, SiteRuns: r.siteRuns, SiteHits: r.siteHits, Yields: r.yields, CPUIDFaulting: r.cpuidFaulting, Processes: r.trapCount.execs, TrappedAtExec: r.trapCount.atExec, TrappedLater: r.trapCount.later, Stats: r.stats.list(), BufferedCalls: r.bufCalls, Calls: r.calls.list(), SharedFiles: slices.Sorted(maps.Keys(r.sharedRels))}, nil
}

// shielded are the signals gorr ignores while it records (rr's list;
// SIGTERM and SIGHUP are forwarded to the initial process instead).
var shielded = []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGTRAP,
	syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGWINCH}

// foregroundTerminal opens the controlling terminal if gorr's process
// group is its foreground group (nil otherwise).
func foregroundTerminal() *os.File {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	fg, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	if err != nil || fg != unix.Getpgrp() {
		f.Close()
		return nil
	}
	return f
}

// restoreForeground gives the terminal back to gorr's process group
// (SIGTTOU, which a background group gets for this, is ignored then).
func restoreForeground(tty *os.File) {
	_ = unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, unix.Getpgrp())
}

func (r *recorder) logf(format string, args ...any) {
	if r.opts.Log != nil {
		fmt.Fprintf(r.opts.Log, "gorr: "+format+"\n", args...)
	}
}

func (r *recorder) add(t *task) {
	if t.tgid == 0 {
		t.tgid = tracee.Tgid(t.tid)
	}
	if t.mem == nil {
		t.mem, _ = tracee.OpenMem(t.tid)
	}
	t.reraised = map[int]ptrace.SigInfo{}
	r.tasks[t.tid] = t
	r.sched.Add(t.tid)
}

func (r *recorder) remove(t *task) {
	if t.state == stStopped {
		r.stopped--
	}
	delete(r.tasks, t.tid)
	r.dropQueued(t.tid)
	r.sched.Remove(t.tid)
	if r.running == t {
		r.running = nil
	}
	if r.fast == t {
		r.fast = nil
	}
	_ = t.mem.Close()
}

// killAll kills the recorded processes after an error and reaps their
// tasks (ptrace.KillAll), the new ones not yet taken in as well.
func (r *recorder) killAll() {
	var threads []ptrace.Thread
	for _, t := range r.tasks {
		threads = append(threads, t.thread())
	}
	for tid := range r.early {
		threads = append(threads, ptrace.NewThread(tid))
	}
	ptrace.KillAll(threads, 5*time.Second)
	for _, t := range r.tasks {
		r.remove(t)
	}
}

func (r *recorder) emit(ev *trace.Event) error {
	defer r.since(phEmit, time.Now())
	ev.Time = uint64(time.Since(r.start))
	return r.write(ev)
}

// write writes ev as it is (its Time set).
func (r *recorder) write(ev *trace.Event) error {
	for i := range ev.Maps {
		if m := &ev.Maps[i]; m.File != "" && m.Flags&unix.MAP_SHARED != 0 {
			r.sharedRels[m.File] = true
		}
	}
	if err := r.w.Write(ev); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

// loop drives the tracees until all have exited.
func (r *recorder) loop() error {
	for len(r.tasks) > 0 {
		if r.gotStatus && !r.opts.WaitAll && !r.shutdown {
			r.terminate()
		}
		if r.stopped > 0 {
			r.continueStopped()
		}
		if err := r.releaseExits(); err != nil {
			return err
		}
		if r.running == nil && r.fast == nil {
			if t := r.pick(); t != nil {
				if err := r.resumeUser(t); err != nil {
					return err
				}
			}
		}
		st, ok, err := r.wait()
		if err != nil {
			if errors.Is(err, unix.ECHILD) {
				return fmt.Errorf("tracees vanished: %w", err)
			}
			return err
		}
		if !ok {
			continue
		}
		if err := r.handle(st); err != nil {
			return err
		}
		if t := r.running; t != nil {
			r.dog.set(r.othersReady(t), len(t.deferred) > 0)
		}
	}
	return nil
}

// wait waits for the next stop. While tasks sit in a group-stop it polls
// (ok=false after a while without a stop), because nothing reports a
// SIGCONT sent to a stopped tracee: the loop looks for one between polls.
func (r *recorder) wait() (ptrace.Stop, bool, error) {
	defer r.since(phWait, time.Now())
	if r.fast != nil {
		return r.waitFor(r.fast.tid)
	}
	if len(r.queued) > 0 {
		st := r.queued[0]
		r.queued = r.queued[1:]
		return st, true, nil
	}
	if r.stopped == 0 {
		return waitStop(false)
	}
	for i := 0; i < 20; i++ {
		if st, ok, err := waitStop(true); ok || err != nil {
			return st, ok, err
		}
		time.Sleep(time.Duration(min(i+1, 10)) * 100 * time.Microsecond)
	}
	return ptrace.Stop{}, false, nil
}

// waitFor waits for the next stop of task tid. Stops of other tasks met
// meanwhile are kept for later, as the kernel would have kept them,
// except deaths: those are handled at once (a task at its exit stop
// resumes into its death, not into user code). Waiting for tid alone
// could block forever: a thread-group leader killed from outside may die
// without an exit stop, and the kernel reports its death only once its
// other threads, which stop at their exits, have been reaped.
func (r *recorder) waitFor(tid int) (ptrace.Stop, bool, error) {
	for i, st := range r.queued {
		if st.Tid == tid {
			r.queued = append(r.queued[:i:i], r.queued[i+1:]...)
			return st, true, nil
		}
	}
	known := r.tasks[tid] != nil
	for {
		st, ok, err := waitStop(false)
		if err != nil || !ok || st.Tid == tid {
			return st, ok, err
		}
		switch o := r.tasks[st.Tid]; {
		case o == nil:
			// A new task's first stop (onNewTask takes it from there).
			if st.Kind != ptrace.StopExited && st.Kind != stopVanished {
				r.early[st.Tid] = st
			}
		case isDeath(st):
			r.dropQueued(st.Tid)
			if err := r.handle(st); err != nil {
				return ptrace.Stop{}, false, err
			}
			if known && r.tasks[tid] == nil {
				return ptrace.Stop{Tid: tid, Kind: stopVanished}, true, nil
			}
		default:
			r.queued = append(r.queued, st)
		}
	}
}

// runUntil is ptrace's RunUntil for the recorder: t's stops come through
// waitFor, and a resume that finds t gone (ESRCH) marks it lost (r.lost):
// then lost is true and err nil.
func (r *recorder) runUntil(t *task, mode, sig int, next func(ptrace.Stop) (ptrace.Action, error)) (st ptrace.Stop, lost bool, err error) {
	if err := r.armTraps(t, sig); err != nil {
		return ptrace.Stop{}, false, err
	}
	st, err = t.thread().RunVia(r.waitFunc(t), mode, sig, next)
	return r.lostIfGone(t, st, err)
}

// waitUntil is runUntil for a task that runs already: it waits first.
func (r *recorder) waitUntil(t *task, mode int, next func(ptrace.Stop) (ptrace.Action, error)) (st ptrace.Stop, lost bool, err error) {
	st, err = t.thread().WaitVia(r.waitFunc(t), mode, next)
	return r.lostIfGone(t, st, err)
}

func (r *recorder) waitFunc(t *task) func() (ptrace.Stop, error) {
	return func() (ptrace.Stop, error) {
		st, _, err := r.waitFor(t.tid)
		return st, err
	}
}

func (r *recorder) lostIfGone(t *task, st ptrace.Stop, err error) (ptrace.Stop, bool, error) {
	if errors.Is(err, unix.ESRCH) {
		return st, true, r.lost(t, err)
	}
	return st, false, err
}

// isDeath tells whether st is a task's exit stop or its end.
func isDeath(st ptrace.Stop) bool {
	return st.Kind == ptrace.StopExited || st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT
}

// dropQueued forgets the queued stops of a task that died or vanished.
func (r *recorder) dropQueued(tid int) {
	q := r.queued[:0]
	for _, st := range r.queued {
		if st.Tid != tid {
			q = append(q, st)
		}
	}
	r.queued = q
}

// stopVanished stands for a system-call stop of a task killed before the
// stop could be examined (PTRACE_GET_SYSCALL_INFO found it gone).
const stopVanished ptrace.StopKind = -1

// waitStop waits for the next stop of any task (with nohang, ok=false
// when none is ready): the recorder's one wait that is not for a given
// thread, because its scheduler takes the stops of all tasks in the order
// the kernel reports them (waitFor queues the ones not waited for). It is
// ptrace.WaitAny, not a RunUntil loop, for that reason.
func waitStop(nohang bool) (ptrace.Stop, bool, error) {
	return vanishedOK(ptrace.WaitAny(nohang))
}

// pollStop returns t's stop if it has one to report.
func pollStop(t *task) (ptrace.Stop, bool, error) {
	return vanishedOK(t.thread().Poll())
}

// vanishedOK turns the wait error of a task killed (by SIGKILL from
// outside) between its stop and the examination of the stop into a
// stopVanished stop: not an error, its death comes later.
func vanishedOK(st ptrace.Stop, ok bool, err error) (ptrace.Stop, bool, error) {
	if err != nil && ok && st.Tid > 0 && errors.Is(err, unix.ESRCH) {
		return ptrace.Stop{Tid: st.Tid, Kind: stopVanished, Status: st.Status}, true, nil
	}
	return st, ok, err
}

// terminate kills the processes still alive once the initial process has
// exited (rr's behaviour without --wait); their deaths are recorded.
func (r *recorder) terminate() {
	r.shutdown = true
	for _, t := range r.tasks {
		_ = unix.Kill(t.tid, unix.SIGKILL)
	}
	for tid := range r.early {
		_ = unix.Kill(tid, unix.SIGKILL)
	}
}

// timeslice is the next run's timeslice: the configured one, or in chaos
// mode a random one (sched.ChaosTimeslice: from microseconds to twice
// the configured one; like rr's chaos mode, this varies where threads
// are preempted, to expose more interleavings; the points themselves are
// recorded, so replay does not depend on it).
func (r *recorder) timeslice() time.Duration {
	if r.rng == nil {
		return r.opts.Timeslice
	}
	return sched.ChaosTimeslice(r.rng, r.opts.Timeslice)
}

// pick asks the scheduler for the next ready task. A thread whose
// process has another thread in execve is not run: the execve kills it,
// and replay runs the execve at its entry (the exec of replay's stub,
// whose old address space must be gone before what follows), so a
// sibling's calls recorded after that entry could not be replayed (a
// thread created just before the execve and first run while it loaded
// the new program recorded two calls there, once in 100 recordings of
// corpus blocked_until_killed under load). The siblings die of the
// exec's SIGKILL whether or not they are resumed.
func (r *recorder) pick() *task {
	var execing []int // processes with a thread in execve
	for _, o := range r.tasks {
		if o.inExecve() {
			execing = append(execing, o.tgid)
		}
	}
	tid, ok := r.sched.Pick(func(tid int) bool {
		t := r.tasks[tid]
		return t != nil && t.state == stReady && !slices.Contains(execing, t.tgid)
	})
	if !ok {
		return nil
	}
	return r.tasks[tid]
}

func (r *recorder) resumeUser(t *task) error {
	if err := r.armTraps(t, t.pendingSig); err != nil {
		return err
	}
	if handled, err := r.chaosSteps(t); handled || err != nil {
		return err
	}
	if t.revisit == revisitUnmoved {
		if handled, err := r.firstStep(t); handled || err != nil {
			return err
		}
	}
	return r.resumeUserMode(t, r.userMode(t))
}

// userMode is how t runs user code: stopping at every call, or with the
// syscall buffer only at the calls the seccomp filter traces.
func (r *recorder) userMode(t *task) int {
	if r.bufOn && len(t.deferred) == 0 && t.emu == nil && !t.forceTrace && !t.ownFilter {
		// Calls stop through the seccomp filter, except buffered ones.
		// A thread with a held signal stops at its next call, buffered
		// or not, where the signal is raised again.
		return ptrace.Cont
	}
	return ptrace.Syscall
}

func (r *recorder) resumeUserMode(t *task, mode int) error {
	sig := t.pendingSig
	r.markRunning(t)
	defer r.since(phResume, time.Now())
	if err := t.thread().Resume(mode, sig); err != nil {
		return r.lost(t, err)
	}
	return nil
}

// markRunning makes t the task that runs user code, with the watchdog
// watching it, as resuming it does.
func (r *recorder) markRunning(t *task) {
	t.pendingSig = 0
	t.state = stRunning
	r.running = t
	t.runStart = time.Now()
	var mem *tracee.Mem
	var pointCost time.Duration
	if t.buf != nil && t.buf.mapped {
		mem, pointCost = t.mem, t.buf.pointCost
	}
	r.dog.running(t.tid, r.othersReady(t), len(t.deferred) > 0, r.timeslice(), mem, pointCost)
}

// lost handles a task that disappeared under us (killed by SIGKILL from
// outside, or by its group's exit); its exit is reported by wait later.
func (r *recorder) lost(t *task, err error) error {
	if errors.Is(err, unix.ESRCH) {
		t.state = stKernel
		t.dying = true
		if r.running == t {
			r.running = nil
		}
		if r.fast == t {
			r.fast = nil
		}
		return nil
	}
	return err
}

// endRun ends the run of t, the task that ran user code, at a stop: the
// watchdog stops watching it, a yield it was asked is settled and its
// syscall buffer drained (the calls it made come before the stop's
// event).
func (r *recorder) endRun(t *task) error {
	r.running = nil
	r.dog.stopped()
	if err := r.takeYield(t); err != nil {
		return err
	}
	return r.drainBuf(t)
}

func (r *recorder) handle(st ptrace.Stop) error {
	if st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXEC {
		return r.onExecEvent(st)
	}
	t := r.tasks[st.Tid]
	if t == nil {
		if st.Kind != ptrace.StopExited && st.Kind != stopVanished {
			r.early[st.Tid] = st
		}
		return nil
	}
	if r.bufOn && st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_SECCOMP && t.state == stKernel {
		// The call's syscall-entry stop came first (the thread was
		// resumed with PTRACE_SYSCALL): nothing new.
		return r.lost(t, t.thread().Resume(ptrace.Syscall, 0))
	}
	if r.running == t {
		if err := r.endRun(t); err != nil || t.dying {
			// Killed while this stop was handled (SIGKILL from outside):
			// the thread left the stop, and what it reads now are the
			// registers of its way out. Its death comes as a later stop.
			return err
		}
	}
	if r.fast == t {
		r.fast = nil
	}
	if t.state == stStopped {
		// Only SIGKILL ends a group-stop without us.
		r.stopped--
		t.state = stKernel
	}
	if st.Kind == ptrace.StopSignal && (st.Signal == watchdogSignal || st.Signal == int(unix.SIGSTOP)) {
		if handled, err := r.onWatchdog(t, st.Signal); handled || err != nil {
			return err
		}
	}
	defer r.since(phaseOf(st.Kind), time.Now())
	switch st.Kind {
	case stopVanished:
		return r.vanished(t)
	case ptrace.StopSyscallEntry:
		if st.Compat {
			return r.compatSyscall(t)
		}
		return r.onEntry(t)
	case ptrace.StopSyscallExit:
		return r.onExit(t)
	case ptrace.StopSignal:
		return r.onSignal(t, st.Signal)
	case ptrace.StopEvent:
		if r.bufOn && st.Event == unix.PTRACE_EVENT_SECCOMP {
			// A call stopped by the buffer's filter: its entry.
			if info, err := t.thread().GetSyscallInfo(); err == nil && info.Arch != 0xc000003e {
				return r.compatSyscall(t)
			}
			return r.onEntry(t)
		}
		return r.onEvent(t, st.Event)
	case ptrace.StopExited:
		return r.onExited(t, st)
	}
	return nil
}

func phaseOf(k ptrace.StopKind) phase {
	switch k {
	case ptrace.StopSyscallEntry:
		return phEntry
	case ptrace.StopSyscallExit:
		return phExit
	case ptrace.StopSignal:
		return phSignal
	}
	return phEvent
}

// vanished handles a task killed while at a stop it could not be
// examined at. A task in a system call keeps that state: if the call was
// a write that completed, its exit stop records it (exitDuringWrite).
func (r *recorder) vanished(t *task) error {
	if t.state == stKernel && !t.dying {
		return nil
	}
	return r.lost(t, unix.ESRCH)
}

func (r *recorder) onExited(t *task, st ptrace.Stop) error {
	if t.tid == r.initial {
		r.status = st.Status
		r.gotStatus = true
	}
	r.remove(t)
	ev := &trace.Event{Kind: trace.KindExit, Tid: int32(t.tid), Result: int64(st.Status), Mem: t.robust}
	if st.Status.Signaled() && r.processLive(t.tgid) {
		r.heldExits = append(r.heldExits, heldExit{tgid: t.tgid, ev: ev})
	} else {
		if err := r.flushExits(t.tgid); err != nil {
			return err
		}
		if err := r.emit(ev); err != nil {
			return err
		}
	}
	return r.ptraceGone(t, st.Status)
}

// heldExit is the exit event of a thread killed by a signal while other
// threads of its process were still alive.
type heldExit struct {
	tgid int
	ev   *trace.Event
}

// A fatal signal kills a whole process, but its threads die one by one,
// and one may still complete a system call (a write to stdout that must
// be replayed) after another has died. Replay reproduces a death by
// killing the process at the first exit event, so the exits of a killed
// process are recorded together, after its last other event: when its
// last thread has died, or when it execs (an exec kills the other
// threads, and the new program goes on).

// addSharer notes that t's process has made a MAP_SHARED mapping (so has
// the parent whose address space a vfork child still uses).
func (r *recorder) addSharer(t *task) {
	r.sharers[t.tgid] = true
	if t.vmWith != 0 {
		r.sharers[t.vmWith] = true
	}
}

// processLive tells whether a task of process tgid is still alive.
func (r *recorder) processLive(tgid int) bool {
	for _, o := range r.tasks {
		if o.tgid == tgid {
			return true
		}
	}
	return false
}

// flushExits records the held exits of process tgid (every process's
// if tgid is 0).
func (r *recorder) flushExits(tgid int) error {
	held := r.heldExits[:0]
	var err error
	for _, h := range r.heldExits {
		switch {
		case tgid != 0 && h.tgid != tgid:
			held = append(held, h)
		case err == nil:
			err = r.emit(h.ev)
		}
	}
	r.heldExits = held
	return err
}

func (r *recorder) onEvent(t *task, event int) error {
	switch event {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
		return r.onNewTask(t, event)
	case unix.PTRACE_EVENT_EXIT:
		if err := r.exitDuringWrite(t); err != nil {
			return err
		}
		if r.runsUser() {
			// Another thread runs user code: what the death writes
			// (robust.go) must land where nothing runs, so the task
			// waits at this stop until that thread stops (loop).
			t.state = stKernel
			t.exitHeld = true
			return nil
		}
		return r.exitStop(t)
	default:
		t.state = stKernel
		r.fast = t
		return r.lost(t, t.thread().Resume(ptrace.Syscall, 0))
	}
}

func isWrite(nr int) bool {
	switch nr {
	case unix.SYS_WRITE, unix.SYS_WRITEV, unix.SYS_PWRITE64, unix.SYS_PWRITEV, unix.SYS_PWRITEV2:
		return true
	}
	return false
}

// exitDuringWrite records the exit of a write that completed in the
// kernel when the thread was killed (SIGKILL, another thread's exit)
// before its syscall-exit stop: what it wrote reached the output, so
// replay must reproduce it. The registers at the exit event hold the
// call's result (the original -ENOSYS if it never ran).
//
// It does not depend on what the recorder believed of the thread: a
// SIGKILL may have taken the thread out of a stop while the recorder
// was still handling it (its ptrace requests then failed and it was
// marked dying), but the exit stop's registers tell whether the write
// ran (orig_rax the write, rax its count).
func (r *recorder) exitDuringWrite(t *task) error {
	if !t.writeOpen || !isWrite(t.sysno) {
		return nil
	}
	regs, err := t.thread().GetRegs()
	if err != nil || int64(regs[ptrace.RAX]) <= 0 || regs[ptrace.ORIGRAX] != uint64(t.sysno) {
		return nil
	}
	t.state, t.dying = stKernel, false
	if t.emu != nil {
		t.emu.exitStop = false // dying: no syscall-exit stop for a tracer
	}
	return r.onExit(t)
}

// cloneFlags returns the flags of the clone-family call t is in and the
// child_tid pointer, if any.
func (r *recorder) cloneFlags(t *task) (flags, ctid uint64) {
	a := ptrace.SyscallArgs(&t.entry)
	switch t.sysno {
	case unix.SYS_CLONE:
		return a[0], a[3]
	case unix.SYS_CLONE3:
		f, _ := t.mem.ReadU64(a[0])
		c, _ := t.mem.ReadU64(a[0] + 16)
		return f, c
	case unix.SYS_VFORK:
		return unix.CLONE_VM | unix.CLONE_VFORK | uint64(unix.SIGCHLD), 0
	}
	return uint64(unix.SIGCHLD), 0
}

func (r *recorder) onNewTask(parent *task, event int) error {
	msg, err := parent.thread().EventMsg()
	if err != nil {
		return err
	}
	ctid := int(msg)
	if _, ok := r.early[ctid]; ok {
		delete(r.early, ctid)
	} else {
		st, _, err := r.waitFor(ctid)
		if err != nil {
			return fmt.Errorf("new task %d: %w", ctid, err)
		}
		if st.Kind == ptrace.StopExited || st.Kind == stopVanished {
			if r.shutdown || st.Signal == int(unix.SIGKILL) {
				// Killed at birth by terminate or from outside; its
				// parent dies too.
				parent.state = stKernel
				return r.lost(parent, parent.thread().Resume(ptrace.Syscall, 0))
			}
			return fmt.Errorf("new task %d died before its first stop", ctid)
		}
	}
	flags, ctidPtr := r.cloneFlags(parent)
	child := &task{tid: ctid, at: atSignal, sc: parent.sc, tscSigsegv: parent.tscSigsegv, kern: parent.kern, uncovered: parent.uncovered, buf: parent.buf, ownFilter: parent.ownFilter}
	if event == unix.PTRACE_EVENT_FORK || event == unix.PTRACE_EVENT_VFORK {
		child.tgid = ctid // a new process (not read from /proc)
	}
	switch {
	case flags&unix.CLONE_THREAD != 0:
		// A thread: its process's mappings are already accounted for.
	case event == unix.PTRACE_EVENT_VFORK:
		// The parent waits while the child uses its address space: a
		// shared mapping the child makes before it execs is the
		// parent's too (addSharer).
		child.vmWith = parent.tgid
		if r.sharers[parent.tgid] {
			r.sharers[ctid] = true
		}
	case flags&unix.CLONE_VM != 0:
		// Two processes running in one address space: what either
		// maps the other has.
		r.sharers[parent.tgid], r.sharers[ctid] = true, true
	case r.sharers[parent.tgid]:
		r.sharers[ctid] = true // a fork keeps MAP_SHARED mappings
	}
	if flags&unix.CLONE_THREAD == 0 && (flags&unix.CLONE_VM != 0) != (flags&unix.CLONE_FILES != 0) {
		r.stdioShared[ctid] = true
		if event != unix.PTRACE_EVENT_VFORK {
			// (A vfork parent waits until its child execs or exits.)
			r.stdioShared[parent.tgid] = true
		}
	}
	if parent.buf != nil && flags&unix.CLONE_VM == 0 {
		b := *parent.buf // a fork copies the buffer
		child.buf = &b
	}
	if flags&unix.CLONE_CHILD_CLEARTID != 0 {
		child.clearTid = ctidPtr
	}
	r.add(child)
	ev := &trace.Event{Kind: trace.KindNewTask, Tid: int32(parent.tid), NewTid: int32(ctid), Flags: flags, Sysno: int32(parent.sysno)}
	if flags&unix.CLONE_CHILD_SETTID != 0 && ctidPtr != 0 {
		buf := make([]byte, 4)
		if child.mem.ReadMem(ctidPtr, buf) == nil {
			ev.Mem = []trace.MemWrite{{Addr: ctidPtr, Data: buf}}
		}
	}
	regs, err := ptrace.NewThread(ctid).GetRegs()
	if err != nil {
		return err
	}
	child.setLast(regs, false)
	ev.Regs = &regs
	if err := r.emit(ev); err != nil {
		return err
	}
	if stopped, err := r.ptraceNewTask(parent, child, event); stopped || err != nil {
		return err
	}
	parent.state = stKernel
	if event != unix.PTRACE_EVENT_VFORK {
		r.fast = parent
	}
	return r.lost(parent, parent.thread().Resume(ptrace.Syscall, 0))
}

func (r *recorder) onExecEvent(st ptrace.Stop) error {
	former, err := ptrace.NewThread(st.Tid).EventMsg()
	if err != nil {
		return err
	}
	t := r.tasks[int(former)]
	if t == nil {
		return fmt.Errorf("exec event from unknown task %d", former)
	}
	if err := r.flushExits(t.tgid); err != nil {
		return err
	}
	if int(former) != st.Tid {
		// A non-leader thread exec'd: it takes over the leader's tid and
		// the old leader vanishes without an exit report.
		if old := r.tasks[st.Tid]; old != nil {
			r.remove(old)
		}
		delete(r.tasks, t.tid)
		r.sched.Rename(t.tid, st.Tid)
		t.tid = st.Tid
		r.tasks[t.tid] = t
	}
	_ = t.mem.Close()
	t.mem, err = tracee.OpenMem(t.tid)
	if err != nil {
		return err
	}
	t.execed = true
	t.clearTid = 0
	t.exFormer = int(former)
	t.state = stKernel
	r.fast = t
	return r.lost(t, t.thread().Resume(ptrace.Syscall, 0))
}

// describe gives a short description of the task's current syscall.
func describe(t *task) string {
	return fmt.Sprintf("tid %d: %s", t.tid, linux.Name(t.sysno))
}

// othersReady reports whether a task other than t could run user code
// (or waits at its exit stop until nothing runs).
func (r *recorder) othersReady(t *task) bool {
	for _, o := range r.tasks {
		if o != t && (o.state == stReady || o.exitHeld) {
			return true
		}
	}
	return false
}
