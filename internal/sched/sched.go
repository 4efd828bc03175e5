// Package sched decides which ready tracee thread runs next. The recorder
// runs one thread at a time; whatever this package chooses becomes part
// of the trace, so replay needs no scheduler at all.
package sched

import (
	"math"
	"math/rand/v2"
	"time"
)

// Scheduler chooses among ready tasks. The default policy keeps running
// the task that ran last for up to MaxStreak consecutive picks (fewer
// switches, better cache behaviour, as rr's timeslices), then goes round
// robin in creation order so no ready task starves. Chaos mode (see
// pickChaos) picks among the ready tasks at random, with random streak
// lengths and random priorities that starve a task for a while, to shake
// out interleavings a normal run rarely produces.
type Scheduler struct {
	order     []int
	last      int
	streak    int
	maxStreak int
	rng       *rand.Rand // non-nil in chaos mode
	limit     int        // current streak limit

	// Chaos mode only.
	low       map[int]bool // tasks of low priority
	refresh   int          // picks left before the priorities are drawn again
	preempted bool         // the last task's timeslice just ended
}

// New returns a scheduler; maxStreak <= 0 means 1 (switch at every pick).
func New(maxStreak int) *Scheduler {
	if maxStreak <= 0 {
		maxStreak = 1
	}
	return &Scheduler{maxStreak: maxStreak, limit: maxStreak, last: -1}
}

// NewChaos returns a chaos-mode scheduler seeded with seed.
func NewChaos(maxStreak int, seed uint64) *Scheduler {
	s := New(maxStreak)
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s.low = map[int]bool{}
	s.refresh = s.interval()
	return s
}

// interval is the number of picks before chaos mode draws the
// priorities again.
func (s *Scheduler) interval() int { return 1 + s.rng.IntN(1000) }

// drawPriority gives a task its chaos-mode priority: low with
// probability 0.1. (rr makes the first thread low with probability 0.3;
// here that mostly starves the thread that creates the others, so that
// they never overlap: a race between two workers it starts is then not
// reached.)
func (s *Scheduler) drawPriority(tid int, first bool) {
	_ = first
	s.low[tid] = s.rng.IntN(10) == 0
}

// Add registers a new task (it goes last in the round-robin order).
func (s *Scheduler) Add(tid int) {
	s.order = append(s.order, tid)
	if s.rng != nil {
		s.drawPriority(tid, len(s.order) == 1)
	}
}

// Remove forgets a task.
func (s *Scheduler) Remove(tid int) {
	for i, t := range s.order {
		if t == tid {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	if s.last == tid {
		s.last = -1
	}
	delete(s.low, tid)
}

// Rename changes a task's id in place (exec from a non-leader thread).
func (s *Scheduler) Rename(old, new int) {
	for i, t := range s.order {
		if t == old {
			s.order[i] = new
		}
	}
	if s.last == old {
		s.last = new
	}
	if s.low != nil {
		s.low[new] = s.low[old]
		delete(s.low, old)
	}
}

// Len is the number of tasks.
func (s *Scheduler) Len() int { return len(s.order) }

// Pick returns the next task to run among those for which ready is true.
func (s *Scheduler) Pick(ready func(tid int) bool) (int, bool) {
	if s.rng != nil {
		return s.pickChaos(ready)
	}
	if s.last >= 0 && s.streak < s.limit && ready(s.last) {
		s.streak++
		return s.last, true
	}
	start := 0
	for i, t := range s.order {
		if t == s.last {
			start = i + 1
		}
	}
	for k := 0; k < len(s.order); k++ {
		t := s.order[(start+k)%len(s.order)]
		if ready(t) {
			// A new streak starts, even when the round comes back to
			// the same task because no other one was ready.
			s.last, s.streak = t, 1
			return t, true
		}
	}
	return 0, false
}

// pickChaos is rr's chaos scheduling: every task has a random priority
// (drawn again every few hundred picks); only the highest priority among
// the ready tasks runs, so a low-priority task waits as long as a
// high-priority one can run (rr's starvation). The running task
// keeps its turn for a random streak; when its timeslice was cut short
// (Preempted), another ready task of its priority goes next.
func (s *Scheduler) pickChaos(ready func(tid int) bool) (int, bool) {
	if s.refresh--; s.refresh <= 0 {
		for i, t := range s.order {
			s.drawPriority(t, i == 0)
		}
		s.refresh = s.interval()
	}
	var high, low []int
	for _, t := range s.order {
		if !ready(t) {
			continue
		}
		if s.low[t] {
			low = append(low, t)
		} else {
			high = append(high, t)
		}
	}
	cands := high
	if len(cands) == 0 {
		cands = low
	}
	if len(cands) == 0 {
		return 0, false
	}
	preempted := s.preempted
	s.preempted = false
	lastOK := false
	for _, t := range cands {
		lastOK = lastOK || t == s.last
	}
	if lastOK && s.streak < s.limit {
		s.streak++
		return s.last, true
	}
	if preempted && lastOK && len(cands) > 1 {
		// Its timeslice was cut: another task goes first.
		others := cands[:0:0]
		for _, t := range cands {
			if t != s.last {
				others = append(others, t)
			}
		}
		cands = others
	}
	t := cands[s.rng.IntN(len(cands))]
	s.limit = 1 + s.rng.IntN(s.maxStreak)
	s.last, s.streak = t, 1
	return t, true
}

// Starve, in chaos mode, gives a task whose timeslice was just cut low
// priority until the priorities are drawn again: it then waits while any
// other task can run (a thread preempted in the middle of an update
// stays there while the others go on).
func (s *Scheduler) Starve(tid int) {
	if s.rng != nil {
		s.low[tid] = true
	}
}

// Preempted ends the current streak: the next Pick moves on to another
// ready task (the preempted one runs again when its turn comes).
func (s *Scheduler) Preempted() { s.streak = s.limit; s.preempted = true }

// Shortest and longest chaos timeslices below the base one.
const (
	MinChaosSlice   = 2 * time.Microsecond
	ShortChaosSlice = time.Millisecond
)

// ChaosTimeslice draws a chaos-mode timeslice for a base timeslice:
// a fifth of the time a short one, log-uniform between MinChaosSlice and
// ShortChaosSlice, otherwise uniform between ShortChaosSlice and twice
// the base (rr draws 10% "very short" and 10% "short" timeslices and the
// rest up to its maximum). A timer cannot interrupt a thread here sooner
// than a few tens of microseconds; shorter slices are ChaosSteps.
func ChaosTimeslice(rng *rand.Rand, base time.Duration) time.Duration {
	if rng.IntN(5) == 0 {
		lo, hi := math.Log(float64(MinChaosSlice)), math.Log(float64(ShortChaosSlice))
		return time.Duration(math.Exp(lo + rng.Float64()*(hi-lo)))
	}
	return ShortChaosSlice + time.Duration(rng.Int64N(int64(2*base)))
}

// Bounds of ChaosSteps.
const (
	MinChaosSteps = 8
	MaxChaosSteps = 4096
)

// ChaosSteps draws, for a thread resumed right after a system call while
// another thread is ready, a timeslice counted in instructions (0: none,
// a quarter of the time): log-uniform between MinChaosSteps and
// MaxChaosSteps. The recorder single-steps that many instructions and
// then preempts the thread, so that a race in code that runs for a few
// microseconds only (less than any timer here) is interrupted in its
// middle.
func ChaosSteps(rng *rand.Rand) int {
	if rng.IntN(4) == 0 {
		return 0
	}
	lo, hi := math.Log(MinChaosSteps), math.Log(MaxChaosSteps)
	return int(math.Exp(lo + rng.Float64()*(hi-lo)))
}
