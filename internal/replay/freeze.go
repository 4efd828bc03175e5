package replay

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/diversion"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Freezing the engine (rr's ReplaySession clone): the mechanism under a
// debug session's snapshots (internal/session keeps them, decides when
// to take one and which a run starts from; see its snapshots.go).
//
// A frozen engine holds, for every live replayed process, a forked copy
// made by injecting clone(CLONE_PARENT|SIGCHLD) into the process (as a
// diversion does): the copy shares the memory copy-on-write, stays
// stopped under ptrace and never runs. With it goes a copy of the
// engine's state (event number, tasks and their flags, per-process
// state, the trace reader's position and look-ahead). Thawing forks each
// copy again (so a frozen engine serves many runs) and the run replays
// on from its event; the registers are still checked at every event, so
// a bad restore is reported as a divergence.
//
// A fork copies the calling thread only. A frozen multi-threaded process
// is a fork of its thread-group leader plus the state of every other
// thread (registers with fs_base and gs_base, XSAVE area, blocked
// signals, clear_child_tid); each thaw forks the copy again and
// recreates the other threads in the new copy by injecting
// clone(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|
// CLONE_SYSVSEM) into its leader, once per thread (rebuildThreads). The
// recreated threads have new tids; the engine's tasks keep their
// recorded tids and point at them. Every task of a copy is held at a
// system-call-exit stop with its registers, which resumes exactly as
// the stops replay holds tasks at between events (a system-call-entry
// stop whose call was emulated, the stop after a real call, a fault or
// a new task's first stop). Signal dispositions are the process's and
// are copied by the fork; replay emulates rt_sigaction and
// rt_sigprocmask and delivers signals itself, and the real masks (set
// by rt_sigreturn, which runs for real) are copied all the same.
//
// The engine freezes only in a state this reproduces exactly
// (freezeBlocker): the tasks sharing an address space are the threads
// of one process whose leader is among them and that has no other
// thread, no task is exiting (killed by an exit_group or a fatal signal,
// or at its exit stop) or inside a system call that runs for real (an
// execve, exit, clone, mmap... in progress: its effect would have to be
// redone in the copy), no MAP_SHARED mapping (the copy would share it
// with the replay) and no MADV_DONTFORK/MADV_WIPEONFORK region (absent
// or zeroed in the copy), no preemption-point search in progress, and no
// vfork child sharing its parent's memory.

// Frozen is the engine frozen at the boundary after an event.
type Frozen struct {
	event   uint64
	last    *trace.Event // the event the boundary follows
	mark    trace.Mark
	ahead   []queued
	gap     uint64
	qerr    error
	tasks   []snapTask
	initial int32
	status  unix.WaitStatus
	threads int // tasks without a copy of their own (threads recreated on thaw)
	dead    bool
}

// snapTask is a task of a frozen engine: its engine state and its thread
// state at the boundary (registers, extended state, blocked signals).
// With src, the task's process was forked from it and t.real is the
// stopped copy's pid; the other tasks of that process (threads) have no
// copy (t.real is 0): they are recreated in each thawed copy.
type snapTask struct {
	t      rtask
	regs   trace.Regs
	xstate []byte
	mask   uint64
	src    bool
}

// Event is the event whose boundary f stands at.
func (f *Frozen) Event() uint64 { return f.event }

// Last is that event.
func (f *Frozen) Last() *trace.Event { return f.last }

// Threads counts the threads thawing recreates (0: single-threaded
// processes only).
func (f *Frozen) Threads() int { return f.threads }

// Dead tells whether f was killed.
func (f *Frozen) Dead() bool { return f.dead }

// Kill kills f's copies (it cannot be thawed any more).
func (f *Frozen) Kill() {
	if f.dead {
		return
	}
	f.dead = true
	for _, st := range f.tasks {
		killTraced(st.t.real)
	}
}

// killTraced kills a stopped traced process and reaps it.
func killTraced(pid int) {
	if pid <= 0 {
		return
	}
	ptrace.NewThread(pid).KillAndReap()
}

// errNoSnapshot says why the engine cannot be frozen at a boundary.
type errNoSnapshot struct{ why string }

func (e errNoSnapshot) Error() string { return "no snapshot: " + e.why }

// freezeBlocker says why the engine cannot be frozen now ("" if it
// can).
func (rp *replayer) freezeBlocker() string {
	switch {
	case rp.point != nil:
		return "a preemption point is being searched"
	case len(rp.tasks) == 0:
		return "no live task"
	}
	perProc := map[*rproc][]*rtask{}
	for _, t := range rp.tasks {
		switch {
		case t.gone:
			return fmt.Sprintf("task %d has exited", t.rec)
		case t.executing || t.execStub || t.exitCall || t.execSaved != nil || t.restoreMem != nil:
			return fmt.Sprintf("task %d is in a system call that runs for real", t.rec)
		}
		perProc[t.proc] = append(perProc[t.proc], t)
	}
	for _, ts := range perProc {
		if why := threadsBlocker(ts); why != "" {
			return why
		}
	}
	for _, ts := range perProc {
		t := forkSource(ts) // one look per address space
		if why := forkUnsafeMappings(t.real); why != "" {
			return fmt.Sprintf("task %d: %s", t.rec, why)
		}
	}
	return ""
}

// atExitStop tells whether stopped task tid is at a PTRACE_EVENT_EXIT
// stop (killed by another thread's exit_group, say: resuming it ends it,
// and a fork injected there never returns).
func atExitStop(tid int) bool {
	si, err := ptrace.NewThread(tid).GetSigInfo()
	if err != nil {
		return true
	}
	return si.Signo() == int(unix.SIGTRAP) && si.Code() == int(unix.SIGTRAP)|unix.PTRACE_EVENT_EXIT<<8
}

// dying tells whether task tid is exiting or being killed (a zombie, or
// SIGKILL pending, as for the other threads of an exit_group or a fatal
// signal before replay has seen them exit).
func dying(tid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if strings.HasPrefix(v, "Z") || strings.HasPrefix(v, "X") {
				return true
			}
		case "SigPnd", "ShdPnd":
			if m, err := strconv.ParseUint(v, 16, 64); err == nil && m&(1<<(unix.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}

// threadsBlocker says why the tasks sharing an address space cannot be
// snapshotted ("" if they can): several tasks must be the threads of one
// thread group, its leader among them, and no other thread may exist.
func threadsBlocker(ts []*rtask) string {
	for _, t := range ts {
		if dying(t.real) || atExitStop(t.real) {
			return fmt.Sprintf("task %d is exiting", t.rec)
		}
	}
	if len(ts) == 1 {
		return ""
	}
	leader := forkSource(ts)
	if leader == nil {
		return fmt.Sprintf("task %d shares its address space with tasks but none is its thread-group leader", ts[0].rec)
	}
	for _, t := range ts {
		if tracee.Tgid(t.real) != leader.real {
			return fmt.Sprintf("task %d shares its address space with another process (vfork)", t.rec)
		}
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(leader.real) + "/task")
	if err != nil {
		return err.Error()
	}
	if len(ents) != len(ts) {
		return fmt.Sprintf("process of task %d has %d threads, replay knows %d", leader.rec, len(ents), len(ts))
	}
	return ""
}

// forkSource returns the task a process (its tasks ts) is forked from
// for a snapshot: its only task, or its thread-group leader (nil if
// that is not among ts).
func forkSource(ts []*rtask) *rtask {
	if len(ts) == 1 {
		return ts[0]
	}
	for _, t := range ts {
		if tracee.Tgid(t.real) == t.real {
			return t
		}
	}
	return nil
}

// forkUnsafeMappings says whether pid has memory a fork does not copy
// faithfully: MAP_SHARED mappings (the copy would share them with the
// replay), MADV_DONTFORK (absent from the copy) and MADV_WIPEONFORK
// (zeroed in the copy) regions.
func forkUnsafeMappings(pid int) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps")
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	cur := ""
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			cur = line
			if len(fields) > 1 && len(fields[1]) == 4 && fields[1][3] == 's' {
				return "shared mapping " + cur
			}
			continue
		}
		if fields[0] == "VmFlags:" {
			for _, fl := range fields[1:] {
				switch fl {
				case "dd":
					return "MADV_DONTFORK mapping " + cur
				case "wf":
					return "MADV_WIPEONFORK mapping " + cur
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err.Error()
	}
	return ""
}

// Freeze freezes the engine at the current boundary (after ev). The
// copy of address space p does not keep the breakpoints bps (address ->
// original byte).
func (rp *replayer) Freeze(ev *trace.Event, p *Proc, bps map[uint64]byte) (*Frozen, error) {
	if why := rp.freezeBlocker(); why != "" {
		return nil, errNoSnapshot{why}
	}
	sn := &Frozen{event: rp.n, last: ev, mark: rp.q.r.Mark(), ahead: slices.Clone(rp.q.ahead), gap: rp.q.gap, qerr: rp.q.err,
		initial: rp.initial, status: rp.status}
	recs := make([]int32, 0, len(rp.tasks))
	for rec := range rp.tasks {
		recs = append(recs, rec)
	}
	slices.Sort(recs)
	perProc := map[*rproc][]*rtask{}
	for _, rec := range recs {
		t := rp.tasks[rec]
		perProc[t.proc] = append(perProc[t.proc], t)
	}
	procs := map[*rproc]*rproc{} // replay's -> the frozen one's
	for _, rec := range recs {
		t := rp.tasks[rec]
		st := snapTask{}
		var err error
		if st.regs, err = t.thread().GetRegs(); err == nil {
			if st.xstate, err = t.thread().GetXState(xsaveMax()); err == nil {
				st.mask, err = t.thread().GetSigMask()
			}
		}
		if err != nil {
			sn.Kill()
			return nil, err
		}
		c := *t
		c.real, c.mem = 0, nil
		cp := procs[t.proc]
		if cp == nil {
			cp = t.proc.clone()
			procs[t.proc] = cp
		}
		c.proc = cp
		if forkSource(perProc[t.proc]) == t {
			var keep map[uint64]byte
			if t.proc == p {
				keep = bps // the copy must not keep the debugger's breakpoints
			}
			regs := st.regs
			pid, err := forkCopy(t.real, t.mem, &regs, keep, false)
			if err != nil {
				sn.Kill()
				return nil, fmt.Errorf("snapshot of task %d: %w", rec, err)
			}
			c.real, st.src = pid, true
		} else {
			sn.threads++
		}
		st.t = c
		sn.tasks = append(sn.tasks, st)
	}
	return sn, nil
}

// forkCopy forks stopped task tid (its registers are regs) into a new
// process that stays stopped, and leaves tid as it was. Two bytes at
// the pc are borrowed for the `syscall` instruction; the copy gets them
// back, and the original bytes of the breakpoints in bps. With settle,
// the copy is moved to a system-call-exit stop with regs set, the state
// in which replay holds its tasks (resuming it then never restarts a
// system call behind replay's back).
func forkCopy(tid int, mem *tracee.Mem, regs *trace.Regs, bps map[uint64]byte, settle bool) (int, error) {
	at := regs[ptrace.RIP]
	var orig [2]byte
	if err := mem.ReadMem(at, orig[:]); err != nil {
		return 0, err
	}
	if err := mem.WriteMem(at, []byte{0x0f, 0x05}); err != nil {
		return 0, err
	}
	child, err := diversion.ForkAt(tid, at, regs)
	if werr := mem.WriteMem(at, orig[:]); err == nil {
		err = werr
	}
	if rerr := diversion.RestoreParent(tid, regs, false); err == nil {
		err = rerr
	}
	if err == nil {
		err = prepareCopy(child, at, orig, regs, bps, settle)
	}
	if err != nil {
		killTraced(child)
		return 0, err
	}
	return child, nil
}

func prepareCopy(pid int, at uint64, orig [2]byte, regs *trace.Regs, bps map[uint64]byte, settle bool) error {
	m, err := tracee.OpenMem(pid)
	if err != nil {
		return err
	}
	defer m.Close()
	if settle {
		r := *regs
		r[ptrace.RIP], r[ptrace.RAX], r[ptrace.ORIGRAX] = at, unix.SYS_GETPID, ^uint64(0)
		if err := ptrace.NewThread(pid).SetRegs(&r); err != nil {
			return err
		}
		for _, want := range []ptrace.StopKind{ptrace.StopSyscallEntry, ptrace.StopSyscallExit} {
			if err := runToSyscallStop(pid, want); err != nil {
				return err
			}
		}
	}
	if err := m.WriteMem(at, orig[:]); err != nil {
		return err
	}
	for a, b := range bps {
		if err := m.WriteMem(a, []byte{b}); err != nil {
			return err
		}
	}
	if settle {
		return ptrace.NewThread(pid).SetRegs(regs)
	}
	return nil
}

// runToSyscallStop resumes pid with PTRACE_SYSCALL until a stop of the
// wanted kind, suppressing signals.
func runToSyscallStop(pid int, want ptrace.StopKind) error {
	_, err := ptrace.NewThread(pid).RunUntil(ptrace.Syscall, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		switch st.Kind {
		case ptrace.StopExited:
			return ptrace.Accept, tracee.ErrGone
		case want:
			return ptrace.Accept, nil
		}
		return ptrace.Again, nil
	})
	return err
}

// Thaw builds the state of rp (a fresh engine) from sn, with new copies
// of its processes; rd is a reader of the trace. rebuilt is told how
// many threads each copy recreates.
func (rp *replayer) Thaw(sn *Frozen, rd *trace.Reader, rebuilt func(threads int)) error {
	if sn.dead {
		return fmt.Errorf("snapshot at event %d was dropped", sn.event)
	}
	if err := rd.Seek(sn.mark); err != nil {
		return err
	}
	var made []*rtask
	fail := func(err error) error {
		killTasks(made)
		rp.tasks = map[int32]*rtask{}
		return fmt.Errorf("restore snapshot at event %d: %w", sn.event, err)
	}
	for _, src := range sn.tasks {
		if !src.src {
			continue
		}
		img := src.t.real
		mem, err := tracee.OpenMem(img)
		if err != nil {
			return fail(err)
		}
		regs := src.regs
		pid, err := forkCopy(img, mem, &regs, nil, true)
		_ = mem.Close()
		if err != nil {
			return fail(err)
		}
		p := src.t.proc.clone()
		lead := &rtask{}
		*lead = src.t
		lead.real, lead.proc = pid, p
		made = append(made, lead)
		if lead.mem, err = tracee.OpenMem(pid); err != nil {
			return fail(err)
		}
		rp.tasks[lead.rec] = lead
		var threads []*snapTask
		for i := range sn.tasks {
			if o := &sn.tasks[i]; o.t.proc == src.t.proc && !o.src {
				threads = append(threads, o)
			}
		}
		if rebuilt != nil && len(threads) > 0 {
			rebuilt(len(threads))
		}
		if err := rebuildThreads(lead, &src, threads, func(t *rtask) {
			t.proc = p
			made = append(made, t)
			rp.tasks[t.rec] = t
		}); err != nil {
			return fail(err)
		}
	}
	rp.n, rp.initial, rp.status = sn.event, sn.initial, sn.status
	rp.q = newQueue(rd)
	rp.q.ahead, rp.q.gap, rp.q.err = slices.Clone(sn.ahead), sn.gap, sn.qerr
	rp.lastEv, rp.atBoundary = sn.last, true
	if sn.last != nil {
		rp.evTime = sn.last.Time
	}
	return nil
}

// cloneThread is the clone flags a thread of a restored copy is made
// with (as pthread_create makes them, without the tid bookkeeping).
const cloneThread = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM

// rebuildThreads gives the restored copy lead (a fresh single-threaded
// fork of a snapshot, held at a system-call-exit stop with the
// registers of src, the task it was forked from) the per-thread state a
// fork does not copy, and recreates the other threads of the process:
// each is cloned from lead, then given its clear_child_tid (by running
// set_tid_address in it), its registers (fs_base included), extended
// state and blocked signals, and left at a system-call-exit stop, the
// state in which replay holds its tasks. Each new task is handed to
// add as soon as it exists. The copy's tids are new: the tasks keep
// their recorded tids, and their real ones are the new threads'.
func rebuildThreads(lead *rtask, src *snapTask, threads []*snapTask, add func(*rtask)) (err error) {
	at := src.regs[ptrace.RIP]
	var orig [2]byte
	if err := lead.mem.ReadMem(at, orig[:]); err != nil {
		return err
	}
	if err := lead.mem.WriteMem(at, []byte{0x0f, 0x05}); err != nil {
		return err
	}
	defer func() {
		if werr := lead.mem.WriteMem(at, orig[:]); err == nil {
			err = werr
		}
	}()
	if err := threadState(lead.real, at, src); err != nil {
		return err
	}
	for _, th := range threads {
		res, err := tracee.MustInject(lead.real, at, unix.SYS_CLONE, cloneThread, th.regs[ptrace.RSP], 0, 0, 0)
		if err != nil {
			return err
		}
		t := &rtask{}
		*t = th.t
		t.real = int(res)
		t.trapped = lead.trapped // cloned from lead: its kernel traps
		add(t)
		if err := diversion.WaitInitialStop(t.real); err != nil {
			return fmt.Errorf("new thread %d: %w", t.real, err)
		}
		if t.mem, err = tracee.OpenMem(t.real); err != nil {
			return err
		}
		if err := threadState(t.real, at, th); err != nil {
			return err
		}
	}
	return nil
}

// xsaveMax is the size of a buffer that holds any task's XSAVE area:
// CPUID leaf 0xd's largest size for the features the CPU supports.
func xsaveMax() int {
	_, _, ecx, _ := cpu.Cpuid(0xd, 0)
	return max(int(ecx), 8192)
}

// threadState gives stopped thread tid the state of snapshot task st,
// using the `syscall` instruction at at for set_tid_address; tid ends at
// a system-call-exit stop.
func threadState(tid int, at uint64, st *snapTask) error {
	if _, err := tracee.MustInject(tid, at, unix.SYS_SET_TID_ADDRESS, st.t.clearTid); err != nil {
		return err
	}
	regs := st.regs
	if err := ptrace.NewThread(tid).SetRegs(&regs); err != nil {
		return err
	}
	if err := ptrace.NewThread(tid).SetXState(st.xstate); err != nil {
		return err
	}
	return ptrace.NewThread(tid).SetSigMask(st.mask)
}

// killTasks kills and reaps the given tasks (threads of the same
// processes included), closing their memory.
func killTasks(ts []*rtask) {
	var threads []ptrace.Thread
	for _, t := range ts {
		if t.mem != nil {
			_ = t.mem.Close()
		}
		threads = append(threads, t.thread())
	}
	ptrace.KillAll(threads, 5*time.Second)
}
