package replay_test

import (
	"errors"
	"testing"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/testrec"
	"github.com/gorr-debugger/gorr/internal/trace"
)

func TestReplayReproducesOutput(t *testing.T) {
	dir, recorded := testrec.Shell(t, "echo $$ $(date +%s%N); exit 7", false)
	if res := replayPrinting(t, dir, recorded); res.Status.ExitStatus() != 7 {
		t.Fatalf("replay exited with status %d, recorded 7", res.Status.ExitStatus())
	}
}

func TestTamperedTraceDiverges(t *testing.T) {
	dir, _ := testrec.Shell(t, "echo hello", false)
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	const target = 40
	_, err = replay.Replay(replay.Options{Reader: rd, BindCPU: -1, Tamper: func(n uint64, ev *trace.Event) {
		if n >= target && ev.Kind == trace.KindSyscallEntry && ev.Regs != nil {
			ev.Regs[ptrace.RSI]++
		}
	}})
	var div *replay.DivergenceError
	if !errors.As(err, &div) {
		t.Fatalf("want a divergence, got %v", err)
	}
	if div.Event < target || len(div.Diffs) == 0 {
		t.Fatalf("divergence %+v", div)
	}
	t.Log(div)
}
