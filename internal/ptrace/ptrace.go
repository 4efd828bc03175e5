// Package ptrace wraps the ptrace and wait system calls gorr uses and
// decodes wait statuses into typed stops. Every function here must be
// called from the single OS thread that traces the tasks (the tracer
// goroutine locks itself to its thread); the kernel refuses ptrace
// requests from any other thread.
package ptrace

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/machine"
)

// Options set on every tracee.
const Options = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_TRACECLONE |
	unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK |
	unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEEXIT | unix.PTRACE_O_EXITKILL

// Resume modes.
const (
	Cont    = unix.PTRACE_CONT
	Syscall = unix.PTRACE_SYSCALL
	Sysemu  = unix.PTRACE_SYSEMU
	Step    = unix.PTRACE_SINGLESTEP
	// SysemuStep single-steps; a system call instruction stops at its
	// entry without running (PTRACE_SYSEMU_SINGLESTEP).
	SysemuStep = unix.PTRACE_SYSEMU_SINGLESTEP
)

// StopKind classifies a wait result.
type StopKind int

const (
	StopSyscallEntry StopKind = iota + 1
	StopSyscallExit
	StopSignal // signal-delivery-stop (or group-stop)
	StopEvent  // PTRACE_EVENT_* stop
	StopExited // the task is gone (exited or killed)
)

func (k StopKind) String() string {
	switch k {
	case StopSyscallEntry:
		return "syscall-entry"
	case StopSyscallExit:
		return "syscall-exit"
	case StopSignal:
		return "signal"
	case StopEvent:
		return "event"
	case StopExited:
		return "exited"
	}
	return fmt.Sprintf("stop(%d)", int(k))
}

// Stop is one decoded wait result.
type Stop struct {
	Tid    int
	Kind   StopKind
	Signal int // StopSignal: the signal; StopExited: terminating signal or 0
	Event  int // StopEvent: PTRACE_EVENT_*
	Status unix.WaitStatus
	// Compat: a syscall stop of a 32-bit call (int $0x80), whose number
	// and arguments follow the i386 ABI (eax; ebx, ecx, edx, ...).
	Compat bool
}

func (s Stop) String() string {
	switch s.Kind {
	case StopSignal:
		return fmt.Sprintf("tid %d signal %d", s.Tid, s.Signal)
	case StopEvent:
		return fmt.Sprintf("tid %d event %d", s.Tid, s.Event)
	case StopExited:
		return fmt.Sprintf("tid %d exited (status 0x%x)", s.Tid, uint32(s.Status))
	}
	return fmt.Sprintf("tid %d %s", s.Tid, s.Kind)
}

// Wait waits for a stop of pid (-1: any tracee). With nohang it returns
// ok=false when nothing is ready.
func Wait(pid int, nohang bool) (st Stop, ok bool, err error) {
	var ws unix.WaitStatus
	flags := unix.WALL
	if nohang {
		flags |= unix.WNOHANG
	}
	for {
		tid, err := unix.Wait4(pid, &ws, flags, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stop{}, false, fmt.Errorf("wait4(%d): %w", pid, err)
		}
		if tid == 0 {
			return Stop{}, false, nil
		}
		st, err := decode(tid, ws)
		return st, true, err
	}
}

func decode(tid int, ws unix.WaitStatus) (Stop, error) {
	st := Stop{Tid: tid, Status: ws}
	switch {
	case ws.Exited():
		st.Kind = StopExited
	case ws.Signaled():
		st.Kind = StopExited
		st.Signal = int(ws.Signal())
	case ws.Stopped():
		sig := int(ws.StopSignal())
		switch {
		case sig == int(unix.SIGTRAP)|0x80:
			info, err := GetSyscallInfo(tid)
			if err != nil {
				return st, err
			}
			st.Compat = info.Arch == auditArchI386
			switch info.Op {
			case unix.PTRACE_SYSCALL_INFO_EXIT:
				st.Kind = StopSyscallExit
			case unix.PTRACE_SYSCALL_INFO_ENTRY:
				st.Kind = StopSyscallEntry
			default:
				// SIGKILL woke the task from the stop before it was
				// examined; it is at a later stop (its exit) already.
				return st, fmt.Errorf("tid %d: left its system-call stop (op %d): %w", tid, info.Op, unix.ESRCH)
			}
		case ws.TrapCause() > 0 && sig == int(unix.SIGTRAP):
			st.Kind = StopEvent
			st.Event = ws.TrapCause()
		default:
			st.Kind = StopSignal
			st.Signal = sig
		}
	default:
		return st, fmt.Errorf("tid %d: unexpected wait status 0x%x", tid, uint32(ws))
	}
	return st, nil
}

// Resume restarts a stopped task with the given mode and signal.
func Resume(tid, mode, sig int) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(mode), uintptr(tid), 0, uintptr(sig), 0, 0)
	if e != 0 {
		return fmt.Errorf("ptrace resume(%d) tid %d: %w", mode, tid, e)
	}
	return nil
}

// RunUntil resumes tid with mode (no signal) and waits for its stops,
// resuming it again with mode after each stop that until does not
// accept, until it accepts one (true) or returns an error; it returns
// that stop. The signals of the stops passed over are not delivered.
// A wait or resume error ends the run.
func RunUntil(tid, mode int, until func(Stop) (bool, error)) (Stop, error) {
	if err := Resume(tid, mode, 0); err != nil {
		return Stop{}, err
	}
	return WaitUntil(tid, mode, until)
}

// WaitUntil is RunUntil for a task that already runs: it waits first.
func WaitUntil(tid, mode int, until func(Stop) (bool, error)) (Stop, error) {
	for {
		st, _, err := Wait(tid, false)
		if err != nil {
			return st, err
		}
		if ok, err := until(st); ok || err != nil {
			return st, err
		}
		if err := Resume(tid, mode, 0); err != nil {
			return st, err
		}
	}
}

// KillAndReap kills a traced process with SIGKILL and waits until it is
// gone, letting it on from the stops (PTRACE_EVENT_EXIT) it still
// reports. Resume errors are ignored: a task that died meanwhile is
// reaped by the next wait.
func KillAndReap(pid int) {
	_ = unix.Kill(pid, unix.SIGKILL)
	for {
		st, _, err := Wait(pid, false)
		if err != nil || st.Kind == StopExited {
			return
		}
		_ = Resume(pid, Cont, 0)
	}
}

// GetFPRegs reads the FXSAVE area (512 bytes, PTRACE_GETFPREGS).
func GetFPRegs(tid int) ([]byte, error) {
	fx := make([]byte, 512)
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETFPREGS, uintptr(tid), 0, uintptr(unsafe.Pointer(&fx[0])), 0, 0)
	if e != 0 {
		return nil, fmt.Errorf("PTRACE_GETFPREGS: %w", e)
	}
	return fx, nil
}

// SetFPRegs writes the FXSAVE area from fx (at least 512 bytes,
// PTRACE_SETFPREGS).
func SetFPRegs(tid int, fx []byte) error {
	if len(fx) < 512 {
		return errors.New("short FXSAVE area")
	}
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SETFPREGS, uintptr(tid), 0, uintptr(unsafe.Pointer(&fx[0])), 0, 0)
	if e != 0 {
		return fmt.Errorf("PTRACE_SETFPREGS: %w", e)
	}
	return nil
}

// SetOptions sets the standard options on a tracee.
func SetOptions(tid int) error {
	if err := unix.PtraceSetOptions(tid, Options); err != nil {
		return fmt.Errorf("PTRACE_SETOPTIONS tid %d: %w", tid, err)
	}
	return nil
}

// GetRegs reads the general registers.
func GetRegs(tid int) (machine.Regs, error) {
	var r machine.Regs
	if err := unix.PtraceGetRegs(tid, (*unix.PtraceRegs)(unsafe.Pointer(&r))); err != nil {
		return r, fmt.Errorf("PTRACE_GETREGS tid %d: %w", tid, err)
	}
	return r, nil
}

// SetRegs writes the general registers.
func SetRegs(tid int, r *machine.Regs) error {
	if err := unix.PtraceSetRegs(tid, (*unix.PtraceRegs)(unsafe.Pointer(r))); err != nil {
		return fmt.Errorf("PTRACE_SETREGS tid %d: %w", tid, err)
	}
	return nil
}

// EventMsg returns PTRACE_GETEVENTMSG.
func EventMsg(tid int) (uint64, error) {
	m, err := unix.PtraceGetEventMsg(tid)
	if err != nil {
		return 0, fmt.Errorf("PTRACE_GETEVENTMSG tid %d: %w", tid, err)
	}
	return uint64(m), nil
}

// SigInfo is the raw 128-byte siginfo.
type SigInfo [128]byte

// Signo, Code and the sender fields of a siginfo.
func (s *SigInfo) Signo() int { return int(int32(le32(s[0:]))) }
func (s *SigInfo) Code() int  { return int(int32(le32(s[8:]))) }

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// GetSigInfo reads the siginfo of a signal-delivery-stop.
func GetSigInfo(tid int) (SigInfo, error) {
	var si SigInfo
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(tid), 0, uintptr(unsafe.Pointer(&si)), 0, 0)
	if e != 0 {
		return si, fmt.Errorf("PTRACE_GETSIGINFO tid %d: %w", tid, e)
	}
	return si, nil
}

// SetSigInfo replaces the siginfo of a signal-delivery-stop.
func SetSigInfo(tid int, si *SigInfo) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SETSIGINFO, uintptr(tid), 0, uintptr(unsafe.Pointer(si)), 0, 0)
	if e != 0 {
		return fmt.Errorf("PTRACE_SETSIGINFO tid %d: %w", tid, e)
	}
	return nil
}

// SyscallInfo is the header of struct ptrace_syscall_info.
type SyscallInfo struct {
	Op   uint8
	Arch uint32    // AUDIT_ARCH_X86_64, or auditArchI386 for int $0x80
	Nr   uint64    // entry: syscall number
	Args [6]uint64 // entry
	Rval int64     // exit
}

// auditArchI386 is AUDIT_ARCH_I386 (EM_386 | __AUDIT_ARCH_LE).
const auditArchI386 = 0x40000003

// GetSyscallInfo reads PTRACE_GET_SYSCALL_INFO.
func GetSyscallInfo(tid int) (SyscallInfo, error) {
	var buf [88]byte
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GET_SYSCALL_INFO, uintptr(tid), uintptr(len(buf)), uintptr(unsafe.Pointer(&buf[0])), 0, 0)
	if e != 0 {
		return SyscallInfo{}, fmt.Errorf("PTRACE_GET_SYSCALL_INFO tid %d: %w", tid, e)
	}
	info := SyscallInfo{Op: buf[0], Arch: *(*uint32)(unsafe.Pointer(&buf[4]))}
	// struct: op u8, pad[3], arch u32, instruction_pointer u64, stack_pointer u64, then union at 24.
	switch info.Op {
	case unix.PTRACE_SYSCALL_INFO_ENTRY, unix.PTRACE_SYSCALL_INFO_SECCOMP:
		info.Nr = *(*uint64)(unsafe.Pointer(&buf[24]))
		for i := range info.Args {
			info.Args[i] = *(*uint64)(unsafe.Pointer(&buf[32+8*i]))
		}
	case unix.PTRACE_SYSCALL_INFO_EXIT:
		info.Rval = *(*int64)(unsafe.Pointer(&buf[24]))
	}
	return info, nil
}

// GetXState reads the XSAVE area (NT_X86_XSTATE).
func GetXState(tid int, size int) ([]byte, error) {
	buf := make([]byte, size)
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGSET, uintptr(tid), 0x202, uintptr(unsafe.Pointer(&iov)), 0, 0)
	if e != 0 {
		return nil, fmt.Errorf("PTRACE_GETREGSET(XSTATE) tid %d: %w", tid, e)
	}
	return buf[:iov.Len], nil
}

// SetXState writes the XSAVE area.
func SetXState(tid int, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SETREGSET, uintptr(tid), 0x202, uintptr(unsafe.Pointer(&iov)), 0, 0)
	if e != 0 {
		return fmt.Errorf("PTRACE_SETREGSET(XSTATE) tid %d: %w", tid, e)
	}
	return nil
}

// Register indices into trace.Regs (machine.Regs), in user_regs_struct
// order: aliases of internal/machine's, which is where they live.
const (
	R15     = machine.R15
	R14     = machine.R14
	R13     = machine.R13
	R12     = machine.R12
	RBP     = machine.RBP
	RBX     = machine.RBX
	R11     = machine.R11
	R10     = machine.R10
	R9      = machine.R9
	R8      = machine.R8
	RAX     = machine.RAX
	RCX     = machine.RCX
	RDX     = machine.RDX
	RSI     = machine.RSI
	RDI     = machine.RDI
	ORIGRAX = machine.ORIGRAX
	RIP     = machine.RIP
	CS      = machine.CS
	EFLAGS  = machine.EFLAGS
	RSP     = machine.RSP
	SS      = machine.SS
	FSBASE  = machine.FSBASE
	GSBASE  = machine.GSBASE
	DS      = machine.DS
	ES      = machine.ES
	FS      = machine.FS
	GS      = machine.GS
)

// RegNames names the registers in user_regs_struct order (machine.RegNames).
var RegNames = machine.RegNames

// SyscallArgs returns the six syscall argument registers.
func SyscallArgs(r *machine.Regs) [6]uint64 { return machine.SyscallArgs(r) }

// SetSyscallArgs stores six syscall arguments.
func SetSyscallArgs(r *machine.Regs, a [6]uint64) { machine.SetSyscallArgs(r, a) }

// GetSigMask reads the blocked-signal mask of a stopped tracee
// (PTRACE_GETSIGMASK).
func GetSigMask(tid int) (uint64, error) {
	var m uint64
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, 0x420a, uintptr(tid), 8, uintptr(unsafe.Pointer(&m)), 0, 0)
	if e != 0 {
		return 0, fmt.Errorf("PTRACE_GETSIGMASK tid %d: %w", tid, e)
	}
	return m, nil
}

// SetSigMask replaces the blocked-signal mask of a stopped tracee
// (PTRACE_SETSIGMASK).
func SetSigMask(tid int, m uint64) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, 0x420b, uintptr(tid), 8, uintptr(unsafe.Pointer(&m)), 0, 0)
	if e != 0 {
		return fmt.Errorf("PTRACE_SETSIGMASK tid %d: %w", tid, e)
	}
	return nil
}

// SeccompFilters returns the classic-BPF programs of tid's seccomp
// filters (PTRACE_SECCOMP_GET_FILTER, needs CAP_SYS_ADMIN), 8 bytes per
// instruction, most recent first; nil when tid has none.
func SeccompFilters(tid int) ([][]byte, error) {
	const getFilter = 0x420c // PTRACE_SECCOMP_GET_FILTER
	var out [][]byte
	for i := 0; ; i++ {
		n, _, e := unix.Syscall6(unix.SYS_PTRACE, getFilter, uintptr(tid), uintptr(i), 0, 0, 0)
		switch {
		case e == unix.ENOENT || (e == unix.EINVAL && i == 0):
			// ENOENT: past the oldest filter; EINVAL: not in filter mode.
			return out, nil
		case e != 0:
			return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER tid %d #%d: %w", tid, i, e)
		}
		buf := make([]byte, 8*n)
		if n > 0 {
			if _, _, e := unix.Syscall6(unix.SYS_PTRACE, getFilter, uintptr(tid), uintptr(i), uintptr(unsafe.Pointer(&buf[0])), 0, 0); e != 0 {
				return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER tid %d #%d: %w", tid, i, e)
			}
		}
		out = append(out, buf)
	}
}

// Detach lets a tracee go (it runs on untraced, sig delivered).
func Detach(tid, sig int) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(tid), 0, uintptr(sig), 0, 0)
	if e != 0 {
		return fmt.Errorf("PTRACE_DETACH tid %d: %w", tid, e)
	}
	return nil
}
