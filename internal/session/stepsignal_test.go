package session_test

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/session"
)

// stepSignalProg is the C program of TestStepPastRealSignal (what it
// does: the file's comment); e2e's TestGDBStepiPastRealSignal reads it too.
const stepSignalProg = "testdata/stepi_sigchld.c"

// A real signal that stops a thread during a debugger's single step (the
// SIGCHLD of a child replay reaps) is passed over without ending or
// widening the step: each step moves the thread exactly one
// instruction. (The engine used to resume the thread with its run's
// mode, so the step ran on to the thread's next system call.)
func TestStepPastRealSignal(t *testing.T) {
	src, err := os.ReadFile(stepSignalProg)
	if err != nil {
		t.Fatal(err)
	}
	dir, syms := recordC(t, string(src), nil, "body", "steptab_begin", "steptab_end")
	s, _ := openSession(t, dir, session.SnapshotOptions{Off: true})
	deadline(t, time.Minute, "stepping body", func(r *report) {
		if err := s.SetBreakpoint(syms["body"]); err != nil {
			r.Errorf("break: %v", err)
			return
		}
		for call := 0; call < 3; call++ {
			st, err := s.Continue()
			if err != nil || st.Kind != session.StopBreakpoint {
				r.Errorf("call %d: continue: %+v %v", call, st, err)
				return
			}
			b, err := s.ReadMem(syms["steptab_begin"], int(syms["steptab_end"]-syms["steptab_begin"]))
			if err != nil || len(b) < 16 {
				r.Errorf("reading steptab: %v", err)
				return
			}
			var tab []uint64
			for i := 0; i+8 <= len(b); i += 8 {
				tab = append(tab, binary.LittleEndian.Uint64(b[i:]))
			}
			s.ClearBreakpoint(syms["body"])
			for i := 1; i < len(tab); i++ {
				st, err := s.Step(st.Tid)
				if err != nil || st.Kind != session.StopStep {
					r.Errorf("call %d: step %d: %+v %v", call, i, st, err)
					return
				}
				regs, _, _ := s.Regs(st.Tid)
				if regs[ptrace.RIP] != tab[i] {
					r.Errorf("call %d: step %d from 0x%x went to 0x%x, want 0x%x (event %d)", call, i, tab[i-1], regs[ptrace.RIP], tab[i], s.Position().Event)
					return
				}
			}
			s.SetBreakpoint(syms["body"])
		}
	})
}
