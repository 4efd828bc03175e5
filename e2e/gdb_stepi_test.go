package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stepiSigchldProg is the C program of TestGDBStepiPastRealSignal (what
// it does: the file's comment), shared with internal/session's
// TestStepPastRealSignal, which steps it through the session's API.
var stepiSigchldProg = filepath.Join("..", "internal", "session", "testdata", "stepi_sigchld.c")

// stepiBodyLen is the number of stepi from body's first instruction to
// its ret.
const stepiBodyLen = 26

// Each gdb stepi through body moves exactly one instruction, to the one
// x/2i showed after it, although a real SIGCHLD stops the parent during
// some of the steps (replay used to resume it with the run's mode then,
// and the stepi ran on to the next system call). A stepi over a system
// call lands after it (fork's included).
func TestGDBStepiPastRealSignal(t *testing.T) {
	needGDB(t)
	src, err := os.ReadFile(stepiSigchldProg)
	if err != nil {
		t.Fatal(err)
	}
	traceDir, rec := recordC(t, "stepi_sigchld", string(src))
	cmds := []string{"break *body"}
	for call := 0; call < 3; call++ {
		cmds = append(cmds, "continue")
		for i := 0; i < stepiBodyLen; i++ {
			cmds = append(cmds, fmt.Sprintf("echo STEP %d %d\\n", call, i), "x/2i $pc", "stepi", "p/x $pc")
		}
	}
	cmds = append(cmds, "continue")
	out := gdbBatch(t, traceDir, cmds...)
	if want := strings.TrimSpace(string(rec.Stdout)); !strings.Contains(out, want) || strings.Contains(out, "diverged") {
		t.Fatalf("want the recorded output %q at the end:\n%s", want, out)
	}
	insn := regexp.MustCompile(`^(?:=> )?\s*0x([0-9a-f]+)(?: <[^>]*>)?:\s+(.*)$`)
	pc := regexp.MustCompile(`^\$\d+ = 0x([0-9a-f]+)$`)
	steps := strings.Split(out, "STEP ")[1:]
	if len(steps) != 3*stepiBodyLen {
		t.Fatalf("%d steps in gdb's output, want %d:\n%s", len(steps), 3*stepiBodyLen, out)
	}
	for _, s := range steps {
		lines := strings.Split(s, "\n")
		var addrs, texts, got []string
		for _, l := range lines[1:] {
			if m := insn.FindStringSubmatch(strings.TrimRight(l, " ")); m != nil {
				addrs, texts = append(addrs, m[1]), append(texts, m[2])
			}
			if m := pc.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				got = append(got, m[1])
			}
		}
		if len(addrs) != 2 || len(got) != 1 {
			t.Fatalf("step %s: cannot read gdb's x/2i and $pc:\n%s", lines[0], s)
		}
		if got[0] != addrs[1] && !(strings.HasPrefix(texts[0], "j") && strings.Contains(texts[0], "0x"+got[0])) {
			t.Fatalf("stepi %s from 0x%s (%s) went to 0x%s, want 0x%s:\n%s", lines[0], addrs[0], texts[0], got[0], addrs[1], out)
		}
	}
}
