package record

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// A phase is a part of the recorder's work whose wall time `record
// --stats` reports. Phases nest (capture runs inside exec and mmap), so
// their totals overlap.
type phase int

const (
	phWait    phase = iota // waiting for the next stop (tracees running, the kernel)
	phResume               // resuming a tracee
	phEntry                // handling a syscall-entry stop
	phExit                 // handling a syscall-exit stop
	phSignal               // handling a signal stop
	phEvent                // handling a ptrace event (fork, clone, exit)
	phEmulate              // emulating a trapped rdtsc/rdtscp/cpuid
	phExec                 // snapshotting an address space after exec
	phFileMap              // recording an mmap of a file
	phShared               // looking for other shared mappings of a file
	phCapture              // capturing a mapped file into the trace
	phDiff                 // comparing mapped pages with the captured file
	phPatch                // planting int3 over rdtsc/cpuid sites (scans included)
	phScan                 // scanning a file for sites (or reading the site cache)
	phEmit                 // encoding and writing events
	nPhases
)

var phaseNames = [nPhases]string{"wait", "resume", "syscall entry", "syscall exit", "signal", "ptrace event",
	"emulate rdtsc/cpuid", "exec snapshot", "file mmap", "shared-mapping check", "capture file",
	"diff mapped pages", "patch sites", "scan sites", "emit events"}

// PhaseStat is the count and total wall time of one phase.
type PhaseStat struct {
	Name  string
	Count int
	Total time.Duration
}

type phaseStats [nPhases]struct {
	count int
	total time.Duration
}

// since adds the time from t0 to now to phase p; used as
// `defer r.since(phX, time.Now())`.
func (r *recorder) since(p phase, t0 time.Time) {
	r.stats[p].count++
	r.stats[p].total += time.Since(t0)
}

func (s *phaseStats) list() []PhaseStat {
	out := make([]PhaseStat, 0, nPhases)
	for p := range nPhases {
		out = append(out, PhaseStat{Name: phaseNames[p], Count: s[p].count, Total: s[p].total})
	}
	return out
}

// PrintStats writes the phases as a table (`record --stats`).
func PrintStats(w io.Writer, stats []PhaseStat) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "phase\tcount\ttotal ms\tµs each\t\n")
	for _, s := range stats {
		each := 0.0
		if s.Count > 0 {
			each = float64(s.Total.Microseconds()) / float64(s.Count)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t\n", s.Name, s.Count, float64(s.Total)/1e6, each)
	}
	tw.Flush()
}
