package sched

import "testing"

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
		for i := 0; i < 200; i++ {
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
		t.Fatal("different seeds, same 200 choices")
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
