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
