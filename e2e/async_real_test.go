package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Real programs whose threads are preempted, or interrupted by timer
// signals, between system calls: each is recorded and replayed a few
// times (GORR_E2E_REAL_ROUNDS, default 2; CI runs five, the rounds issue
// 9 asks for, in a step of their own) and the replay must reproduce the
// recording's output. A program that is not installed is skipped with a
// message.

// realElsewhere skips a real-program test when GORR_E2E_REAL_ELSEWHERE
// is set: CI (.ci/run) runs them in a step of their own, five rounds
// each, beside the longest real program.
func realElsewhere(t *testing.T) {
	t.Helper()
	if os.Getenv("GORR_E2E_REAL_ELSEWHERE") != "" {
		t.Skip("GORR_E2E_REAL_ELSEWHERE is set: .ci/run runs the real programs of the preemption tests in a step of their own")
	}
}

func realRounds() int {
	if n, err := strconv.Atoi(os.Getenv("GORR_E2E_REAL_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 2
}

// recordReplayReal records argv (run in a scratch directory) and replays
// it, within limit for both, and compares the two runs.
func recordReplayReal(t *testing.T, limit time.Duration, argv ...string) {
	t.Helper()
	recordReplayRealWithin(t, limit, 0, argv...)
}

// recordReplayRealWithin is recordReplayReal with a budget for the whole
// test (0: none): unless GORR_E2E_REAL_ROUNDS asks for a number of
// rounds, a round after the first starts only if the previous one's
// time still fits in the budget, so a loaded machine runs fewer rounds
// instead of timing out.
func recordReplayRealWithin(t *testing.T, limit, budget time.Duration, argv ...string) {
	t.Helper()
	if os.Getenv("GORR_E2E_REAL_ROUNDS") != "" {
		budget = 0
	}
	start := time.Now()
	var last time.Duration
	for i := 0; i < realRounds(); i++ {
		if budget > 0 && i > 0 && time.Since(start)+last > budget {
			t.Logf("round %d not started: %v of the %v budget spent, a round takes %v", i+1, time.Since(start).Round(time.Second), budget, last.Round(time.Second))
			break
		}
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		scratch := tempDir(t)
		traceDir := filepath.Join(tempDir(t), "trace")
		rec, err := run(ctx, scratch, "", gorrBin, append([]string{"record", "-o", traceDir}, argv...)...)
		if err != nil {
			cancel()
			t.Fatalf("record: %v\n%v", err, rec)
		}
		t1 := time.Now()
		rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
		cancel()
		if err != nil {
			t.Fatalf("replay: %v\n%v", err, rep)
		}
		t.Logf("round %d: record %v, replay %v (trace %s)", i+1, t1.Sub(t0).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond), traceDir)
		compare(t, rec, rep)
		last = time.Since(t0)
	}
}

func need(t *testing.T, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		t.Skipf("%s is not installed; skipping", prog)
	}
	return p
}

// TestAsyncRealPythonThreads: three threads increment counters in pure
// Python for 0.3 s (the GIL changes hands on timed futex waits).
func TestAsyncRealPythonThreads(t *testing.T) {
	realElsewhere(t)
	py := need(t, "python3")
	script := filepath.Join(t.TempDir(), "threads.py")
	src := `import threading, time, os
counts = [0, 0, 0]
def work(i):
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        counts[i] += 1
ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
for t in ts: t.start()
for t in ts: t.join()
print("pid", os.getpid(), "counts", counts)
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	recordReplayReal(t, 3*time.Minute, py, script)
}

// TestAsyncRealOpensslSpeed: SIGALRM ends each timed run of a hashing
// loop that makes no system calls.
func TestAsyncRealOpensslSpeed(t *testing.T) {
	realElsewhere(t)
	ossl := need(t, "openssl")
	recordReplayReal(t, 4*time.Minute, ossl, "speed", "-seconds", "1", "sha256")
}

// TestAsyncRealPythonTests: a run of stdlib test modules, among them
// test_threading, in two worker processes: test_random and
// test_threading (about 45 s to record and 25 s to replay on a quiet
// machine), GORR_E2E_REAL_ROUNDS rounds (by default 2 within a budget
// of 6 minutes: a loaded machine that spends it in the first round runs
// one), or with GORR_E2E_LONG=2 also test_json (several minutes a
// round). Its threads fork while other children exit: recordings made
// under load diverged at a NEW_TASK before replay restarted the forks
// that a real SIGCHLD interrupted (testdata fork_reap_race).
func TestAsyncRealPythonTests(t *testing.T) {
	realElsewhere(t)
	py := need(t, "python3")
	if err := exec.Command(py, "-c", "import test.support, test.test_threading").Run(); err != nil {
		t.Skip("python3's test package is not installed; skipping")
	}
	mods := []string{"test_random", "test_threading"}
	limit, budget := 10*time.Minute, 6*time.Minute
	if os.Getenv("GORR_E2E_LONG") == "2" {
		mods = []string{"test_json", "test_random", "test_threading"}
		limit, budget = 20*time.Minute, 0
	}
	recordReplayRealWithin(t, limit, budget, append(append([]string{py, "-m", "test"}, mods...), "-j2")...)
}

// TestAsyncRealGoTicker: a Go program with GOMAXPROCS=2 hashing in
// goroutines beside a 1 ms ticker.
func TestAsyncRealGoTicker(t *testing.T) {
	realElsewhere(t)
	bin := filepath.Join(t.TempDir(), "async_go_ticker")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/go/async_go_ticker")
	cmd.Dir = rootDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	recordReplayReal(t, 3*time.Minute, bin)
}
