package record

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The holder runs from its memfd, leads a group of its own, names
// itself, and sleeps until killed.
func TestELFGroupHolder(t *testing.T) {
	if n := len(holderELF()); n != 160 {
		t.Errorf("holder is %d bytes, want 160", n)
	}
	h, err := startELFHolder()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	pid := h.pid
	defer func() { _ = h.Kill(); _, _ = h.Wait() }()
	var comm string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if err != nil {
			t.Fatal(err)
		}
		if comm = strings.TrimSpace(string(b)); comm == "gorr-holder" {
			break
		}
	}
	if comm != "gorr-holder" {
		t.Errorf("comm %q, want gorr-holder", comm)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("pgid %d (%v), want its pid %d", pgid, err, pid)
	}
	// Still alive after a moment: it sleeps rather than exits or crashes.
	time.Sleep(20 * time.Millisecond)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("holder gone: %v", err)
	}
	_ = h.Kill()
	ws, err := h.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("holder ended with %v, want killed by SIGKILL", ws)
	}
}
