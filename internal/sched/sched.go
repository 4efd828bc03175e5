// Package sched decides which ready tracee thread runs next. The recorder
// runs one thread at a time; whatever this package chooses becomes part
// of the trace, so replay needs no scheduler at all.
package sched

import "math/rand/v2"

// Scheduler chooses among ready tasks. The default policy keeps running
// the task that ran last for up to MaxStreak consecutive picks (fewer
// switches, better cache behaviour, as rr's timeslices), then goes round
// robin in creation order so no ready task starves. Chaos mode picks a
// random ready task and a random streak length each time, to shake out
// interleavings a normal run rarely produces.
type Scheduler struct {
	order     []int
	last      int
	streak    int
	maxStreak int
	rng       *rand.Rand // non-nil in chaos mode
	limit     int        // current streak limit
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
	return s
}

// Add registers a new task (it goes last in the round-robin order).
func (s *Scheduler) Add(tid int) { s.order = append(s.order, tid) }

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

func (s *Scheduler) pickChaos(ready func(tid int) bool) (int, bool) {
	if s.last >= 0 && s.streak < s.limit && ready(s.last) {
		s.streak++
		return s.last, true
	}
	var cands []int
	for _, t := range s.order {
		if ready(t) {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return 0, false
	}
	t := cands[s.rng.IntN(len(cands))]
	s.limit = 1 + s.rng.IntN(s.maxStreak)
	s.last, s.streak = t, 1
	return t, true
}

// Preempted ends the current streak: the next Pick moves on to another
// ready task (the preempted one runs again when its turn comes).
func (s *Scheduler) Preempted() { s.streak = s.limit }
