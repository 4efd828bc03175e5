package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/hunt"
	"github.com/gorr-debugger/gorr/internal/tracedir"
)

// huntOnly are the record options that only --until-failure takes.
var huntOnly = []string{"max-runs", "jobs", "keep", "fail-if-output"}

// passThrough are the record options each recording of a hunt gets.
var passThrough = []string{"env", "syscall-buffer", "no-syscall-buffer", "verbose", "timeslice", "watchdog", "chaos", "checksum", "portable", "always-trap", "wait", "no-file-cache"}

// cmdHunt is `gorr record --until-failure`: it records path again and
// again (each run a `gorr record -o DIR` child) until runs fail.
func cmdHunt(p parsed, path string) int {
	if p.has("output-trace-dir") || p.has("print-trace-dir") {
		return fatalf("record: --until-failure names its own trace directories (no -o or -p)")
	}
	num := func(name string, def int) (int, error) {
		v := p.get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("--%s wants a positive number, got %q", name, v)
		}
		return n, nil
	}
	cpus := allowedCPUs()
	o := hunt.Options{Progress: os.Stderr, Terminal: isTerminal(os.Stderr)}
	var err error
	if o.MaxRuns, err = num("max-runs", 100); err != nil {
		return fatalf("record: %v", err)
	}
	if o.Jobs, err = num("jobs", max(len(cpus), 1)); err != nil {
		return fatalf("record: %v", err)
	}
	if o.Keep, err = num("keep", 1); err != nil {
		return fatalf("record: %v", err)
	}
	if re := p.get("fail-if-output"); re != "" {
		if o.FailIfOutput, err = regexp.Compile(re); err != nil {
			return fatalf("record: --fail-if-output: %v", err)
		}
	}
	unbound := p.has("cpu-unbound")
	if v := p.get("bind-to-cpu"); v != "" && v != "any" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fatalf("record: --bind-to-cpu wants a number, got %q", v)
		}
		cpus = []int{n}
	}
	if !unbound {
		o.CPUs = cpus
	}
	self, err := os.Executable()
	if err != nil {
		return fatalf("record: find the gorr executable: %v", err)
	}
	var extra []string
	for _, name := range passThrough {
		for _, v := range p.vals[name] {
			extra = append(extra, "--"+name)
			if specOf(name).value {
				extra = append(extra, v)
			}
		}
	}
	o.Run = hunt.Subprocess(func(dir string, cpu int) []string {
		argv := []string{self, "record", "-o", dir}
		if cpu >= 0 {
			argv = append(argv, "--bind-to-cpu", strconv.Itoa(cpu))
		} else {
			argv = append(argv, "--cpu-unbound")
		}
		argv = append(append(argv, extra...), "--", path)
		return append(argv, p.rest[1:]...)
	})
	o.NewDir = func() (string, error) {
		// Called from one goroutine only: New's free name is taken at once.
		dir, err := tracedir.New(path)
		if err != nil {
			return "", err
		}
		return dir, os.Mkdir(dir, 0o700)
	}
	if warn, _ := tracedir.CheckRoot(tracedir.SaveDir()); warn != "" {
		fmt.Fprintf(os.Stderr, "gorr: warning: %s\n", warn)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer cancel()
	where := "unbound"
	if len(o.CPUs) > 0 {
		where = fmt.Sprintf("on CPUs %v", o.CPUs[:min(len(o.CPUs), o.Jobs)])
	}
	fmt.Fprintf(os.Stderr, "gorr: recording %s until it fails: up to %d runs, %d at once %s\n", filepath.Base(path), o.MaxRuns, o.Jobs, where)
	sum, herr := hunt.Hunt(ctx, o)
	cancel()
	if sum.Interrupted {
		fmt.Fprintln(os.Stderr, "gorr: interrupted; the runs in flight were stopped and deleted")
	}
	fmt.Fprintf(os.Stderr, "gorr: %d runs in %s, %d failed (failure rate %.1f%%)\n", sum.Runs, sum.Elapsed.Round(1e7), sum.Failed, 100*sum.Rate())
	for i, f := range sum.Kept {
		why := hunt.Describe(f.Status)
		if f.Matched {
			why += ", output matched"
		}
		fmt.Fprintf(os.Stderr, "gorr: kept the failing trace of run %d (%s): %s\n", f.Run, why, f.Dir)
		if i == len(sum.Kept)-1 {
			showTail(f.Output)
		}
	}
	if len(sum.Kept) > 0 {
		last := sum.Kept[len(sum.Kept)-1]
		if err := tracedir.SetLatest(last.Dir); err != nil {
			fmt.Fprintf(os.Stderr, "gorr: warning: %v\n", err)
		}
		fmt.Fprintf(os.Stderr, "gorr: 'gorr replay' opens %s\n", last.Dir)
	}
	if herr != nil {
		return fatalf("record: %v", herr)
	}
	if len(sum.Kept) > 0 {
		if f := sum.Kept[0]; f.Matched && f.Status.Exited() && f.Status.ExitStatus() == 0 {
			return 1 // it failed by its output only
		}
		return exitLike(sum.Kept[0].Status)
	}
	if sum.Interrupted {
		return 130
	}
	return 0
}

// showTail prints the last lines of a failing run's output.
func showTail(out []byte) {
	lines := strings.SplitAfter(strings.TrimRight(string(out), "\n"), "\n")
	if len(out) == 0 {
		return
	}
	lines = lines[max(0, len(lines)-10):]
	fmt.Fprintf(os.Stderr, "gorr: the end of its output:\n%s\n", strings.Join(lines, ""))
}

func specOf(long string) flagSpec {
	for _, s := range recordFlags {
		if s.long == long {
			return s
		}
	}
	return flagSpec{}
}

// allowedCPUs lists the CPUs this process may run on.
func allowedCPUs() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var cpus []int
	for i := 0; i < runtime.NumCPU()*4 && i < 1024; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
