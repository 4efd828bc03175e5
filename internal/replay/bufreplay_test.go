package replay_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/testrec"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// bufStretchEntry returns the number of a buffered call's entry that
// follows another buffered call of the same thread and is followed by
// one (inside a stretch the stub replays without stops), 0 if none.
func bufStretchEntry(t *testing.T, dir string) uint64 {
	t.Helper()
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var evs []*trace.Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	buf := func(i int) bool {
		return i >= 0 && i < len(evs) && evs[i].Kind != trace.KindNewTask && evs[i].Flags&syscallbuf.EventFlag != 0
	}
	for i := range evs {
		if evs[i].Kind == trace.KindSyscallEntry && buf(i) && buf(i-1) && buf(i+2) && evs[i-1].Tid == evs[i].Tid && evs[i+2].Tid == evs[i].Tid {
			return uint64(i + 1)
		}
	}
	return 0
}

// A recording with the buffer replays (stretches of buffered calls
// without stops), and a call inside a stretch made with other registers
// than recorded is reported at its own event, with the register.
func TestBufferedStretchDivergence(t *testing.T) {
	dir, recorded := testrec.Shell(t, "cat /etc/passwd /etc/hostname /etc/passwd > /dev/null; echo $$ $(date +%s%N)", true)
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = replay.Replay(replay.Options{Reader: rd, Stdout: &out, Stderr: &out, BindCPU: -1})
	rd.Close()
	if err != nil || !bytes.Equal(out.Bytes(), recorded) {
		t.Fatalf("replay: %v, printed %q, recorded %q", err, out.Bytes(), recorded)
	}
	target := bufStretchEntry(t, dir)
	if target == 0 {
		t.Skip("no stretch of buffered calls in the recording (no patched libc?)")
	}
	rd, err = trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = replay.Replay(replay.Options{Reader: rd, BindCPU: -1, Tamper: func(n uint64, ev *trace.Event) {
		if n == target {
			ev.Regs[ptrace.RDX] ^= 0x100
		}
	}})
	var div *replay.DivergenceError
	if !errors.As(err, &div) {
		t.Fatalf("want a divergence at event %d, got %v", target, err)
	}
	if div.Event != target || !strings.Contains(div.What, "replayed from the syscall buffer") || len(div.Diffs) == 0 || !strings.HasPrefix(div.Diffs[0], "rdx:") {
		t.Fatalf("want a divergence in rdx at event %d replayed from the buffer, got %v", target, div)
	}
	t.Log(div)
}
