package trace

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// callRecord builds a call record as the syscall buffer's stub writes it.
func callRecord(rng *rand.Rand, nr int, ret int64, addr uint64, data []byte) []byte {
	size := (CallRecordHead + len(data) + 7) &^ 7
	b := make([]byte, size)
	binary.LittleEndian.PutUint32(b, uint32(size))
	binary.LittleEndian.PutUint32(b[4:], uint32(nr))
	binary.LittleEndian.PutUint64(b[8:], uint64(ret))
	for i := 0; i < 14; i++ {
		binary.LittleEndian.PutUint64(b[16+8*i:], rng.Uint64()>>rng.IntN(64))
	}
	binary.LittleEndian.PutUint64(b[128:], addr)
	binary.LittleEndian.PutUint64(b[136:], uint64(len(data)))
	copy(b[CallRecordHead:], data)
	return b
}

// randRun returns a run of calls of tid and the events it stands for.
func randRun(rng *rand.Rand, tid int32, calls int) (*Run, []*Event) {
	var cur Regs
	for i := range cur {
		cur[i] = rng.Uint64()
	}
	run := &Run{Tid: tid, Cur: &cur, Rip: 0x70000649, Flags: 0x100, Time: rng.Uint64N(1 << 40), Calls: calls}
	var want []*Event
	for i := 0; i < calls; i++ {
		var data []byte
		if rng.IntN(3) == 0 {
			data = make([]byte, 1+rng.IntN(300))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
		}
		run.Records = append(run.Records, callRecord(rng, rng.IntN(300), rng.Int64N(1<<20)-100, rng.Uint64(), data)...)
		if rng.IntN(5) == 0 {
			run.ExitFlags = append(run.ExitFlags, RunFlag{Index: i, Bits: 1 << (1 + rng.IntN(3))})
		}
	}
	for off, i := 0, 0; off < len(run.Records); i++ {
		rec, next, err := NextCallRecord(run.Records, off)
		if err != nil {
			panic(err)
		}
		off = next
		entry, exit := &Event{Regs: new(Regs)}, &Event{Regs: new(Regs)}
		rec.EventsInto(tid, &cur, run.Rip, run.Flags, entry, exit)
		entry.Time, exit.Time = run.Time, run.Time
		for _, f := range run.ExitFlags {
			if f.Index == i {
				exit.Flags |= f.Bits
			}
		}
		want = append(want, entry, exit)
	}
	return run, want
}

// Runs written with WriteRun, among ordinary events and calls, read back
// as the two events of each call, as EventsInto makes them; a mark taken
// anywhere inside a run restores the events after it.
func TestWriteRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	var want []*Event
	for i := 0; i < 40; i++ {
		ev := randEvent(rng, i)
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
		want = append(want, ev)
		calls := 1 + rng.IntN(50)
		if i%10 == 3 {
			calls = 3000 // bigger than an events block
		}
		run, evs := randRun(rng, int32(100+i%3), calls)
		if err := w.WriteRun(run); err != nil {
			t.Fatal(err)
		}
		want = append(want, evs...)
		entry, exit := drainedCall(rng, 7)
		if err := w.WriteCall(entry, exit); err != nil {
			t.Fatal(err)
		}
		want = append(want, entry, exit)
	}
	if got := w.EventCount(); got != uint64(len(want)) {
		t.Fatalf("EventCount %d, want %d", got, len(want))
	}
	mustClose(t, w)
	got, err := readEvents(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type mark struct {
		m Mark
		n int
	}
	var marks []mark
	for n := 0; ; n++ {
		if rng.IntN(400) == 0 {
			marks = append(marks, mark{r.Mark(), n})
		}
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if len(marks) < 5 {
		t.Fatalf("only %d marks", len(marks))
	}
	for _, m := range marks {
		r2, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := r2.Seek(m.m); err != nil {
			t.Fatal(err)
		}
		for k := m.n; k < min(m.n+5000, len(want)); k++ {
			ev, err := r2.Next()
			if err != nil {
				t.Fatalf("after the mark at event %d: event %d: %v", m.n, k+1, err)
			}
			sameEvents(t, []*Event{ev}, want[k:k+1])
		}
		r2.Close()
	}
}

// A run frame whose records do not match its count of calls, or whose
// records are damaged, is a corrupt trace, not events.
func TestRunCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(run *Run)
	}{
		{"count", func(run *Run) { run.Calls++ }},
		{"size", func(run *Run) { binary.LittleEndian.PutUint32(run.Records, 12) }},
		{"truncated", func(run *Run) { run.Records = run.Records[:len(run.Records)-8] }},
		{"exit flags", func(run *Run) { run.ExitFlags = []RunFlag{{Index: run.Calls, Bits: 2}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			dir := filepath.Join(t.TempDir(), "trace")
			w := mustCreate(t, dir)
			run, _ := randRun(rng, 5, 4)
			tc.damage(run)
			if err := w.WriteRun(run); err != nil {
				t.Fatal(err)
			}
			mustClose(t, w)
			_, err := readEvents(t, dir)
			wantCorrupt(t, err, EventsFile)
		})
	}
}

// RunAhead shows the calls of a run ahead of a Reader, prefetching or
// not, and SkipCalls drops some: the next event is the one after them,
// and a mark taken after a skip restores the events that follow it.
func TestRunAheadSkip(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	var want []*Event
	for i := 0; i < 30; i++ {
		ev := randEvent(rng, i)
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
		want = append(want, ev)
		for range 1 + rng.IntN(2) { // runs back to back too
			run, evs := randRun(rng, int32(100+i%3), 1+rng.IntN(400))
			if err := w.WriteRun(run); err != nil {
				t.Fatal(err)
			}
			want = append(want, evs...)
		}
	}
	mustClose(t, w)
	for _, prefetch := range []bool{false, true} {
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if prefetch {
			r.Prefetch()
		}
		type mark struct {
			m Mark
			n int
		}
		var marks []mark
		skipped := 0
		for n := 0; ; {
			if a, ok := r.RunAhead(); ok {
				// The first call ahead is want[n] and want[n+1].
				rec, _, err := NextCallRecord(a.Records, 0)
				if err != nil {
					t.Fatal(err)
				}
				entry, exit := &Event{Regs: new(Regs)}, &Event{Regs: new(Regs)}
				rec.EventsInto(a.Tid, a.Cur, a.Rip, a.Flags, entry, exit)
				if entry.Sysno != want[n].Sysno || *entry.Regs != *want[n].Regs || exit.Result != want[n+1].Result || n+2*a.Calls > len(want) {
					t.Fatalf("prefetch %v: run ahead at event %d: %+v, want %+v", prefetch, n+1, entry, want[n])
				}
				for k := 0; k < a.Calls; k++ {
					if flagged := want[n+2*k+1].Flags != a.Flags; flagged != (k == a.Flagged) && k <= a.Flagged {
						t.Fatalf("prefetch %v: run ahead at event %d: Flagged %d, call %d flagged %v", prefetch, n+1, a.Flagged, k, flagged)
					}
				}
				if rng.IntN(2) == 0 {
					k := 1 + rng.IntN(a.Calls)
					r.SkipCalls(k)
					n += 2 * k
					skipped += k
					if rng.IntN(3) == 0 {
						marks = append(marks, mark{r.Mark(), n})
					}
					continue
				}
			}
			ev, err := r.Next()
			if err == io.EOF {
				if n != len(want) {
					t.Fatalf("prefetch %v: end after %d events, want %d", prefetch, n, len(want))
				}
				break
			} else if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, []*Event{ev}, want[n:n+1])
			n++
		}
		r.Close()
		if skipped == 0 || len(marks) < 3 {
			t.Fatalf("prefetch %v: %d calls skipped, %d marks", prefetch, skipped, len(marks))
		}
		for _, m := range marks {
			r2, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := r2.Seek(m.m); err != nil {
				t.Fatal(err)
			}
			if m.n < len(want) {
				ev, err := r2.Next()
				if err != nil {
					t.Fatal(err)
				}
				sameEvents(t, []*Event{ev}, want[m.n:m.n+1])
			}
			r2.Close()
		}
	}
}
