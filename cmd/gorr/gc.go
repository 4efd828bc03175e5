package main

import (
	"os"
	"runtime/debug"
)

// GC settings of gorr's own process. Replay decodes tens of thousands
// of short-lived events a second over a live heap of a few MB, so with
// Go's default (GOGC=100) it collects every few hundred microseconds;
// four times the live heap between collections took the mutex
// workload's replay from 52 to 45 ms (median of 40 pairs) for 20 MB
// more resident memory. The soft limit keeps a big session's heap from
// growing five-fold unchecked. GOGC and GOMEMLIMIT in the environment
// win.
const (
	gcPercent   = 400
	memoryLimit = 4 << 30
)

// tuneGC applies gcPercent and memoryLimit unless the environment sets
// its own.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
