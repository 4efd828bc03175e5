package e2e

import (
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
