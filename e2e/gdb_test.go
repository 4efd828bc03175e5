package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const gdbProg = `#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static long values[3];
__attribute__((noinline)) long tick(long i) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long v = ts.tv_nsec * 10 + i;
	values[i] = v; /* line 10 */
	return v;
}
static void *worker(void *arg) {
	usleep(1000);
	return arg; /* line 15 */
}
int main(void) {
	pthread_t t;
	pthread_create(&t, 0, worker, 0);
	for (int i = 0; i < 3; i++) tick(i);
	pthread_join(t, 0);
	printf("%ld %ld %ld pid=%d\n", values[0], values[1], values[2], getpid());
	return 4;
}
`

func needGDB(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb is not installed")
	}
}

// gdbBatch replays traceDir under gdb in batch mode with the given
// commands and returns gdb's output.
func gdbBatch(t *testing.T, traceDir string, cmds ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"replay", traceDir, "--", "-batch", "-nx"}
	for _, c := range cmds {
		args = append(args, "-ex", c)
	}
	out, err := exec.CommandContext(ctx, gorrBin, args...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("gdb session timed out:\n%s", out)
	}
	if err != nil {
		t.Logf("gorr replay exited with %v", err)
	}
	return string(out)
}

func recordGDBProg(t *testing.T) (traceDir string, recorded string) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := writeFile(src, gdbProg); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	if out, err := exec.Command("gcc", "-O0", "-g", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	traceDir = filepath.Join(dir, "trace")
	rec, err := run(ctx60(t), dir, "", gorrBin, "record", "-o", traceDir, bin)
	if err != nil || rec.Code != 4 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	return traceDir, string(rec.Stdout)
}

// Values that were nondeterministic at record time read back in gdb as
// the recorded run printed them.
func TestGDBBreakpointsAndValues(t *testing.T) {
	needGDB(t)
	traceDir, recorded := recordGDBProg(t)
	want := strings.Fields(recorded)[:3]
	out := gdbBatch(t, traceDir,
		"break prog.c:10", "continue", "print v", "continue", "print v", "continue", "print v",
		"bt", "info threads", "when", "delete", "continue", "continue")
	got := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindAllStringSubmatch(out, -1)
	if len(got) != 3 {
		t.Fatalf("want three printed values, gdb said:\n%s", out)
	}
	for i := range got {
		if got[i][1] != want[i] {
			t.Fatalf("value %d: gdb printed %s, recording printed %s\n%s", i, got[i][1], want[i], out)
		}
	}
	for _, s := range []string{"#1  0x", "in main () at", "Completed event: ", "exited with code 04"} {
		if !strings.Contains(out, s) {
			t.Errorf("gdb output lacks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "received signal SIGKILL") {
		t.Errorf("no synthetic SIGKILL stop before the exit:\n%s", out)
	}
	// The recorded program output is reproduced during the replay too.
	if !strings.Contains(out, strings.TrimSpace(recorded)) {
		t.Errorf("replay under gdb did not reproduce the output %q", recorded)
	}
}

func TestGDBThreads(t *testing.T) {
	needGDB(t)
	traceDir, _ := recordGDBProg(t)
	out := gdbBatch(t, traceDir, "break worker", "continue", "info threads", "bt", "continue")
	if !regexp.MustCompile(`(?s)\* 2\s+Thread \d+\.\d+.*worker`).MatchString(out) || !strings.Contains(out, "  1    Thread") {
		t.Fatalf("want two threads with the worker current:\n%s", out)
	}
}

// gorr replay -s prints rr's launch lines, which Delve parses.
func TestDebugServerLaunchLines(t *testing.T) {
	traceDir, _ := recordGDBProg(t)
	lines := startDebugServer(t, traceDir)
	if len(lines) < 2 || lines[0] != "Launch debugger with" ||
		!regexp.MustCompile(`^  'gdb' '-l' '10000' '-ex' 'set sysroot /' '-ex' 'target extended-remote 127\.0\.0\.1:\d+' '/.+'$`).MatchString(lines[1]) {
		t.Fatalf("launch lines: %q", lines)
	}
	if len(lines) < 3 || !strings.Contains(lines[2], "gorr gdbinit") {
		t.Errorf("the launch lines should say how to get rr's commands: %q", lines)
	}
	if !bytes.Contains([]byte(lines[1]), []byte(traceDir)) {
		t.Errorf("the executable should be the copy captured in the trace: %s", lines[1])
	}
}

// startDebugServer runs `gorr replay --dbgport=0 TRACE` (killed when the
// test ends, at the latest after 60 s) and returns the launch lines it
// prints (rr's two, and gorr's line about gdbinit).
func startDebugServer(t *testing.T, traceDir string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	cmd := exec.CommandContext(ctx, gorrBin, "replay", "--dbgport=0", traceDir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	var lines []string
	for len(lines) < 3 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// Backwards: reverse-continue lands on earlier hits with the values the
// recording had, and finally on the start of the recording;
// reverse-next returns to the previous line; checkpoints and restart work.
func TestGDBReverse(t *testing.T) {
	needGDB(t)
	traceDir, recorded := recordGDBProg(t)
	want := strings.Fields(recorded)[:3]
	out := gdbBatch(t, traceDir,
		"break prog.c:10", "continue", "continue", "continue", "print v",
		"reverse-continue", "print v",
		"checkpoint",
		"reverse-continue", "print v",
		"reverse-continue",
		"restart 1", "print v",
		"next", "next", "reverse-next", "info line *$pc",
		"restart", "continue", "print v")
	got := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindAllStringSubmatch(out, -1)
	wantSeq := []string{want[2], want[1], want[0], want[1], want[0]}
	if len(got) != len(wantSeq) {
		t.Fatalf("want %d printed values, gdb said:\n%s", len(wantSeq), out)
	}
	for i := range wantSeq {
		if got[i][1] != wantSeq[i] {
			t.Fatalf("value %d: gdb printed %s, want %s (recorded %v)\n%s", i, got[i][1], wantSeq[i], want, out)
		}
	}
	for _, s := range []string{"No more reverse-execution history.", "Checkpoint 1 at event", `Line 11 of "`} {
		if !strings.Contains(out, s) {
			t.Errorf("gdb output lacks %q:\n%s", s, out)
		}
	}
}

const corruptProg = `#include <stdio.h>
#include <stdlib.h>
#include <time.h>
struct rec { long id; long value; };
static struct rec table[16];
__attribute__((noinline)) void store(int k, long v) {
	table[k].value = v; /* line 7 */
}
int main(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	srand(ts.tv_nsec);
	int victim = 3 + rand() % 8;
	for (int i = 0; i < 16; i++) {
		table[i].id = i;
		store(i == victim + 1 ? victim : i, 1000 + rand() % 1000); /* line 16: the bug */
	}
	printf("victim=%d value=%ld\n", victim, table[victim].value); /* line 18 */
	return 0;
}
`

// The rr workflow: a watchpoint on a corrupted field and reverse-continue
// land on the write that corrupted it, with its backtrace and loop variable.
func TestGDBWatchpointReverse(t *testing.T) {
	needGDB(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "corrupt.c")
	if err := writeFile(src, corruptProg); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "corrupt")
	if out, err := exec.Command("gcc", "-O0", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	traceDir := filepath.Join(dir, "trace")
	rec, err := run(ctx60(t), dir, "", gorrBin, "record", "-o", traceDir, bin)
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	m := regexp.MustCompile(`victim=(\d+) value=(\d+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil {
		t.Fatalf("recorded output %q", rec.Stdout)
	}
	victim, _ := strconv.Atoi(m[1])
	out := gdbBatch(t, traceDir,
		"break corrupt.c:18", "continue", "print table[victim].value",
		"watch table[victim].value", "reverse-continue", "bt", "up", "print i", "print victim")
	if !strings.Contains(out, "$1 = "+m[2]) {
		t.Fatalf("value at the end should be the recorded %s:\n%s", m[2], out)
	}
	// Stopped inside store() at the write, called from the loop at line 16
	// in the iteration i == victim+1 (the one that wrote the wrong slot).
	for _, want := range []string{"Old value = " + m[2], "in store (k=" + m[1], "corrupt.c:7", "in main () at", "corrupt.c:16",
		"$2 = " + strconv.Itoa(victim+1), "$3 = " + m[1]} {
		if !strings.Contains(out, want) {
			t.Errorf("gdb output lacks %q:\n%s", want, out)
		}
	}
}

const segvProg = `#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static sigjmp_buf env;
static volatile long hits;
static void handler(int sig) { hits++; siglongjmp(env, 1); }
int main(void) {
	struct sigaction sa = {.sa_handler = handler};
	sigaction(SIGSEGV, &sa, 0);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	volatile int *p = (volatile int *)(uintptr_t)(8 + 8 * (ts.tv_nsec % 4));
	if (!sigsetjmp(env, 1)) {
		*p = 1; /* line 16: faults */
	}
	printf("recovered hits=%ld p=%p\n", hits, (void *)p);
	return 0;
}
`

// A recorded SIGSEGV stops gdb at the faulting instruction (with the
// recorded faulting pointer), forwards and, from the end, backwards.
func TestGDBSignalStop(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "segv", segvProg)
	m := regexp.MustCompile(`p=(0x[0-9a-f]+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil {
		t.Fatalf("recorded output %q", rec.Stdout)
	}
	out := gdbBatch(t, traceDir, "continue", "print p", "continue", "reverse-continue", "print p")
	if strings.Count(out, "Program received signal SIGSEGV") != 2 || strings.Count(out, "segv.c:16") < 2 {
		t.Fatalf("want the SIGSEGV stop at line 16 forwards and backwards:\n%s", out)
	}
	if strings.Count(out, "(volatile int *) "+m[1]) != 2 {
		t.Fatalf("p should print the recorded %s:\n%s", m[1], out)
	}
	// -e starts at the end (the stop before the exit).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eout, _ := exec.CommandContext(ctx, gorrBin, "replay", "-e", traceDir, "--", "-batch", "-nx", "-ex", "reverse-continue", "-ex", "print p").CombinedOutput()
	if !strings.Contains(string(eout), "Program received signal SIGSEGV") || !strings.Contains(string(eout), m[1]) {
		t.Fatalf("replay -e then reverse-continue:\n%s", eout)
	}
}

const forkProg = `#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) long work(long seed) { return seed * 7 + 1; }
int main(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	pid_t c = fork();
	if (c == 0) {
		printf("child %d r=%ld\n", getpid(), work(ts.tv_nsec));
		return 3;
	}
	int st;
	waitpid(c, &st, 0);
	printf("parent %d exited %d\n", getpid(), WEXITSTATUS(st));
	return 0;
}
`

// -f PID debugs a forked child (rr's --onfork).
func TestGDBOnFork(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "fork", forkProg)
	m := regexp.MustCompile(`child (\d+) r=(\d+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil {
		t.Fatalf("recorded output %q", rec.Stdout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, gorrBin, "replay", "-f", m[1], traceDir, "--", "-batch", "-nx",
		"-ex", "break work", "-ex", "continue", "-ex", "print seed*7+1", "-ex", "continue").CombinedOutput()
	if !strings.Contains(string(out), "$1 = "+m[2]) || !strings.Contains(string(out), "process "+m[1]) {
		t.Fatalf("want the child %s with r=%s:\n%s", m[1], m[2], out)
	}
}

// recordC compiles a C program (-O0 -g) and records it; the program must
// exit 0.
func recordC(t *testing.T, name, src string) (traceDir string, rec Run) {
	t.Helper()
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := writeFile(c, src); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("gcc", "-O0", "-g", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	traceDir = filepath.Join(dir, "trace")
	rec, err := run(ctx60(t), dir, "", gorrBin, "record", "-o", traceDir, bin)
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	return traceDir, rec
}
