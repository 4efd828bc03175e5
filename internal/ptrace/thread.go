package ptrace

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/machine"
)

// Thread is a traced thread (a task, named by its kernel tid), and its
// methods are the ptrace requests gorr makes of it and the waits for its
// stops.
//
// Every method must be called from the OS thread that traces it: the
// goroutine that started or attached the tracee, locked to its thread with
// runtime.LockOSThread (see the package doc). From any other thread the
// kernel treats the tracee as not traced and the request fails with ESRCH,
// exactly as if the task had died. Every request, resumes included, also
// needs the thread to be in a ptrace stop; waits do not.
//
// A Thread is a small value; copy it freely. Its zero value is no thread.
type Thread struct {
	tid int
}

// NewThread returns the Thread of tid. It does not attach: tid must be
// traced by the calling OS thread already (PTRACE_TRACEME, or an
// auto-attached clone or fork child).
func NewThread(tid int) Thread { return Thread{tid: tid} }

// Tid is the thread's kernel id.
func (th Thread) Tid() int { return th.tid }

func (th Thread) String() string { return fmt.Sprintf("tid %d", th.tid) }

// request issues one ptrace request with the thread's tid whose data is
// a pointer to a buffer. The pointer is converted to a uintptr only in
// the system call's argument list, where the compiler keeps what it
// points to alive and in place (a uintptr made in a caller would not
// stop the goroutine's stack, and a buffer on it, from moving).
func (th Thread) request(req int, addr uintptr, data unsafe.Pointer) (uintptr, error) {
	r, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(th.tid), addr, uintptr(data), 0, 0)
	if e != 0 {
		return r, e
	}
	return r, nil
}

// requestValue issues a request whose data is a value (a signal, options).
func (th Thread) requestValue(req int, addr, data uintptr) (uintptr, error) {
	r, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(th.tid), addr, data, 0, 0)
	if e != 0 {
		return r, e
	}
	return r, nil
}

// Wait waits for the thread's next stop (or its end).
func (th Thread) Wait() (Stop, error) {
	st, _, err := wait(th.tid, false)
	return st, err
}

// Poll returns the thread's stop if it has one to report, ok=false if it
// has not (it runs, or is stopped and reported already).
func (th Thread) Poll() (st Stop, ok bool, err error) {
	return wait(th.tid, true)
}

// WaitAny waits for a stop of any tracee of the calling thread (with
// nohang, ok=false when none is ready). It is for a tracer that must see
// its tasks' stops in the order they come, whichever task they are of
// (the recorder's scheduler); everything else waits for one Thread.
func WaitAny(nohang bool) (st Stop, ok bool, err error) {
	return wait(-1, nohang)
}

// wait is wait4(pid, __WALL) decoded, retried on EINTR.
func wait(pid int, nohang bool) (Stop, bool, error) {
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

// Resume restarts the stopped thread with mode (Cont, Syscall, Sysemu,
// Step or SysemuStep) and delivers sig (0: none).
func (th Thread) Resume(mode, sig int) error {
	if _, err := th.requestValue(mode, 0, uintptr(sig)); err != nil {
		return fmt.Errorf("ptrace resume(%d) tid %d: %w", mode, th.tid, err)
	}
	return nil
}

// Detach lets the thread go (it runs on untraced, sig delivered).
func (th Thread) Detach(sig int) error {
	if _, err := th.requestValue(unix.PTRACE_DETACH, 0, uintptr(sig)); err != nil {
		return fmt.Errorf("PTRACE_DETACH tid %d: %w", th.tid, err)
	}
	return nil
}

// SetOptions sets the PTRACE_O_* options (Options, usually).
func (th Thread) SetOptions(opts int) error {
	if _, err := th.requestValue(unix.PTRACE_SETOPTIONS, 0, uintptr(opts)); err != nil {
		return fmt.Errorf("PTRACE_SETOPTIONS tid %d: %w", th.tid, err)
	}
	return nil
}

// GetRegs reads the general registers.
func (th Thread) GetRegs() (machine.Regs, error) {
	var r machine.Regs
	if _, err := th.request(unix.PTRACE_GETREGS, 0, unsafe.Pointer(&r)); err != nil {
		return r, fmt.Errorf("PTRACE_GETREGS tid %d: %w", th.tid, err)
	}
	return r, nil
}

// SetRegs writes the general registers.
func (th Thread) SetRegs(r *machine.Regs) error {
	if _, err := th.request(unix.PTRACE_SETREGS, 0, unsafe.Pointer(r)); err != nil {
		return fmt.Errorf("PTRACE_SETREGS tid %d: %w", th.tid, err)
	}
	return nil
}

// GetFPRegs reads the FXSAVE area (512 bytes, PTRACE_GETFPREGS).
func (th Thread) GetFPRegs() ([]byte, error) {
	fx := make([]byte, 512)
	if _, err := th.request(unix.PTRACE_GETFPREGS, 0, unsafe.Pointer(&fx[0])); err != nil {
		return nil, fmt.Errorf("PTRACE_GETFPREGS tid %d: %w", th.tid, err)
	}
	return fx, nil
}

// SetFPRegs writes the FXSAVE area from fx (at least 512 bytes,
// PTRACE_SETFPREGS).
func (th Thread) SetFPRegs(fx []byte) error {
	if len(fx) < 512 {
		return errors.New("short FXSAVE area")
	}
	if _, err := th.request(unix.PTRACE_SETFPREGS, 0, unsafe.Pointer(&fx[0])); err != nil {
		return fmt.Errorf("PTRACE_SETFPREGS tid %d: %w", th.tid, err)
	}
	return nil
}

// ntX86XState is the NT_X86_XSTATE register set (the XSAVE area).
const ntX86XState = 0x202

// GetXState reads the XSAVE area (PTRACE_GETREGSET NT_X86_XSTATE), at
// most size bytes.
func (th Thread) GetXState(size int) ([]byte, error) {
	buf := make([]byte, size)
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	if _, err := th.request(unix.PTRACE_GETREGSET, ntX86XState, unsafe.Pointer(&iov)); err != nil {
		return nil, fmt.Errorf("PTRACE_GETREGSET(XSTATE) tid %d: %w", th.tid, err)
	}
	return buf[:iov.Len], nil
}

// SetXState writes the XSAVE area (nothing when buf is empty).
func (th Thread) SetXState(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	if _, err := th.request(unix.PTRACE_SETREGSET, ntX86XState, unsafe.Pointer(&iov)); err != nil {
		return fmt.Errorf("PTRACE_SETREGSET(XSTATE) tid %d: %w", th.tid, err)
	}
	return nil
}

// EventMsg returns PTRACE_GETEVENTMSG (the new tid at a clone event, the
// former tid at an exec event, the status at an exit event).
func (th Thread) EventMsg() (uint64, error) {
	var m uint64
	if _, err := th.request(unix.PTRACE_GETEVENTMSG, 0, unsafe.Pointer(&m)); err != nil {
		return 0, fmt.Errorf("PTRACE_GETEVENTMSG tid %d: %w", th.tid, err)
	}
	return m, nil
}

// GetSigInfo reads the siginfo of a signal-delivery-stop.
func (th Thread) GetSigInfo() (SigInfo, error) {
	var si SigInfo
	if _, err := th.request(unix.PTRACE_GETSIGINFO, 0, unsafe.Pointer(&si)); err != nil {
		return si, fmt.Errorf("PTRACE_GETSIGINFO tid %d: %w", th.tid, err)
	}
	return si, nil
}

// SetSigInfo replaces the siginfo of a signal-delivery-stop.
func (th Thread) SetSigInfo(si *SigInfo) error {
	if _, err := th.request(unix.PTRACE_SETSIGINFO, 0, unsafe.Pointer(si)); err != nil {
		return fmt.Errorf("PTRACE_SETSIGINFO tid %d: %w", th.tid, err)
	}
	return nil
}

// GetSyscallInfo reads PTRACE_GET_SYSCALL_INFO at a system-call stop.
func (th Thread) GetSyscallInfo() (SyscallInfo, error) {
	var buf [88]byte
	if _, err := th.request(unix.PTRACE_GET_SYSCALL_INFO, uintptr(len(buf)), unsafe.Pointer(&buf[0])); err != nil {
		return SyscallInfo{}, fmt.Errorf("PTRACE_GET_SYSCALL_INFO tid %d: %w", th.tid, err)
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

// PTRACE_GETSIGMASK, PTRACE_SETSIGMASK, PTRACE_SECCOMP_GET_FILTER.
const (
	reqGetSigMask     = 0x420a
	reqSetSigMask     = 0x420b
	reqSeccompGetFilt = 0x420c
)

// GetSigMask reads the blocked-signal mask (PTRACE_GETSIGMASK).
func (th Thread) GetSigMask() (uint64, error) {
	var m uint64
	if _, err := th.request(reqGetSigMask, 8, unsafe.Pointer(&m)); err != nil {
		return 0, fmt.Errorf("PTRACE_GETSIGMASK tid %d: %w", th.tid, err)
	}
	return m, nil
}

// SetSigMask replaces the blocked-signal mask (PTRACE_SETSIGMASK).
func (th Thread) SetSigMask(m uint64) error {
	if _, err := th.request(reqSetSigMask, 8, unsafe.Pointer(&m)); err != nil {
		return fmt.Errorf("PTRACE_SETSIGMASK tid %d: %w", th.tid, err)
	}
	return nil
}

// SeccompFilters returns the classic-BPF programs of the thread's seccomp
// filters (PTRACE_SECCOMP_GET_FILTER, needs CAP_SYS_ADMIN), 8 bytes per
// instruction, most recent first; nil when it has none.
func (th Thread) SeccompFilters() ([][]byte, error) {
	var out [][]byte
	for i := 0; ; i++ {
		n, err := th.request(reqSeccompGetFilt, uintptr(i), nil)
		switch {
		case err == unix.ENOENT || (err == unix.EINVAL && i == 0):
			// ENOENT: past the oldest filter; EINVAL: not in filter mode.
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER tid %d #%d: %w", th.tid, i, err)
		}
		buf := make([]byte, 8*n)
		if n > 0 {
			if _, err := th.request(reqSeccompGetFilt, uintptr(i), unsafe.Pointer(&buf[0])); err != nil {
				return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER tid %d #%d: %w", th.tid, i, err)
			}
		}
		out = append(out, buf)
	}
}
