package loopback

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestAcceptReadWrite(t *testing.T) {
	l, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Port() == 0 || !strings.HasPrefix(l.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr %q, Port %d", l.Addr(), l.Port())
	}
	got := make(chan string, 1)
	go func() {
		c, err := net.DialTimeout("tcp", l.Addr(), 5*time.Second)
		if err != nil {
			got <- "dial: " + err.Error()
			return
		}
		defer c.Close()
		if _, err := c.Write([]byte("$qSupported#37")); err != nil {
			got <- "write: " + err.Error()
			return
		}
		b := make([]byte, 2)
		_, err = io.ReadFull(c, b)
		got <- string(b) + errString(err)
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nodelay, err := unix.GetsockoptInt(int(c.Fd()), unix.IPPROTO_TCP, unix.TCP_NODELAY)
	if err != nil || nodelay == 0 {
		t.Errorf("TCP_NODELAY = %d, %v; want it set", nodelay, err)
	}
	b := make([]byte, 14)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "$qSupported#37" {
		t.Fatalf("read %q, %v", b, err)
	}
	if _, err := c.Write([]byte("+$")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "+$" {
		t.Fatalf("the client read %q", s)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}

// TestCloseWakesAccept: closing the listener ends an Accept that waits,
// with ErrClosed, and later Accepts fail the same way.
func TestCloseWakesAccept(t *testing.T) {
	l, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Accept after Close: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waits 5 s after Close")
	}
	if _, err := l.Accept(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Accept: %v, want ErrClosed", err)
	}
	if _, err := net.DialTimeout("tcp", l.Addr(), time.Second); err == nil {
		t.Fatal("a closed listener still accepts connections")
	}
}

func TestBadPort(t *testing.T) {
	if _, err := Listen(70000); err == nil {
		t.Fatal("Listen(70000) succeeded")
	}
	l, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := Listen(l.Port()); err == nil {
		t.Fatalf("a second listener on port %d succeeded", l.Port())
	}
}
