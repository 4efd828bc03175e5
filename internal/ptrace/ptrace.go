// Package ptrace is the only place gorr issues ptrace and wait system
// calls. Requests are methods of Thread, a traced thread; a wait result
// is decoded into a typed Stop (system-call entry or exit, signal,
// PTRACE_EVENT_*, exit); Thread.RunUntil and Thread.WaitUntil are the one
// resume-and-wait loop, driven by an Action per stop. Tracee memory is not
// read or written through ptrace (PEEKDATA, POKEDATA) but through
// /proc/pid/mem, in internal/tracee.
//
// The locked-thread rule: the kernel ties a tracee to the OS thread that
// attached it (PTRACE_TRACEME's child belongs to the thread that forked
// it), and answers ptrace requests from any other thread as if the tracee
// did not exist, with ESRCH. (Waits do see the tracees of the other
// threads of the process, so a wait from the wrong thread may even take a
// stop the tracer then cannot act on.) A Go goroutine may move between OS
// threads at any time, so the goroutine that starts or attaches tracees
// calls runtime.LockOSThread first, and every function and method of this
// package is called from that goroutine only, for as long as the tracees
// live. Nothing here checks it: a request from elsewhere just fails with
// ESRCH, which callers would take for a vanished task.
package ptrace

import (
	"fmt"

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
			info, err := NewThread(tid).GetSyscallInfo()
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

// SigInfo is the raw 128-byte siginfo.
type SigInfo [128]byte

// Signo, Code and the sender fields of a siginfo.
func (s *SigInfo) Signo() int { return int(int32(le32(s[0:]))) }
func (s *SigInfo) Code() int  { return int(int32(le32(s[8:]))) }

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
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
