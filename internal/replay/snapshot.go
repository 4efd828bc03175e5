package replay

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/diversion"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Snapshots (rr's checkpoints) make going backwards cost time
// proportional to the distance travelled rather than to the position: a
// snapshot is the replay frozen at an event boundary, so a run towards an
// earlier position starts from the latest snapshot before it instead of
// from the start of the trace.
//
// A snapshot holds, for every live replayed process, a forked copy made
// by injecting clone(CLONE_PARENT|SIGCHLD) into the process (as a
// diversion does): the copy shares the memory copy-on-write, stays
// stopped under ptrace and never runs. With it goes a copy of the
// replayer's state (event number, tasks and their flags, per-process
// state, the trace reader's position and look-ahead, the debugged
// process's identity). Restoring forks each copy again (so a snapshot
// serves many runs), plants the debugger's breakpoints in the new copy and
// replays on from the snapshot's event; the registers are still checked
// at every event, so a bad restore is reported as a divergence.
//
// A fork copies the calling thread only. A snapshot of a multi-threaded
// process is a fork of its thread-group leader plus the state of every
// other thread (registers with fs_base and gs_base, XSAVE area, blocked
// signals, clear_child_tid); each restore forks the copy again and
// recreates the other threads in the new copy by injecting
// clone(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|
// CLONE_SYSVSEM) into its leader, once per thread (rebuildThreads). The
// recreated threads have new tids; the replayer's tasks keep their
// recorded tids and point at them. Every task of a copy is held at a
// system-call-exit stop with its registers, which resumes exactly as
// the stops replay holds tasks at between events (a system-call-entry
// stop whose call was emulated, the stop after a real call, a fault or
// a new task's first stop). Signal dispositions are the process's and
// are copied by the fork; replay emulates rt_sigaction and
// rt_sigprocmask and delivers signals itself, and the real masks (set
// by rt_sigreturn, which runs for real) are copied all the same.
//
// Snapshots are taken only when the state is one this reproduces
// exactly (snapshotBlocker): the tasks sharing an address space are the
// threads of one process whose leader is among them and that has no
// other thread, no task is exiting (killed by an exit_group or a fatal
// signal, or at its exit stop) or inside a system call that runs for
// real (an execve, exit, clone, mmap... in progress: its effect would
// have to be redone in the copy), no MAP_SHARED mapping (the copy would
// share it with the replay) and no MADV_DONTFORK/MADV_WIPEONFORK region
// (absent or zeroed in the copy), no step or preemption-point search in
// progress, and no vfork child sharing its parent's memory. Elsewhere no
// snapshot is taken and runs start from the nearest earlier one, or from
// the start of the trace.

// snapshot is the replay frozen at the boundary after event `event`.
type snapshot struct {
	event   uint64
	last    *trace.Event // the event the boundary follows
	mark    trace.Mark
	ahead   []*trace.Event
	qerr    error
	tasks   []snapTask
	initial int32
	status  unix.WaitStatus
	tid     int32 // a live task, to name boundary positions
	// the debugged process
	dbgPid              int32
	dbgExe, dbgExeName  string
	procExe, procExeNam map[int32]string
	procAuxv            map[int32][]byte
	pins                int // user checkpoints that keep it
	threads             int // tasks without a copy of their own (threads recreated on restore)
	dead                bool
}

// snapTask is a task of a snapshot: its replayer state and its thread
// state at the boundary (registers, extended state, blocked signals).
// With src, the task's process was forked from it and t.real is the
// stopped copy's pid; the other tasks of that process (threads) have no
// copy (t.real is 0): they are recreated in each restored copy.
type snapTask struct {
	t      rtask
	regs   trace.Regs
	xstate []byte
	mask   uint64
	src    bool
}

// SnapshotOptions configure automatic snapshots of a debug session.
type SnapshotOptions struct {
	// Off disables snapshots: every backwards request replays from the
	// start of the trace.
	Off bool
	// Interval is the replay time between automatic snapshots (default
	// 100ms).
	Interval time.Duration
	// Max bounds the automatic snapshots kept (default 32); older ones
	// are thinned out. Snapshots kept for user checkpoints do not count.
	Max int
}

// SnapshotStats counts what snapshots did in a session.
type SnapshotStats struct {
	Taken, Restored, Dropped, Refused int
	// Threaded counts the snapshots taken of a multi-threaded process;
	// ThreadsRebuilt the threads restores recreated in copies.
	Threaded, ThreadsRebuilt int
	Live                     int // snapshots kept now
	// EventsReplayed counts the events replayed by all runs of the
	// session (a measure of the cost of going backwards).
	EventsReplayed uint64
	// LastRunFrom is the event the last run started from (0: the start).
	LastRunFrom uint64
	// LastRefusal says why the last snapshot could not be taken.
	LastRefusal string
	// Time spent taking and restoring snapshots.
	TakeTime, RestoreTime time.Duration
}

// snapshots are a session's snapshots. They are used on the session's
// ptrace worker only (by runs, and between runs).
type snapshots struct {
	opts     SnapshotOptions
	list     []*snapshot // by event
	want     map[uint64]int
	lastAt   time.Time
	replayed atomic.Uint64
	mu       sync.Mutex // guards stats, read by SnapshotStats from any goroutine
	stats    SnapshotStats
}

func (ss *snapshots) note(f func(st *SnapshotStats)) {
	ss.mu.Lock()
	f(&ss.stats)
	ss.stats.Live = len(ss.list)
	ss.mu.Unlock()
}

func newSnapshots(o SnapshotOptions) *snapshots {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Max <= 0 {
		o.Max = 32
	}
	return &snapshots{opts: o, want: map[uint64]int{}}
}

func (ss *snapshots) at(n uint64) *snapshot {
	i, ok := slices.BinarySearchFunc(ss.list, n, func(s *snapshot, n uint64) int { return cmpU64(s.event, n) })
	if ok {
		return ss.list[i]
	}
	return nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// latest returns the latest snapshot at or before boundary n.
func (ss *snapshots) latest(n uint64) *snapshot {
	var best *snapshot
	for _, s := range ss.list {
		if s.event > n {
			break
		}
		best = s
	}
	return best
}

// goalStart is the earliest event boundary a run towards g must start
// from (at or before): a boundary base is reached at its boundary, an
// arrival at an instruction happens while the event after the previous
// boundary is replayed.
func goalStart(g *goal) uint64 {
	if g.kind == goalCountSteps {
		return g.from
	}
	if g.target.Addr == 0 {
		return g.target.Event
	}
	if g.target.Event == 0 {
		return 0
	}
	return g.target.Event - 1
}

// forGoal picks the snapshot a run towards g starts from (nil: the start).
func (ss *snapshots) forGoal(g *goal) *snapshot {
	if ss == nil || g == nil || ss.opts.Off {
		return nil
	}
	return ss.latest(goalStart(g))
}

// startRun notes a run that starts at event from.
func (ss *snapshots) startRun(from uint64) {
	ss.lastAt = time.Now()
	ss.note(func(st *SnapshotStats) { st.LastRunFrom = from })
}

// after is called by a run at the boundary after each event: it counts
// the event and takes a snapshot when one is due.
func (ss *snapshots) after(rp *replayer, ev *trace.Event) {
	ss.replayed.Add(1)
	if ss.opts.Off {
		return
	}
	n := rp.n
	if ss.at(n) != nil {
		ss.lastAt = time.Now() // passing one: the clock starts again
		return
	}
	pin := ss.want[n]
	if pin == 0 && time.Since(ss.lastAt) < ss.opts.Interval {
		return
	}
	t0 := time.Now()
	sn, err := rp.takeSnapshot(ev)
	ss.note(func(st *SnapshotStats) { st.TakeTime += time.Since(t0) })
	if err != nil {
		ss.note(func(st *SnapshotStats) { st.Refused++; st.LastRefusal = err.Error() })
		// Try again a quarter interval later.
		ss.lastAt = time.Now().Add(-ss.opts.Interval * 3 / 4)
		return
	}
	sn.pins = pin
	ss.add(sn)
	ss.lastAt = time.Now()
}

func (ss *snapshots) add(sn *snapshot) {
	i, _ := slices.BinarySearchFunc(ss.list, sn.event, func(s *snapshot, n uint64) int { return cmpU64(s.event, n) })
	ss.list = slices.Insert(ss.list, i, sn)
	ss.note(func(st *SnapshotStats) {
		st.Taken++
		if sn.threads > 0 {
			st.Threaded++
		}
	})
	ss.thin()
}

// thin drops automatic snapshots beyond the maximum: each time the one
// whose removal leaves the smallest gap between its neighbours (the
// newest is kept), so the survivors stay evenly spread.
func (ss *snapshots) thin() {
	for {
		auto := 0
		for _, s := range ss.list {
			if s.pins == 0 {
				auto++
			}
		}
		if auto <= ss.opts.Max {
			return
		}
		best, bestGap := -1, uint64(0)
		for i, s := range ss.list[:len(ss.list)-1] {
			if s.pins > 0 {
				continue
			}
			var prev uint64
			if i > 0 {
				prev = ss.list[i-1].event
			}
			gap := ss.list[i+1].event - prev
			if best < 0 || gap < bestGap {
				best, bestGap = i, gap
			}
		}
		if best < 0 {
			return
		}
		ss.drop(ss.list[best])
	}
}

// drop kills a snapshot's copies and forgets it.
func (ss *snapshots) drop(sn *snapshot) {
	if i := slices.Index(ss.list, sn); i >= 0 {
		ss.list = slices.Delete(ss.list, i, i+1)
	}
	dead := sn.dead
	ss.note(func(st *SnapshotStats) {
		if !dead {
			st.Dropped++
		}
	})
	sn.kill()
}

// pin keeps a snapshot at boundary n for a user checkpoint: the one
// there, or one taken now if the run stands at that boundary, or else
// one taken the next time a run passes it.
func (ss *snapshots) pin(rp *replayer, n uint64) {
	ss.want[n]++
	if ss.opts.Off {
		return
	}
	if sn := ss.at(n); sn != nil {
		sn.pins++
		return
	}
	if rp != nil && rp.atBoundary && rp.n == n && rp.lastEv != nil {
		if sn, err := rp.takeSnapshot(rp.lastEv); err == nil {
			sn.pins = ss.want[n]
			ss.add(sn)
		} else {
			ss.note(func(st *SnapshotStats) { st.Refused++; st.LastRefusal = err.Error() })
		}
	}
}

func (ss *snapshots) unpin(n uint64) {
	if ss.want[n] > 0 {
		ss.want[n]--
		if ss.want[n] == 0 {
			delete(ss.want, n)
		}
	}
	if sn := ss.at(n); sn != nil && sn.pins > 0 {
		sn.pins--
		ss.thin()
	}
}

func (ss *snapshots) killAll() {
	for _, sn := range ss.list {
		sn.kill()
	}
	ss.list = nil
	ss.note(func(*SnapshotStats) {})
}

func (sn *snapshot) kill() {
	if sn.dead {
		return
	}
	sn.dead = true
	for _, st := range sn.tasks {
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

// errNoSnapshot says why no snapshot can be taken at a boundary.
type errNoSnapshot struct{ why string }

func (e errNoSnapshot) Error() string { return "no snapshot: " + e.why }

// snapshotBlocker says why the replay cannot be snapshotted now ("" if
// it can).
func (rp *replayer) snapshotBlocker() string {
	d := rp.dbg
	switch {
	case d == nil || !d.started:
		return "debugging has not started"
	case rp.point != nil:
		return "a preemption point is being searched"
	case d.stepTask != 0 || d.stepping != 0 || d.restoreAt != 0 || d.skipReport || d.watchStop != nil:
		return "a step is in progress"
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

// takeSnapshot freezes the replay at the current boundary (after ev).
func (rp *replayer) takeSnapshot(ev *trace.Event) (*snapshot, error) {
	if why := rp.snapshotBlocker(); why != "" {
		return nil, errNoSnapshot{why}
	}
	d := rp.dbg
	sn := &snapshot{event: rp.n, last: ev, mark: rp.q.r.Mark(), ahead: slices.Clone(rp.q.ahead), qerr: rp.q.err,
		initial: rp.initial, status: rp.status, dbgPid: d.pid, dbgExe: rp.dbgExe, dbgExeName: rp.dbgExeName,
		procExe: cloneMap(rp.procExe), procExeNam: cloneMap(rp.procExeName), procAuxv: cloneMap(rp.procAuxv)}
	recs := make([]int32, 0, len(rp.tasks))
	for rec := range rp.tasks {
		recs = append(recs, rec)
	}
	slices.Sort(recs)
	sn.tid = recs[0]
	if rp.tasks[d.pid] != nil {
		sn.tid = d.pid
	}
	dbgProc := rp.debugProc()
	perProc := map[*rproc][]*rtask{}
	for _, rec := range recs {
		t := rp.tasks[rec]
		perProc[t.proc] = append(perProc[t.proc], t)
	}
	procs := map[*rproc]*rproc{} // replay's -> the snapshot's
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
			sn.kill()
			return nil, err
		}
		c := *t
		c.real, c.mem = 0, nil
		p := procs[t.proc]
		if p == nil {
			cp := *t.proc
			p = &cp
			procs[t.proc] = p
		}
		c.proc = p
		if forkSource(perProc[t.proc]) == t {
			var bps map[uint64]byte
			if t.proc == dbgProc {
				bps = d.bps // the copy must not keep the debugger's breakpoints
			}
			regs := st.regs
			pid, err := forkCopy(t.real, t.mem, &regs, bps, false)
			if err != nil {
				sn.kill()
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

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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

// restore builds the replayer state of rp (a fresh run) from sn, with
// new copies of its processes; rd is a reader of the trace.
func (rp *replayer) restore(sn *snapshot, rd *trace.Reader) error {
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
		p := *src.t.proc
		lead := &rtask{}
		*lead = src.t
		lead.real, lead.proc = pid, &p
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
		if rp.snaps != nil && len(threads) > 0 {
			rp.snaps.note(func(st *SnapshotStats) { st.ThreadsRebuilt += len(threads) })
		}
		if err := rebuildThreads(lead, &src, threads, func(t *rtask) {
			t.proc = &p
			made = append(made, t)
			rp.tasks[t.rec] = t
		}); err != nil {
			return fail(err)
		}
	}
	rp.n, rp.initial, rp.status = sn.event, sn.initial, sn.status
	rp.q = queue{r: rd, ahead: slices.Clone(sn.ahead), err: sn.qerr}
	rp.dbgExe, rp.dbgExeName = sn.dbgExe, sn.dbgExeName
	rp.procExe, rp.procExeName, rp.procAuxv = cloneMap(sn.procExe), cloneMap(sn.procExeNam), cloneMap(sn.procAuxv)
	rp.lastEv, rp.atBoundary = sn.last, true
	if sn.last != nil {
		rp.evTime = sn.last.Time
	}
	d := rp.dbg
	d.pid, d.started = sn.dbgPid, true
	// The breakpoints, as when debugging starts (afterEvent).
	for a := range d.user {
		_ = rp.insertBreakpoint(a)
	}
	if g := d.goal; g != nil && g.target.Addr != 0 && !markedAddr(g.target.Addr) && !g.target.Watch {
		_ = rp.insertBreakpoint(g.target.Addr)
	}
	rp.snapshotWatches()
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
	live := map[int]bool{}
	for _, t := range ts {
		if t.mem != nil {
			_ = t.mem.Close()
		}
		if t.real > 0 {
			live[t.real] = true
			_ = unix.Kill(t.real, unix.SIGKILL)
		}
	}
	// A thread-group leader is reported only after its threads.
	deadline := time.Now().Add(5 * time.Second)
	for len(live) > 0 && time.Now().Before(deadline) {
		progressed := false
		for tid := range live {
			st, ok, err := ptrace.NewThread(tid).Poll()
			if err != nil || (ok && st.Kind == ptrace.StopExited) {
				delete(live, tid)
				progressed = true
				continue
			}
			if ok {
				progressed = true
				_ = ptrace.NewThread(tid).Resume(ptrace.Cont, 0)
			}
		}
		if !progressed {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// scanBack finds the last breakpoint hit (or signal stop, or watched
// change) before target, as a goalScan run does, but chunk by chunk:
// from the latest snapshot before target up to target, then from the
// snapshot before that up to the first one, and so on; so the cost is
// proportional to the distance to the hit, not to the position.
func (s *Session) scanBack(target Pos) (*goal, error) {
	chunk := target
	var sn *snapshot
	if !s.snaps.opts.Off {
		sn = s.snaps.latest(goalStart(&goal{kind: goalScan, target: target}))
	}
	for {
		g := &goal{kind: goalScan, target: chunk}
		if _, err := s.startRunFrom(g, sn); err != nil && !isEnd(err) {
			return g, err
		}
		if sn == nil || g.last != nil || g.lastWatchEvent != 0 || g.changedInTarget {
			return g, nil
		}
		// Nothing between sn and chunk: look before sn.
		chunk = Pos{Event: sn.event, Tid: sn.tid}
		if sn.event == 0 {
			sn = nil
		} else {
			sn = s.snaps.latest(sn.event - 1)
		}
	}
}

// SnapshotStats returns the session's snapshot counters.
func (s *Session) SnapshotStats() SnapshotStats {
	s.snaps.mu.Lock()
	st := s.snaps.stats
	s.snaps.mu.Unlock()
	st.EventsReplayed = s.snaps.replayed.Load()
	return st
}

// pinSnapshot keeps a snapshot for checkpoint n (at the boundary a run
// to it starts from).
func (s *Session) pinSnapshot(n int) {
	p, ok := s.ckpts[n]
	if !ok || s.w == nil {
		return
	}
	b := goalStart(&goal{kind: goalReach, target: p})
	s.ckptAt[n] = b
	s.onWorker(func() {
		var rp *replayer
		if s.cur != nil {
			rp = s.cur.rp
		}
		s.snaps.pin(rp, b)
	})
}

// unpinSnapshot releases the snapshot kept for checkpoint n.
func (s *Session) unpinSnapshot(n int) {
	b, ok := s.ckptAt[n]
	if !ok || s.w == nil {
		return
	}
	delete(s.ckptAt, n)
	s.onWorker(func() { s.snaps.unpin(b) })
}
