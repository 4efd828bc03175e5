package main

import (
	"os"
	"runtime/debug"
)

// GC settings of gorr's own process. The garbage is mostly events: the
// recorder encodes them, replay decodes tens of thousands a second (about
// 480 bytes each) over a live heap of a few MB. Fewer collections cost
// more fresh memory, and what that costs depends on the machine: where a
// page fault is cheap, four times the live heap between collections
// (GOGC=400) took the mutex workload's replay from 52 to 45 ms (median of
// 40 pairs); on a VM whose page faults take 10-13 µs (anonymous, first
// touch), the 30 MB heap GOGC=400 lets replay grow to cost 8700 page
// faults more than GOGC=100 in the replay of cp -a, 213 against 158 ms
// (perf stat, 8 runs each), while recording, whose heap stays small,
// gained nothing from a lower setting (the mutex recording: 95 ms at
// 400, 111 at 100). So recording keeps 400 and the commands that read a
// trace use 200: there cp's replay took 156 ms, the shell loop's 1495
// against 1565 at 400, the mutex's 111 against 103 and python's the
// same. The soft limit keeps a big session's heap from growing unchecked.
// GOGC and GOMEMLIMIT in the environment win.
const (
	recordGCPercent = 400
	readGCPercent   = 200
	memoryLimit     = 4 << 30
)

// tuneGC applies the GC percent for command cmd and memoryLimit unless
// the environment sets its own.
func tuneGC(cmd string) {
	if os.Getenv("GOGC") == "" {
		p := readGCPercent
		if cmd == "record" {
			p = recordGCPercent
		}
		debug.SetGCPercent(p)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
