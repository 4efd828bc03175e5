package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A gdb started by hand against 'gorr replay -s' gets rr's commands from
// 'gorr gdbinit': when, when-tid, when-end, checkpoint, info
// checkpoints, restart N, seek-event N.
func TestGDBInitScript(t *testing.T) {
	needGDB(t)
	traceDir, _ := recordGDBProg(t)
	script, err := exec.Command(gorrBin, "gdbinit").Output()
	if err != nil {
		t.Fatalf("gorr gdbinit: %v", err)
	}
	for _, def := range []string{`"when"`, `"when-ticks"`, `"when-tid"`, `"elapsed-time"`, `"checkpoint"`, `"restart"`, `"info checkpoints"`, `"seek-event"`} {
		if !strings.Contains(string(script), def) {
			t.Errorf("gorr gdbinit does not define %s", def)
		}
	}
	init := filepath.Join(t.TempDir(), "gorr.gdb")
	if err := writeFile(init, string(script)); err != nil {
		t.Fatal(err)
	}
	lines := startDebugServer(t, traceDir)
	launch := regexp.MustCompile(`target extended-remote (127\.0\.0\.1:\d+)' '(.+)'$`).FindStringSubmatch(lines[1])
	if launch == nil {
		t.Fatalf("launch lines: %q", lines)
	}
	out, _ := exec.CommandContext(ctx60(t), "gdb", "-batch", "-nx", "-x", init, "-ex", "target extended-remote "+launch[1],
		"-ex", "break tick", "-ex", "continue", "-ex", "when", "-ex", "when-tid", "-ex", "when-end", "-ex", "elapsed-time",
		"-ex", "checkpoint", "-ex", "continue", "-ex", "info checkpoints", "-ex", "restart 1", "-ex", "when", "-ex", "bt 1",
		"-ex", "seek-event 5", "-ex", "when", "-ex", "kill", launch[2]).CombinedOutput()
	s := string(out)
	when := regexp.MustCompile(`Completed event: (\d+)`).FindAllStringSubmatch(s, -1)
	if len(when) != 3 || when[0][1] != when[1][1] || when[2][1] != "5" {
		t.Fatalf("when before and after restart 1 should agree, and be 5 after seek-event 5:\n%s", s)
	}
	for _, want := range []string{"Current tid: ", "Event at end of recording: ", "Elapsed Time (s): ", "Checkpoint 1 at event " + when[0][1], "tick (i=0)"} {
		if !strings.Contains(s, want) {
			t.Fatalf("no %q:\n%s", want, s)
		}
	}
	if !regexp.MustCompile(`(?m)^1\t` + when[0][1] + `\ttick at .*prog.c:\d+$`).MatchString(s) {
		t.Fatalf("info checkpoints:\n%s", s)
	}
}
