package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// When replay cannot find a preemption point because the replayed memory
// differs from the recorded page of the point, the divergence names the
// arrival that matched the registers and the word that differed there
// (the pad notes the last compare such an arrival failed).
func TestPointDivergenceNamesWord(t *testing.T) {
	bin := cprog(t, "itimer", testdataC(t, "preempt_itimer_compute"))
	traceDir := filepath.Join(t.TempDir(), "trace")
	if rec, err := run(ctx60(t), t.TempDir(), "", gorrBin, "record", "-o", traceDir, bin); err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	// The first point with a pad site (its length in Flags' low byte)
	// and a recorded page.
	r, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var n, word uint64
	for i := uint64(1); n == 0; i++ {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("no preemption point with a pad site and a recorded page")
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != trace.KindSched || ev.Flags&0xff < 5 {
			continue
		}
		for _, m := range ev.Mem {
			if len(m.Data) == 4096 {
				n, word = i, m.Addr+4088 // the word the hook changes
				break
			}
		}
	}
	stderr := replayTamperedWith(t, traceDir, "GORR_TEST_TAMPER_PAGE", n)
	for _, want := range []string{
		fmt.Sprintf("diverged at event %d", n),
		"did not reach its preemption point",
		"matched the recorded general registers and memory words; the last of them differed in recorded memory",
		fmt.Sprintf("the word at 0x%x was", word),
	} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("want %q in:\n%s", want, stderr)
		}
	}
}

// A thread whose loop body runs some 700 straight-line instructions
// (preempt_long_body) is not single-stepped round it: after a few dozen
// steps the recorder runs it at native speed to a place it executed,
// and the point taken there replays exactly (the stats line counts the
// runs, and how many arrived at a site).
func TestPointRunToSites(t *testing.T) {
	bin := cprog(t, "longbody", testdataC(t, "preempt_long_body"))
	traceDir := filepath.Join(t.TempDir(), "trace")
	ctx := ctx60(t)
	rec, err := run(ctx, t.TempDir(), "", gorrBin, "record", "--stats", "--timeslice=2ms", "-o", traceDir, bin, "3")
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	var points, runs, hits int
	for _, line := range strings.Split(string(rec.Stderr), "\n") {
		if strings.Contains(line, "preemption points (") {
			if _, err := fmt.Sscanf(line, "gorr: %d preemption points (%d searches ran to the sites they had seen, %d arrived)", &points, &runs, &hits); err != nil {
				t.Fatalf("stats line %q: %v", line, err)
			}
		}
	}
	if runs == 0 || hits == 0 || hits > runs || hits > points {
		t.Fatalf("%d points, %d runs to sites, %d arrived: want some that arrived\n%s", points, runs, hits, rec.Stderr)
	}
	rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
	if err != nil || rep.Code != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("replay: %v\n%v\nrecorded stdout:\n%s", err, rep, rec.Stdout)
	}
}
