package record

// Emulated ptrace between tracees, as rr does it: gorr stays the real
// tracer of every tracee; when tracee A calls ptrace on tracee B the
// recorder performs the request itself. B's stops for A (a signal about
// to be delivered, PTRACE_EVENT_EXIT) become emulated stops: B is held
// at its real stop with gorr, A gets a SIGCHLD and its wait4/waitid is
// answered from the stop. Everything A sees is an ordinary recorded
// syscall result; what A changes in B (POKEDATA, SETREGS, SETFPREGS) is
// a KindPtraceWrite event on B that replay applies at the same point.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// stEmuStopped: the task is in an emulated ptrace stop; only its
// emulated tracer resumes it (the scheduler never picks it).
const stEmuStopped tstate = 100

// Signal-event flags of emulated ptrace.
const (
	// SigPtraceStop: the signal stopped the task for its emulated
	// tracer instead of being delivered.
	SigPtraceStop = 1 << 3
	// SigPtraceResumed: the tracer resumed the task with this signal; the
	// task already stands where the stop left it (replay does not run
	// it to a new signal stop).
	SigPtraceResumed = 1 << 4
)

// emuTask is a task's emulated-ptrace state (nil: never traced).
type emuTask struct {
	tracer   int    // thread-group id of the emulated tracer (0: none)
	options  uint64 // PTRACE_O_* set by the tracer
	seized   bool
	stopped  bool   // in an emulated stop
	pending  bool   // the stop has not been reported to the tracer's wait
	status   int    // wait status of the stop
	sig      int    // signal of a signal-delivery stop (0: event stop)
	eventMsg uint64 // PTRACE_GETEVENTMSG
	// delivering: the tracer resumed the task with a signal that the
	// recorder now delivers for real (no new stop).
	delivering bool
	// group is the signal of the last group stop (PTRACE_EVENT_STOP
	// reports it).
	group int
	// kicked: the recorder sent this task a SIGSTOP of its own, to make
	// a blocked wait return (SIGCHLD blocked) or for PTRACE_INTERRUPT;
	// it is swallowed (kicked) or becomes the stop (interrupt).
	kicked, interrupt bool
	// paused holds the entry registers of a wait that the recorder turned
	// into ppoll(NULL, 0, NULL, NULL) (a wait for a tracee that is not a
	// child would fail with ECHILD); they are restored at its exit.
	paused *trace.Regs
	// child: the tracee is a child of its tracer, whose real wait then
	// sees its exit; exits of other tracees are kept in the tracer's
	// exits until its wait collects them.
	child bool
	exits []emuExit
	// inCall: stopped at a fork/vfork/clone event inside the call.
	inCall bool
	// resumed is how the tracer last resumed the task (reqCont,
	// reqSyscall or reqSysemu): with PTRACE_SYSCALL and PTRACE_SYSEMU it
	// stops at its next system-call entry.
	resumed uint64
	// sysStop: in an emulated syscall-entry (sysEntry) or -exit
	// (sysExit) stop.
	sysStop int
	// sysemu: the current call was entered under PTRACE_SYSEMU, so the
	// kernel does not run it; exitStop: the tracer resumed it from its
	// entry stop with PTRACE_SYSCALL, so it stops at its exit too.
	sysemu, exitStop bool
}

// Emulated system-call stops (emuTask.sysStop).
const (
	sysEntry = 1
	sysExit  = 2
)

// emuExit is the exit of a tracee that is not its tracer's child.
type emuExit struct {
	tid    int
	status unix.WaitStatus
}

// attach makes e (nil: a new state) the state of a freshly attached
// tracee, keeping what belongs to the task as a tracer itself.
func (e *emuTask) attach(tracer int, seized, child bool) *emuTask {
	n := &emuTask{tracer: tracer, seized: seized, child: child}
	if e != nil {
		n.exits, n.kicked, n.paused = e.exits, e.kicked, e.paused
	}
	return n
}

// deliverFlags are the flags of a signal event delivered to t.
func (e *emuTask) deliverFlags() uint64 {
	if e != nil && e.delivering {
		return SigPtraceResumed
	}
	return 0
}

// ptrace requests (x86-64 numbers).
const (
	reqTraceMe    = 0
	reqPeekText   = 1
	reqPeekData   = 2
	reqPeekUser   = 3
	reqPokeText   = 4
	reqPokeData   = 5
	reqPokeUser   = 6
	reqCont       = 7
	reqKill       = 8
	reqGetRegs    = 12
	reqSetRegs    = 13
	reqGetFPRegs  = 14
	reqSetFPRegs  = 15
	reqAttach     = 16
	reqDetach     = 17
	reqSetOptions = 0x4200
	reqGetEvtMsg  = 0x4201
	reqGetSigInfo = 0x4202
	reqSetSigInfo = 0x4203
	reqGetRegSet  = 0x4204
	reqSetRegSet  = 0x4205
	reqSeize      = 0x4206
	reqInterrupt  = 0x4207
	reqArchPrctl  = 30
	reqSyscall    = 24
	reqSysemu     = 31
	reqSyscallInf = 0x420e // PTRACE_GET_SYSCALL_INFO
)

var reqNames = map[uint64]string{
	reqTraceMe: "PTRACE_TRACEME", reqPeekText: "PTRACE_PEEKTEXT", reqPeekData: "PTRACE_PEEKDATA", reqPeekUser: "PTRACE_PEEKUSER",
	reqPokeText: "PTRACE_POKETEXT", reqPokeData: "PTRACE_POKEDATA", reqPokeUser: "PTRACE_POKEUSER", reqCont: "PTRACE_CONT",
	reqKill: "PTRACE_KILL", 9: "PTRACE_SINGLESTEP", reqGetRegs: "PTRACE_GETREGS", reqSetRegs: "PTRACE_SETREGS",
	reqGetFPRegs: "PTRACE_GETFPREGS", reqSetFPRegs: "PTRACE_SETFPREGS", reqAttach: "PTRACE_ATTACH", reqDetach: "PTRACE_DETACH",
	18: "PTRACE_GETFPXREGS", 19: "PTRACE_SETFPXREGS", 24: "PTRACE_SYSCALL", 25: "PTRACE_GET_THREAD_AREA",
	26: "PTRACE_SET_THREAD_AREA", reqArchPrctl: "PTRACE_ARCH_PRCTL", 31: "PTRACE_SYSEMU", 32: "PTRACE_SYSEMU_SINGLESTEP",
	33: "PTRACE_SINGLEBLOCK", reqSetOptions: "PTRACE_SETOPTIONS", reqGetEvtMsg: "PTRACE_GETEVENTMSG",
	reqGetSigInfo: "PTRACE_GETSIGINFO", reqSetSigInfo: "PTRACE_SETSIGINFO", reqGetRegSet: "PTRACE_GETREGSET",
	reqSetRegSet: "PTRACE_SETREGSET", reqSeize: "PTRACE_SEIZE", reqInterrupt: "PTRACE_INTERRUPT", 0x4208: "PTRACE_LISTEN",
	0x4209: "PTRACE_PEEKSIGINFO", 0x420a: "PTRACE_GETSIGMASK", 0x420b: "PTRACE_SETSIGMASK",
	0x420c: "PTRACE_SECCOMP_GET_FILTER", 0x420d: "PTRACE_SECCOMP_GET_METADATA", 0x420e: "PTRACE_GET_SYSCALL_INFO",
	0x420f: "PTRACE_GET_RSEQ_CONFIGURATION", 0x4210: "PTRACE_SET_SYSCALL_USER_DISPATCH_CONFIG",
}

// supportedOptions are the PTRACE_O_* options the emulation honours.
const supportedOptions = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_TRACEEXIT | unix.PTRACE_O_EXITKILL |
	unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK | unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEEXEC |
	unix.PTRACE_O_TRACEVFORKDONE

const userRegsSize = 27 * 8

// ptraceEntry handles the entry of ptrace, wait4 and waitid: it answers
// ptrace requests, and waits for which an emulated stop is pending.
func (r *recorder) ptraceEntry(t *task, nr int, a [6]uint64) error {
	switch nr {
	case unix.SYS_PTRACE:
		return r.ptraceRequest(t, a)
	case unix.SYS_WAIT4, unix.SYS_WAITID:
		return r.emuWait(t, nr, a)
	}
	return nil
}

func unsupportedPtrace(t *task, req uint64, why string) error {
	name, ok := reqNames[req]
	if !ok {
		name = fmt.Sprintf("request_0x%x", req)
	}
	return &UnsupportedError{Tid: t.tid, Name: "ptrace(" + name + ")", Reason: why}
}

// emuTracee returns the task pid if it is an emulated tracee of t's
// process (and, if stopped, in an emulated stop), or an errno.
func (r *recorder) emuTracee(t *task, pid int, stopped bool) (*task, int64) {
	o := r.tasks[pid]
	if o == nil || o.emu == nil || o.emu.tracer != tracee.Tgid(t.tid) {
		return nil, -int64(unix.ESRCH)
	}
	if stopped && !o.emu.stopped {
		return nil, -int64(unix.ESRCH)
	}
	return o, 0
}

func (r *recorder) ptraceRequest(t *task, a [6]uint64) error {
	req, pid, addr, data := a[0], int(int32(a[1])), a[2], a[3]
	ret := int64(0)
	defer func() { r.nullifyCall(t, ret) }()
	switch req {
	case reqTraceMe:
		ppid := ppidOf(t.tid)
		if t.emu != nil && t.emu.tracer != 0 || r.processTask(ppid) == nil {
			// Already traced (by gorr, when the parent is not recorded).
			ret = -int64(unix.EPERM)
			return nil
		}
		t.emu = t.emu.attach(ppid, false, true)
		return nil
	case reqAttach, reqSeize:
		o := r.tasks[pid]
		switch {
		case o == nil:
			ret = -int64(unix.ESRCH)
		case o.emu != nil && o.emu.tracer != 0, tracee.Tgid(pid) == tracee.Tgid(t.tid):
			ret = -int64(unix.EPERM)
		case req == reqSeize && data&^supportedOptions != 0:
			return unsupportedPtrace(t, req, fmt.Sprintf("PTRACE_SEIZE with options 0x%x (only TRACESYSGOOD, TRACEEXIT, EXITKILL, TRACEFORK, TRACEVFORK, TRACECLONE, TRACEEXEC and TRACEVFORKDONE are emulated)", data))
		default:
			// Only a process leader is a child the real wait reports.
			child := tracee.Tgid(pid) == pid && ppidOf(pid) == tracee.Tgid(t.tid)
			o.emu = o.emu.attach(tracee.Tgid(t.tid), req == reqSeize, child)
			if req == reqSeize {
				o.emu.options = data
			}
			if o.state == stStopped {
				// In a job-control stop: the kernel turns it into a
				// ptrace stop that the tracer's wait reports at once.
				// ATTACH's SIGSTOP stays pending, delivered once the
				// tracer resumes it.
				r.stopped--
				if _, err := r.ptraceGroupStop(o, o.groupSig); err != nil {
					return err
				}
			}
			if req == reqSeize {
				return nil
			}
			// PTRACE_ATTACH sends SIGSTOP; its delivery becomes the
			// first emulated stop.
			if err := unix.Tgkill(tracee.Tgid(pid), pid, unix.SIGSTOP); err != nil {
				ret = -int64(unix.ESRCH)
			}
		}
		return nil
	case reqInterrupt:
		o, e := r.emuTracee(t, pid, false)
		switch {
		case o == nil:
			ret = e
		case !o.emu.seized:
			ret = -int64(unix.EIO)
		case o.emu.stopped:
		case o.state == stReady:
			return r.emuStop(o, 0, r.eventStopStatus(o))
		default:
			// In a system call: interrupt it with a SIGSTOP that becomes
			// the stop (the call restarts when the tracee resumes).
			o.emu.interrupt = true
			_ = unix.Tgkill(tracee.Tgid(pid), pid, unix.SIGSTOP)
		}
		return nil
	case reqKill:
		o, e := r.emuTracee(t, pid, false)
		if o == nil {
			ret = e
			return nil
		}
		_ = unix.Tgkill(tracee.Tgid(pid), pid, unix.SIGKILL)
		r.emuResume(o, 0)
		return nil
	}
	o, e := r.emuTracee(t, pid, true)
	if o == nil {
		switch req {
		case reqPeekText, reqPeekData, reqPeekUser, reqPokeText, reqPokeData, reqPokeUser, reqCont, reqGetRegs,
			reqSetRegs, reqGetFPRegs, reqSetFPRegs, reqDetach, reqSetOptions, reqGetEvtMsg, reqGetSigInfo, reqSetSigInfo,
			reqGetRegSet, reqSetRegSet, reqArchPrctl, reqSyscall, reqSysemu, reqSyscallInf:
			ret = e
			return nil
		}
		return unsupportedPtrace(t, req, "this request is not emulated yet")
	}
	var err error
	ret, err = r.ptraceOn(t, o, req, addr, data)
	return err
}

// ptraceOn performs a request of tracer t on its stopped tracee o.
func (r *recorder) ptraceOn(t, o *task, req, addr, data uint64) (int64, error) {
	switch req {
	case reqPokeUser, reqSetRegs, reqSetFPRegs, reqSetRegSet:
		if o.emu.inCall {
			return 0, unsupportedPtrace(t, req, "changing registers at a fork/vfork/clone event stop is not emulated")
		}
	}
	eio, efault := -int64(unix.EIO), -int64(unix.EFAULT)
	put := func(b []byte) int64 {
		if data == 0 || t.mem.WriteMem(data, b) != nil {
			return efault
		}
		return 0
	}
	get := func(n int) ([]byte, bool) {
		b := make([]byte, n)
		return b, data != 0 && t.mem.ReadMem(data, b) == nil
	}
	word := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	switch req {
	case reqPeekText, reqPeekData:
		b := make([]byte, 8)
		if o.mem.ReadMem(addr, b) != nil {
			return eio, nil
		}
		return put(b), nil
	case reqPokeText, reqPokeData:
		b := word(data)
		if o.mem.WriteMem(addr, b) != nil {
			return eio, nil
		}
		return 0, r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(o.tid), Mem: []trace.MemWrite{{Addr: addr, Data: b}}})
	case reqPeekUser, reqPokeUser:
		if addr%8 != 0 || addr >= userRegsSize {
			if addr >= 848 && addr < 848+8*8 && req == reqPeekUser {
				return put(word(0)), nil // debug registers: none set
			}
			if req == reqPokeUser && addr >= 848 && addr < 848+8*8 {
				return 0, unsupportedPtrace(t, req, "hardware debug registers cannot be emulated")
			}
			return eio, nil
		}
		regs, err := o.thread().GetRegs()
		if err != nil {
			return -int64(unix.ESRCH), nil
		}
		if req == reqPeekUser {
			return put(word(regs[addr/8])), nil
		}
		regs[addr/8] = data
		return r.emuSetRegs(o, &regs)
	case reqGetRegs:
		regs, err := o.thread().GetRegs()
		if err != nil {
			return -int64(unix.ESRCH), nil
		}
		b := make([]byte, 0, userRegsSize)
		for _, v := range regs {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		return put(b), nil
	case reqSetRegs:
		b, ok := get(userRegsSize)
		if !ok {
			return efault, nil
		}
		var regs trace.Regs
		for i := range regs {
			regs[i] = binary.LittleEndian.Uint64(b[i*8:])
		}
		return r.emuSetRegs(o, &regs)
	case reqGetFPRegs:
		xs, err := o.thread().GetXState(r.xsaveSize)
		if err != nil || len(xs) < 512 {
			return eio, nil
		}
		return put(xs[:512]), nil
	case reqSetFPRegs:
		b, ok := get(512)
		if !ok {
			return efault, nil
		}
		xs, err := o.thread().GetXState(r.xsaveSize)
		if err != nil || len(xs) < 512 {
			return eio, nil
		}
		copy(xs, b)
		if err := o.thread().SetXState(xs); err != nil {
			return eio, nil
		}
		return 0, r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(o.tid), XState: xs})
	case reqGetSigInfo:
		if o.emu.sig == 0 {
			return -int64(unix.EINVAL), nil
		}
		si, err := o.thread().GetSigInfo()
		if err != nil {
			return -int64(unix.EINVAL), nil
		}
		return put(si[:]), nil
	case reqSetSigInfo:
		b, ok := get(128)
		if !ok {
			return efault, nil
		}
		if o.emu.sig == 0 {
			return -int64(unix.EINVAL), nil
		}
		var si ptrace.SigInfo
		copy(si[:], b)
		if err := o.thread().SetSigInfo(&si); err != nil {
			return -int64(unix.EINVAL), nil
		}
		return 0, nil
	case reqGetEvtMsg:
		return put(word(o.emu.eventMsg)), nil
	case reqGetRegSet, reqSetRegSet:
		return r.emuRegSet(t, o, req, addr, data)
	case reqArchPrctl:
		// data is the ARCH_* code, addr the value or the result pointer.
		regs, err := o.thread().GetRegs()
		if err != nil {
			return -int64(unix.ESRCH), nil
		}
		switch data {
		case 0x1003: // ARCH_GET_FS
			put2 := binary.LittleEndian.AppendUint64(nil, regs[ptrace.FSBASE])
			if addr == 0 || t.mem.WriteMem(addr, put2) != nil {
				return efault, nil
			}
			return 0, nil
		case 0x1004: // ARCH_GET_GS
			put2 := binary.LittleEndian.AppendUint64(nil, regs[ptrace.GSBASE])
			if addr == 0 || t.mem.WriteMem(addr, put2) != nil {
				return efault, nil
			}
			return 0, nil
		case 0x1002: // ARCH_SET_FS
			regs[ptrace.FSBASE] = addr
		case 0x1001: // ARCH_SET_GS
			regs[ptrace.GSBASE] = addr
		default:
			return 0, unsupportedPtrace(t, req, fmt.Sprintf("arch_prctl code 0x%x is not emulated", data))
		}
		if o.emu.inCall {
			return 0, unsupportedPtrace(t, req, "changing registers at a fork/vfork/clone event stop is not emulated")
		}
		return r.emuSetRegs(o, &regs)
	case reqSetOptions:
		if data&^supportedOptions != 0 {
			return 0, unsupportedPtrace(t, req, fmt.Sprintf("options 0x%x (only TRACESYSGOOD, TRACEEXIT, EXITKILL, TRACEFORK, TRACEVFORK, TRACECLONE, TRACEEXEC and TRACEVFORKDONE are emulated)", data))
		}
		o.emu.options = data
		return 0, nil
	case reqCont, reqDetach, reqSyscall, reqSysemu:
		if data > 64 {
			return eio, nil
		}
		if req == reqDetach {
			o.emu.tracer = 0
		}
		o.emu.resumed = req
		return 0, r.emuResume(o, int(data))
	case reqSyscallInf:
		return r.emuSyscallInfo(t, o, addr, data)
	}
	return 0, unsupportedPtrace(t, req, "this request is not emulated yet")
}

// emuRegSet handles PTRACE_GETREGSET/SETREGSET for the general
// registers (NT_PRSTATUS), FXSAVE (NT_PRFPREG) and XSAVE (NT_X86_XSTATE)
// areas; data points to an iovec.
func (r *recorder) emuRegSet(t, o *task, req, nt, data uint64) (int64, error) {
	var iov [16]byte
	if data == 0 || t.mem.ReadMem(data, iov[:]) != nil {
		return -int64(unix.EFAULT), nil
	}
	base, n := binary.LittleEndian.Uint64(iov[:8]), binary.LittleEndian.Uint64(iov[8:])
	var cur []byte
	switch nt {
	case 1: // NT_PRSTATUS
		regs, err := o.thread().GetRegs()
		if err != nil {
			return -int64(unix.ESRCH), nil
		}
		for _, v := range regs {
			cur = binary.LittleEndian.AppendUint64(cur, v)
		}
	case 2, 0x202: // NT_PRFPREG, NT_X86_XSTATE
		xs, err := o.thread().GetXState(r.xsaveSize)
		if err != nil || len(xs) < 512 {
			return -int64(unix.EIO), nil
		}
		cur = xs
		if nt == 2 {
			cur = xs[:512]
		}
	default:
		return 0, unsupportedPtrace(t, req, fmt.Sprintf("register set 0x%x is not emulated", nt))
	}
	n = min(n, uint64(len(cur)))
	if req == reqGetRegSet {
		binary.LittleEndian.PutUint64(iov[8:], n)
		if t.mem.WriteMem(base, cur[:n]) != nil || t.mem.WriteMem(data, iov[:]) != nil {
			return -int64(unix.EFAULT), nil
		}
		return 0, nil
	}
	b := make([]byte, n)
	if t.mem.ReadMem(base, b) != nil {
		return -int64(unix.EFAULT), nil
	}
	copy(cur, b)
	if nt == 1 {
		var regs trace.Regs
		for i := range regs {
			regs[i] = binary.LittleEndian.Uint64(cur[i*8:])
		}
		return r.emuSetRegs(o, &regs)
	}
	xs, err := o.thread().GetXState(r.xsaveSize)
	if err != nil {
		return -int64(unix.EIO), nil
	}
	copy(xs, cur)
	if err := o.thread().SetXState(xs); err != nil {
		return -int64(unix.EIO), nil
	}
	return 0, r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(o.tid), XState: xs})
}

func (r *recorder) emuSetRegs(o *task, regs *trace.Regs) (int64, error) {
	if err := o.thread().SetRegs(regs); err != nil {
		return -int64(unix.EIO), nil
	}
	o.setLast(*regs, false)
	after := *regs
	return 0, r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(o.tid), Regs2: &after})
}

// emuResume ends o's emulated stop (PTRACE_CONT, DETACH, KILL), with sig
// delivered if the stop was a signal-delivery stop.
func (r *recorder) emuResume(o *task, sig int) error {
	e := o.emu
	if !e.stopped {
		return nil
	}
	wasSig := e.sig
	e.stopped, e.pending, e.sig = false, false, 0
	if e.sysStop != 0 {
		return r.emuSyscallResume(o, sig)
	}
	if e.inCall {
		// Stopped at a fork/clone event: finish the call (a vfork
		// parent then sleeps until its child execs or exits).
		e.inCall = false
		o.state = stKernel
		return r.lost(o, o.thread().Resume(ptrace.Syscall, 0))
	}
	if o.dying {
		// Stopped at PTRACE_EVENT_EXIT: let it die.
		o.state = stKernel
		return r.lost(o, o.thread().Resume(ptrace.Cont, 0))
	}
	o.state = stReady
	o.pendingSig = 0
	if sig == 0 || wasSig == 0 {
		return nil
	}
	if linux.DefaultAction(sig) == linux.Stop {
		if caught, ignored := disposition(o.tid, sig); !caught && !ignored {
			return r.emuGroupStop(o, sig)
		}
	}
	si, err := o.thread().GetSigInfo()
	if err != nil {
		return r.lost(o, err)
	}
	if si.Signo() != sig {
		// The kernel makes a new siginfo when the tracer changes the
		// signal: SI_USER from the tracer.
		si = ptrace.SigInfo{}
		binary.LittleEndian.PutUint32(si[0:], uint32(sig))
		binary.LittleEndian.PutUint32(si[16:], uint32(e.tracer))
		if err := o.thread().SetSigInfo(&si); err != nil {
			return r.lost(o, err)
		}
	}
	regs, err := o.thread().GetRegs()
	if err != nil {
		return r.lost(o, err)
	}
	e.delivering = true
	defer func() { e.delivering = false }()
	return r.deliver(o, sig, &si, &regs)
}

// ptraceSyscallEntry: t is at the entry of a system call (its entry
// event recorded). If its emulated tracer resumed it with PTRACE_SYSCALL
// or PTRACE_SYSEMU, it stops there for the tracer, which may change the
// call; emuSyscallResume goes on with the call the tracer left. It
// reports whether t now stays stopped.
func (r *recorder) ptraceSyscallEntry(t *task) (bool, error) {
	e := t.emu
	if e == nil || e.tracer == 0 || e.resumed != reqSyscall && e.resumed != reqSysemu || r.processTask(e.tracer) == nil {
		return false, nil
	}
	e.sysemu = e.resumed == reqSysemu
	e.sysStop = sysEntry
	return true, r.emuStop(t, 0, r.syscallStopStatus(t))
}

// ptraceSyscallExit: t's system call returned (its exit event recorded).
// If its tracer asked to see the exit, t stops there.
func (r *recorder) ptraceSyscallExit(t *task) error {
	e := t.emu
	if e == nil || !e.exitStop {
		return nil
	}
	e.exitStop = false
	if e.tracer == 0 || r.processTask(e.tracer) == nil {
		return nil
	}
	e.sysStop = sysExit
	return r.emuStop(t, 0, r.syscallStopStatus(t))
}

// syscallStopStatus is the wait status of a syscall stop: SIGTRAP, with
// 0x80 under PTRACE_O_TRACESYSGOOD.
func (r *recorder) syscallStopStatus(t *task) int {
	sig := int(unix.SIGTRAP)
	if t.emu.options&unix.PTRACE_O_TRACESYSGOOD != 0 {
		sig |= 0x80
	}
	return sig<<8 | 0x7f
}

// emuSyscallResume ends an emulated syscall stop of o. At an entry stop
// the call the tracer left in the registers goes in (a changed number
// becomes the recorded call, -1 skips it with the tracer's rax); at an
// exit stop o is ready to run. A signal given to the resume is sent to
// o, as the kernel does.
func (r *recorder) emuSyscallResume(o *task, sig int) error {
	e := o.emu
	stop := e.sysStop
	e.sysStop = 0
	if sig != 0 {
		if err := unix.Tgkill(tracee.Tgid(o.tid), o.tid, unix.Signal(sig)); err != nil {
			return r.lost(o, err)
		}
	}
	if stop == sysExit {
		o.state = stReady
		o.pendingSig = 0
		return nil
	}
	e.exitStop = e.tracer != 0 && e.resumed == reqSyscall
	regs, err := o.thread().GetRegs()
	if err != nil {
		return r.lost(o, err)
	}
	o.state = stKernel
	if nr := linux.Nr(regs[ptrace.ORIGRAX]); nr != o.sysno {
		switch sc := linux.Lookup(nr); {
		case int64(regs[ptrace.ORIGRAX]) == -1:
			// Skipped: the kernel leaves rax as the tracer set it.
			e.sysemu = true
		case sc != nil && sc.Unsupported != "":
			return &UnsupportedError{Tid: o.tid, Name: sc.Name, Reason: sc.Unsupported}
		case sc != nil && sc.Replay == linux.Execute, o.sc0 != nil && o.sc0.Replay == linux.Execute:
			return &UnsupportedError{Tid: o.tid, Name: "ptrace(PTRACE_SYSCALL)", Reason: fmt.Sprintf("an emulated tracer changed %s into %s, and replay runs one of them for real", linux.Name(o.sysno), linux.Name(nr))}
		default:
			o.sysno, o.sc0 = nr, sc
		}
	}
	o.entry = regs
	return r.entryContinue(o)
}

// emuSyscallInfo answers PTRACE_GET_SYSCALL_INFO (addr: the buffer's
// size, data: the buffer) from o's emulated stop.
func (r *recorder) emuSyscallInfo(t, o *task, size, data uint64) (int64, error) {
	regs, err := o.thread().GetRegs()
	if err != nil {
		return -int64(unix.ESRCH), nil
	}
	b := make([]byte, 88)
	binary.LittleEndian.PutUint32(b[4:], 0xc000003e) // AUDIT_ARCH_X86_64
	binary.LittleEndian.PutUint64(b[8:], regs[ptrace.RIP])
	binary.LittleEndian.PutUint64(b[16:], regs[ptrace.RSP])
	n := 24
	switch o.emu.sysStop {
	case sysEntry:
		b[0] = unix.PTRACE_SYSCALL_INFO_ENTRY
		binary.LittleEndian.PutUint64(b[24:], regs[ptrace.ORIGRAX])
		for i, v := range ptrace.SyscallArgs(&regs) {
			binary.LittleEndian.PutUint64(b[32+8*i:], v)
		}
		n = 80
	case sysExit:
		b[0] = unix.PTRACE_SYSCALL_INFO_EXIT
		rv := int64(regs[ptrace.RAX])
		binary.LittleEndian.PutUint64(b[24:], uint64(rv))
		if rv < 0 && rv >= -4095 {
			b[32] = 1
		}
		n = 33
	}
	if c := min(int(size), n); c > 0 {
		if data == 0 || t.mem.WriteMem(data, b[:c]) != nil {
			return -int64(unix.EFAULT), nil
		}
	}
	return int64(n), nil
}

// ptraceSignalStop turns the delivery of sig to an emulated tracee into
// an emulated signal-delivery stop. It reports whether it did.
func (r *recorder) ptraceSignalStop(t *task, sig int, si *ptrace.SigInfo, regs *trace.Regs) (bool, error) {
	e := t.emu
	if e != nil && e.kicked && sig == int(unix.SIGSTOP) {
		// Our own SIGSTOP that made a wait return: not the program's.
		e.kicked = false
		before := *regs
		t.pendingSig = 0
		t.setLast(*regs, false)
		return true, r.emit(&trace.Event{Kind: trace.KindSignal, Tid: int32(t.tid), Signo: int32(sig), Regs: &before,
			SigInfo: append([]byte(nil), si[:]...), Flags: SigIgnored})
	}
	if e == nil || e.tracer == 0 || e.delivering || sig == int(unix.SIGKILL) {
		return false, nil
	}
	before := *regs
	ev := &trace.Event{Kind: trace.KindSignal, Tid: int32(t.tid), Signo: int32(sig), Regs: &before,
		SigInfo: append([]byte(nil), si[:]...), Flags: SigPtraceStop}
	if err := r.emit(ev); err != nil {
		return true, err
	}
	t.setLast(*regs, false)
	t.pendingSig = 0
	if e.interrupt && sig == int(unix.SIGSTOP) {
		e.interrupt = false
		return true, r.emuStop(t, 0, r.eventStopStatus(t))
	}
	return true, r.emuStop(t, sig, sig<<8|0x7f)
}

// eventStopStatus is the wait status of a PTRACE_EVENT_STOP of a seized
// tracee (PTRACE_INTERRUPT): it carries the last group-stop signal.
func (r *recorder) eventStopStatus(t *task) int {
	sig := t.emu.group
	if sig == 0 {
		sig = int(unix.SIGTRAP)
	}
	return unix.PTRACE_EVENT_STOP<<16 | sig<<8 | 0x7f
}

// emuGroupStop: the tracer resumed o with a stop signal (SIGSTOP,
// SIGTSTP, ...) whose default action applies: o enters a group stop,
// which its tracer sees as another stop (PTRACE_EVENT_STOP if seized).
func (r *recorder) emuGroupStop(o *task, sig int) error {
	regs, err := o.thread().GetRegs()
	if err != nil {
		return r.lost(o, err)
	}
	si, _ := o.thread().GetSigInfo()
	before := regs
	if err := r.emit(&trace.Event{Kind: trace.KindSignal, Tid: int32(o.tid), Signo: int32(sig), Regs: &before,
		SigInfo: append([]byte(nil), si[:]...), Flags: SigIgnored | SigPtraceResumed}); err != nil {
		return err
	}
	o.emu.group = sig
	status := sig<<8 | 0x7f
	if o.emu.seized {
		status |= unix.PTRACE_EVENT_STOP << 16
	}
	return r.emuStop(o, 0, status)
}

// ptraceGroupStop: t, an emulated tracee, entered a group stop (its
// process was stopped by a signal): its tracer sees it as a stop
// (PTRACE_EVENT_STOP if seized) and it stays there until the tracer
// resumes it. It reports whether t is now in that emulated stop.
func (r *recorder) ptraceGroupStop(t *task, sig int) (bool, error) {
	e := t.emu
	if e == nil || e.tracer == 0 || r.processTask(e.tracer) == nil {
		return false, nil
	}
	e.group = sig
	status := sig<<8 | 0x7f
	if e.seized {
		status |= unix.PTRACE_EVENT_STOP << 16
	}
	return true, r.emuStop(t, 0, status)
}

// ptraceNewTask: parent, an emulated tracee whose tracer asked for
// PTRACE_O_TRACEFORK/VFORK/CLONE, created child. The child is traced by
// the same tracer (first stop: PTRACE_EVENT_STOP if seized, else
// SIGSTOP) and the parent stops at the event. It reports whether the
// parent now stays stopped.
func (r *recorder) ptraceNewTask(parent, child *task, event int) (bool, error) {
	e := parent.emu
	if e == nil || e.tracer == 0 {
		return false, nil
	}
	opt := map[int]uint64{unix.PTRACE_EVENT_FORK: unix.PTRACE_O_TRACEFORK, unix.PTRACE_EVENT_VFORK: unix.PTRACE_O_TRACEVFORK,
		unix.PTRACE_EVENT_CLONE: unix.PTRACE_O_TRACECLONE}[event]
	if e.options&opt == 0 {
		return false, nil
	}
	child.emu = child.emu.attach(e.tracer, e.seized, false)
	child.emu.options = e.options
	if e.seized {
		if err := r.emuStop(child, 0, r.eventStopStatus(child)); err != nil {
			return true, err
		}
	} else if err := unix.Tgkill(tracee.Tgid(child.tid), child.tid, unix.SIGSTOP); err != nil {
		return true, fmt.Errorf("new tracee %d: %w", child.tid, err)
	}
	e.eventMsg = uint64(child.tid)
	parent.state = stKernel
	if err := r.emuStop(parent, 0, event<<16|int(unix.SIGTRAP)<<8|0x7f); err != nil {
		return true, err
	}
	e.inCall = true
	return true, nil
}

// ptraceExitStop: t reached PTRACE_EVENT_EXIT; its emulated tracer asked
// to see it (PTRACE_O_TRACEEXIT). It reports whether t now stays stopped.
func (r *recorder) ptraceExitStop(t *task) (bool, error) {
	e := t.emu
	if e == nil || e.tracer == 0 {
		return false, nil
	}
	e.stopped, e.pending, e.sig = false, false, 0
	if e.options&unix.PTRACE_O_TRACEEXIT == 0 || r.processTask(e.tracer) == nil {
		return false, nil
	}
	e.eventMsg, _ = t.thread().EventMsg()
	t.dying = true
	return true, r.emuStop(t, 0, unix.PTRACE_EVENT_EXIT<<16|int(unix.SIGTRAP)<<8|0x7f)
}

// emuStop puts t into an emulated stop and tells its tracer with SIGCHLD
// (which also interrupts a wait already blocked in the kernel; the
// restarted wait finds the stop).
func (r *recorder) emuStop(t *task, sig, status int) error {
	e := t.emu
	e.stopped, e.pending, e.sig, e.status = true, true, sig, status
	t.state = stEmuStopped
	r.notifyTracer(e.tracer, t.tid, 4, status>>8&0xffff) // CLD_TRAPPED
	return nil
}

// notifyTracer sends SIGCHLD (code CLD_*, status) about tracee tid to
// its emulated tracer, waking a wait it is blocked in.
func (r *recorder) notifyTracer(tracer, tid, code, status int) {
	tr := r.processTask(tracer)
	if tr == nil {
		return
	}
	for _, o := range r.tasks {
		if tracee.Tgid(o.tid) == tracer && o.state == stKernel && (o.sysno == unix.SYS_WAIT4 || o.sysno == unix.SYS_WAITID) {
			tr = o
			break
		}
	}
	var si ptrace.SigInfo
	binary.LittleEndian.PutUint32(si[0:], uint32(unix.SIGCHLD))
	binary.LittleEndian.PutUint32(si[8:], uint32(code))
	binary.LittleEndian.PutUint32(si[16:], uint32(tid))
	binary.LittleEndian.PutUint32(si[20:], uint32(os.Getuid()))
	binary.LittleEndian.PutUint32(si[24:], uint32(status))
	tr.reraised[int(unix.SIGCHLD)] = si
	if err := unix.Tgkill(tracer, tr.tid, unix.SIGCHLD); err != nil {
		delete(tr.reraised, int(unix.SIGCHLD))
	}
	if tr.state == stKernel && (tr.sysno == unix.SYS_WAIT4 || tr.sysno == unix.SYS_WAITID) {
		if m, err := strconv.ParseUint(procStatus(tr.tid, "SigBlk"), 16, 64); err == nil && m&(1<<(unix.SIGCHLD-1)) != 0 {
			// SIGCHLD is blocked and would not end the wait (the kernel
			// wakes a real tracer's wait directly): stop it with a
			// SIGSTOP of ours; the wait restarts and finds the stop.
			if tr.emu == nil {
				tr.emu = &emuTask{}
			}
			tr.emu.kicked = true
			if err := unix.Tgkill(tracer, tr.tid, unix.SIGSTOP); err != nil {
				tr.emu.kicked = false
			}
		}
	}
}

// process is t's process id: the one kept since t was added (reading
// /proc/TID/status at every wait of a shell is slow), else read now.
func (t *task) process() int {
	if t.tgid != 0 {
		return t.tgid
	}
	return tracee.Tgid(t.tid)
}

// emuWait answers a wait4/waitid of a tracer from a pending emulated
// stop; otherwise the call runs for real.
func (r *recorder) emuWait(t *task, nr int, a [6]uint64) error {
	tg := t.process()
	var match func(o *task) bool
	var nowait bool
	if nr == unix.SYS_WAIT4 {
		pid := int(int32(a[0]))
		match = func(o *task) bool { return pid <= 0 || o.tid == pid }
	} else {
		idtype, id := a[0], int(int32(a[1]))
		nowait = a[3]&unix.WNOWAIT != 0
		match = func(o *task) bool {
			return idtype == unix.P_ALL || idtype == unix.P_PGID || idtype == unix.P_PID && o.tid == id
		}
	}
	if done, err := r.emuWaitExit(t, nr, a, match, nowait); done || err != nil {
		return err
	}
	var found, traced *task
	for _, o := range r.tasks {
		if o.emu == nil || o.emu.tracer != tg || !match(o) {
			continue
		}
		traced = o
		if o.emu.pending && (found == nil || o.tid < found.tid) {
			found = o
		}
	}
	if found == nil {
		if traced != nil && (nr == unix.SYS_WAIT4 && int(int32(a[0])) == traced.tid || nr == unix.SYS_WAITID && a[0] == unix.P_PID) &&
			!traced.emu.child {
			// The kernel would answer ECHILD: block in ppoll instead (as
			// rr does) until the SIGCHLD of the stop interrupts it; the
			// restarted wait then finds the stop.
			if t.emu == nil {
				t.emu = &emuTask{}
			}
			saved := t.entry
			t.emu.paused = &saved
			regs := t.entry
			regs[ptrace.ORIGRAX] = unix.SYS_PPOLL
			regs[ptrace.RDI], regs[ptrace.RSI], regs[ptrace.RDX], regs[ptrace.R10] = 0, 0, 0, 0
			if err := t.thread().SetRegs(&regs); err != nil {
				t.emu.paused = nil
				return r.lost(t, err)
			}
		}
		return nil
	}
	if nr == unix.SYS_WAIT4 {
		if a[1] != 0 && t.mem.WriteMem(a[1], binary.LittleEndian.AppendUint32(nil, uint32(found.emu.status))) != nil {
			r.nullifyCall(t, -int64(unix.EFAULT))
			return nil
		}
		if a[3] != 0 {
			_ = t.mem.WriteMem(a[3], make([]byte, 144))
		}
		r.nullifyCall(t, int64(found.tid))
	} else {
		si := make([]byte, 128)
		binary.LittleEndian.PutUint32(si[0:], uint32(unix.SIGCHLD))
		binary.LittleEndian.PutUint32(si[8:], 4) // CLD_TRAPPED
		binary.LittleEndian.PutUint32(si[16:], uint32(found.tid))
		binary.LittleEndian.PutUint32(si[20:], uint32(os.Getuid()))
		binary.LittleEndian.PutUint32(si[24:], uint32(found.emu.status>>8&0xffff))
		if a[2] != 0 && t.mem.WriteMem(a[2], si) != nil {
			r.nullifyCall(t, -int64(unix.EFAULT))
			return nil
		}
		if a[4] != 0 {
			_ = t.mem.WriteMem(a[4], make([]byte, 144))
		}
		r.nullifyCall(t, 0)
	}
	if !nowait {
		found.emu.pending = false
	}
	return nil
}

// emuWaitExit answers a wait from the recorded exit of a tracee that is
// not the tracer's child.
func (r *recorder) emuWaitExit(t *task, nr int, a [6]uint64, match func(*task) bool, nowait bool) (bool, error) {
	tg := t.process()
	for _, o := range r.tasks {
		if o.emu == nil || o.process() != tg {
			continue
		}
		for i, x := range o.emu.exits {
			if !match(&task{tid: x.tid}) {
				continue
			}
			if nr == unix.SYS_WAIT4 {
				if a[1] != 0 && t.mem.WriteMem(a[1], binary.LittleEndian.AppendUint32(nil, uint32(x.status))) != nil {
					r.nullifyCall(t, -int64(unix.EFAULT))
					return true, nil
				}
				if a[3] != 0 {
					_ = t.mem.WriteMem(a[3], make([]byte, 144))
				}
				r.nullifyCall(t, int64(x.tid))
			} else {
				code, st := 1, x.status.ExitStatus() // CLD_EXITED
				if x.status.Signaled() {
					code, st = 2, int(x.status.Signal()) // CLD_KILLED
				}
				si := make([]byte, 128)
				binary.LittleEndian.PutUint32(si[0:], uint32(unix.SIGCHLD))
				binary.LittleEndian.PutUint32(si[8:], uint32(code))
				binary.LittleEndian.PutUint32(si[16:], uint32(x.tid))
				binary.LittleEndian.PutUint32(si[20:], uint32(os.Getuid()))
				binary.LittleEndian.PutUint32(si[24:], uint32(st))
				if a[2] != 0 && t.mem.WriteMem(a[2], si) != nil {
					r.nullifyCall(t, -int64(unix.EFAULT))
					return true, nil
				}
				r.nullifyCall(t, 0)
			}
			if !nowait {
				o.emu.exits = append(o.emu.exits[:i], o.emu.exits[i+1:]...)
			}
			return true, nil
		}
	}
	return false, nil
}

// ptraceExitFix: at the exit of a wait the recorder turned into ppoll,
// the wait's registers come back (so a restart repeats the wait, and
// replay sees the call it expects) and an interruption reads as wait's
// own -ERESTARTSYS.
func (r *recorder) ptraceExitFix(t *task, regs *trace.Regs) error {
	if t.emu == nil {
		return nil
	}
	if e := t.emu; e.tracer != 0 && e.options&unix.PTRACE_O_TRACEVFORKDONE != 0 && int64(regs[ptrace.RAX]) > 0 {
		if flags, _ := r.cloneFlags(t); (t.sysno == unix.SYS_VFORK || t.sysno == unix.SYS_CLONE || t.sysno == unix.SYS_CLONE3) && flags&unix.CLONE_VFORK != 0 {
			// PTRACE_EVENT_VFORK_DONE, at the vfork's exit.
			e.eventMsg = regs[ptrace.RAX]
			if err := r.emuStop(t, 0, unix.PTRACE_EVENT_VFORK_DONE<<16|int(unix.SIGTRAP)<<8|0x7f); err != nil {
				return err
			}
		}
	}
	if t.emu.paused == nil {
		return nil
	}
	saved := t.emu.paused
	t.emu.paused = nil
	for _, i := range []int{ptrace.ORIGRAX, ptrace.RDI, ptrace.RSI, ptrace.RDX, ptrace.R10} {
		regs[i] = saved[i]
	}
	if int64(regs[ptrace.RAX]) == -514 || int64(regs[ptrace.RAX]) == -int64(unix.EINTR) { // ERESTARTNOHAND
		regs[ptrace.RAX] = ^uint64(511) // -ERESTARTSYS
	}
	return r.lost(t, t.thread().SetRegs(regs))
}

// ptraceGone: t has exited. Its emulated tracees are detached (and
// resumed, or killed with PTRACE_O_EXITKILL) when its process is gone.
func (r *recorder) ptraceGone(t *task, status unix.WaitStatus) error {
	if e := t.emu; e != nil && e.tracer != 0 {
		if !e.child {
			if tr := r.processTask(e.tracer); tr != nil {
				if tr.emu == nil {
					tr.emu = &emuTask{}
				}
				tr.emu.exits = append(tr.emu.exits, emuExit{tid: t.tid, status: status})
				code, st := 1, status.ExitStatus()
				if status.Signaled() {
					code, st = 2, int(status.Signal())
				}
				r.notifyTracer(e.tracer, t.tid, code, st)
			}
		}
		e.tracer = 0
	}
	tg := t.tid
	if tracee.Tgid(t.tid) != t.tid && r.processTask(tracee.Tgid(t.tid)) != nil {
		return nil
	}
	for _, o := range r.tasks {
		if o == t || o.emu == nil || o.emu.tracer != tg {
			continue
		}
		if o.emu.options&unix.PTRACE_O_EXITKILL != 0 {
			_ = unix.Tgkill(tracee.Tgid(o.tid), o.tid, unix.SIGKILL)
		}
		o.emu.tracer = 0
		if err := r.emuResume(o, 0); err != nil {
			return err
		}
	}
	return nil
}

// ptraceExec: t completed an execve. A tracee attached without
// PTRACE_SEIZE gets the kernel's legacy SIGTRAP after exec (gorr's own
// PTRACE_O_TRACEEXEC suppresses the real one), which stops it for its
// tracer like any signal.
func (r *recorder) ptraceExec(t *task) error {
	e := t.emu
	if e == nil || e.tracer == 0 {
		return nil
	}
	if e.options&unix.PTRACE_O_TRACEEXEC != 0 {
		// PTRACE_EVENT_EXEC: the message is the tid before exec.
		e.eventMsg = uint64(t.exFormer)
		return r.emuStop(t, 0, unix.PTRACE_EVENT_EXEC<<16|int(unix.SIGTRAP)<<8|0x7f)
	}
	if e.seized {
		return nil
	}
	if err := unix.Tgkill(tracee.Tgid(t.tid), t.tid, unix.SIGTRAP); err != nil {
		return fmt.Errorf("tid %d: SIGTRAP after exec: %w", t.tid, err)
	}
	return nil
}

// procMemWrite: a write (write, writev, pwrite64, pwritev, pwritev2)
// through /proc/PID/mem or /proc/PID/task/TID/mem of a recorded process
// (its own, or another: debuggers plant breakpoints this way) changed its
// memory; it becomes a KindPtraceWrite event on it, so replay writes the
// same bytes at the same point.
func (r *recorder) procMemWrite(t *task, a linux.Args, ret int64) error {
	fd := int(int32(a[0]))
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd))
	if err != nil {
		return nil
	}
	var pid, tid int
	switch {
	case procPath(link, "/proc/%d/mem", &pid):
	case procPath(link, "/proc/%d/task/%d/mem", &pid, &tid):
	default:
		return nil
	}
	var addr uint64
	switch t.sysno {
	case unix.SYS_PWRITE64, unix.SYS_PWRITEV, unix.SYS_PWRITEV2:
		addr = a[3]
		if t.sysno == unix.SYS_PWRITEV2 && int64(addr) == -1 {
			addr = fdPos(t.tid, fd) - uint64(ret)
		}
	default: // write, writev: at the descriptor's position, now past the bytes
		addr = fdPos(t.tid, fd) - uint64(ret)
	}
	o := r.processTask(pid)
	if o == nil {
		return nil
	}
	b := make([]byte, ret)
	if err := o.mem.ReadMem(addr, b); err != nil {
		return fmt.Errorf("tid %d: read back a write to %s: %w", t.tid, link, err)
	}
	return r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(o.tid), Mem: []trace.MemWrite{{Addr: addr, Data: b}}})
}

// procPath parses link as format exactly (numbers only).
func procPath(link, format string, v ...any) bool {
	n, _ := fmt.Sscanf(link, format, v...)
	if n != len(v) {
		return false
	}
	vals := make([]any, len(v))
	for i, p := range v {
		vals[i] = *(p.(*int))
	}
	return fmt.Sprintf(format, vals...) == link
}

// fdPos reads the file position of tid's descriptor fd.
func fdPos(tid, fd int) uint64 {
	b, err := osfile.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", tid, fd))
	if err != nil {
		return 0
	}
	var pos uint64
	_, _ = fmt.Sscanf(string(b), "pos:\t%d", &pos)
	return pos
}

// processTask returns a recorded task of process tgid (its leader if
// present), or nil.
func (r *recorder) processTask(tgid int) *task {
	if t := r.tasks[tgid]; t != nil {
		return t
	}
	for _, t := range r.tasks {
		if tracee.Tgid(t.tid) == tgid {
			return t
		}
	}
	return nil
}

// ppidOf reads the parent process id of tid.
func ppidOf(tid int) int {
	n, _ := strconv.Atoi(procStatus(tid, "PPid"))
	return n
}

// procStatus reads one field of /proc/tid/status ("" if absent).
func procStatus(tid int, key string) string {
	b, err := osfile.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return ""
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(key+":\t")); ok {
			return string(v)
		}
	}
	return ""
}
