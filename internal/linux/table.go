// Package linux describes the x86-64 Linux system-call interface that gorr
// records: syscall numbers and names, errno and signal names, and the
// declarative table saying which memory the kernel may write for each call.
// It knows nothing about ptrace or traces.
package linux

// Args are the six raw syscall arguments (rdi, rsi, rdx, r10, r8, r9).
type Args [6]uint64

// MemReader reads tracee memory; used by irregular handlers that must
// follow pointers (iovecs, msghdr, value-result lengths).
type MemReader interface {
	ReadMem(addr uint64, buf []byte) error
}

// Region is a span of tracee memory the kernel may have written.
type Region struct {
	Addr uint64
	Len  uint64
}

// SizeKind says how the size of an output buffer is found.
type SizeKind uint8

const (
	// SizeFixed: N bytes.
	SizeFixed SizeKind = iota
	// SizeArg: the value of argument Arg (times N if N > 0).
	SizeArg
	// SizeArgPtr: the 32-bit value pointed to by argument Arg, read at
	// syscall exit (value-result lengths such as socklen_t *).
	SizeArgPtr
	// SizeRet: the return value, when non-negative (times N if N > 0).
	SizeRet
)

// Size is an output buffer's size rule.
type Size struct {
	Kind SizeKind
	N    uint64
	Arg  int
}

// OutParam is one pointer argument through which the kernel writes.
type OutParam struct {
	Arg  int  // index (0-5) of the argument holding the pointer
	Size Size // how many bytes may be written
	// OnError: the kernel writes this even when the call fails
	// (e.g. nanosleep's remaining time on EINTR).
	OnError bool
}

// Replay says how the replayer treats a syscall.
type Replay uint8

const (
	// Emulate: skip the call, write recorded memory and result.
	Emulate Replay = iota
	// Execute: run the call for real (it shapes the address space or the
	// task tree); the replayer has a dedicated handler for each of these.
	Execute
)

// Syscall describes one system call.
type Syscall struct {
	Nr   int
	Name string
	// Out lists declarative output parameters.
	Out []OutParam
	// Custom computes output regions for irregular calls (ioctl, fcntl,
	// recvmsg, readv, select, ...). It is called in addition to Out.
	Custom func(a Args, ret int64, m MemReader) ([]Region, error)
	Replay Replay
	// MayBlock: the call can sleep for an unbounded time (pipes, sockets,
	// futex waits, sleeps, waits); the recorder lets other threads run.
	MayBlock bool
	// Entry, if set, decides at the syscall-entry stop whether the
	// recorder answers the call itself with ret instead of letting the
	// kernel run it (see entry.go); replay emulates that recorded result.
	Entry func(a Args) (ret int64, skip bool)
	// ExecuteIf, for an Execute entry, narrows which calls run for real
	// in replay (the others are emulated). Nil: all successful calls.
	ExecuteIf func(a Args) bool
	// Unsupported, if non-empty, is why gorr cannot record this call; the
	// recording fails with this message.
	Unsupported string
	// Buffered: the syscall buffer (internal/syscallbuf) may make this
	// call inside the tracee and record it without a ptrace stop (its
	// stub decides, from the arguments, which of these calls it makes
	// itself; stub_amd64.S must handle exactly these numbers). What the
	// call writes must be what Out/Custom say, in at most one region,
	// and it must not change the task tree or signal state, nor the
	// address space in a way the recorder must see at the call (file
	// and executable mappings, its own mapping): the memory calls the
	// stub makes are the ones replay makes again itself (Execute), at
	// a stop per call. Recording and replay treat a buffered call as
	// any other.
	Buffered bool
}

// BufferedCalls returns the numbers of the calls marked Buffered, in
// ascending order.
func BufferedCalls() []int {
	var out []int
	for i := range syscallList {
		if syscallList[i].Buffered {
			out = append(out, syscallList[i].Nr)
		}
	}
	return out
}
