package record

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// synchronous reports whether a signal was raised by the instruction at
// the thread's current position (so replay meets it again by itself).
func synchronous(si *ptrace.SigInfo) bool {
	switch unix.Signal(si.Signo()) {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP:
		return si.Code() > 0 // raised by the kernel for a fault (SI_KERNEL included)
	}
	// SIGSYS comes from a seccomp filter (SYS_SECCOMP), which replay does
	// not install: it is delivered at the syscall exit like a signal that
	// arrived in the kernel, and replay writes its frame.
	return false
}

func (r *recorder) onSignal(t *task, sig int) error {
	t.state = stReady
	t.at = atSignal
	si, err := t.thread().GetSigInfo()
	if err != nil {
		// A group-stop (the kernel reports one per thread of a process
		// that a stop signal stopped): the thread stays stopped until a
		// SIGCONT reaches its process (continueStopped). Replay needs no
		// event: the stop shows only in wait results and SIGCHLDs, which
		// are recorded.
		t.pendingSig = 0
		t.groupSig = sig
		if stopped, err := r.ptraceGroupStop(t, sig); stopped || err != nil {
			return err
		}
		t.state = stStopped
		r.stopped++
		if t.tid == r.initial && r.tty != nil {
			r.stopLikeTracee()
		}
		return nil
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	if saved, ok := t.reraised[sig]; ok {
		delete(t.reraised, sig)
		si = saved
		if err := t.thread().SetSigInfo(&si); err != nil {
			return err
		}
	}
	if si.Code() == 0x80 && (sig == int(unix.SIGSEGV) || sig == int(unix.SIGTRAP)) {
		if done, err := r.emulateInstruction(t, sig, &regs); done || err != nil {
			return err
		}
	}
	if !synchronous(&si) && (!t.arrivedAtLast(&regs) || r.ranPastTraced(t, &regs)) {
		// An asynchronous signal interrupted user code at an arbitrary
		// instruction. Hold it until the thread's next system call.
		t.deferred = append(t.deferred, si)
		t.pendingSig = 0
		return r.reprobe(t, &regs)
	}
	return r.deliver(t, sig, &si, &regs)
}

// SigStopped marks a signal event whose delivery stopped the process
// (job control); replay does nothing for it.
const SigStopped = 1 << 3

// stopLikeTracee stops gorr when the initial process stopped (Ctrl-Z):
// gorr gives the terminal back to its own group and stops, so that its
// shell sees the job stop. When the shell continues gorr (fg), gorr hands
// the terminal to the tracee's group again and passes the SIGCONT on.
func (r *recorder) stopLikeTracee() {
	restoreForeground(r.tty)
	_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
	// Continued.
	if fg, err := unix.IoctlGetInt(int(r.tty.Fd()), unix.TIOCGPGRP); err == nil && fg == unix.Getpgrp() {
		_ = unix.IoctlSetPointerInt(int(r.tty.Fd()), unix.TIOCSPGRP, r.pgid)
	}
	_ = unix.Kill(-r.pgid, unix.SIGCONT)
}

// continueStopped lets the group-stopped threads of every process that a
// SIGCONT has reached run again (it is still pending: the thread that
// takes it reports it as a signal, recorded as usual). Under PTRACE_TRACEME
// the kernel wakes no traced thread for SIGCONT, so gorr looks for it.
func (r *recorder) continueStopped() {
	for _, t := range r.tasks {
		if t.state != stStopped || tracee.PendingSignals(t.tid)&(1<<(unix.SIGCONT-1)) == 0 {
			continue
		}
		tgid := tracee.Tgid(t.tid)
		// Another thread of the group may hold the SIGCONT; all go on.
		for _, o := range r.tasks {
			if o.state == stStopped && tracee.Tgid(o.tid) == tgid {
				o.state = stReady
				o.at = atSignal
				r.stopped--
			}
		}
	}
}

// emulateInstruction handles rdtsc, rdtscp and cpuid trapped by
// PR_SET_TSC and cpuid faulting.
func (r *recorder) emulateInstruction(t *task, sig int, regs *trace.Regs) (bool, error) {
	defer r.since(phEmulate, time.Now())
	code := make([]byte, 3)
	at := regs[ptrace.RIP]
	if sig == int(unix.SIGTRAP) {
		// An int3 the recorder planted over the instruction's first byte.
		at--
		if t.mem.ReadMem(at, code) != nil {
			return false, nil
		}
		switch patch.Identify(code) {
		case patch.Rdtsc:
			code = []byte{0x0f, 0x31, 0}
		case patch.Rdtscp:
			code = []byte{0x0f, 0x01, 0xf9}
		case patch.Cpuid:
			code = []byte{0x0f, 0xa2, 0}
		default:
			return false, nil
		}
	} else if t.mem.ReadMem(at, code) != nil {
		return false, nil
	}
	if t.tscSigsegv && code[0] == 0x0f && (code[1] == 0x31 || code[1] == 0x01 && code[2] == 0xf9) {
		return true, &UnsupportedError{Tid: t.tid, Name: "rdtsc instruction", Reason: "the program set prctl(PR_SET_TSC, PR_TSC_SIGSEGV), whose SIGSEGV gorr does not reproduce"}
	}
	after := *regs
	after[ptrace.RIP] = at
	switch {
	case code[0] == 0x0f && code[1] == 0x31: // rdtsc
		a, d := cpu.Rdtsc()
		after[ptrace.RAX], after[ptrace.RDX] = uint64(a), uint64(d)
		after[ptrace.RIP] += 2
	case code[0] == 0x0f && code[1] == 0x01 && code[2] == 0xf9: // rdtscp
		a, d, c := cpu.Rdtscp()
		after[ptrace.RAX], after[ptrace.RDX], after[ptrace.RCX] = uint64(a), uint64(d), uint64(c)
		after[ptrace.RIP] += 3
	case code[0] == 0x0f && code[1] == 0xa2: // cpuid
		leaf, sub := uint32(regs[ptrace.RAX]), uint32(regs[ptrace.RCX])
		a, b, c, d := r.emulatedCpuid(leaf, sub)
		r.cpuidTrapped[[2]uint32{leaf, sub}] = true
		after[ptrace.RAX], after[ptrace.RBX], after[ptrace.RCX], after[ptrace.RDX] = uint64(a), uint64(b), uint64(c), uint64(d)
		after[ptrace.RIP] += 2
	default:
		return false, nil
	}
	if err := t.thread().SetRegs(&after); err != nil {
		return true, r.lost(t, err)
	}
	if (at == syscallbuf.RdtscInsn || t.buf.inVclock(at)) && sig == int(unix.SIGSEGV) {
		// The stub reading the counter for a buffered rdtsc call, or
		// the vDSO's clock_gettime it calls (the kernel started to trap
		// rdtsc since), in a process the kernel traps rdtsc in: the count
		// is part of the call's result, in its record; replay never runs
		// this instruction.
		t.pendingSig = 0
		return true, nil
	}
	before := *regs
	t.pendingSig = 0
	t.setLast(after, false)
	return true, r.emit(&trace.Event{Kind: trace.KindInstruction, Tid: int32(t.tid), Signo: int32(sig), Regs: &before, Regs2: &after})
}

// emulatedCpuid is the cpuid result the tracee gets: the CPU's, masked
// (and limited to the baseline with --portable). Bound to one CPU, the
// recorder asks the CPU once per leaf and subleaf (a cpuid in a VM is a
// costly exit, and ld.so runs dozens in every process).
func (r *recorder) emulatedCpuid(leaf, sub uint32) (a, b, c, d uint32) {
	if v, ok := r.cpuid[[2]uint32{leaf, sub}]; ok {
		return v[0], v[1], v[2], v[3]
	}
	a, b, c, d = cpu.Masked(leaf, sub)
	if r.opts.Portable {
		a, b, c, d = cpu.Baseline(leaf, sub, a, b, c, d)
	}
	if r.opts.BindCPU >= 0 {
		r.cpuid[[2]uint32{leaf, sub}] = [4]uint32{a, b, c, d}
	}
	return a, b, c, d
}

// disposition reads whether sig is caught or ignored by tid.
func disposition(tid, sig int) (caught, ignored bool) {
	c, i := tracee.SignalMasks(tid)
	bit := uint64(1) << (sig - 1)
	return c&bit != 0, i&bit != 0
}

func (r *recorder) deliver(t *task, sig int, si *ptrace.SigInfo, regs *trace.Regs) error {
	if stopped, err := r.ptraceSignalStop(t, sig, si, regs); stopped || err != nil {
		return err
	}
	before := *regs
	ev := &trace.Event{Kind: trace.KindSignal, Tid: int32(t.tid), Signo: int32(sig), Regs: &before, SigInfo: append([]byte(nil), si[:]...), Flags: t.emu.deliverFlags()}
	caught, ignored := disposition(t.tid, sig)
	act := linux.DefaultAction(sig)
	switch {
	case caught:
		if err := r.enterHandler(t, sig, ev); err != nil {
			return err
		}
		if ev.Flags&SigHandled == 0 && ev.Flags&SigFatal == 0 && (t.dying || r.tasks[t.tid] != t) {
			return nil // killed on the way into the handler: never delivered
		}
	case act == linux.Stop && !ignored:
		// Delivered for real: the kernel stops the whole process (and
		// tells its parent); the threads' group-stops follow.
		ev.Flags |= SigStopped
		t.pendingSig = sig
	case ignored || act == linux.Ignore || act == linux.Continue:
		ev.Flags |= SigIgnored
		t.pendingSig = 0
	case tracee.ContainerInit(t.tid):
		return r.deliverToInit(t, sig, si, ev)
	default:
		ev.Flags |= SigFatal
		t.pendingSig = sig
	}
	return r.emit(ev)
}

// deliverToInit handles a signal whose default action is fatal sent to
// the init of a PID namespace. The kernel discards it (init is protected)
// unless the thread's own instruction raised it; but under ptrace that
// protection is not lifted even then, and the fault would repeat forever.
// As rr does, gorr records the death and lets the task go: untraced, the
// instruction faults again and kills it (and with it the namespace).
func (r *recorder) deliverToInit(t *task, sig int, si *ptrace.SigInfo, ev *trace.Event) error {
	if !synchronous(si) {
		ev.Flags |= SigIgnored
		t.pendingSig = 0
		return r.emit(ev)
	}
	ev.Flags |= SigFatal
	if err := r.emit(ev); err != nil {
		return err
	}
	if err := r.emit(&trace.Event{Kind: trace.KindExit, Tid: int32(t.tid), Result: int64(sig)}); err != nil {
		return err
	}
	err := t.thread().Detach(0)
	r.remove(t)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// enterHandler single-steps the signal delivery so the thread stops on
// the first instruction of its handler, and records the frame.
func (r *recorder) enterHandler(t *task, sig int, ev *trace.Event) error {
	oldSP := ev.Regs[ptrace.RSP]
	st, lost, err := r.runUntil(t, ptrace.Step, sig, ptrace.AcceptAny)
	if lost || err != nil {
		return err
	}
	if st.Kind == ptrace.StopExited {
		t.pendingSig = 0
		return r.onExited(t, st)
	}
	if st.Kind == stopVanished || st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT {
		// Killed (from outside) on the way into the handler.
		t.pendingSig = 0
		return r.handle(st)
	}
	if st.Kind == ptrace.StopSignal && st.Signal == int(unix.SIGSEGV) && sig != int(unix.SIGSEGV) {
		if caught, _ := disposition(t.tid, int(unix.SIGSEGV)); caught {
			// The kernel could not build the frame of sig's handler and
			// forced a SIGSEGV, which has a handler that it can run (on
			// an alternate stack, say; a blocked or ignored SIGSEGV
			// would have been reset to the default action). The event
			// enters that handler: replay writes its frame, as for any
			// handled signal.
			if st, lost, err = r.runUntil(t, ptrace.Step, int(unix.SIGSEGV), ptrace.AcceptAny); lost || err != nil {
				return err
			}
			if st.Kind == ptrace.StopExited {
				t.pendingSig = 0
				return r.onExited(t, st)
			}
			if st.Kind == stopVanished || st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT {
				t.pendingSig = 0
				return r.handle(st)
			}
		}
	}
	if st.Kind == ptrace.StopSignal && st.Signal == int(unix.SIGSEGV) {
		// The kernel could not build the handler's frame (the stack
		// overflowed and no alternate stack was usable): it reset the
		// disposition and forced a SIGSEGV, which kills the process.
		// Replay, which enters handlers from the recorded frame, just
		// delivers the recorded signal fatally.
		ev.Flags |= SigFatal
		t.pendingSig = int(unix.SIGSEGV)
		return nil
	}
	if st.Kind != ptrace.StopSignal || st.Signal != int(unix.SIGTRAP) {
		return fmt.Errorf("tid %d: entering handler of signal %d gave %v", t.tid, sig, st)
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	ev.Regs2 = &regs
	ev.Flags |= SigHandled
	r.interruptedAt[ev.Regs[ptrace.RIP]] = true
	if xs, err := t.thread().GetXState(r.xsaveSize); err == nil {
		ev.XState = xs
	}
	sp := regs[ptrace.RSP]
	end := sp + 440 + 4096
	if oldSP > sp && oldSP-sp < 64*1024 {
		end = oldSP
	} else if fp, err := t.mem.ReadU64(sp + 232); err == nil && fp > sp && fp-sp < 64*1024 {
		var ext [4]byte
		if t.mem.ReadMem(fp+464+4, ext[:]) == nil {
			size := uint64(ext[0]) | uint64(ext[1])<<8 | uint64(ext[2])<<16 | uint64(ext[3])<<24
			if size > 0 && size < 64*1024 {
				end = fp + size
			}
		}
	}
	frame := make([]byte, end-sp)
	n := t.mem.ReadPartial(sp, frame)
	ev.Mem = []trace.MemWrite{{Addr: sp, Data: frame[:n]}}
	t.pendingSig = 0
	t.setLast(regs, false)
	return nil
}
