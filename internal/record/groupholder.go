package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The recorded program runs in a process group led by a holder process
// of gorr's, so that the program is not a group leader itself (as when a
// non-interactive shell starts it; setsid() must work).
//
// The holder is a 160-byte static ELF program that loops on pause(2),
// built here and run from a memfd: starting it costs an exec, not a Go
// runtime (a copy of gorr took about 4 ms of CPU, at the start of every
// recording, on the CPU the recording did not use, and 0.5 ms to kill
// and reap at the end). Where a memfd cannot be executed (vm.memfd_noexec),
// the holder is a copy of gorr running HoldGroup.

// GroupHolderEnv, set in its environment, makes the gorr binary a
// process-group holder (HoldGroup) instead of running a command.
const GroupHolderEnv = "GORR_PROCESS_GROUP_HOLDER"

// HoldGroup sleeps until killed: the fallback holder.
func HoldGroup() {
	for {
		time.Sleep(time.Hour)
	}
}

// holderLoadAddr is where the holder's single segment is loaded.
const holderLoadAddr = 0x400000

// holderCode is the holder's program: prctl(PR_SET_NAME, "gorr-holder")
// (it would be called after the /proc/self/fd/N it was run from), then
// for (;;) pause();
var holderCode = []byte{
	0xb8, byte(unix.SYS_PRCTL), 0, 0, 0, // mov $SYS_prctl, %eax
	0xbf, unix.PR_SET_NAME, 0, 0, 0, // mov $PR_SET_NAME, %edi
	0x48, 0x8d, 0x35, 11, 0, 0, 0, // lea name(%rip), %rsi
	0x0f, 0x05, // syscall
	0xb8, byte(unix.SYS_PAUSE), 0, 0, 0, // 1: mov $SYS_pause, %eax
	0x0f, 0x05, // syscall
	0xeb, 0xf7, // jmp 1b
	'g', 'o', 'r', 'r', '-', 'h', 'o', 'l', 'd', 'e', 'r', 0, // name:
}

// holderELF returns the holder program as an ELF64 executable.
func holderELF() []byte { return tinyELF(holderCode) }

// tinyELF returns code as a static ELF64 executable: the file header, one
// PT_LOAD program header mapping the whole file read and execute at
// holderLoadAddr, and the code, its entry point.
func tinyELF(code []byte) []byte {
	const ehSize, phSize = 64, 56
	b := make([]byte, ehSize+phSize, ehSize+phSize+len(code))
	le := binary.LittleEndian
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = 2, 1, 1                         // ELFCLASS64, little endian, EV_CURRENT
	le.PutUint16(b[16:], 2)                            // ET_EXEC
	le.PutUint16(b[18:], 62)                           // EM_X86_64
	le.PutUint32(b[20:], 1)                            // EV_CURRENT
	le.PutUint64(b[24:], holderLoadAddr+ehSize+phSize) // entry: the code
	le.PutUint64(b[32:], ehSize)                       // program headers' offset
	le.PutUint16(b[52:], ehSize)
	le.PutUint16(b[54:], phSize)
	le.PutUint16(b[56:], 1) // one program header
	ph := b[ehSize:]
	le.PutUint32(ph[0:], 1)   // PT_LOAD
	le.PutUint32(ph[4:], 1|4) // PF_X|PF_R
	le.PutUint64(ph[8:], 0)   // offset
	le.PutUint64(ph[16:], holderLoadAddr)
	le.PutUint64(ph[24:], holderLoadAddr)
	n := uint64(ehSize + phSize + len(code))
	le.PutUint64(ph[32:], n) // file size
	le.PutUint64(ph[40:], n) // memory size
	le.PutUint64(ph[48:], 0x1000)
	return append(b, code...)
}

// startGroupHolder starts a process-group holder in a new group and
// returns it and the group (nil, 0 if none can be started: the tracee
// then leads a group of its own).
func startGroupHolder() (*child, int) {
	if h, err := startELFHolder(); err == nil {
		return h, h.pid
	}
	self, err := os.Executable()
	if err != nil {
		return nil, 0
	}
	h, err := startChild(self, []string{self}, []string{GroupHolderEnv + "=1"}, nil, &syscall.SysProcAttr{Setpgid: true})
	if err != nil {
		return nil, 0
	}
	return h, h.pid
}

// startELFHolder runs holderELF from a memfd.
func startELFHolder() (*child, error) {
	return startTinyELF(holderELF(), "gorr-group-holder", &syscall.SysProcAttr{Setpgid: true}, nil)
}

// startTinyELF starts the executable elf (tinyELF) from a memfd named
// name, with attributes attr and standard output stdout (nil: none; the
// child has no standard input or error).
func startTinyELF(elf []byte, name string, attr *syscall.SysProcAttr, stdout *os.File) (*child, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if _, err := f.Write(elf); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	// The child resolves /proc/self/fd/N while it still has the
	// descriptor (close-on-exec closes it only once the exec succeeded).
	files := []*os.File{nil, stdout, nil}
	return startChild(fmt.Sprintf("/proc/self/fd/%d", fd), []string{name}, []string{}, files, attr)
}

// child is a process gorr started (not a tracee).
type child struct{ pid int }

// startChild starts path with argv and env, files as its descriptors 0,
// 1, 2, ... (nil: closed) and attributes attr. It calls
// syscall.ForkExec, not os/exec: os.StartProcess checks, at its first
// use in a process, that the kernel supports pidfds by starting a
// process more (a clone that exits at once), and makes a pidfd for
// every child, all of it before gorr's tracee can start.
func startChild(path string, argv, env []string, files []*os.File, attr *syscall.SysProcAttr) (*child, error) {
	fds := make([]uintptr, len(files))
	for i, f := range files {
		fds[i] = ^uintptr(0) // closed in the child
		if f != nil {
			fds[i] = f.Fd()
		}
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: fds, Sys: attr})
	if err != nil {
		return nil, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	return &child{pid: pid}, nil
}

// Kill sends the child SIGKILL.
func (c *child) Kill() error { return unix.Kill(c.pid, unix.SIGKILL) }

// Wait reaps the child and returns its wait status.
func (c *child) Wait() (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(c.pid, &ws, 0, nil)
		if err != unix.EINTR {
			return ws, err
		}
	}
}
