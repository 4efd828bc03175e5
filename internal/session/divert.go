package session

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/diversion"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// A diversion (rr's name) runs code the debugger asks for, such as gdb's
// `print f(x)` or Delve's `call`, against a live copy of the replayed
// process (internal/diversion); the session starts it at a stop, sends
// the debugger's reads, writes, breakpoints and resumes to it while it
// lasts, and kills it when the diversion ends.

// ErrNoDiversion is returned by writes outside a diversion.
var ErrNoDiversion = errors.New("a recording cannot be changed outside a diversion")

// Diverted tells whether a diversion is in progress, and for which
// (recorded) thread.
func (s *Session) Diverted() (int32, bool) {
	if s.div == nil {
		return 0, false
	}
	return s.div.Tid(), true
}

// StartDiversion forks the process of thread tid (a recorded tid) at the
// current stop into a live copy that later requests run against: reads,
// writes, breakpoints, continue and step. The replay does not move.
func (s *Session) StartDiversion(tid int32) error {
	if s.div != nil {
		return nil
	}
	err := errors.New("replay session is closed")
	_ = s.do(func() {
		var d *diversion.Copy
		d, err = s.cur.d.divert(tid, s.stop.Pid)
		if err == nil {
			s.div = d
		}
	})
	return err
}

// EndDiversion kills the copy; the session is back at its replay stop.
func (s *Session) EndDiversion() {
	d := s.div
	if d == nil {
		return
	}
	s.div = nil
	if s.cur == nil {
		return
	}
	_ = s.do(func() { d.Kill() })
}

// DiversionRestored tells whether the diverted thread's general registers
// are again those it had when the diversion started (the debugger put
// them back after its call).
func (s *Session) DiversionRestored() bool {
	d := s.div
	if d == nil {
		return true
	}
	same := false
	_ = s.do(func() { same = d.Restored() })
	return same
}

// divert makes the live copy of task tid's process (rpid: its recorded
// pid).
func (d *driver) divert(tid, rpid int32) (*diversion.Copy, error) {
	t := d.e.Task(tid)
	if t == nil || t.Gone() {
		return nil, fmt.Errorf("no thread %d to divert", tid)
	}
	info, err := t.Thread().GetSyscallInfo()
	if err != nil {
		return nil, err
	}
	// A call that replay runs for real may be pending at its entry stop:
	// it is skipped for the injection and entered again afterwards.
	reenter := info.Op == unix.PTRACE_SYSCALL_INFO_ENTRY && t.Executing()
	return diversion.Start(t.Real(), t.Mem(), reenter, tid, rpid, d.bps, d.e.PointOrig(t))
}

// WriteRegs replaces the general registers and (when fx is not nil) the
// FXSAVE area of the diverted thread.
func (s *Session) WriteRegs(tid int32, regs trace.Regs, fx []byte) error {
	d := s.div
	if d == nil || tid != d.Tid() {
		return ErrNoDiversion
	}
	err := errors.New("diversion is over")
	_ = s.do(func() { err = d.WriteRegs(regs, fx) })
	return err
}

// WriteMem writes the diverted process's memory (breakpoints stay).
func (s *Session) WriteMem(addr uint64, data []byte) error {
	d := s.div
	if d == nil {
		return ErrNoDiversion
	}
	err := errors.New("diversion is over")
	_ = s.do(func() { err = d.WriteMem(addr, data) })
	return err
}

// DivResume continues (or, with step, single-steps) the diverted thread
// until it stops, delivering sig first (0: none). A StopExited stop
// means the copy died (exit or fatal signal) and the diversion is over.
func (s *Session) DivResume(step bool, sig int) (DebugStop, error) {
	d := s.div
	if d == nil {
		return DebugStop{}, ErrNoDiversion
	}
	var st DebugStop
	var err error
	_ = s.do(func() { st, err = d.Resume(step, sig) })
	st.Tid, st.Pid, st.Event = d.Tid(), s.stop.Pid, s.stop.Event
	return st, err
}
