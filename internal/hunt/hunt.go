// Package hunt records a program again and again, several recordings at
// once, until it fails: the loop behind `gorr record --until-failure`.
// Each attempt is one run of a Runner (the gorr command records it in a
// child process); the hunt keeps the traces of the first failing runs
// and deletes the others as it goes.
package hunt

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Outcome is what one recording did.
type Outcome struct {
	// Status is the wait status of the recorded program.
	Status unix.WaitStatus
	// Output is what the program wrote (stdout then stderr, without
	// gorr's own messages), for --fail-if-output.
	Output []byte
}

// Runner records one run into dir, bound to cpu (-1: unbound). An error
// means the recording itself failed (not the program).
type Runner func(ctx context.Context, dir string, cpu int) (Outcome, error)

// Options configure a hunt.
type Options struct {
	Run Runner
	// NewDir reserves the directory of the next trace.
	NewDir func() (string, error)
	// MaxRuns bounds the number of recordings; Jobs run at once, the
	// i-th slot on CPUs[i%len(CPUs)] (no CPUs: unbound); Keep is how many
	// failing traces to keep (the hunt ends when it has them).
	MaxRuns, Jobs, Keep int
	CPUs                []int
	// FailIfOutput, when set, makes a run whose output matches a failure
	// even if it exited with status 0.
	FailIfOutput *regexp.Regexp
	// Progress receives progress reports; Terminal rewrites one status
	// line in place instead of printing a line per run.
	Progress io.Writer
	Terminal bool
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Failure is one kept failing run.
type Failure struct {
	Run    int // 1-based number of the run, in start order
	Dir    string
	Status unix.WaitStatus
	// Matched is true when the run failed only because its output
	// matched FailIfOutput.
	Matched bool
	Output  []byte
}

// Summary is the result of a hunt.
type Summary struct {
	Runs, Failed int // completed runs, failing runs among them
	Kept         []Failure
	Elapsed      time.Duration
	Interrupted  bool // ctx was cancelled before the hunt ended
}

// Rate is the fraction of completed runs that failed.
func (s Summary) Rate() float64 {
	if s.Runs == 0 {
		return 0
	}
	return float64(s.Failed) / float64(s.Runs)
}

// Describe says why a status is a failure ("exit status 1", "killed by
// signal 11").
func Describe(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%v)", ws.Signal(), ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

type result struct {
	run int
	dir string
	out Outcome
	err error
	dur time.Duration
}

// Hunt runs the hunt until Keep failures are kept, MaxRuns recordings
// have completed, or ctx is cancelled (Ctrl-C: the runs in flight are
// stopped and deleted, the failures found so far are kept). The error is
// a recording that failed as a recording; the hunt stops there.
func Hunt(ctx context.Context, o Options) (Summary, error) {
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	if o.Keep < 1 {
		o.Keep = 1
	}
	if o.MaxRuns < 1 {
		o.MaxRuns = 1
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	start := now()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()

	results := make(chan result)
	var wg sync.WaitGroup
	started := 0
	var firstErr error
	launch := func(slot int) bool {
		if started >= o.MaxRuns || runCtx.Err() != nil {
			return false
		}
		dir, err := o.NewDir()
		if err != nil {
			firstErr = fmt.Errorf("new trace directory: %w", err)
			stop()
			return false
		}
		started++
		n := started
		cpu := -1
		if len(o.CPUs) > 0 {
			cpu = o.CPUs[slot%len(o.CPUs)]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := now()
			out, err := o.Run(runCtx, dir, cpu)
			results <- result{run: n, dir: dir, out: out, err: err, dur: now().Sub(t0)}
		}()
		return true
	}
	// slots maps a run in flight to its slot, so a finished run's slot
	// (and CPU) goes to the next one.
	slots := map[int]int{}
	inFlight := 0
	for s := 0; s < o.Jobs; s++ {
		if !launch(s) {
			break
		}
		slots[started] = s
		inFlight++
	}
	var sum Summary
	for inFlight > 0 {
		r := <-results
		inFlight--
		slot := slots[r.run]
		delete(slots, r.run)
		cancelled := runCtx.Err() != nil
		switch {
		case cancelled:
			// Stopped by us (enough failures, an error, Ctrl-C): its
			// status says nothing about the program.
			_ = os.RemoveAll(r.dir)
		case r.err != nil:
			_ = os.RemoveAll(r.dir)
			if firstErr == nil {
				firstErr = fmt.Errorf("run %d: %w", r.run, r.err)
			}
			stop()
		default:
			sum.Runs++
			failed, matched := isFailure(r.out, o.FailIfOutput)
			if failed {
				sum.Failed++
			}
			kept := failed && len(sum.Kept) < o.Keep
			if kept {
				sum.Kept = append(sum.Kept, Failure{Run: r.run, Dir: r.dir, Status: r.out.Status, Matched: matched, Output: r.out.Output})
			} else {
				_ = os.RemoveAll(r.dir)
			}
			report(o, &sum, r, failed, matched, kept, now().Sub(start))
			if len(sum.Kept) >= o.Keep {
				stop()
			}
		}
		if launch(slot) {
			slots[started] = slot
			inFlight++
		}
	}
	wg.Wait()
	sum.Elapsed = now().Sub(start)
	sum.Interrupted = ctx.Err() != nil
	if o.Terminal {
		fmt.Fprintln(o.Progress)
	}
	return sum, firstErr
}

// isFailure tells whether a run failed, and whether only its output made
// it one.
func isFailure(out Outcome, re *regexp.Regexp) (failed, matched bool) {
	if out.Status.Signaled() || out.Status.Exited() && out.Status.ExitStatus() != 0 {
		return true, false
	}
	if re != nil && re.Match(out.Output) {
		return true, true
	}
	return false, false
}

func report(o Options, sum *Summary, r result, failed, matched, kept bool, elapsed time.Duration) {
	rate := float64(sum.Runs) / max(elapsed.Seconds(), 1e-9)
	if o.Terminal {
		fmt.Fprintf(o.Progress, "\r\033[Kgorr: %d runs, %d failed (%.1f%%), %.1f runs/s, %s elapsed",
			sum.Runs, sum.Failed, 100*sum.Rate(), rate, elapsed.Round(100*time.Millisecond))
		return
	}
	what := "passed"
	switch {
	case failed && matched:
		what = "failed (output matched)"
	case failed:
		what = "failed (" + Describe(r.out.Status) + ")"
	}
	if kept {
		what += ", kept " + r.dir
	}
	fmt.Fprintf(o.Progress, "gorr: run %d %s in %s; %d runs, %d failed\n", r.run, what, r.dur.Round(time.Millisecond), sum.Runs, sum.Failed)
}
