package session_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/session"
	"github.com/gorr-debugger/gorr/internal/testrec"
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
	s, tick, stop := loopSession(t)
	if stop.Kind != session.StopStart {
		t.Fatalf("first stop %+v", stop)
	}
	if exe, _ := s.ExecFile(); exe == "" {
		t.Error("no captured executable")
	}
	if err := s.SetBreakpoint(tick); err != nil {
		t.Fatal(err)
	}
	hits := 0
	var err error
	for {
		stop, err = s.Continue()
		if err != nil {
			t.Fatalf("continue: %v (stop %+v)", err, stop)
		}
		if stop.Kind != session.StopBreakpoint {
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
		if err != nil || st.Kind != session.StopStep {
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
	if stop.Kind != session.StopExiting {
		t.Fatalf("want the exiting stop, got %+v", stop)
	}
	stop, err = s.Continue()
	if err != nil || stop.Kind != session.StopExited || stop.Status.ExitStatus() != 5 {
		t.Fatalf("want exit 5, got %+v %v", stop, err)
	}
}

func TestSessionReverse(t *testing.T) {
	s, tick, _ := loopSession(t)
	s.SetBreakpoint(tick)
	rdi := func() uint64 {
		r, _, _ := s.Regs(s.Position().Tid)
		return r[ptrace.RDI]
	}
	var hitRDI []uint64
	for i := 0; i < 3; i++ {
		st, err := s.Continue()
		if err != nil || st.Kind != session.StopBreakpoint {
			t.Fatalf("continue %d: %+v %v", i, st, err)
		}
		hitRDI = append(hitRDI, rdi())
		s.ClearBreakpoint(tick)
		s.Step(st.Tid)
		s.SetBreakpoint(tick)
	}
	// Back from just after the third hit: a reverse step lands on the hit.
	st, err := s.ReverseStep()
	if err != nil || st.Kind != session.StopStep {
		t.Fatalf("reverse step: %+v %v", st, err)
	}
	if r, _, _ := s.Regs(st.Tid); r[ptrace.RIP] != tick || r[ptrace.RDI] != hitRDI[2] {
		t.Fatalf("reverse step went to rip 0x%x rdi %d, want 0x%x rdi %d", r[ptrace.RIP], r[ptrace.RDI], tick, hitRDI[2])
	}
	for want := 1; want >= 0; want-- {
		st, err = s.ReverseContinue()
		if err != nil || st.Kind != session.StopBreakpoint {
			t.Fatalf("reverse continue: %+v %v", st, err)
		}
		if got := rdi(); got != hitRDI[want] {
			t.Fatalf("reverse continue reached the hit with i=%d, want %d", got, hitRDI[want])
		}
	}
	st, err = s.ReverseContinue()
	if err != nil || st.Kind != session.StopStart {
		t.Fatalf("reverse continue past the first hit: %+v %v", st, err)
	}
	// Forward again from the start: the first hit.
	st, err = s.Continue()
	if err != nil || st.Kind != session.StopBreakpoint || rdi() != hitRDI[0] {
		t.Fatalf("continue after reaching the start: %+v %v", st, err)
	}
	// A reverse step from a breakpoint hit goes to the instruction before
	// it (the call in main), counting the thread's steps from its last event.
	st, err = s.ReverseStep()
	if err != nil || st.Kind != session.StopStep {
		t.Fatalf("reverse step from a hit: %+v %v", st, err)
	}
	r, _, _ := s.Regs(st.Tid)
	if r[ptrace.RIP] == tick {
		t.Fatalf("reverse step from the hit did not move")
	}
	st, err = s.Step(st.Tid)
	if r2, _, _ := s.Regs(st.Tid); err != nil || r2[ptrace.RIP] != tick {
		t.Fatalf("stepping forward again did not return to tick: rip 0x%x %v", r2[ptrace.RIP], err)
	}
}

func TestSessionReverseStepAcrossSyscall(t *testing.T) {
	s, tick, _ := loopSession(t)
	s.SetBreakpoint(tick)
	st, err := s.Continue()
	if err != nil {
		t.Fatal(err)
	}
	s.ClearBreakpoint(tick)
	// Step until a step crosses the clock_gettime system call, then two more.
	var rips []uint64
	crossed := -1
	for i := 0; i < 5000 && (crossed < 0 || i < crossed+3); i++ {
		before := s.Position().Event
		st, err = s.Step(st.Tid)
		if err != nil {
			t.Fatal(err)
		}
		r, _, _ := s.Regs(st.Tid)
		rips = append(rips, r[ptrace.RIP])
		if crossed < 0 && s.Position().Event != before {
			crossed = i
		}
	}
	if crossed < 0 {
		t.Fatal("no step crossed a system call")
	}
	// Back, one instruction at a time, across the system call.
	for i := len(rips) - 2; i >= crossed-1 && i >= 0; i-- {
		st, err = s.ReverseStep()
		if err != nil {
			t.Fatalf("reverse step to step %d: %v (pos %+v)", i, err, s.Position())
		}
		r, _, _ := s.Regs(st.Tid)
		if r[ptrace.RIP] != rips[i] {
			t.Fatalf("reverse step to step %d: rip 0x%x, want 0x%x", i, r[ptrace.RIP], rips[i])
		}
	}
}

// loopSession records loopSrc (built without PIE, so tick's address is
// known) and starts a restartable debug session on it.
func loopSession(t *testing.T) (*session.Session, uint64, session.DebugStop) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "loop.c")
	os.WriteFile(src, []byte(loopSrc), 0o644)
	bin := filepath.Join(dir, "loop")
	if out, err := exec.Command("gcc", "-O1", "-g", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	tick := testrec.Symbols(t, bin, "tick")["tick"]
	traceDir := filepath.Join(dir, "trace")
	testrec.Record(t, traceDir, []string{bin}, testrec.Options{})
	rd, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	s, first, err := session.StartSession(session.Options{Options: replay.Options{Reader: rd, BindCPU: -1}, Reopen: func() (*trace.Reader, error) { return trace.Open(traceDir) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, tick, first
}
