package ptrace

import (
	"os/exec"
	"testing"
)

// After the restore, os/exec's waits work again (with signal.Ignore and
// signal.Reset they failed with ECHILD: the child was reaped on its own).
func TestIgnoreSIGCHLDRestores(t *testing.T) {
	for i := 0; i < 2; i++ {
		restore := IgnoreSIGCHLD()
		restore()
		if err := exec.Command("true").Run(); err != nil {
			t.Fatalf("round %d: running true after the restore: %v", i, err)
		}
	}
}
