package debugserver

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/debugapi"
	"github.com/gorr-debugger/gorr/internal/gdbrsp"
)

// Diversions, as rr has them: the debugger's inferior calls (gdb's
// `print f(x)`, Delve's `call`) write registers and memory and resume;
// they run in a live copy of the replayed process (replay.StartDiversion)
// so the recording stays untouched.
//
// A diversion starts when the debugger reads qXfer:siginfo (gdb and
// Delve both do before a call; each read takes a reference) or, failing
// that, at the first write that changes something. A qXfer:siginfo write
// drops a reference. The diversion ends at the first resume, reverse
// request, restart or detach once no reference is left (and, for one
// started by a write, once the registers are back to what they were);
// that request then runs against the replay as if nothing happened.
type divState struct {
	on      bool
	refs    int
	byWrite bool
	dirty   bool          // something was written or run in the copy
	stop    debugapi.Stop // the replay stop to return to
	gThread int32
}

// siginfo answers qXfer:siginfo:read: the stop's signal, and starts (or
// takes a reference to) a diversion.
func (s *Server) siginfo(p gdbrsp.XferRead) []byte {
	var si [128]byte
	sig := uint32(unix.SIGTRAP)
	switch s.stop.Kind {
	case debugapi.StopSignal:
		sig = uint32(s.stop.Signal)
	case debugapi.StopExiting:
		sig = uint32(unix.SIGKILL)
	}
	binary.LittleEndian.PutUint32(si[0:], sig)
	if p.Offset == 0 && !s.exited {
		if s.div.on {
			s.div.refs++
		} else if s.startDiversion(s.gThread) == nil {
			s.div.refs = 1
		}
	}
	return gdbrsp.XferReply(si[:], p.Offset, p.Length)
}

// siginfoWrite answers qXfer:siginfo:write: the debugger restores the
// siginfo it saved before a call, which drops a diversion reference.
func (s *Server) siginfoWrite(p gdbrsp.XferWrite) []byte {
	if s.div.on && s.div.refs > 0 {
		s.div.refs--
	}
	return []byte(fmt.Sprintf("%x", len(p.Data)))
}

func (s *Server) startDiversion(tid int32) error {
	if s.div.on {
		return nil
	}
	if err := s.sess.StartDiversion(tid); err != nil {
		if s.Log != nil {
			fmt.Fprintf(s.Log, "gorr: cannot start a diversion: %v\n", err)
		}
		return err
	}
	s.div = divState{on: true, stop: s.stop, gThread: s.gThread}
	return nil
}

// endDiversion drops the diversion's copy and returns to the replay stop.
func (s *Server) endDiversion() {
	if !s.div.on {
		return
	}
	s.sess.EndDiversion()
	s.stop, s.gThread = s.div.stop, s.div.gThread
	s.div = divState{}
}

// diversionOver tells whether the next resuming request leaves the
// diversion.
func (s *Server) diversionOver() bool {
	if !s.div.dirty {
		return true // only read from (gdb's print $_siginfo): nothing to run
	}
	return s.div.refs == 0 && (!s.div.byWrite || s.sess.DiversionRestored())
}

// writeDiverted makes sure a write that changes something goes to a
// diversion of thread tid.
func (s *Server) writeDiverted(tid int32) bool {
	if !s.div.on {
		if s.exited || s.startDiversion(tid) != nil {
			return false
		}
		s.div.byWrite = true
	}
	s.div.dirty = true
	return true
}

func (s *Server) writeRegister(p gdbrsp.WriteRegister) []byte {
	tid := s.pick(p.Thread)
	// gdb writes orig_rax = -1 when it starts a program (so that no
	// system call restarts); that changes nothing a replay shows.
	// Writing a register its current value is also harmless.
	if p.Reg == 57 && !s.div.on {
		return gdbrsp.Ok()
	}
	cur := s.readRegs(tid, int(p.Reg))
	if string(cur) == string(gdbrsp.EncodeHex(p.Value)) {
		return gdbrsp.Ok()
	}
	if int(p.Reg) >= numRegs || len(p.Value) != regSize(int(p.Reg)) || !s.writeDiverted(tid) {
		return gdbrsp.Error(1)
	}
	regs, fx, err := s.sess.Regs(tid)
	if err != nil || !setRegBytes(int(p.Reg), &regs, fx, p.Value) {
		return gdbrsp.Error(1)
	}
	if err := s.sess.WriteRegs(tid, regs, fx); err != nil {
		return gdbrsp.Error(1)
	}
	return gdbrsp.Ok()
}

func (s *Server) writeRegisters(p gdbrsp.WriteRegisters) []byte {
	tid := s.pick(p.Thread)
	cur := s.readRegs(tid, -1)
	if string(cur) == string(gdbrsp.EncodeHex(p.Data)) {
		return gdbrsp.Ok()
	}
	if len(cur) < 3 || len(p.Data) > len(cur)/2 || !s.writeDiverted(tid) {
		return gdbrsp.Error(1)
	}
	regs, fx, err := s.sess.Regs(tid)
	if err != nil {
		return gdbrsp.Error(1)
	}
	// A shorter block sets the leading registers only.
	off := 0
	for n := 0; n < numRegs && off+regSize(n) <= len(p.Data); n++ {
		setRegBytes(n, &regs, fx, p.Data[off:off+regSize(n)])
		off += regSize(n)
	}
	if err := s.sess.WriteRegs(tid, regs, fx); err != nil {
		return gdbrsp.Error(1)
	}
	return gdbrsp.Ok()
}

func (s *Server) writeMemory(addr uint64, data []byte) []byte {
	if len(data) == 0 {
		return gdbrsp.Ok() // gdb's probe for X
	}
	cur, err := s.sess.ReadMem(addr, len(data))
	if err == nil && string(cur) == string(data) {
		return gdbrsp.Ok()
	}
	if (err != nil || len(cur) < len(data)) && !s.div.on {
		return gdbrsp.Error(1) // not mapped: no diversion for that
	}
	if !s.writeDiverted(s.gThread) {
		return gdbrsp.Error(1)
	}
	if err := s.sess.WriteMem(addr, data); err != nil {
		return gdbrsp.Error(1)
	}
	return gdbrsp.Ok()
}

// divResume runs a resuming request in the diversion, if one is on and
// not over; handled is false when the request is for the replay.
func (s *Server) divResume(step bool, sig uint8) (reply []byte, handled bool) {
	if !s.div.on {
		return nil, false
	}
	if s.diversionOver() {
		s.endDiversion()
		return nil, false
	}
	if sig == uint8(unix.SIGTRAP) {
		sig = 0
	}
	st, err := s.sess.DivResume(step, int(sig))
	if err != nil {
		if s.Log != nil {
			fmt.Fprintf(s.Log, "gorr: diversion: %v\n", err)
		}
		st = debugapi.Stop{Kind: debugapi.StopExited, Pid: s.stop.Pid}
	}
	if st.Kind == debugapi.StopExited {
		// The copy is gone: tell the debugger the process died, as rr
		// does (there is no good way to say "the call killed it").
		pid := s.div.stop.Pid
		s.endDiversion()
		s.exited = true
		return gdbrsp.TerminatedReply(uint8(unix.SIGKILL), int64(pid)), true
	}
	s.stop = st
	return s.stopReply(), true
}

// divReverse answers a backwards request during a diversion: execution
// cannot go back in the copy, so it stops at once (as rr does), unless
// the diversion is over.
func (s *Server) divReverse() (reply []byte, handled bool) {
	if !s.div.on {
		return nil, false
	}
	if s.diversionOver() {
		s.endDiversion()
		return nil, false
	}
	return gdbrsp.NewStopReply(0, s.threadID(s.stop.Tid)).Bytes(), true
}

// vcontSignal returns the signal of a vCont's first C or S action.
func vcontSignal(p gdbrsp.VCont) (step bool, sig uint8) {
	for _, a := range p.Actions {
		switch a.Action {
		case 's', 'S':
			step = true
		}
		if (a.Action == 'C' || a.Action == 'S') && sig == 0 {
			sig = a.Signal
		}
	}
	return step, sig
}
