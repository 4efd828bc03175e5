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
	v, ok := statusFields(tid, key)
	return v[0], ok[0]
}

// statusFields returns the values of keys in /proc/tid/status, read once
// (the kernel formats the whole file at each read), and which were found.
func statusFields(tid int, keys ...string) ([]string, []bool) {
	vals, found := make([]string, len(keys)), make([]bool, len(keys))
	b, err := osfile.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return vals, found
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":\t"))
		if !ok {
			continue
		}
		for i, key := range keys {
			if !found[i] && string(k) == key {
				vals[i], found[i] = string(v), true
			}
		}
	}
	return vals, found
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
	v, _ := statusFields(tid, "SigCgt", "SigIgn")
	caught, _ = strconv.ParseUint(v[0], 16, 64)
	ignored, _ = strconv.ParseUint(v[1], 16, 64)
	return caught, ignored
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

// BlockedSignals returns tid's blocked-signal mask (bit sig-1 per signal).
func BlockedSignals(tid int) uint64 {
	v, _ := status(tid, "SigBlk")
	m, _ := strconv.ParseUint(v, 16, 64)
	return m
}

// PendingSignals returns the signals pending for tid: its own (SigPnd)
// and its thread group's (ShdPnd).
func PendingSignals(tid int) uint64 {
	v, _ := statusFields(tid, "SigPnd", "ShdPnd")
	own, _ := strconv.ParseUint(v[0], 16, 64)
	group, _ := strconv.ParseUint(v[1], 16, 64)
	return own | group
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
