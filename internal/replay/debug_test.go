package replay_test

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/record"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

const loopSrc = `#include <stdio.h>
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) long tick(long i) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_nsec + i;
}
int main(void) {
	long s = 0;
	for (int i = 0; i < 3; i++) s += tick(i);
	printf("%ld %d\n", s, getpid());
	return 5;
}
`

func TestSessionBreakpointsAndSteps(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "loop.c")
	os.WriteFile(src, []byte(loopSrc), 0o644)
	bin := filepath.Join(dir, "loop")
	if out, err := exec.Command("gcc", "-O1", "-g", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	var tick uint64
	for _, s := range syms {
		if s.Name == "tick" {
			tick = s.Value
		}
	}
	f.Close()
	traceDir := filepath.Join(dir, "trace")
	w, err := trace.Create(traceDir, trace.Header{})
	if err != nil {
		t.Fatal(err)
	}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	res, err := record.Record(record.Options{Argv: []string{bin}, Env: os.Environ(), Writer: w, BindCPU: -1, Stdout: devnull, Stderr: devnull})
	if err != nil {
		t.Fatal(err)
	}
	h := w.Header()
	h.ExitStatus = int(res.Status)
	w.Close(h)

	rd, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	s, stop, err := replay.StartSession(replay.Options{Reader: rd, BindCPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if stop.Kind != replay.StopStart {
		t.Fatalf("first stop %+v", stop)
	}
	if exe, _ := s.ExecFile(); exe == "" {
		t.Error("no captured executable")
	}
	if err := s.SetBreakpoint(tick); err != nil {
		t.Fatal(err)
	}
	hits := 0
	for {
		stop, err = s.Continue()
		if err != nil {
			t.Fatalf("continue: %v (stop %+v)", err, stop)
		}
		if stop.Kind != replay.StopBreakpoint {
			break
		}
		hits++
		regs, _, err := s.Regs(stop.Tid)
		if err != nil || regs[ptrace.RIP] != tick {
			t.Fatalf("at breakpoint rip 0x%x want 0x%x (%v)", regs[ptrace.RIP], tick, err)
		}
		// Memory reads hide the breakpoint.
		if b, err := s.ReadMem(tick, 1); err != nil || b[0] == 0xcc {
			t.Fatalf("breakpoint byte visible: %x %v", b, err)
		}
		// Step over it as gdb does: remove, step, re-insert.
		s.ClearBreakpoint(tick)
		st, err := s.Step(stop.Tid)
		if err != nil || st.Kind != replay.StopStep {
			t.Fatalf("step: %+v %v", st, err)
		}
		r2, _, _ := s.Regs(st.Tid)
		if r2[ptrace.RIP] == tick {
			t.Fatalf("step did not move from 0x%x", tick)
		}
		s.SetBreakpoint(tick)
	}
	if hits != 3 {
		t.Fatalf("breakpoint hit %d times, want 3 (last stop %+v)", hits, stop)
	}
	if stop.Kind != replay.StopExiting {
		t.Fatalf("want the exiting stop, got %+v", stop)
	}
	stop, err = s.Continue()
	if err != nil || stop.Kind != replay.StopExited || stop.Status.ExitStatus() != 5 {
		t.Fatalf("want exit 5, got %+v %v", stop, err)
	}
}
