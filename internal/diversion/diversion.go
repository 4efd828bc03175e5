// Package diversion runs code the debugger asks for against a live copy
// of a replayed process (see Copy); the debug session (internal/session)
// starts one at a stop and hands it the debugger's requests.
package diversion

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/debugapi"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// A diversion (rr's name) runs code the debugger asks for, such as gdb's
// `print f(x)` or Delve's `call`, against a copy of the replayed state:
// a fork of the stopped thread's process, injected into it, in which the
// code runs for real (its system calls execute; none comes from the
// trace). Only the diverted thread exists in the copy. The replayed
// process is left exactly as it was: when the diversion ends the copy is
// killed and replay carries on from the same position.
type diversion struct {
	tid   int32 // recorded tid the copy stands for
	pid   int   // real pid of the copy
	rpid  int32 // recorded pid of its process
	mem   *tracee.Mem
	bps   map[uint64]byte // breakpoints planted in the copy -> original byte
	start trace.Regs      // the thread's registers when the diversion started
	// denied: the system call being entered is suppressed (-ENOSYS);
	// fake: its result is emulated (getpid, gettid).
	denied  bool
	fake    int64
	hasFake bool
	gone    bool
}

// thread is the copy's thread, for ptrace requests.
func (d *diversion) thread() ptrace.Thread { return ptrace.NewThread(d.pid) }

// Start forks the process of the stopped, traced thread real (whose
// memory is mem; recorded tid rec of recorded process rpid) into a live
// copy. reenter: the thread is at the entry of a call that replay runs
// for real, to be entered again afterwards. bps are the breakpoints
// planted in the replayed process (address -> original byte) and
// unpatch other bytes of its to put back in the copy (a preemption
// point's pad or breakpoint); neither is in the copy.
func Start(real int, mem *tracee.Mem, reenter bool, rec, rpid int32, bps map[uint64]byte, unpatch map[uint64][]byte) (*Copy, error) {
	saved, err := ptrace.NewThread(real).GetRegs()
	if err != nil {
		return nil, err
	}
	// Borrow the two bytes at the instruction pointer for a `syscall`.
	at := saved[ptrace.RIP]
	var orig [2]byte
	if err := mem.ReadMem(at, orig[:]); err != nil {
		return nil, fmt.Errorf("divert: %w", err)
	}
	if err := mem.WriteMem(at, []byte{0x0f, 0x05}); err != nil {
		return nil, fmt.Errorf("divert: %w", err)
	}
	child, ferr := ForkAt(real, at, &saved)
	werr := mem.WriteMem(at, orig[:])
	rerr := RestoreParent(real, &saved, reenter)
	if ferr == nil {
		ferr = werr
	}
	if ferr == nil {
		ferr = rerr
	}
	if ferr != nil {
		if child > 0 {
			(&diversion{pid: child}).kill()
		}
		return nil, fmt.Errorf("divert: %w", ferr)
	}
	d := &diversion{tid: rec, pid: child, rpid: rpid, bps: map[uint64]byte{}, start: saved}
	if err := d.setup(at, orig, bps); err != nil {
		d.kill()
		return nil, fmt.Errorf("divert: %w", err)
	}
	for a, b := range unpatch {
		if err = d.mem.WriteMem(a, b); err != nil {
			d.kill()
			return nil, fmt.Errorf("divert: %w", err)
		}
	}
	return d, nil
}

// Copy is a diversion's live copy. Its methods, like all ptrace calls,
// must run on the thread that traces the replayed process.
type Copy = diversion

// Tid is the recorded thread id the copy stands for.
func (d *diversion) Tid() int32 { return d.tid }

// Kill ends the copy and reaps it.
func (d *diversion) Kill() { d.kill() }

// Regs returns the copy's registers and FXSAVE area.
func (d *diversion) Regs() (trace.Regs, []byte, error) { return d.regs() }

// ReadMem reads the copy's memory (its breakpoints hidden).
func (d *diversion) ReadMem(addr uint64, n int) ([]byte, error) { return d.readMem(addr, n) }

// SetBreakpoint plants a breakpoint in the copy.
func (d *diversion) SetBreakpoint(addr uint64) error { return d.setBreakpoint(addr) }

// ClearBreakpoint removes a breakpoint from the copy.
func (d *diversion) ClearBreakpoint(addr uint64) error { return d.clearBreakpoint(addr) }

// Resume continues (or, with step, single-steps) the copy until it
// stops, delivering sig first (0: none). A StopExited stop means the
// copy died (exit or fatal signal).
func (d *diversion) Resume(step bool, sig int) (debugapi.Stop, error) { return d.resume(step, sig) }

// Restored tells whether the copy's general registers are again those
// it had when the diversion started (the debugger put them back after
// its call).
func (d *diversion) Restored() bool {
	r, err := d.thread().GetRegs()
	if err != nil {
		return true // nothing left to protect
	}
	a, b := r, d.start
	a[ptrace.ORIGRAX], b[ptrace.ORIGRAX] = 0, 0
	return a == b
}

// WriteRegs replaces the general registers and (when fx is not nil) the
// FXSAVE area of the copy's thread.
func (d *diversion) WriteRegs(regs trace.Regs, fx []byte) error {
	if d.gone {
		return errors.New("diversion is over")
	}
	if err := d.thread().SetRegs(&regs); err != nil || fx == nil {
		return err
	}
	return d.thread().SetFPRegs(fx)
}

// WriteMem writes the copy's memory (its breakpoints stay).
func (d *diversion) WriteMem(addr uint64, data []byte) error {
	if d.gone {
		return errors.New("diversion is over")
	}
	buf := append([]byte(nil), data...)
	for a := range d.bps {
		if a >= addr && a < addr+uint64(len(buf)) {
			d.bps[a] = buf[a-addr]
			buf[a-addr] = 0xcc
		}
	}
	return d.mem.WriteMem(addr, buf)
}

// ForkAt runs clone(CLONE_PARENT|SIGCHLD) in stopped task tid through the
// `syscall` instruction at at and returns the new process, which the
// tracer's PTRACE_O_TRACEFORK attached and stopped. Its parent is the
// replayed process's parent (gorr for the initial process), so the
// replayed process never sees it exit.
func ForkAt(tid int, at uint64, saved *trace.Regs) (int, error) {
	th := ptrace.NewThread(tid)
	r := *saved
	ptrace.SetSyscallArgs(&r, [6]uint64{unix.CLONE_PARENT | uint64(unix.SIGCHLD), 0, 0, 0, 0, 0})
	r[ptrace.RAX] = unix.SYS_CLONE
	r[ptrace.ORIGRAX] = ^uint64(0) // a pending call (SYSEMU or real) is skipped
	r[ptrace.RIP] = at
	if err := th.SetRegs(&r); err != nil {
		return 0, err
	}
	child, entered := 0, false
	_, err := th.RunUntil(ptrace.Syscall, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		switch st.Kind {
		case ptrace.StopExited:
			return ptrace.Accept, tracee.ErrGone
		case ptrace.StopSyscallEntry:
			entered = true
		case ptrace.StopSyscallExit:
			if !entered {
				return ptrace.Again, nil // the exit of the call the task was stopped in
			}
			out, err := th.GetRegs()
			if err != nil {
				return ptrace.Accept, err
			}
			if res := int64(out[ptrace.RAX]); res < 0 {
				return ptrace.Accept, fmt.Errorf("clone: %w", unix.Errno(-res))
			} else if child == 0 {
				child = int(res)
			}
			return ptrace.Accept, nil
		case ptrace.StopEvent:
			switch st.Event {
			case unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_VFORK:
				m, err := th.EventMsg()
				if err != nil {
					return ptrace.Accept, err
				}
				child = int(m)
			}
		}
		// Signals are not delivered: replay reproduces the recorded ones.
		return ptrace.Again, nil
	})
	if err != nil {
		return child, err
	}
	return child, WaitInitialStop(child)
}

// WaitInitialStop waits for a new traced process's first stop.
func WaitInitialStop(pid int) error {
	_, err := ptrace.NewThread(pid).WaitUntil(ptrace.Cont, func(st ptrace.Stop) (ptrace.Action, error) {
		switch st.Kind {
		case ptrace.StopExited:
			return ptrace.Accept, tracee.ErrGone
		case ptrace.StopSignal:
			return ptrace.AcceptIf(st.Signal == int(unix.SIGSTOP)), nil
		}
		return ptrace.Again, nil
	})
	return err
}

// RestoreParent puts the replayed task back as it was: its registers,
// and, when it was at the entry of a call that runs for real, at that
// entry again.
func RestoreParent(tid int, saved *trace.Regs, reenter bool) error {
	th := ptrace.NewThread(tid)
	if reenter {
		r := *saved
		r[ptrace.RIP] -= 2
		r[ptrace.RAX] = r[ptrace.ORIGRAX]
		if err := th.SetRegs(&r); err != nil {
			return err
		}
		if _, err := th.RunUntil(ptrace.Syscall, 0, func(st ptrace.Stop) (ptrace.Action, error) {
			if st.Kind == ptrace.StopExited {
				return ptrace.Accept, tracee.ErrGone
			}
			return ptrace.AcceptIf(st.Kind == ptrace.StopSyscallEntry), nil
		}); err != nil {
			return err
		}
	}
	return th.SetRegs(saved)
}

// setup prepares the copy: time stamps and cpuid run natively (replay
// traps them), the borrowed bytes and the replay's breakpoints are gone,
// and the registers are the replayed thread's.
func (d *diversion) setup(at uint64, orig [2]byte, bps map[uint64]byte) error {
	var err error
	if d.mem, err = tracee.OpenMem(d.pid); err != nil {
		return err
	}
	_, _, _ = tracee.Inject(d.pid, at, unix.SYS_PRCTL, unix.PR_SET_TSC, unix.PR_TSC_ENABLE)
	_, _, _ = tracee.Inject(d.pid, at, unix.SYS_ARCH_PRCTL, 0x1012, 1) // ARCH_SET_CPUID
	if err := d.mem.WriteMem(at, orig[:]); err != nil {
		return err
	}
	for a, b := range bps {
		if err := d.mem.WriteMem(a, []byte{b}); err != nil {
			return err
		}
	}
	r := d.start
	r[ptrace.ORIGRAX] = ^uint64(0) // no system call to restart in the copy
	return d.thread().SetRegs(&r)
}

// kill ends the copy and reaps it.
func (d *diversion) kill() {
	if d.mem != nil {
		_ = d.mem.Close()
	}
	if d.gone {
		return
	}
	d.gone = true
	d.thread().KillAndReap()
}

// regs returns the copy's registers and FXSAVE area.
func (d *diversion) regs() (trace.Regs, []byte, error) {
	regs, err := d.thread().GetRegs()
	if err != nil {
		return regs, nil, err
	}
	fx, err := d.thread().GetFPRegs()
	if err != nil {
		return regs, nil, err
	}
	return regs, fx, nil
}

func (d *diversion) readMem(addr uint64, n int) ([]byte, error) {
	if d.gone {
		return nil, errors.New("diversion is over")
	}
	buf := make([]byte, n)
	got := d.mem.ReadPartial(addr, buf)
	if got == 0 && n > 0 {
		return nil, fmt.Errorf("cannot read 0x%x", addr)
	}
	buf = buf[:got]
	for a, orig := range d.bps {
		if a >= addr && a < addr+uint64(got) {
			buf[a-addr] = orig
		}
	}
	return buf, nil
}

func (d *diversion) setBreakpoint(addr uint64) error {
	if d.gone {
		return nil
	}
	if _, ok := d.bps[addr]; ok {
		return nil
	}
	var b [1]byte
	if err := d.mem.ReadMem(addr, b[:]); err != nil {
		return err
	}
	d.bps[addr] = b[0]
	return d.mem.WriteMem(addr, []byte{0xcc})
}

func (d *diversion) clearBreakpoint(addr uint64) error {
	orig, ok := d.bps[addr]
	if !ok || d.gone {
		return nil
	}
	delete(d.bps, addr)
	return d.mem.WriteMem(addr, []byte{orig})
}

// deniedCall lists the calls a diversion suppresses (-ENOSYS), as rr
// does: new tasks would escape the single-thread copy, and signals to
// ids that mean other processes now than in the recording.
func deniedCall(nr int, arg0 uint64) bool {
	switch nr {
	case unix.SYS_CLONE, unix.SYS_CLONE3, unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_EXECVE, unix.SYS_EXECVEAT,
		unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO,
		unix.SYS_PTRACE:
		return true
	case unix.SYS_PRCTL:
		return arg0 == unix.PR_SET_TSC
	}
	return false
}

func (d *diversion) resume(step bool, sig int) (debugapi.Stop, error) {
	if d.gone {
		return debugapi.Stop{Kind: debugapi.StopExited, Status: unix.WaitStatus(uint32(unix.SIGKILL))}, nil
	}
	r, err := d.thread().GetRegs()
	if err != nil {
		return debugapi.Stop{}, err
	}
	// Leave a breakpoint at the instruction pointer by one step without it.
	if orig, ok := d.bps[r[ptrace.RIP]]; ok {
		at := r[ptrace.RIP]
		if err := d.mem.WriteMem(at, []byte{orig}); err != nil {
			return debugapi.Stop{}, err
		}
		st, err := d.run(true, sig)
		if werr := d.mem.WriteMem(at, []byte{0xcc}); err == nil && !d.gone {
			err = werr
		}
		if err != nil || step || st.Kind != debugapi.StopStep {
			return st, err
		}
		sig = 0
	}
	return d.run(step, sig)
}

// run resumes the copy once and handles its stops until one is for the
// debugger.
func (d *diversion) run(step bool, sig int) (debugapi.Stop, error) {
	mode := ptrace.Syscall
	if step {
		mode = ptrace.Step
	}
	var out debugapi.Stop
	_, err := d.thread().RunUntil(mode, sig, func(st ptrace.Stop) (ptrace.Action, error) {
		next := 0
		switch st.Kind {
		case ptrace.StopExited:
			d.gone = true
			_ = d.mem.Close()
			out = debugapi.Stop{Kind: debugapi.StopExited, Status: st.Status}
			return ptrace.Accept, nil
		case ptrace.StopSyscallEntry:
			r, err := d.thread().GetRegs()
			if err != nil {
				return ptrace.Accept, err
			}
			nr := int(int64(r[ptrace.ORIGRAX]))
			d.denied, d.hasFake = false, false
			switch {
			case deniedCall(nr, r[ptrace.RDI]):
				d.denied = true
			case nr == unix.SYS_GETPID:
				d.fake, d.hasFake = int64(d.rpid), true
			case nr == unix.SYS_GETTID:
				d.fake, d.hasFake = int64(d.tid), true
			}
			if d.denied || d.hasFake {
				r[ptrace.ORIGRAX] = ^uint64(0)
				if err := d.thread().SetRegs(&r); err != nil {
					return ptrace.Accept, err
				}
			}
		case ptrace.StopSyscallExit:
			if d.denied || d.hasFake {
				r, err := d.thread().GetRegs()
				if err != nil {
					return ptrace.Accept, err
				}
				v := -int64(unix.ENOSYS)
				if d.hasFake {
					v = d.fake
				}
				r[ptrace.RAX] = uint64(v)
				d.denied, d.hasFake = false, false
				if err := d.thread().SetRegs(&r); err != nil {
					return ptrace.Accept, err
				}
			}
		case ptrace.StopEvent:
			// PTRACE_EVENT_EXIT and the like: let it go on.
		case ptrace.StopSignal:
			stop, deliver, done, err := d.signal(st.Signal, step)
			if err != nil || done {
				out = stop
				return ptrace.Accept, err
			}
			next = deliver
		}
		return ptrace.Deliver(next), nil
	})
	return out, err
}

// signal decides about a signal stop of the copy: a breakpoint or a
// completed step is a stop for the debugger, a trapped rdtsc or cpuid
// is emulated, faults are reported, other signals are delivered.
func (d *diversion) signal(sig int, step bool) (stop debugapi.Stop, deliver int, done bool, err error) {
	si, err := d.thread().GetSigInfo()
	if err != nil {
		return debugapi.Stop{}, 0, true, err
	}
	r, err := d.thread().GetRegs()
	if err != nil {
		return debugapi.Stop{}, 0, true, err
	}
	switch unix.Signal(sig) {
	case unix.SIGTRAP:
		if si.Code() == 0x80 { // SI_KERNEL: an int3
			at := r[ptrace.RIP] - 1
			if _, ok := d.bps[at]; ok {
				r[ptrace.RIP] = at
				return debugapi.Stop{Kind: debugapi.StopBreakpoint, Addr: at}, 0, true, d.thread().SetRegs(&r)
			}
			if ok, err := d.emulate(at, &r); err != nil || ok {
				if step {
					return debugapi.Stop{Kind: debugapi.StopStep}, 0, true, err
				}
				return debugapi.Stop{}, 0, err != nil, err
			}
		}
		if step && si.Code() != 0x80 {
			return debugapi.Stop{Kind: debugapi.StopStep}, 0, true, nil
		}
		return debugapi.Stop{Kind: debugapi.StopSignal, Signal: sig}, 0, true, nil
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGABRT, unix.SIGSYS:
		return debugapi.Stop{Kind: debugapi.StopSignal, Signal: sig}, 0, true, nil
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		return debugapi.Stop{}, 0, false, nil
	}
	return debugapi.Stop{}, sig, false, nil
}

// emulate runs the rdtsc, rdtscp or cpuid that the recorder replaced by
// the int3 at at, in the tracer.
func (d *diversion) emulate(at uint64, r *trace.Regs) (bool, error) {
	code := make([]byte, 3)
	if d.mem.ReadMem(at, code) != nil {
		return false, nil
	}
	k := patch.Identify(code)
	switch k {
	case patch.Rdtsc:
		a, dx := cpu.Rdtsc()
		r[ptrace.RAX], r[ptrace.RDX] = uint64(a), uint64(dx)
	case patch.Rdtscp:
		a, dx, c := cpu.Rdtscp()
		r[ptrace.RAX], r[ptrace.RDX], r[ptrace.RCX] = uint64(a), uint64(dx), uint64(c)
	case patch.Cpuid:
		a, b, c, dx := cpu.Masked(uint32(r[ptrace.RAX]), uint32(r[ptrace.RCX]))
		r[ptrace.RAX], r[ptrace.RBX], r[ptrace.RCX], r[ptrace.RDX] = uint64(a), uint64(b), uint64(c), uint64(dx)
	default:
		return false, nil
	}
	r[ptrace.RIP] = at + k.Len()
	return true, d.thread().SetRegs(r)
}
