package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The kernel traps rdtsc and cpuid only in processes running code gorr
// did not scan and patch: a program of ELF code only records untrapped
// (its rdtsc sites are int3s), a JIT-style one traps from the mprotect
// or mmap that makes its code executable, in all its threads and its
// forked child, and with --always-trap every process traps from exec.
// Each trace replays the recorded output (the rdtsc values differ from
// run to run).
func TestTrapsWhereNeeded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		prog, flag string
		trapped    bool // the exec event says trapped
		trapsAfter string
	}{
		{"rdtsc_rdtscp", "", false, ""},
		{"jit_rdtsc_threads", "", false, "mprotect"},
		{"jit_rdtsc_threads", "--always-trap", true, ""},
	} {
		t.Run(c.prog+c.flag, func(t *testing.T) {
			bin := build(t, Program{Name: c.prog, Lang: "c"})
			traceDir := filepath.Join(t.TempDir(), "trace")
			ctx := ctx60(t)
			args := []string{"record", "-o", traceDir}
			if c.flag != "" {
				args = append(args, c.flag)
			}
			rec, err := run(ctx, t.TempDir(), "", gorrBin, append(args, bin)...)
			if err != nil || rec.Code != 0 {
				t.Fatalf("record: %v\n%v", err, rec)
			}
			out, err := exec.Command(gorrBin, "dump", "--json", traceDir).Output()
			if err != nil {
				t.Fatal(err)
			}
			var execs, after []string
			for _, line := range strings.Split(string(out), "\n") {
				switch {
				case strings.Contains(line, `"EXEC"`):
					execs = append(execs, line)
				case strings.Contains(line, `"traps_after":true`):
					after = append(after, line)
				}
			}
			want := `"trapped":false`
			if c.trapped {
				want = `"trapped":true`
			}
			if len(execs) != 1 || !strings.Contains(execs[0], want) {
				t.Errorf("want one exec event with %s, got %q", want, execs)
			}
			switch {
			case c.trapsAfter == "" && len(after) > 0:
				t.Errorf("want no call that turns trapping on, got %q", after)
			case c.trapsAfter != "" && (len(after) != 1 || !strings.Contains(after[0], `"syscall":"`+c.trapsAfter+`"`)):
				t.Errorf("want trapping on from one %s, got %q", c.trapsAfter, after)
			}
			rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
			if err != nil {
				t.Fatal(err)
			}
			if c.prog == "jit_rdtsc_threads" && !machineHas(t, "rdtsc-trap") {
				// The trap is set as everywhere, but does nothing here:
				// gorr must say so, and replay must not differ silently.
				if !bytes.Contains(rec.Stderr, []byte("this machine does not trap rdtsc")) {
					t.Fatalf("want a warning that rdtsc is not trapped\n%v", rec)
				}
				if rep.Code != 0 && bytes.Contains(rep.Stderr, []byte("replay diverged")) {
					return
				}
			}
			compare(t, rec, rep)
		})
	}
}
