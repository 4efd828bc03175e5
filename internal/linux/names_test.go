package linux

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestErrnoName(t *testing.T) {
	cases := map[int]string{
		1: "EPERM", 2: "ENOENT", 4: "EINTR", 11: "EAGAIN", 14: "EFAULT", 22: "EINVAL",
		38: "ENOSYS", 95: "EOPNOTSUPP", 110: "ETIMEDOUT", 133: "EHWPOISON",
		512: "ERESTARTSYS", 516: "ERESTART_RESTARTBLOCK",
		-2: "ENOENT", 0: "errno_0", 9999: "errno_9999",
	}
	for e, want := range cases {
		if got := ErrnoName(e); got != want {
			t.Errorf("ErrnoName(%d) = %q, want %q", e, got, want)
		}
	}
	for name, want := range map[string]int{"ENOENT": 2, "EWOULDBLOCK": 11, "EDEADLOCK": 35, "ERESTARTNOHAND": 514} {
		if got, ok := ErrnoByName(name); !ok || got != want {
			t.Errorf("ErrnoByName(%q) = %d, %v", name, got, ok)
		}
	}
	if _, ok := ErrnoByName("ENOTANERRNO"); ok {
		t.Error("ErrnoByName accepted a bogus name")
	}
}

// TestErrnoAgainstHeaders checks errnoNames against the installed uapi
// headers, where present.
func TestErrnoAgainstHeaders(t *testing.T) {
	seen := 0
	for _, path := range []string{"/usr/include/asm-generic/errno-base.h", "/usr/include/asm-generic/errno.h"} {
		f, err := os.Open(path)
		if err != nil {
			t.Skipf("%s: %v", path, err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 || fields[0] != "#define" || !strings.HasPrefix(fields[1], "E") {
				continue
			}
			v, err := strconv.Atoi(fields[2])
			if err != nil {
				continue // an alias such as EWOULDBLOCK
			}
			seen++
			if got := ErrnoName(v); got != fields[1] {
				t.Errorf("%s: %d is %s, ErrnoName says %s", path, v, fields[1], got)
			}
		}
		f.Close()
	}
	if seen < 100 {
		t.Errorf("only %d errno values parsed", seen)
	}
}

func TestSignalNames(t *testing.T) {
	cases := map[int]string{
		1: "SIGHUP", 9: "SIGKILL", 11: "SIGSEGV", 17: "SIGCHLD", 31: "SIGSYS",
		32: "SIG32", 33: "SIG33", 34: "SIGRTMIN", 35: "SIGRTMIN+1", 63: "SIGRTMIN+29",
		64: "SIGRTMAX", 0: "SIG0", 65: "SIG65",
	}
	for sig, want := range cases {
		if got := SignalName(sig); got != want {
			t.Errorf("SignalName(%d) = %q, want %q", sig, got, want)
		}
	}
	// Every signal name parses back to its number.
	for sig := 1; sig <= SIGRTMAX; sig++ {
		if got, ok := SignalByName(SignalName(sig)); !ok || got != sig {
			t.Errorf("SignalByName(%q) = %d, %v; want %d", SignalName(sig), got, ok, sig)
		}
	}
	parse := map[string]int{
		"segv": 11, "SIGIOT": 6, "POLL": 29, "SIGRTMAX-1": 63, "SIGRTMIN+2": 36,
		"SIG40": 40, "15": 15, " sigterm ": 15,
	}
	for name, want := range parse {
		if got, ok := SignalByName(name); !ok || got != want {
			t.Errorf("SignalByName(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, bad := range []string{"", "SIG", "SIGFOO", "0", "65", "SIGRTMIN-1", "SIGRTMAX+1", "SIGRTMIN+31", "SIG99"} {
		if got, ok := SignalByName(bad); ok {
			t.Errorf("SignalByName(%q) = %d, want failure", bad, got)
		}
	}
}

func TestDefaultAction(t *testing.T) {
	cases := map[int]Action{
		SIGSEGV: Core, 6: Core, 3: Core, SIGSYS: Core,
		SIGKILL: Terminate, 15: Terminate, 13: Terminate, 10: Terminate, 29: Terminate, 40: Terminate,
		SIGCHLD: Ignore, 23: Ignore, 28: Ignore,
		SIGSTOP: Stop, 20: Stop, 21: Stop, 22: Stop,
		SIGCONT: Continue,
	}
	for sig, want := range cases {
		if got := DefaultAction(sig); got != want {
			t.Errorf("DefaultAction(%s) = %v, want %v", SignalName(sig), got, want)
		}
	}
	if Core.String() != "core" || Action(99).String() != "action(99)" {
		t.Error("Action.String")
	}
}
