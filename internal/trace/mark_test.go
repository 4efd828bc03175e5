package trace

import (
	"io"
	"testing"
)

// A Mark taken anywhere can be restored on a fresh Reader, which then
// returns exactly the events that followed.
func TestMarkSeek(t *testing.T) {
	want := randEvents(7, 30000)
	dir := writeTrace(t, want)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var marks []Mark
	for i := 0; ; i++ {
		if i%997 == 0 || i == len(want) {
			marks = append(marks, r.Mark())
		}
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range marks {
		r2, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := r2.Seek(m); err != nil {
			t.Fatal(err)
		}
		var got []*Event
		for {
			ev, err := r2.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("after seek to event %d: %v", m.Events(), err)
			}
			got = append(got, ev)
		}
		r2.Close()
		sameEvents(t, got, want[m.Events():])
	}
}

// A prefetching Reader returns the same events and marks as a plain
// one: its marks restore on plain and prefetching Readers alike, also
// back to the start after reading ahead, and Close stops it mid-trace.
func TestPrefetch(t *testing.T) {
	want := randEvents(11, 5000)
	dir := writeTrace(t, want)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Prefetch()
	var marks []Mark
	var got []*Event
	for i := 0; ; i++ {
		if i%613 == 0 || i == len(want) {
			marks = append(marks, r.Mark())
		}
		ev, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	sameEvents(t, got, want)
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the end: %v, want EOF again", err)
	}
	for k, m := range marks {
		for _, prefetch := range []bool{false, true} {
			r2, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if prefetch {
				r2.Prefetch()
			}
			if k == 1 {
				// Ahead, then back to the start on the same reader.
				for range 700 {
					if _, err := r2.Next(); err != nil {
						t.Fatal(err)
					}
				}
				if err := r2.Seek(marks[0]); err != nil {
					t.Fatal(err)
				}
				if ev, err := r2.Next(); err != nil {
					t.Fatal(err)
				} else {
					sameEvents(t, []*Event{ev}, want[:1])
				}
			}
			if err := r2.Seek(m); err != nil {
				t.Fatal(err)
			}
			var rest []*Event
			for {
				ev, err := r2.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("after seek to event %d: %v", m.Events(), err)
				}
				rest = append(rest, ev)
			}
			sameEvents(t, rest, want[m.Events():])
			r2.Close()
		}
	}
	// Closed with the goroutine ahead and blocked on a full queue.
	r3, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r3.Prefetch()
	if _, err := r3.Next(); err != nil {
		t.Fatal(err)
	}
	if err := r3.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r3.Next(); err == nil {
		t.Fatal("Next after Close: no error")
	}
}
