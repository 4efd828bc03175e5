package session_test

import (
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/session"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// A breakpoint in a shared library (mapped by ld.so after debugging
// starts) is planted in runs from the start too: reverse-continue finds
// its last hit, with snapshots or without (it went to the start of the
// recording without them: the breakpoint was dropped while libc was not
// yet mapped, gdb's reverse-finish from a SIGABRT stop landed in _start).
func TestLibraryBreakpointFromStart(t *testing.T) {
	dir, _ := recordC(t, longSrc, []string{"40"}, "mark")
	// The exit of a late getppid: its thread then stands in libc, right
	// after the syscall instruction.
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var exits []uint64
	for n := uint64(1); ; n++ {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		if ev.Kind == trace.KindSyscallExit && ev.Sysno == 110 {
			exits = append(exits, n)
		}
	}
	rd.Close()
	if len(exits) < 10 {
		t.Fatalf("%d getppid exits recorded", len(exits))
	}
	at := exits[len(exits)-3]
	for _, so := range []session.SnapshotOptions{{Off: true}, {Interval: time.Hour}, fastSnaps} {
		s, _ := openSession(t, dir, so)
		var stop session.DebugStop
		var addr uint64
		deadline(t, time.Minute, "goto", func(r *report) {
			if _, err := s.Goto(at); err != nil {
				r.Errorf("goto %d: %v", at, err)
				return
			}
			regs, _, err := s.Regs(s.Position().Tid)
			if err != nil {
				r.Errorf("regs: %v", err)
				return
			}
			addr = regs[ptrace.RIP]
			if err := s.SetBreakpoint(addr); err != nil {
				r.Errorf("break at 0x%x: %v", addr, err)
				return
			}
			stop, err = s.ReverseContinue()
			if err != nil {
				r.Errorf("reverse-continue: %v", err)
			}
		})
		if t.Failed() {
			return
		}
		regs, _, _ := s.Regs(stop.Tid)
		if stop.Kind != session.StopBreakpoint || regs[ptrace.RIP] != addr || s.Position().Event >= at {
			t.Fatalf("snapshots %+v: reverse-continue from event %d to the breakpoint at 0x%x in libc: stop %+v at 0x%x, event %d",
				so, at, addr, stop, regs[ptrace.RIP], s.Position().Event)
		}
		t.Logf("snapshots %+v: back at event %d", so, s.Position().Event)
	}
}
