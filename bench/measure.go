package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// runTimeout bounds every child process, so that a hang fails the run
// instead of blocking the benchmark. (A variable for the tests.)
var runTimeout = 5 * time.Minute

// newCmd returns a command bound to ctx that runs in its own process group;
// when ctx expires the whole group (gorr and its tracees) is killed.
func newCmd(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// combinedOutput runs a set-up command (compiler, go build) with the time box.
func combinedOutput(dir, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	return newCmd(ctx, dir, name, args...).CombinedOutput()
}

// runResult is one timed run of a command.
type runResult struct {
	wall           time.Duration
	stdout, stderr []byte
}

// run runs argv in dir and times it from start to exit. A non-zero exit
// status or a timeout is an error that quotes the end of the stderr.
func run(dir string, argv ...string) (runResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := newCmd(ctx, dir, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := runResult{time.Since(start), stdout.Bytes(), stderr.Bytes()}
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v", runTimeout)
	}
	if err != nil {
		return res, &runError{argv: argv, err: err, stderr: res.stderr}
	}
	return res, nil
}

// runError reports a failed run with the child's stderr.
type runError struct {
	argv   []string
	err    error
	stderr []byte
}

func (e *runError) Error() string {
	return fmt.Sprintf("%s: %v", strings.Join(e.argv, " "), e.err)
}

// short is a one-line reason for the table: the error, or the last
// meaningful line of the child's stderr.
func short(err error) string {
	msg := err.Error()
	var re *runError
	if errors.As(err, &re) {
		msg = re.err.Error()
		lines := strings.Split(strings.TrimSpace(string(re.stderr)), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" && !strings.Contains(l, "Saving execution") {
				msg += ": " + l
				break
			}
		}
	}
	msg = strings.ReplaceAll(msg, "|", "/") // keep Markdown tables intact
	if len(msg) > 90 {
		msg = msg[:87] + "..."
	}
	return msg
}

// traceSize is the disk usage of one trace directory.
type traceSize struct {
	total  int64 // all files, except hard links under files/ (link count > 1)
	files  int64 // the part of total that is copies under files/
	linked int64 // hard links under files/, not counted in total
}

// measureTrace sums the sizes of the regular files under dir. A file under
// dir/files whose link count is above 1 is a hard link to a copy in
// gorr's file cache (shared with the cache and other traces): it costs
// this trace no space and counts as 0 (reported as linked).
func measureTrace(dir string) (traceSize, error) {
	var s traceSize
	filesDir := filepath.Join(dir, "files") + string(filepath.Separator)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		size := info.Size()
		if !strings.HasPrefix(path, filesDir) {
			s.total += size
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			s.linked += size
			return nil
		}
		s.total += size
		s.files += size
		return nil
	})
	return s, err
}

// A mode is one way of recording: with the system-call buffer (record
// --syscall-buffer) or without it (record -n). Both pass their flag, so
// each column measures what its name says whatever gorr's default is.
type mode struct {
	name  string   // "" for gorr's default (a compared binary), else shown in the column names
	flags []string // extra record flags
	gorr  string   // another gorr binary to run (-compare), "" for the one built
}

var (
	bufferOn  = mode{name: "buf", flags: []string{"--syscall-buffer"}}
	bufferOff = mode{name: "-n", flags: []string{"-n"}}
)

// modeResult holds the samples of one mode.
type modeResult struct {
	mode           mode
	record, replay []time.Duration
	sizes          []traceSize
}

// result holds the N samples of each measurement of one workload.
type result struct {
	w           *workload
	native      []time.Duration
	modes       []*modeResult
	failedStage string // "setup", "native", "record", "replay", "record -n", "replay -n" or ""
	err         error
	warnings    []string
}

func (r *result) fail(stage string, err error) {
	r.failedStage, r.err = stage, err
}

// measure runs the workload n times natively, under gorr record and under
// gorr replay (once per mode), interleaved so that drifts of the machine
// affect all alike. The first recording of each mode is also checked: its
// output must match the native run's, and a non-quiet replay must
// reproduce it. A gorr failure stops the gorr runs but not the native ones.
func measure(w *workload, gorr, traceRoot string, n int, modes []mode) *result {
	r := &result{w: w}
	for _, m := range modes {
		r.modes = append(r.modes, &modeResult{mode: m})
	}
	for i := 0; i < n; i++ {
		if err := reset(w); err != nil {
			r.fail("native", err)
			return r
		}
		nat, err := run(w.dir, w.argv...)
		if err != nil {
			r.fail("native", err)
			return r
		}
		r.native = append(r.native, nat.wall)
		for _, mr := range r.modes {
			if r.err != nil {
				break
			}
			r.measureMode(mr, gorr, traceRoot, i, n, nat.stdout)
		}
	}
	return r
}

// measureMode makes the i-th recording and replay of one mode.
func (r *result) measureMode(mr *modeResult, gorr, traceRoot string, i, n int, nativeOut []byte) {
	w, suffix := r.w, ""
	if mr.mode.name != "" {
		suffix = " " + mr.mode.name
	}
	trace := filepath.Join(traceRoot, fmt.Sprintf("%s%s-%d", w.name, strings.ReplaceAll(suffix, " ", ""), i))
	if err := os.RemoveAll(trace); err != nil {
		r.fail("record"+suffix, err)
		return
	}
	if err := reset(w); err != nil {
		r.fail("record"+suffix, err)
		return
	}
	if mr.mode.gorr != "" {
		gorr = mr.mode.gorr
	}
	argv := append([]string{gorr, "record"}, mr.mode.flags...)
	argv = append(append(argv, "-o", trace), w.argv...)
	rec, err := run(w.dir, argv...)
	if err != nil {
		r.fail("record"+suffix, err)
		return
	}
	mr.record = append(mr.record, rec.wall)
	if i == 0 && !bytes.Equal(rec.stdout, nativeOut) {
		r.warnings = append(r.warnings, fmt.Sprintf("recorded%s stdout %q differs from native stdout %q",
			suffix, clip(rec.stdout), clip(nativeOut)))
	}

	rep, err := run(w.dir, gorr, "replay", "-a", "-q", trace)
	if err != nil {
		r.fail("replay"+suffix, err)
		return
	}
	mr.replay = append(mr.replay, rep.wall)

	size, err := measureTrace(trace)
	if err != nil {
		r.fail("replay"+suffix, err)
		return
	}
	mr.sizes = append(mr.sizes, size)

	if i == 0 {
		// Untimed check that replay reproduces the recorded output.
		out, err := run(w.dir, gorr, "replay", "-a", trace)
		if err != nil {
			r.fail("replay"+suffix, err)
			return
		}
		if !bytes.Equal(out.stdout, rec.stdout) {
			r.fail("replay"+suffix, fmt.Errorf("replay stdout %q differs from recorded %q",
				clip(out.stdout), clip(rec.stdout)))
			return
		}
	}
	if i < n-1 {
		os.RemoveAll(trace) // the last trace stays, for -keep
	}
}

func reset(w *workload) error {
	if w.reset == nil {
		return nil
	}
	return w.reset()
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// median of the samples; for an even count, the mean of the middle two.
func median[T ~int64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
}

// sizeMedians returns the medians of the three trace size figures.
func sizeMedians(sizes []traceSize) traceSize {
	var total, files, linked []int64
	for _, s := range sizes {
		total = append(total, s.total)
		files = append(files, s.files)
		linked = append(linked, s.linked)
	}
	return traceSize{median(total), median(files), median(linked)}
}
