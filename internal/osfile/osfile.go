// Package osfile opens files for gorr's own reads and writes of regular
// and /proc files with plain system calls.
//
// os.Open and os.OpenFile try to register every file with the Go
// runtime's poller: fcntl(F_GETFL), fcntl(F_SETFL, O_NONBLOCK), an
// epoll_ctl that fails (EPERM: regular and /proc files cannot be polled)
// and two fcntl to undo it, five system calls more than the open. On a
// VM where a system call costs about 10 µs, that was 2-3 ms of the
// recorder's thread in a recording of python's start-up (some 60 opens
// of mapped files, /proc/PID/maps and mem). The files are never polled
// anyway: their reads do not block.
package osfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Open opens path as os.OpenFile(path, flag, perm) does, close-on-exec,
// without registering it with the poller (os.NewFile checks its flags
// with one fcntl).
func Open(path string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// ReadFile reads the whole file at path, as os.ReadFile, with open,
// read and close alone (files in /proc report size 0, so it reads until
// end of file).
func ReadFile(path string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 512)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}
