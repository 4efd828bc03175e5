package tracee

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/gorr-debugger/gorr/internal/osfile"
)

// status returns the value of one "Key:\tvalue" line of /proc/tid/status.
func status(tid int, key string) (string, bool) {
	b, err := osfile.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return "", false
	}
	prefix := []byte(key + ":\t")
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

// Tgid returns the thread-group (process) id of tid, or tid itself if it
// cannot be read.
func Tgid(tid int) int {
	if v, ok := status(tid, "Tgid"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return tid
}

// SignalMasks returns the caught and ignored signal sets of tid.
func SignalMasks(tid int) (caught, ignored uint64) {
	if v, ok := status(tid, "SigCgt"); ok {
		caught, _ = strconv.ParseUint(v, 16, 64)
	}
	if v, ok := status(tid, "SigIgn"); ok {
		ignored, _ = strconv.ParseUint(v, 16, 64)
	}
	return
}

// IsZombie reports whether tid has finished exiting (a zombie, dead, or
// already gone).
func IsZombie(tid int) bool {
	b, err := osfile.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return true
	}
	k := bytes.LastIndexByte(b, ')')
	return k >= 0 && k+2 < len(b) && (b[k+2] == 'Z' || b[k+2] == 'X')
}

// PendingSignals returns the signals pending for tid: its own (SigPnd)
// and its thread group's (ShdPnd).
// BlockedSignals returns tid's blocked-signal mask (bit sig-1 per signal).
func BlockedSignals(tid int) uint64 {
	v, _ := status(tid, "SigBlk")
	m, _ := strconv.ParseUint(v, 16, 64)
	return m
}

func PendingSignals(tid int) uint64 {
	var set uint64
	for _, k := range []string{"SigPnd", "ShdPnd"} {
		if v, ok := status(tid, k); ok {
			m, _ := strconv.ParseUint(v, 16, 64)
			set |= m
		}
	}
	return set
}

// ContainerInit reports whether tid's process is the init (pid 1) of a
// PID namespace of its own (the last NSpid entry is its pid there).
func ContainerInit(tid int) bool {
	v, ok := status(tid, "NSpid")
	if !ok {
		return false
	}
	f := strings.Fields(v)
	return len(f) > 1 && f[len(f)-1] == "1"
}

// NSTid returns tid as its own PID namespace numbers it (the last NSpid
// entry), or tid itself if it cannot be read.
func NSTid(tid int) int {
	if v, ok := status(tid, "NSpid"); ok {
		f := strings.Fields(v)
		if len(f) > 0 {
			if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
				return n
			}
		}
	}
	return tid
}
