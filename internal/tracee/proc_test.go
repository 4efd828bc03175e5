package tracee

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// SignalMasks reads both sets from one read of the status file: an
// ignored signal is in the ignored set, one the Go runtime handles in
// the caught set.
func TestSignalMasks(t *testing.T) {
	signal.Ignore(syscall.SIGUSR2)
	defer signal.Reset(syscall.SIGUSR2)
	caught, ignored := SignalMasks(os.Getpid())
	if ignored&(1<<(syscall.SIGUSR2-1)) == 0 || caught&(1<<(syscall.SIGUSR2-1)) != 0 {
		t.Errorf("SIGUSR2 ignored: caught %#x, ignored %#x", caught, ignored)
	}
	if caught&(1<<(syscall.SIGSEGV-1)) == 0 {
		t.Errorf("SIGSEGV (the Go runtime's handler) not in the caught set %#x", caught)
	}
	if v, ok := statusFields(os.Getpid(), "Tgid", "NoSuchField"); !ok[0] || ok[1] || v[0] == "" {
		t.Errorf("statusFields(Tgid, NoSuchField) = %q, %v", v, ok)
	}
}
