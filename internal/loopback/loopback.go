// Package loopback listens for TCP connections on 127.0.0.1, the only
// address the debug server may serve on.
//
// It exists so that gorr does not import package net: with cgo enabled
// (the default wherever gcc is installed), net links the C resolver, which
// makes gorr a dynamically linked program whose every thread is made by
// pthread_create. That costs each `gorr record` and `gorr replay` about
// 3-6 ms of start-up on a VM where page faults and TLB flushes are dear,
// more than some whole recordings of short programs take.
package loopback

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by Accept once the listener is closed.
var ErrClosed = errors.New("loopback: use of closed listener")

// Listener is a listening TCP socket on 127.0.0.1.
type Listener struct {
	fd   int
	port int
	// wake is an eventfd that Close signals, so that an Accept waiting
	// in poll returns.
	wake int

	mu        sync.Mutex
	closed    bool
	accepting bool // an Accept is under way: it releases the descriptors after Close
}

// Listen listens on 127.0.0.1:port (0: a free port the kernel picks).
func Listen(port int) (*Listener, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("listen on 127.0.0.1:%d: bad port", port)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1:%d: socket: %w", port, err)
	}
	fail := func(what string, err error) (*Listener, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("listen on 127.0.0.1:%d: %s: %w", port, what, err)
	}
	// As package net does: a port left in TIME_WAIT by a previous
	// session can be listened on again at once.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, 8); err != nil {
		return fail("listen", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return fail("getsockname", fmt.Errorf("not an IPv4 address: %T", sa))
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fail("eventfd", err)
	}
	return &Listener{fd: fd, port: in4.Port, wake: wake}, nil
}

// Addr is "127.0.0.1:PORT", the port the listener is bound to.
func (l *Listener) Addr() string { return "127.0.0.1:" + strconv.Itoa(l.port) }

// Port is the port the listener is bound to.
func (l *Listener) Port() int { return l.port }

// Accept waits for a connection and returns it as a file whose reads and
// writes go through Go's poller (closing it from another goroutine ends
// a read that waits). TCP_NODELAY is set on it, as package net does: the
// debugger protocol is a conversation of small packets. After Close (also
// one made while Accept waits), Accept returns ErrClosed.
func (l *Listener) Accept() (*os.File, error) {
	l.mu.Lock()
	if l.closed || l.accepting {
		l.mu.Unlock()
		if l.accepting {
			return nil, fmt.Errorf("accept on %s: another Accept is waiting", l.Addr())
		}
		return nil, ErrClosed
	}
	l.accepting = true
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.accepting = false
		if l.closed {
			l.release()
		}
	}()
	for {
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		nfd, _, err := unix.Accept4(l.fd, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
		switch {
		case err == nil:
			_ = unix.SetsockoptInt(nfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			return os.NewFile(uintptr(nfd), "tcp:"+l.Addr()), nil
		case err == unix.EAGAIN || err == unix.EINTR || err == unix.ECONNABORTED:
		default:
			return nil, fmt.Errorf("accept on %s: %w", l.Addr(), err)
		}
		fds := []unix.PollFd{{Fd: int32(l.fd), Events: unix.POLLIN}, {Fd: int32(l.wake), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return nil, fmt.Errorf("accept on %s: poll: %w", l.Addr(), err)
		}
	}
}

// Close stops listening; an Accept that waits returns ErrClosed.
// Connections already accepted are not affected.
func (l *Listener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if !l.accepting {
		l.release()
		return nil
	}
	// The waiting Accept polls both descriptors: wake it, and let it
	// close them (closing them under its poll could let their numbers be
	// reused by a file opened meanwhile).
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(l.wake, one[:])
	return nil
}

// release closes the descriptors (l.mu held).
func (l *Listener) release() {
	unix.Close(l.fd)
	unix.Close(l.wake)
}
