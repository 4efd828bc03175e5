// Package e2e records and replays real programs with the gorr binary and
// compares what the replay reproduces with what the recording saw.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	gorrBin  string
	buildDir string
	rootDir  string
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		fmt.Println("e2e: gorr needs linux/amd64; skipping")
		return 0, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return 1, err
	}
	rootDir = filepath.Dir(wd)
	buildDir, err = os.MkdirTemp("", "gorr-e2e-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(buildDir)
	gorrBin = filepath.Join(buildDir, "gorr")
	cmd := exec.Command("go", "build", "-tags", "gorrtest", "-o", gorrBin, "./cmd/gorr")
	cmd.Dir = rootDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("build gorr: %v\n%s", err, out)
	}
	os.Setenv("GORR_TRACE_DIR", filepath.Join(buildDir, "traces"))
	return m.Run(), nil
}

// Program is one entry of testdata/manifest.json.
type Program struct {
	Name         string   `json:"name"`
	Lang         string   `json:"lang"`
	Args         []string `json:"args"`
	Stdin        string   `json:"stdin"`
	LDFlags      []string `json:"ldflags"`
	Exit         int      `json:"exit"`
	Signal       int      `json:"signal"`
	BeforeReplay string   `json:"before_replay"`
	Setup        string   `json:"setup"`
	Covers       string   `json:"covers"`
	// GoFlags are extra go build flags (e.g. -race); GoTest builds the
	// package's test binary (go test -c); ExitAny accepts any exit status
	// (a flaky test), which the replay must still reproduce.
	GoFlags []string `json:"goflags"`
	GoTest  bool     `json:"gotest"`
	ExitAny bool     `json:"exit_any"`
	// Unsupported, when set, is a substring of the error with which gorr
	// must refuse to record this program.
	Unsupported string `json:"unsupported"`
	// RecordFlags are extra `gorr record` flags for this program (for
	// example a short --timeslice, to take many preemption points).
	RecordFlags []string `json:"record_flags"`
	// Needs lists what the machine must offer for the program to run as
	// its entry expects (machine_test.go). Without it: int80, the
	// program dies of SIGSEGV natively, and its recording must replay
	// that; rdtsc-trap, gorr must warn at record that it cannot record
	// rdtsc in JIT code, and replay must reproduce the run or report a
	// divergence (expectLacking).
	Needs []string `json:"needs"`
}

func loadManifest(t *testing.T) []Program {
	b, err := os.ReadFile(filepath.Join(rootDir, "testdata", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var progs []Program
	if err := json.Unmarshal(b, &progs); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return progs
}

var buildMu sync.Mutex

// build compiles a corpus program once and returns its path.
func build(t *testing.T, p Program) string {
	buildMu.Lock()
	defer buildMu.Unlock()
	out := filepath.Join(buildDir, "bin", p.Name)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	os.MkdirAll(filepath.Dir(out), 0o755)
	var cmd *exec.Cmd
	switch p.Lang {
	case "c":
		args := []string{"-O1", "-g", "-pthread", "-o", out, filepath.Join(rootDir, "testdata", "c", p.Name+".c")}
		args = append(args, p.LDFlags...)
		cmd = exec.Command("gcc", args...)
	case "go":
		args := []string{"build"}
		if p.GoTest {
			args = []string{"test", "-c"}
		}
		args = append(args, p.GoFlags...)
		args = append(args, "-o", out, "./testdata/go/"+p.Name)
		cmd = exec.Command("go", args...)
		cmd.Dir = rootDir
	default:
		t.Fatalf("unknown language %q", p.Lang)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", p.Name, err, b)
	}
	return out
}

// Run is one execution's observable outcome.
type Run struct {
	Stdout, Stderr []byte
	Code, Signal   int
}

func (r Run) String() string {
	return fmt.Sprintf("exit=%d signal=%d\n--- stdout\n%s--- stderr\n%s", r.Code, r.Signal, r.Stdout, r.Stderr)
}

func run(ctx context.Context, dir string, stdin string, name string, args ...string) (Run, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := Run{Stdout: o.Bytes(), Stderr: e.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			r.Signal = int(ws.Signal())
		} else {
			r.Code = ws.ExitStatus()
		}
		err = nil
	}
	if ctx.Err() != nil {
		return r, fmt.Errorf("timed out: %w", ctx.Err())
	}
	return r, err
}

// stripGorr removes gorr's own messages from a stderr stream.
func stripGorr(b []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("gorr: ")) {
			continue
		}
		out = append(out, line...)
	}
	return out
}

func shell(t *testing.T, dir, script string) {
	if script == "" {
		return
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, out)
	}
}

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("GORR_E2E_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5 // the corpus must replay identically five recordings in a row
}

// noBuffer tells whether record flags turn the syscall buffer off.
func noBuffer(flags []string) bool {
	return slices.Contains(flags, "-n") || slices.Contains(flags, "--no-syscall-buffer")
}

// recordReplay records argv in a scratch directory and replays it from a
// different, empty directory with different stdin, returning both runs.
func recordReplay(t *testing.T, p Program, argv []string) (rec, rep Run) {
	t.Helper()
	return recordReplayWithin(t, p, argv, 90*time.Second)
}

// recordReplayWithin is recordReplay with a time limit for the recording
// and the replay together.
func recordReplayWithin(t *testing.T, p Program, argv []string, limit time.Duration) (rec, rep Run) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if slices.Contains(p.RecordFlags, "--syscall-buffer") && noBuffer(strings.Fields(os.Getenv("GORR_E2E_RECORD_FLAGS"))) {
		t.Skip("needs the syscall buffer, which GORR_E2E_RECORD_FLAGS turns off")
	}
	scratch := tempDir(t)
	shell(t, scratch, p.Setup)
	traceDir := filepath.Join(tempDir(t), "trace")
	args := []string{"record", "-o", traceDir}
	args = append(args, p.RecordFlags...)
	args = append(args, strings.Fields(os.Getenv("GORR_E2E_RECORD_FLAGS"))...)
	rec, err := run(ctx, scratch, p.Stdin, gorrBin, append(args, argv...)...)
	if err != nil {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	t.Logf("trace %s", traceDir)
	if bytes.Contains(rec.Stderr, []byte("gorr: record:")) {
		t.Fatalf("recording failed:\n%v", rec)
	}
	shell(t, scratch, p.BeforeReplay)
	elsewhere := t.TempDir()
	rep, err = run(ctx, elsewhere, "different stdin at replay\n", gorrBin, "replay", "-a", traceDir)
	if err != nil {
		t.Fatalf("replay: %v\n%v", err, rep)
	}
	return rec, rep
}

func compare(t *testing.T, rec, rep Run) {
	t.Helper()
	recErr, repErr := stripGorr(rec.Stderr), stripGorr(rep.Stderr)
	if !bytes.Equal(rec.Stdout, rep.Stdout) || !bytes.Equal(recErr, repErr) || rec.Code != rep.Code || rec.Signal != rep.Signal {
		t.Fatalf("replay differs from recording\n=== recording\n%v\n=== replay\n%v", rec, rep)
	}
}

func TestCorpus(t *testing.T) {
	for _, p := range loadManifest(t) {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			bin := build(t, p)
			argv := append([]string{bin}, p.Args...)
			if c := missing(t, p); c != "" {
				expectLacking(t, p, argv, c)
				return
			}
			if p.Unsupported != "" {
				expectUnsupported(t, p, argv)
				return
			}
			var outputs [][]byte
			for i := 0; i < rounds(); i++ {
				rec, rep := recordReplay(t, p, argv)
				if p.Signal != 0 && rec.Signal != p.Signal {
					t.Fatalf("recorded run died of signal %d, want %d\n%v", rec.Signal, p.Signal, rec)
				}
				if p.Signal == 0 && !p.ExitAny && rec.Code != p.Exit {
					t.Fatalf("recorded run exited %d, want %d\n%v", rec.Code, p.Exit, rec)
				}
				compare(t, rec, rep)
				outputs = append(outputs, rec.Stdout)
			}
			// The program must print values that change from run to run,
			// or this test could not tell a replay from a re-run.
			if len(outputs) > 1 && bytes.Equal(outputs[0], outputs[1]) {
				t.Fatalf("two recordings printed the same output; the program does not exercise nondeterminism:\n%s", outputs[0])
			}
		})
	}
}

// expectLacking checks what gorr does with p on a machine without c, one
// of p's needs (see Program.Needs).
func expectLacking(t *testing.T, p Program, argv []string, c string) {
	t.Logf("this machine lacks %s", c)
	p.Unsupported = ""
	rec, rep := recordReplay(t, p, argv)
	switch c {
	case "int80":
		if rec.Signal != int(syscall.SIGSEGV) {
			t.Fatalf("without int $0x80 the program should die of SIGSEGV\n%v", rec)
		}
		compare(t, rec, rep)
	case "rdtsc-trap":
		const warning = "this machine does not trap rdtsc"
		if !bytes.Contains(rec.Stderr, []byte(warning)) {
			t.Fatalf("want the recording to warn %q\n%v", warning, rec)
		}
		if rep.Code != 0 && bytes.Contains(rep.Stderr, []byte("replay diverged")) {
			t.Logf("replay reported the divergence, as it must:\n%s", rep.Stderr)
			return
		}
		compare(t, rec, rep) // an identical replay, never a different one
	default:
		t.Fatalf("no expectation for a machine without %s", c)
	}
}

// expectUnsupported checks that gorr refuses to record p with a clear
// message, promptly, and leaves a trace that says it is incomplete.
func expectUnsupported(t *testing.T, p Program, argv []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	scratch := t.TempDir()
	shell(t, scratch, p.Setup)
	traceDir := filepath.Join(t.TempDir(), "trace")
	rec, err := run(ctx, scratch, p.Stdin, gorrBin, append([]string{"record", "-o", traceDir}, argv...)...)
	if err != nil {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	if rec.Code == 0 || !bytes.Contains(rec.Stderr, []byte(p.Unsupported)) {
		t.Fatalf("want recording to fail with %q\n%v", p.Unsupported, rec)
	}
	rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
	if err != nil {
		t.Fatalf("replay: %v\n%v", err, rep)
	}
	if rep.Code == 0 || !bytes.Contains(rep.Stderr, []byte("incomplete")) {
		t.Fatalf("replay of a refused recording should report it incomplete\n%v", rep)
	}
}

// tempDir is t.TempDir, or a directory kept after the test when
// GORR_E2E_KEEP is set. When the test fails, the directory (a trace, a
// recording's scratch files) is kept anyway and its path logged, so
// that a failure seen once, in CI say, can be examined.
func tempDir(t *testing.T) string {
	if os.Getenv("GORR_E2E_KEEP") == "" {
		d := t.TempDir()
		t.Cleanup(func() { // runs before t.TempDir's removal
			if !t.Failed() {
				return
			}
			kept, err := os.MkdirTemp("", "gorr-e2e-failed-")
			if err == nil {
				err = os.Rename(d, filepath.Join(kept, filepath.Base(d)))
			}
			if err != nil {
				t.Logf("could not keep %s: %v", d, err)
				return
			}
			t.Logf("kept %s in %s", d, kept)
		})
		return d
	}
	d, err := os.MkdirTemp("", "gorr-e2e-keep-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
