package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// IgnoreSIGCHLD makes the kernel drop the SIGCHLD it sends the tracer at
// every tracee stop (Go's handler taking it costs about 1.3 µs a stop)
// and returns the function that puts the previous action back. wait4
// still reports every stop and death, and a ptraced child is never
// reaped automatically; an untraced child started meanwhile would be,
// so the caller waits for none before restoring.
//
// The action is set and restored with raw rt_sigaction calls: Go's
// signal.Reset after signal.Ignore does not reinstall the runtime's own
// handler, and os/exec's waits then fail with ECHILD.
func IgnoreSIGCHLD() (restore func()) {
	type sigaction struct{ handler, flags, restorer, mask uint64 }
	ign := sigaction{handler: 1} // SIG_IGN
	var old sigaction
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&ign)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
		return func() {}
	}
	return func() {
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	}
}
