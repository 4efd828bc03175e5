package replay_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/testrec"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// advanceToEnd advances e stop by stop to the end of the trace, calling
// onEvent at every boundary.
func advanceToEnd(e *replay.Engine, c replay.Constraints, onEvent func(ev *trace.Event)) (*replay.Result, error) {
	for {
		st, err := e.Advance(c)
		if err != nil {
			return nil, err
		}
		switch st.Kind {
		case replay.StopEnd:
			return st.Result, nil
		case replay.StopBoundary:
			if onEvent != nil {
				onEvent(st.Ev)
			}
		}
	}
}

// TestDriverBoundaries advances the engine with constraints that plan
// nothing but stops: it stops at every event boundary, in order, and the
// replay is the recording's; then it freezes the engine at a boundary
// and thaws it into a fresh engine, which replays the rest of the trace
// (the output after that boundary and the exit status).
func TestDriverBoundaries(t *testing.T) {
	dir, recorded := testrec.Shell(t, "echo $$ $RANDOM; echo $$; exit 7", false)
	runtime.LockOSThread() // the engine's, the frozen copies' and the thawed engine's tracer
	defer runtime.UnlockOSThread()
	stub, err := tracee.WriteStub(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out bytes.Buffer
	var e *replay.Engine
	var seen uint64
	var frozen *replay.Frozen
	var outAtFreeze int
	var refusals int
	onEvent := func(ev *trace.Event) {
		seen++
		if e.Event() != seen || e.Boundary() != ev {
			t.Errorf("boundary %d: engine at event %d, boundary %v", seen, e.Event(), e.Boundary() != nil)
		}
		if frozen == nil && out.Len() > 0 { // after the first line
			f, err := e.Freeze(ev, nil, nil)
			if err != nil {
				refusals++
				return
			}
			frozen, outAtFreeze = f, out.Len()
		}
	}
	e = replay.NewEngine(replay.Options{Reader: rd, Stdout: &out, Stderr: &out, BindCPU: -1}, stub, 0)
	res, err := advanceToEnd(e, replay.Constraints{Boundaries: true, Marks: true}, onEvent)
	e.KillAll()
	if err != nil {
		t.Fatal(err)
	}
	if seen != res.Events || !bytes.Equal(out.Bytes(), recorded) || res.Status.ExitStatus() != 7 {
		t.Fatalf("driver saw %d of %d events; replay printed %q status %d, recorded %q status 7",
			seen, res.Events, out.Bytes(), res.Status.ExitStatus(), recorded)
	}
	if frozen == nil {
		t.Fatalf("the engine could not be frozen at any boundary (%d refusals)", refusals)
	}
	defer frozen.Kill()
	if outAtFreeze == 0 || outAtFreeze >= len(recorded) {
		t.Fatalf("frozen with %d of %d bytes of output written: not between the two lines", outAtFreeze, len(recorded))
	}
	t.Logf("frozen at event %d of %d (%d refusals before)", frozen.Event(), res.Events, refusals)

	rd2, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd2.Close()
	var rest bytes.Buffer
	e2 := replay.NewEngine(replay.Options{Reader: rd2, Stdout: &rest, Stderr: &rest, BindCPU: -1}, stub, frozen.Event())
	if err := e2.Thaw(frozen, rd2, nil); err != nil {
		t.Fatal(err)
	}
	// Asked for one boundary only, the engine stops there and nowhere
	// else.
	at := frozen.Event() + 2
	var stops []uint64
	res2, err := advanceToEnd(e2, replay.Constraints{Event: at}, func(ev *trace.Event) { stops = append(stops, e2.Event()) })
	e2.KillAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(stops) != 1 || stops[0] != at {
		t.Errorf("advanced to the boundary after event %d, the thawed engine stopped at boundaries %v", at, stops)
	}
	if !bytes.Equal(rest.Bytes(), recorded[outAtFreeze:]) || res2.Status.ExitStatus() != 7 || res2.Events != res.Events {
		t.Fatalf("thawed replay printed %q status %d after %d events, want %q status 7 after %d",
			rest.Bytes(), res2.Status.ExitStatus(), res2.Events, recorded[outAtFreeze:], res.Events)
	}
}
