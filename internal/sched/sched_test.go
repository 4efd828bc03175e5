package sched

import (
	"math/rand/v2"
	"testing"
	"time"
)

func readySet(ids ...int) func(int) bool {
	m := map[int]bool{}
	for _, i := range ids {
		m[i] = true
	}
	return func(t int) bool { return m[t] }
}

func TestStreakThenRoundRobin(t *testing.T) {
	s := New(3)
	for _, id := range []int{10, 11, 12} {
		s.Add(id)
	}
	all := readySet(10, 11, 12)
	var got []int
	for i := 0; i < 9; i++ {
		id, ok := s.Pick(all)
		if !ok {
			t.Fatal("nothing picked")
		}
		got = append(got, id)
	}
	want := []int{10, 10, 10, 11, 11, 11, 12, 12, 12}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("picks %v, want %v", got, want)
		}
	}
}

func TestSkipsUnready(t *testing.T) {
	s := New(1)
	for _, id := range []int{1, 2, 3} {
		s.Add(id)
	}
	if id, _ := s.Pick(readySet(3)); id != 3 {
		t.Fatalf("picked %d", id)
	}
	if id, _ := s.Pick(readySet(1, 3)); id != 1 {
		t.Fatalf("after 3 comes 1 (round robin), picked %d", id)
	}
	if _, ok := s.Pick(readySet()); ok {
		t.Fatal("picked with nobody ready")
	}
}

func TestNoStarvation(t *testing.T) {
	s := New(50)
	for id := 1; id <= 4; id++ {
		s.Add(id)
	}
	seen := map[int]int{}
	for i := 0; i < 400; i++ {
		id, _ := s.Pick(readySet(1, 2, 3, 4))
		seen[id]++
	}
	for id := 1; id <= 4; id++ {
		if seen[id] == 0 {
			t.Fatalf("task %d starved: %v", id, seen)
		}
	}
}

func TestRemoveAndRename(t *testing.T) {
	s := New(5)
	s.Add(1)
	s.Add(2)
	s.Pick(readySet(1, 2))
	s.Rename(1, 7)
	if id, _ := s.Pick(readySet(7, 2)); id != 7 {
		t.Fatalf("renamed task lost its streak: picked %d", id)
	}
	s.Remove(7)
	if id, _ := s.Pick(readySet(7, 2)); id != 2 || s.Len() != 1 {
		t.Fatalf("picked %d len %d", id, s.Len())
	}
}

func TestChaosIsSeededAndFair(t *testing.T) {
	run := func(seed uint64) []int {
		s := NewChaos(8, seed)
		for id := 1; id <= 3; id++ {
			s.Add(id)
		}
		var out []int
		for i := 0; i < 3000; i++ { // priorities starve a task for up to 1000 picks
			id, _ := s.Pick(readySet(1, 2, 3))
			out = append(out, id)
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	same := func(x, y []int) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("same seed, different choices")
	}
	if same(a, c) {
		t.Fatal("different seeds, same 3000 choices")
	}
	seen := map[int]bool{}
	for _, id := range a {
		seen[id] = true
	}
	if len(seen) != 3 {
		t.Fatalf("chaos never picked some task: %v", seen)
	}
}

// A task that ran alone past its streak gets a new streak when the round
// comes back to it, so a task that just became ready does not take over
// at once; a yield (Preempted) hands over.
func TestStreakRestartsWhenAlone(t *testing.T) {
	s := New(3)
	s.Add(1)
	only1 := func(tid int) bool { return tid == 1 }
	for i := 0; i < 10; i++ {
		if id, _ := s.Pick(only1); id != 1 {
			t.Fatalf("pick %d: %d", i, id)
		}
	}
	s.Add(2)
	both := func(int) bool { return true }
	if id, _ := s.Pick(both); id != 1 {
		t.Fatalf("new task took over at once: picked %d", id)
	}
	s.Preempted()
	if id, _ := s.Pick(both); id != 2 {
		t.Fatalf("after a yield picked %d, want 2", id)
	}
}

// In chaos mode a task whose timeslice was cut hands over to another
// ready task of its priority, and a low-priority task waits while a
// high-priority one can run.
func TestChaosPreemptedHandsOverAndStarves(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		s := NewChaos(1, seed)
		s.Add(1)
		s.Add(2)
		s.low[1], s.low[2] = false, false
		s.refresh = 1 << 30
		a, _ := s.Pick(readySet(1, 2))
		s.Preempted()
		if b, _ := s.Pick(readySet(1, 2)); b == a {
			t.Fatalf("seed %d: the preempted task %d ran again at once", seed, a)
		}
		s.low[2] = true
		for i := 0; i < 20; i++ {
			if id, _ := s.Pick(readySet(1, 2)); id != 1 {
				t.Fatalf("seed %d: low-priority task ran beside a ready high one", seed)
			}
			s.Preempted()
		}
		if id, _ := s.Pick(readySet(2)); id != 2 {
			t.Fatal("a low-priority task alone did not run")
		}
	}
}

func TestChaosTimeslice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	short := 0
	for i := 0; i < 10000; i++ {
		d := ChaosTimeslice(rng, 10*time.Millisecond)
		if d < MinChaosSlice || d > ShortChaosSlice+20*time.Millisecond {
			t.Fatalf("timeslice %v out of range", d)
		}
		if d < 200*time.Microsecond {
			short++
		}
	}
	if short < 1000 || short > 2000 {
		t.Fatalf("%d of 10000 timeslices under 200µs", short)
	}
}

func TestChaosSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	some := 0
	for i := 0; i < 4000; i++ {
		k := ChaosSteps(rng)
		if k != 0 && (k < MinChaosSteps || k > MaxChaosSteps) {
			t.Fatalf("%d steps", k)
		}
		if k > 0 {
			some++
		}
	}
	if some < 2800 || some > 3200 {
		t.Fatalf("%d of 4000 draws step", some)
	}
}
