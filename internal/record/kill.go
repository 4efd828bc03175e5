package record

import (
	"sort"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// A tracee that SIGKILLs another tracee the recorder holds stopped (at a
// system call's exit, say, while the killer runs) makes it die without a
// PTRACE_EVENT_EXIT stop: the kernel reports only its end, and by then it
// has made the dead thread's robust futex words FUTEX_OWNER_DIED and woken
// their waiters (robust.go). The recorder could not see those writes, and
// replay, whose kernel does not make them (the words hold recorded tids),
// diverged where a survivor locked the mutex (corpus robust_futex_death
// with -n, about 1 recording in 150).
//
// So at the entry of such a kill the recorder reads the robust words of
// each stopped victim (their memory cannot change before they die), and
// at its exit waits for each victim's death before anything else runs: a
// victim that still comes to its exit stop is handled there as any
// killed thread; one that dies without it gets the words read at the
// entry as an event of its own, right after the kill.

// killVictim is a stopped task a SIGKILL of its killer's call is about to
// kill, with the writes its death makes to its robust futex words.
type killVictim struct {
	tid   int
	words []trace.MemWrite
}

// noteKillVictims records in t.victims the stopped tasks that t's kill,
// tkill, tgkill, rt_sigqueueinfo or rt_tgsigqueueinfo (with args a) kills
// with SIGKILL. A call that kills t's own process is left alone: t dies
// with it.
func (r *recorder) noteKillVictims(t *task, nr int, a [6]uint64) {
	t.victims = nil
	target, sig := int(int32(a[0])), int(int32(a[1]))
	if nr == unix.SYS_TGKILL || nr == unix.SYS_RT_TGSIGQUEUEINFO {
		target, sig = int(int32(a[0])), int(int32(a[2]))
	}
	if sig != int(unix.SIGKILL) {
		return
	}
	if nr == unix.SYS_TKILL {
		// A tid: SIGKILL kills its whole process.
		o := r.tasks[target]
		if o == nil {
			return
		}
		target = o.tgid
	}
	var victim func(o *task) bool
	switch {
	case nr != unix.SYS_KILL && nr != unix.SYS_RT_SIGQUEUEINFO || target > 0:
		victim = func(o *task) bool { return o.tgid == target }
	case target == -1:
		victim = func(*task) bool { return true }
	default:
		group := -target
		if target == 0 {
			group = t.pgid()
		}
		victim = func(o *task) bool { return o.pgid() == group }
	}
	for _, o := range r.tasks {
		if o.tgid == t.tgid && victim(o) {
			// t's own process dies: t with it, before the call returns.
			t.victims = nil
			return
		}
		if o.tgid == t.tgid || o.dying || o.state != stReady && o.state != stStopped || !victim(o) {
			continue
		}
		t.victims = append(t.victims, killVictim{tid: o.tid, words: robustWords(o)})
	}
	// A thread-group leader's end is reported after its threads': wait for
	// leaders last.
	sort.Slice(t.victims, func(i, j int) bool {
		li, lj := r.isLeader(t.victims[i].tid), r.isLeader(t.victims[j].tid)
		if li != lj {
			return lj
		}
		return t.victims[i].tid < t.victims[j].tid
	})
}

func (r *recorder) isLeader(tid int) bool {
	o := r.tasks[tid]
	return o != nil && o.tgid == tid
}

// pgid returns t's process group (0 if it cannot be read).
func (t *task) pgid() int {
	g, err := unix.Getpgid(t.tid)
	if err != nil {
		return 0
	}
	return g
}

// settleVictims waits, at the exit of t's kill (result ret), until the
// stopped tasks it killed have died, recording each death as a killed
// thread's is recorded; one that died without an exit stop gets its
// robust futex writes as an event of its own.
func (r *recorder) settleVictims(t *task, ret int64) error {
	victims := t.victims
	t.victims = nil
	if ret != 0 {
		return nil
	}
	for _, v := range victims {
		if r.tasks[v.tid] == nil {
			// Its death came, and was handled, while the loop waited for
			// another victim (waitFor handles deaths at once): words of
			// a thread of a multi-threaded victim that died so without
			// an exit stop are not recorded (limitations.md).
			continue
		}
		st, ok, err := r.waitFor(v.tid)
		if err != nil || !ok {
			return err
		}
		if !isDeath(st) && st.Kind != stopVanished {
			// Not expected of a killed task: left to the loop.
			r.queued = append(r.queued, st)
			continue
		}
		if st.Kind == ptrace.StopExited && len(v.words) > 0 {
			if err := r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(v.tid), Mem: v.words}); err != nil {
				return err
			}
		}
		if err := r.handle(st); err != nil {
			return err
		}
	}
	return nil
}
