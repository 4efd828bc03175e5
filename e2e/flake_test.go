package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// raceProg loses an update about one run in ten: a counter thread reads
// the shared total, makes one or two system calls (a coin from getrandom
// says how many, so where the other thread gets its turn differs between
// runs) and writes it back, every seventh time; the other thread adds
// 1000 once without a lock. The calls are getpgrp, which the syscall
// buffer does not take: each stops, and the other thread may get its
// turn there.
const raceProg = `#include <pthread.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N 3000
static volatile long total;
static volatile int started;
static unsigned char coin[N];

static void *counter(void *arg) {
	(void)arg;
	started = 1;
	for (int i = 0; i < N; i++) {
		if (i % 7 == 0) {
			long v = total; /* the window: system calls between read and write */
			syscall(SYS_getpgrp);
			if (coin[i] & 1)
				syscall(SYS_getpgrp);
			total = v + 1;
		} else {
			syscall(SYS_getpgrp);
			if (coin[i] & 1)
				syscall(SYS_getpgrp);
			total = total + 1;
		}
	}
	return NULL;
}

static void *adder(void *arg) {
	(void)arg;
	while (!started)
		usleep(100);
	usleep(300);
	long v = total;
	total = v + 1000;
	return NULL;
}

int main(void) {
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (getrandom(coin, sizeof coin, 0) != sizeof coin)
		return 2;
	pthread_t a, b;
	pthread_create(&a, NULL, counter, NULL);
	pthread_create(&b, NULL, adder, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long us = (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
	printf("total=%ld want=%d in %ld us\n", total, N + 1000, us);
	return total == N + 1000 ? 0 : 1;
}
`

func ctxHunt(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// traceDirs lists the traces in a save directory.
func traceDirs(t *testing.T, save string) []string {
	t.Helper()
	ents, err := os.ReadDir(save)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

// --until-failure finds the lost update, keeps exactly its trace (no
// passing trace is left), exits with its status, and `gorr replay`
// opens it and replays to the same failure.
func TestUntilFailureFindsRace(t *testing.T) {
	bin := cprog(t, "race", raceProg)
	save := t.TempDir()
	ctx := ctxHunt(t, 8*time.Minute)
	h := gorrIn(ctx, t, save, t.TempDir(), nil, "record", "--until-failure", "--jobs", "2", bin)
	if h.Code != 1 {
		t.Fatalf("hunt: want exit status 1 (the race's)\n%v", h)
	}
	dirs := traceDirs(t, save)
	if len(dirs) != 1 {
		t.Fatalf("want exactly one kept trace, have %v\n%v", dirs, h)
	}
	if !regexp.MustCompile(`\d+ runs in .*, 1 failed \(failure rate`).Match(h.Stderr) ||
		!strings.Contains(string(h.Stderr), "kept the failing trace of run") {
		t.Fatalf("no summary:\n%s", h.Stderr)
	}
	m := regexp.MustCompile(`(?m)^total=(\d+) want=4000 in \d+ us$`).FindStringSubmatch(string(h.Stderr))
	if m == nil || m[1] == "4000" {
		t.Fatalf("the hunt did not show the failing output:\n%s", h.Stderr)
	}
	// latest-trace points at it: replay without naming the trace.
	rep := gorrIn(ctx, t, save, t.TempDir(), nil, "replay", "-a")
	if rep.Code != 1 || string(rep.Stdout) != m[0]+"\n" {
		t.Fatalf("replay of the kept trace: want exit 1 and %q\n%v", m[0], rep)
	}
}

// A command that never fails stops at --max-runs with status 0 and
// keeps nothing; --jobs 2 runs two recordings at once.
func TestUntilFailureNeverFails(t *testing.T) {
	save := t.TempDir()
	work := t.TempDir()
	log := filepath.Join(work, "log")
	ctx := ctxHunt(t, 3*time.Minute)
	h := gorrIn(ctx, t, save, work, nil, "record", "--until-failure", "--max-runs", "4", "--jobs", "2",
		"sh", "-c", "echo start >> "+log+"; sleep 0.5; echo end >> "+log)
	if h.Code != 0 || h.Signal != 0 {
		t.Fatalf("hunt: want status 0\n%v", h)
	}
	if !strings.Contains(string(h.Stderr), "4 runs in") || !strings.Contains(string(h.Stderr), "0 failed") {
		t.Fatalf("want 4 runs, none failed:\n%s", h.Stderr)
	}
	if dirs := traceDirs(t, save); len(dirs) != 0 {
		t.Fatalf("passing traces left behind: %v", dirs)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "start\nstart\n") || strings.Count(string(b), "start") != 4 {
		t.Fatalf("two runs never overlapped (--jobs 2):\n%s", b)
	}
}

// A missing program is an error at once; output that matches
// --fail-if-output is a failure (status 1 when the program exited 0).
func TestUntilFailureErrors(t *testing.T) {
	save := t.TempDir()
	ctx := ctxHunt(t, 2*time.Minute)
	start := time.Now()
	h := gorrIn(ctx, t, save, t.TempDir(), nil, "record", "--until-failure", "/nonexistent/prog")
	if h.Code == 0 || !strings.Contains(string(h.Stderr), "cannot run /nonexistent/prog") || time.Since(start) > 5*time.Second {
		t.Fatalf("want a clear error at once:\n%v", h)
	}
	if dirs := traceDirs(t, save); len(dirs) != 0 {
		t.Fatalf("traces left behind: %v", dirs)
	}
	h = gorrIn(ctx, t, save, t.TempDir(), nil, "record", "--until-failure", "--max-runs", "3", "--fail-if-output", "FLA+KE",
		"sh", "-c", "echo FLAAKE $$")
	if h.Code != 1 || len(traceDirs(t, save)) != 1 || !strings.Contains(string(h.Stderr), "output matched") {
		t.Fatalf("want the matching run kept and status 1:\n%v", h)
	}
}

// shortRaceProg is the race chaos mode must reach: two threads each do
// 20000 unlocked read-modify-write increments of a shared total, which
// takes each about 15 µs under recording, less than any timeslice.
const shortRaceProg = `#include <pthread.h>
#include <stdio.h>
#include <time.h>
#define N 20000
static volatile long total;
static void *inc(void *arg) {
	(void)arg;
	for (int i = 0; i < N; i++)
		total = total + 1;
	return NULL;
}
int main(void) {
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t a, b;
	pthread_create(&a, NULL, inc, NULL);
	pthread_create(&b, NULL, inc, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("total=%ld want=%d in %ld ns\n", total, 2 * N,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec));
	return total == 2 * N ? 0 : 1;
}
`

// Chaos mode interrupts threads within microseconds of their work and
// starves the interrupted one, so the short race above loses an update
// (in 5-10% of chaos recordings on a loaded 2-CPU machine: the race is
// only reached when the first thread is cut inside its loop before the
// second one has started), and the failing recording replays exactly.
// The hunt stops at the first failure (usually within 20 runs, a few
// seconds); up to 200 runs make a miss unlikely even at 5% (3.5e-5).
func TestChaosFindsShortRace(t *testing.T) {
	bin := cprog(t, "shortrace", shortRaceProg)
	save := t.TempDir()
	ctx := ctxHunt(t, 6*time.Minute)
	h := gorrIn(ctx, t, save, t.TempDir(), nil, "record", "--until-failure", "--chaos", "--max-runs", "200", bin)
	if h.Code != 1 {
		t.Fatalf("no chaos recording of 200 lost an update:\n%v", h)
	}
	m := regexp.MustCompile(`(?m)^total=(\d+) want=40000 in \d+ ns$`).FindStringSubmatch(string(h.Stderr))
	if m == nil || m[1] == "40000" {
		t.Fatalf("the hunt did not show the failing output:\n%s", h.Stderr)
	}
	rep := gorrIn(ctx, t, save, t.TempDir(), nil, "replay", "-a")
	if rep.Code != 1 || string(rep.Stdout) != m[0]+"\n" {
		t.Fatalf("replay of the chaos trace: want exit 1 and %q\n%v", m[0], rep)
	}
}

// Ctrl-C stops a hunt cleanly: the runs in flight are stopped and
// deleted, and with nothing failed it exits with status 130.
func TestUntilFailureInterrupted(t *testing.T) {
	save := t.TempDir()
	ctx := ctxHunt(t, 2*time.Minute)
	cmd := exec.CommandContext(ctx, gorrBin, "record", "--until-failure", "--jobs", "2", "sleep", "30")
	cmd.Env = append(os.Environ(), "GORR_TRACE_DIR="+save)
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(traceDirs(t, save)) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 || time.Since(start) > 15*time.Second || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("want exit 130 soon after Ctrl-C, got %d after %v:\n%s", code, time.Since(start), errb.String())
	}
	if dirs := traceDirs(t, save); len(dirs) != 0 {
		t.Fatalf("traces left after the interrupt: %v", dirs)
	}
}
