package session

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Snapshots (rr's checkpoints) make going backwards cost time
// proportional to the distance travelled rather than to the position: a
// snapshot is the replay frozen at an event boundary, so a run towards an
// earlier position starts from the latest snapshot before it instead of
// from the start of the trace.
//
// A snapshot is the engine frozen at a boundary (replay.Engine.Freeze:
// forked copies of the replayed processes and a copy of the engine's
// state, see internal/replay/freeze.go) with the session's state of
// that run (the debugged process's identity and executables). Restoring
// thaws the engine into a fresh run (forking each copy again, so a
// snapshot serves many runs), plants the debugger's breakpoints in the
// new copy and replays on from the snapshot's event; the registers are
// still checked at every event, so a bad restore is reported as a
// divergence.
//
// Snapshots are taken only when the engine can be frozen (see
// freeze.go) and no step of the session is in progress. Elsewhere no
// snapshot is taken and runs start from the nearest earlier one, or from
// the start of the trace.

// snapshot is the replay frozen at the boundary after event `event`.
type snapshot struct {
	f     *replay.Frozen
	event uint64
	last  *trace.Event // the event the boundary follows
	tid   int32        // a live task, to name boundary positions
	// the debugged process
	dbgPid              int32
	dbgExe, dbgExeName  string
	procExe, procExeNam map[int32]string
	procAuxv            map[int32][]byte
	pins                int // user checkpoints that keep it
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
func (ss *snapshots) after(d *driver, ev *trace.Event) {
	ss.replayed.Add(1)
	if ss.opts.Off {
		return
	}
	n := d.e.Event()
	if ss.at(n) != nil {
		ss.lastAt = time.Now() // passing one: the clock starts again
		return
	}
	pin := ss.want[n]
	if pin == 0 && time.Since(ss.lastAt) < ss.opts.Interval {
		return
	}
	t0 := time.Now()
	sn, err := d.takeSnapshot(ev)
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
		if sn.f.Threads() > 0 {
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
	dead := sn.f.Dead()
	ss.note(func(st *SnapshotStats) {
		if !dead {
			st.Dropped++
		}
	})
	sn.f.Kill()
}

// pin keeps a snapshot at boundary n for a user checkpoint: the one
// there, or one taken now if the run stands at that boundary, or else
// one taken the next time a run passes it.
func (ss *snapshots) pin(d *driver, n uint64) {
	ss.want[n]++
	if ss.opts.Off {
		return
	}
	if sn := ss.at(n); sn != nil {
		sn.pins++
		return
	}
	if d == nil {
		return
	}
	if ev := d.e.Boundary(); ev != nil && d.e.Event() == n {
		if sn, err := d.takeSnapshot(ev); err == nil {
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
		sn.f.Kill()
	}
	ss.list = nil
	ss.note(func(*SnapshotStats) {})
}

// snapshotBlocker says why the session cannot take a snapshot now (""
// if it can; the engine may still refuse, freeze.go).
func (d *driver) snapshotBlocker() string {
	switch {
	case !d.started:
		return "debugging has not started"
	case d.stepTask != 0 || d.stepping != 0 || d.restoreAt != 0 || d.skipReport || d.watchStop != nil:
		return "a step is in progress"
	}
	return ""
}

// takeSnapshot freezes the replay at the current boundary (after ev).
func (d *driver) takeSnapshot(ev *trace.Event) (*snapshot, error) {
	if why := d.snapshotBlocker(); why != "" {
		return nil, fmt.Errorf("no snapshot: %s", why)
	}
	f, err := d.e.Freeze(ev, d.debugProc(), d.bps) // the copy must not keep the debugger's breakpoints
	if err != nil {
		return nil, err
	}
	sn := &snapshot{f: f, event: f.Event(), last: ev, dbgPid: d.pid, dbgExe: d.dbgExe, dbgExeName: d.dbgExeName,
		procExe: cloneMap(d.procExe), procExeNam: cloneMap(d.procExeName), procAuxv: cloneMap(d.procAuxv)}
	ts := d.e.Tasks()
	sn.tid = ts[0].Rec()
	if d.e.Task(d.pid) != nil {
		sn.tid = d.pid
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

// restore builds the state of d (a fresh run) from sn, with new copies
// of its processes; rd is a reader of the trace.
func (d *driver) restore(sn *snapshot, rd *trace.Reader) error {
	err := d.e.Thaw(sn.f, rd, func(n int) {
		d.snaps.note(func(st *SnapshotStats) { st.ThreadsRebuilt += n })
	})
	if err != nil {
		return err
	}
	d.dbgExe, d.dbgExeName = sn.dbgExe, sn.dbgExeName
	d.procExe, d.procExeName, d.procAuxv = cloneMap(sn.procExe), cloneMap(sn.procExeNam), cloneMap(sn.procAuxv)
	d.pid, d.started = sn.dbgPid, true
	// The breakpoints, as when debugging starts (afterEvent).
	for a := range d.user {
		_ = d.insertBreakpoint(a)
	}
	if g := d.goal; g != nil && g.target.Addr != 0 && !markedAddr(g.target.Addr) && !g.target.Watch {
		_ = d.insertBreakpoint(g.target.Addr)
	}
	d.snapshotWatches()
	return nil
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
		var d *driver
		if s.cur != nil {
			d = s.cur.d
		}
		s.snaps.pin(d, b)
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
