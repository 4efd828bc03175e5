package session_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/session"
	"github.com/gorr-debugger/gorr/internal/testrec"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// longSrc makes two events per iteration (getppid's entry and exit) and
// calls mark(i) before each.
const longSrc = `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
long total;
long hist[64];
__attribute__((noinline)) void mark(long i) {
	total += i * 3;
	hist[i % 64] = total;
	asm volatile("" ::: "memory");
}
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 10000;
	for (long i = 0; i < n; i++) {
		mark(i);
		getppid();
	}
	printf("%ld\n", total);
	return 0;
}
`

// recordC builds src (without PIE) and records it with args; it returns
// the trace directory and the address of each symbol asked for.
func recordC(t testing.TB, src string, args []string, syms ...string) (string, map[string]uint64) {
	t.Helper()
	dir := t.TempDir()
	cfile := filepath.Join(dir, "prog.c")
	os.WriteFile(cfile, []byte(src), 0o644)
	bin := filepath.Join(dir, "prog")
	if out, err := exec.Command("gcc", "-O1", "-g", "-no-pie", "-pthread", "-o", bin, cfile).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	addrs := testrec.Symbols(t, bin, syms...)
	traceDir := filepath.Join(dir, "trace")
	testrec.Record(t, traceDir, append([]string{bin}, args...), testrec.Options{})
	return traceDir, addrs
}

func openSession(t testing.TB, traceDir string, so session.SnapshotOptions) (*session.Session, session.DebugStop) {
	t.Helper()
	rd, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !abandoned(t) {
			rd.Close()
		}
	})
	s, first, err := session.StartSession(session.Options{Options: replay.Options{Reader: rd, BindCPU: -1}, Snapshots: so,
		Reopen: func() (*trace.Reader, error) { return trace.Open(traceDir) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !abandoned(t) {
			s.Close()
		}
	})
	return s, first
}

// state is what a test compares at a stop: position, registers of the
// stopped thread, and the program's globals.
type state struct {
	pos  session.Pos
	regs trace.Regs
	mem  []byte
}

func stateOf(t testing.TB, s *session.Session, st session.DebugStop, globals uint64, n int) state {
	t.Helper()
	r, _, err := s.Regs(st.Tid)
	if err != nil {
		t.Fatalf("regs of %d at %+v: %v", st.Tid, st, err)
	}
	m, err := s.ReadMem(globals, n)
	if err != nil {
		t.Fatalf("read globals: %v", err)
	}
	return state{pos: s.Position(), regs: r, mem: m}
}

func sameState(t testing.TB, what string, got, want state) {
	t.Helper()
	if got.regs != want.regs {
		t.Fatalf("%s: registers differ:\n got rip 0x%x rdi %d rsp 0x%x\nwant rip 0x%x rdi %d rsp 0x%x", what,
			got.regs[ptrace.RIP], got.regs[ptrace.RDI], got.regs[ptrace.RSP], want.regs[ptrace.RIP], want.regs[ptrace.RDI], want.regs[ptrace.RSP])
	}
	if string(got.mem) != string(want.mem) {
		t.Fatalf("%s: memory differs", what)
	}
	if got.pos.Event != want.pos.Event || got.pos.Steps != want.pos.Steps || got.pos.Addr != want.pos.Addr {
		t.Fatalf("%s: position %+v, want %+v", what, got.pos, want.pos)
	}
}

var fastSnaps = session.SnapshotOptions{Interval: 5 * time.Millisecond, Max: 16}

// Positions reached from a snapshot are those reached from the start:
// same registers, same memory.
func TestSnapshotRestoreSameState(t *testing.T) {
	traceDir, syms := recordC(t, longSrc, []string{"4000"}, "mark", "total")
	ref, _ := openSession(t, traceDir, session.SnapshotOptions{Off: true})
	s, _ := openSession(t, traceDir, fastSnaps)
	var end session.DebugStop
	deadline(t, time.Minute, "continue to the end", func(r *report) {
		var err error
		if end, err = s.Continue(); err != nil || end.Kind != session.StopExiting {
			r.Errorf("continue: %+v %v", end, err)
		}
	})
	st := s.SnapshotStats()
	if st.Taken == 0 || st.Live == 0 {
		t.Fatalf("no snapshot taken on the way: %+v", st)
	}
	if st.Live > fastSnaps.Max {
		t.Fatalf("%d snapshots kept, max %d", st.Live, fastSnaps.Max)
	}
	last := end.Event
	for _, e := range []uint64{last / 5, last / 2, last*3/4 + 1, last - 3} {
		var a, b session.DebugStop
		var errA, errB error
		deadline(t, time.Minute, fmt.Sprintf("goto %d", e), func(r *report) {
			a, errA = ref.Goto(e)
			b, errB = s.Goto(e)
		})
		if errA != nil || errB != nil {
			t.Fatalf("goto %d: %v / %v", e, errA, errB)
		}
		from := s.SnapshotStats().LastRunFrom
		if from == 0 || from > e {
			t.Fatalf("goto %d ran from event %d, want a snapshot before it", e, from)
		}
		sameState(t, fmt.Sprintf("goto %d (from snapshot at %d)", e, from), stateOf(t, s, b, syms["total"], 8+64*8), stateOf(t, ref, a, syms["total"], 8+64*8))
	}
}

// Going backwards near the end of a long recording replays only from a
// nearby snapshot, and finds what replaying from the start finds.
func TestSnapshotReverseNearEnd(t *testing.T) {
	traceDir, syms := recordC(t, longSrc, []string{"6000"}, "mark", "total")
	ref, _ := openSession(t, traceDir, session.SnapshotOptions{Off: true})
	s, _ := openSession(t, traceDir, fastSnaps)
	for _, x := range []*session.Session{ref, s} {
		deadline(t, time.Minute, "continue to the end", func(r *report) {
			if st, err := x.Continue(); err != nil || st.Kind != session.StopExiting {
				r.Errorf("continue: %+v %v", st, err)
			}
		})
		if err := x.SetBreakpoint(syms["mark"]); err != nil {
			t.Fatal(err)
		}
	}
	pos := s.Position().Event
	type op struct {
		name string
		do   func(*session.Session) (session.DebugStop, error)
	}
	ops := []op{
		{"reverse-continue", (*session.Session).ReverseContinue},
		{"reverse-step", (*session.Session).ReverseStep},
		{"reverse-step", (*session.Session).ReverseStep},
		{"reverse-continue", (*session.Session).ReverseContinue},
		{"reverse-continue", (*session.Session).ReverseContinue},
		{"step", func(x *session.Session) (session.DebugStop, error) { return x.Step(x.Position().Tid) }},
		{"reverse-step", (*session.Session).ReverseStep},
	}
	for i, o := range ops {
		var a, b session.DebugStop
		var errA, errB error
		before := s.SnapshotStats().EventsReplayed
		deadline(t, 2*time.Minute, o.name, func(r *report) {
			a, errA = o.do(ref)
			b, errB = o.do(s)
		})
		if errA != nil || errB != nil {
			t.Fatalf("%d %s: %v / %v", i, o.name, errA, errB)
		}
		if a.Kind != b.Kind {
			t.Fatalf("%d %s: stop %v from snapshots, %v from the start", i, o.name, b.Kind, a.Kind)
		}
		cost := s.SnapshotStats().EventsReplayed - before
		t.Logf("%s at event %d: %d events replayed with snapshots (position %d)", o.name, s.Position().Event, cost, pos)
		if o.name != "step" && cost > pos/4 {
			t.Errorf("%s replayed %d events at position %d: snapshots not used", o.name, cost, pos)
		}
		sameState(t, fmt.Sprintf("%d %s", i, o.name), stateOf(t, s, b, syms["total"], 8+64*8), stateOf(t, ref, a, syms["total"], 8+64*8))
	}
}

// A user checkpoint keeps a snapshot; restarting at it later replays
// only from there.
func TestSnapshotCheckpointRestart(t *testing.T) {
	traceDir, syms := recordC(t, longSrc, []string{"3000"}, "mark", "total")
	s, _ := openSession(t, traceDir, session.SnapshotOptions{Interval: time.Hour})
	var mid session.DebugStop
	deadline(t, time.Minute, "goto", func(r *report) {
		var err error
		if mid, err = s.Goto(3000); err != nil {
			r.Errorf("goto: %v", err)
		}
	})
	want := stateOf(t, s, mid, syms["total"], 8+64*8)
	n, _ := s.Checkpoint()
	if st := s.SnapshotStats(); st.Live != 1 {
		t.Fatalf("checkpoint at a boundary kept no snapshot: %+v", st)
	}
	deadline(t, time.Minute, "continue", func(r *report) { s.Continue() })
	before := s.SnapshotStats().EventsReplayed
	var got session.DebugStop
	deadline(t, time.Minute, "restart", func(r *report) {
		var err error
		if got, err = s.RestartCheckpoint(n); err != nil {
			r.Errorf("restart: %v", err)
		}
	})
	if cost := s.SnapshotStats().EventsReplayed - before; cost > 10 {
		t.Errorf("restart at checkpoint replayed %d events", cost)
	}
	sameState(t, "restart", stateOf(t, s, got, syms["total"], 8+64*8), want)
	s.DeleteCheckpoint(n)
	if st := s.SnapshotStats(); st.Live != 1 {
		// Unpinned, it is an ordinary snapshot now (max 32).
		t.Fatalf("after delete: %+v", st)
	}
}
