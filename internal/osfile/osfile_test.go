package osfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpenReadWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := Open(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("gorr")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := f.ReadAt(b, 0); err != nil || string(b) != "gorr" {
		t.Fatalf("ReadAt: %q, %v", b, err)
	}
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if err != nil || fl&unix.FD_CLOEXEC == 0 {
		t.Fatalf("not close-on-exec: %#x, %v", fl, err)
	}
	f.Close()
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stat: %v, %v", fi, err)
	}
	if _, err := Open(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("O_EXCL on an existing file: %v", err)
	}
	var pe *os.PathError
	if _, err := Open(p+"-missing", os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != p+"-missing" {
		t.Fatalf("missing file: %v", err)
	}
}

func TestReadFileProc(t *testing.T) {
	// /proc files report size 0: ReadFile reads to the end anyway.
	got, err := ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte("\nPid:")) || len(got) < 600 {
		t.Fatalf("read %d bytes of /proc/self/status: %q", len(got), got)
	}
	big := bytes.Repeat([]byte("0123456789"), 1000)
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(p); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("ReadFile of 10000 bytes: %d bytes, %v", len(got), err)
	}
	if _, err := ReadFile(p + "-missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
