package main

import (
	"fmt"
	"strings"

	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// recordedFeatures returns the CPUID feature words the tracees of a new
// recording will see, and the baseline name when limited to it.
func recordedFeatures(portable bool) ([]uint32, string) {
	f := cpu.Host()
	if portable {
		f = f.Limit()
		return f[:], cpu.BaselineName
	}
	return f[:], ""
}

// hostFeatures is the replaying CPU's features, less any a test hook
// hides (testHiddenCPUID, only in -tags gorrtest builds).
func hostFeatures() cpu.Features {
	f := cpu.Host()
	testHiddenCPUID(&f)
	return f
}

// checkCPU refuses to replay a trace on a CPU that lacks features the
// recorded programs were shown (they may have used them).
func checkCPU(h trace.Header) error {
	if len(h.CPUFeatures) == 0 {
		return nil // recorded before gorr stored them
	}
	var need cpu.Features
	copy(need[:], h.CPUFeatures)
	missing := cpu.Missing(need, hostFeatures())
	if len(missing) == 0 {
		return nil
	}
	hint := "record with --portable for a trace that replays on any " + cpu.BaselineName + " CPU"
	if h.CPUIDBaseline != "" {
		hint = "this CPU is below the " + h.CPUIDBaseline + " baseline the trace was recorded for"
	}
	return fmt.Errorf("this CPU lacks CPUID features the trace needs (recorded on %s): %s; %s",
		h.CPUModel, strings.Join(missing, ", "), hint)
}
