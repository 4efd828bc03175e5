package replay_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/record"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// recordShell records `sh -c script` into a new trace and returns its
// directory and what it printed.
func recordShell(t *testing.T, script string) (string, []byte) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	w, err := trace.Create(dir, trace.Header{Argv: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	res, err := record.Record(record.Options{Argv: []string{"sh", "-c", script}, Env: os.Environ(), Writer: w, BindCPU: -1, Stdout: out, Stderr: out})
	if err != nil {
		t.Fatal(err)
	}
	h := w.Header()
	h.ExitStatus = int(res.Status)
	if err := w.Close(h); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out.Name())
	return dir, b
}

func TestReplayReproducesOutput(t *testing.T) {
	dir, recorded := recordShell(t, "echo $$ $(date +%s%N); exit 7")
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out bytes.Buffer
	res, err := replay.Replay(replay.Options{Reader: rd, Stdout: &out, Stderr: &out, BindCPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), recorded) || res.Status.ExitStatus() != 7 {
		t.Fatalf("replay printed %q status %d, recorded %q status 7", out.Bytes(), res.Status.ExitStatus(), recorded)
	}
}

func TestTamperedTraceDiverges(t *testing.T) {
	dir, _ := recordShell(t, "echo hello")
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
