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
	reqSeize      = 0x4206
)

var reqNames = map[uint64]string{
	9: "PTRACE_SINGLESTEP", 24: "PTRACE_SYSCALL", 31: "PTRACE_SYSEMU", 32: "PTRACE_SYSEMU_SINGLESTEP",
	0x4204: "PTRACE_GETREGSET", 0x4205: "PTRACE_SETREGSET", 0x4207: "PTRACE_INTERRUPT", 0x4208: "PTRACE_LISTEN",
	0x4209: "PTRACE_PEEKSIGINFO", 0x420a: "PTRACE_GETSIGMASK", 0x420b: "PTRACE_SETSIGMASK",
	0x420c: "PTRACE_SECCOMP_GET_FILTER", 0x420d: "PTRACE_SECCOMP_GET_METADATA", 0x420e: "PTRACE_GET_SYSCALL_INFO",
	25: "PTRACE_GET_THREAD_AREA", 26: "PTRACE_SET_THREAD_AREA", 30: "PTRACE_ARCH_PRCTL", 0x4210: "PTRACE_GET_RSEQ_CONFIGURATION",
}

// supportedOptions are the PTRACE_O_* options the emulation honours.
const supportedOptions = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_TRACEEXIT | unix.PTRACE_O_EXITKILL

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
		name = fmt.Sprintf("request 0x%x", req)
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
		t.emu = &emuTask{tracer: ppid}
		return nil
	case reqAttach, reqSeize:
		o := r.tasks[pid]
		switch {
		case o == nil:
			ret = -int64(unix.ESRCH)
		case o.emu != nil && o.emu.tracer != 0, tracee.Tgid(pid) == tracee.Tgid(t.tid):
			ret = -int64(unix.EPERM)
		case req == reqSeize && data&^supportedOptions != 0:
			return unsupportedPtrace(t, req, fmt.Sprintf("PTRACE_SEIZE with options 0x%x (only TRACESYSGOOD, TRACEEXIT and EXITKILL are emulated)", data))
		default:
			o.emu = &emuTask{tracer: tracee.Tgid(t.tid), seized: req == reqSeize}
			if req == reqSeize {
				o.emu.options = data
				return nil
			}
			// PTRACE_ATTACH sends SIGSTOP; its delivery becomes the
			// first emulated stop.
			if err := unix.Tgkill(tracee.Tgid(pid), pid, unix.SIGSTOP); err != nil {
				ret = -int64(unix.ESRCH)
			}
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
			reqSetRegs, reqGetFPRegs, reqSetFPRegs, reqDetach, reqSetOptions, reqGetEvtMsg, reqGetSigInfo, reqSetSigInfo:
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
		regs, err := ptrace.GetRegs(o.tid)
		if err != nil {
			return -int64(unix.ESRCH), nil
		}
		if req == reqPeekUser {
			return put(word(regs[addr/8])), nil
		}
		regs[addr/8] = data
		return r.emuSetRegs(o, &regs)
	case reqGetRegs:
		regs, err := ptrace.GetRegs(o.tid)
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
		xs, err := ptrace.GetXState(o.tid, r.xsaveSize)
		if err != nil || len(xs) < 512 {
			return eio, nil
		}
		return put(xs[:512]), nil
	case reqSetFPRegs:
		b, ok := get(512)
		if !ok {
			return efault, nil
		}
		xs, err := ptrace.GetXState(o.tid, r.xsaveSize)
		if err != nil || len(xs) < 512 {
			return eio, nil
		}
		copy(xs, b)
		if err := ptrace.SetXState(o.tid, xs); err != nil {
			return eio, nil
		}
		return 0, r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(o.tid), XState: xs})
	case reqGetSigInfo:
		if o.emu.sig == 0 {
			return -int64(unix.EINVAL), nil
		}
		si, err := ptrace.GetSigInfo(o.tid)
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
		if err := ptrace.SetSigInfo(o.tid, &si); err != nil {
			return -int64(unix.EINVAL), nil
		}
		return 0, nil
	case reqGetEvtMsg:
		return put(word(o.emu.eventMsg)), nil
	case reqSetOptions:
		if data&^supportedOptions != 0 {
			return 0, unsupportedPtrace(t, req, fmt.Sprintf("options 0x%x (only TRACESYSGOOD, TRACEEXIT and EXITKILL are emulated)", data))
		}
		o.emu.options = data
		return 0, nil
	case reqCont, reqDetach:
		if data > 64 {
			return eio, nil
		}
		if req == reqDetach {
			o.emu.tracer = 0
		}
		return 0, r.emuResume(o, int(data))
	}
	return 0, unsupportedPtrace(t, req, "this request is not emulated yet")
}

func (r *recorder) emuSetRegs(o *task, regs *trace.Regs) (int64, error) {
	if err := ptrace.SetRegs(o.tid, regs); err != nil {
		return -int64(unix.EIO), nil
	}
	o.lastRegs = *regs
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
	if o.dying {
		// Stopped at PTRACE_EVENT_EXIT: let it die.
		o.state = stKernel
		return r.lost(o, ptrace.Resume(o.tid, ptrace.Cont, 0))
	}
	o.state = stReady
	o.pendingSig = 0
	if sig == 0 || wasSig == 0 {
		return nil
	}
	si, err := ptrace.GetSigInfo(o.tid)
	if err != nil {
		return r.lost(o, err)
	}
	if si.Signo() != sig {
		// The kernel makes a new siginfo when the tracer changes the
		// signal: SI_USER from the tracer.
		si = ptrace.SigInfo{}
		binary.LittleEndian.PutUint32(si[0:], uint32(sig))
		binary.LittleEndian.PutUint32(si[16:], uint32(e.tracer))
		if err := ptrace.SetSigInfo(o.tid, &si); err != nil {
			return r.lost(o, err)
		}
	}
	regs, err := ptrace.GetRegs(o.tid)
	if err != nil {
		return r.lost(o, err)
	}
	e.delivering = true
	defer func() { e.delivering = false }()
	return r.deliver(o, sig, &si, &regs)
}

// ptraceSignalStop turns the delivery of sig to an emulated tracee into
// an emulated signal-delivery stop. It reports whether it did.
func (r *recorder) ptraceSignalStop(t *task, sig int, si *ptrace.SigInfo, regs *trace.Regs) (bool, error) {
	e := t.emu
	if e == nil || e.tracer == 0 || e.delivering || sig == int(unix.SIGKILL) {
		return false, nil
	}
	before := *regs
	ev := &trace.Event{Kind: trace.KindSignal, Tid: int32(t.tid), Signo: int32(sig), Regs: &before,
		SigInfo: append([]byte(nil), si[:]...), Flags: SigPtraceStop}
	if err := r.emit(ev); err != nil {
		return true, err
	}
	t.lastRegs = *regs
	t.pendingSig = 0
	return true, r.emuStop(t, sig, sig<<8|0x7f)
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
	e.eventMsg, _ = ptrace.EventMsg(t.tid)
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
	tr := r.processTask(e.tracer)
	if tr == nil {
		return nil
	}
	for _, o := range r.tasks {
		if tracee.Tgid(o.tid) == e.tracer && o.state == stKernel && (o.sysno == unix.SYS_WAIT4 || o.sysno == unix.SYS_WAITID) {
			tr = o
			break
		}
	}
	var si ptrace.SigInfo
	binary.LittleEndian.PutUint32(si[0:], uint32(unix.SIGCHLD))
	binary.LittleEndian.PutUint32(si[8:], 4) // CLD_TRAPPED
	binary.LittleEndian.PutUint32(si[16:], uint32(t.tid))
	binary.LittleEndian.PutUint32(si[20:], uint32(os.Getuid()))
	binary.LittleEndian.PutUint32(si[24:], uint32(status>>8&0xffff))
	tr.reraised[int(unix.SIGCHLD)] = si
	if err := unix.Tgkill(e.tracer, tr.tid, unix.SIGCHLD); err != nil {
		delete(tr.reraised, int(unix.SIGCHLD))
	}
	return nil
}

// emuWait answers a wait4/waitid of a tracer from a pending emulated
// stop; otherwise the call runs for real.
func (r *recorder) emuWait(t *task, nr int, a [6]uint64) error {
	tg := tracee.Tgid(t.tid)
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
			tracee.Tgid(ppidOf(traced.tid)) != tg {
			return &UnsupportedError{Tid: t.tid, Name: linux.Name(nr), Reason: "waiting for an emulated ptrace tracee that is not a child of the tracer"}
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

// ptraceGone: t has exited. Its emulated tracees are detached (and
// resumed, or killed with PTRACE_O_EXITKILL) when its process is gone.
func (r *recorder) ptraceGone(t *task) error {
	if t.emu != nil {
		t.emu.tracer = 0
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("PPid:\t")); ok {
			n, _ := strconv.Atoi(string(v))
			return n
		}
	}
	return 0
}
