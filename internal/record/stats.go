package record

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
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
	phPoint                // taking a preemption point (stepping to a site, checksums)
	phCpuid                // planting cpuid trampolines at exec
	nPhases
)

var phaseNames = [nPhases]string{"wait", "resume", "syscall entry", "syscall exit", "signal", "ptrace event",
	"emulate rdtsc/cpuid", "exec snapshot", "file mmap", "shared-mapping check", "capture file",
	"diff mapped pages", "patch sites", "scan sites", "emit events", "preemption point", "cpuid trampolines"}

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

// CallCount is how one system call was recorded: Traced calls took the
// ptrace path (ViaStub of them from the syscall buffer's stub, which
// passed them on: a call it does not buffer, an fd 0-2 write, a nested
// call, a full buffer; Stopped of those at its buffered instruction,
// because the thread was resumed to stop at every call; Desched of those
// made again after blocking in the buffer, stub_amd64.S desched_entry),
// Buffered ones the in-process fast path.
type CallCount struct {
	Nr                                          int
	Traced, ViaStub, Stopped, Desched, Buffered uint64
}

// callStats counts the calls by number (record --stats): Linux's
// numbers in an array (a drain counts every buffered call), any other
// in a map.
type callStats struct {
	linux [linux.MaxNr + 1]*CallCount
	other map[int]*CallCount
}

func (c *callStats) get(nr int) *CallCount {
	if nr >= 0 && nr < len(c.linux) {
		if c.linux[nr] == nil {
			c.linux[nr] = &CallCount{Nr: nr}
		}
		return c.linux[nr]
	}
	if c.other == nil {
		c.other = map[int]*CallCount{}
	}
	n := c.other[nr]
	if n == nil {
		n = &CallCount{Nr: nr}
		c.other[nr] = n
	}
	return n
}

// traced counts a call met at its ptrace entry stop at rip.
func (c *callStats) traced(nr int, rip uint64) {
	n := c.get(nr)
	n.Traced++
	if syscallbuf.IsStub(rip) {
		n.ViaStub++
	}
	if rip == syscallbuf.SyscallRet {
		n.Stopped++
	}
	if rip == syscallbuf.DeschedRet {
		n.Desched++
	}
}

// list returns the counts, most ptrace-path calls first.
func (c *callStats) list() []CallCount {
	var out []CallCount
	for _, n := range c.linux {
		if n != nil {
			out = append(out, *n)
		}
	}
	for _, n := range c.other {
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b CallCount) int {
		if a.Traced != b.Traced {
			return cmp.Compare(b.Traced, a.Traced)
		}
		if a.Buffered != b.Buffered {
			return cmp.Compare(b.Buffered, a.Buffered)
		}
		return cmp.Compare(a.Nr, b.Nr)
	})
	return out
}

// PrintCalls writes the calls by number, the most ptrace-path calls
// first, up to max rows (`record --stats`).
func PrintCalls(w io.Writer, calls []CallCount, max int) {
	var traced, buffered uint64
	for _, c := range calls {
		traced += c.Traced
		buffered += c.Buffered
	}
	fmt.Fprintf(w, "gorr: %d calls took the ptrace path, %d the syscall buffer\n", traced, buffered)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "call\tnr\tptrace\tvia the stub\tstopped in it\tblocked in it\tbuffered\t\n")
	for i, c := range calls {
		if i == max {
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", linux.Name(c.Nr), c.Nr, c.Traced, c.ViaStub, c.Stopped, c.Desched, c.Buffered)
	}
	tw.Flush()
}
