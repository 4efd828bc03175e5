package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Going back from a crash the program raised itself.

const assertProg = `#include <assert.h>
#include <stdio.h>
#include <sys/random.h>
struct item { long count; long id; };
static struct item items[8];
__attribute__((noinline)) void bump(struct item *it, long by) {
	long old = it->count;
	it->count = old - by; /* line 8: the corrupting write */
}
__attribute__((noinline)) long total(void) {
	long t = 0;
	for (int i = 0; i < 8; i++) t += items[i].count;
	return t;
}
int main(void) {
	unsigned seed;
	getrandom(&seed, sizeof seed, 0); setvbuf(stdout, 0, _IOLBF, 0);
	for (int i = 0; i < 8; i++) { items[i].id = i; items[i].count = 1 + ((seed >> i) & 7); }
	struct item *item = &items[3];
	long delta = 100 + (seed & 15);
	long before = item->count;
	printf("before %ld delta %ld\n", before, delta);
	bump(item, delta); /* line 23 */
	for (int k = 0; k < 300; k++) printf("total %ld\n", total() + k);
	assert(item->count >= 0); /* line 25 */
	return 0;
}
`

// recordCrash compiles a C program (-O0 -g, -pthread) and records it
// with the given arguments; the program may die of a signal.
func recordCrash(t *testing.T, name, src string, args ...string) (traceDir string, rec Run) {
	t.Helper()
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := writeFile(c, src); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("gcc", "-O0", "-g", "-pthread", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	traceDir = filepath.Join(dir, "trace")
	rec, err := run(ctx60(t), dir, "", gorrBin, append([]string{"record", "-o", traceDir, bin}, args...)...)
	if err != nil {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	return traceDir, rec
}

// At the SIGABRT of a failed assert: reverse-stepi stays next to the
// abort (the tgkill system call that raised it); watch -l on the broken
// field and reverse-continue find the write that broke it (gdb shows the
// recorded old and new values); reverse-finish goes to its caller, whose
// locals read as recorded.
func TestGDBReverseFromAbort(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordCrash(t, "assertfail", assertProg)
	m := regexp.MustCompile(`before (\d+) delta (\d+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil || !strings.Contains(string(rec.Stderr), "Assertion") {
		t.Fatalf("recorded: %v", rec)
	}
	out := gdbBatch(t, traceDir,
		"continue", "reverse-stepi", "x/i $pc", "bt 1",
		"stepi", "continue",
		"frame function main", "watch -l item->count", "reverse-continue", "info line *$pc",
		"delete", "reverse-finish", "info line *$pc", "print delta", "print before")
	if strings.Count(out, "Program received signal SIGABRT") != 2 {
		t.Fatalf("want the SIGABRT stop, then again after stepping forwards:\n%s", out)
	}
	if strings.Contains(out, "No more reverse-execution history") || strings.Contains(out, "E01") {
		t.Fatalf("went back to the start (or failed):\n%s", out)
	}
	if !regexp.MustCompile(`=> 0x[0-9a-f]+ <[^>]*>:\s+syscall\n#0 .*pthread_kill`).MatchString(out) {
		t.Fatalf("reverse-stepi from the abort did not stop at the tgkill system call:\n%s", out)
	}
	// before - delta is what the write stored, before what it replaced.
	b, _ := strconv.Atoi(m[1])
	d, _ := strconv.Atoi(m[2])
	want := regexp.MustCompile(`Old value = ` + strconv.Itoa(b-d) + `\nNew value = ` + m[1] + `\n(?s:.*)in bump \(`)
	if !want.MatchString(out) {
		t.Fatalf("watch -l + reverse-continue did not find bump's write (old %d new %s):\n%s", b-d, m[1], out)
	}
	lines := regexp.MustCompile(`Line (\d+) of "[^"]*assertfail.c"`).FindAllStringSubmatch(out, -1)
	if len(lines) != 2 || lines[0][1] != "8" || lines[1][1] != "23" {
		t.Fatalf("want the write at line 8, then its call at line 23:\n%s", out)
	}
	vals := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindAllStringSubmatch(out, -1)
	if len(vals) != 2 || vals[0][1] != m[2] || vals[1][1] != m[1] {
		t.Fatalf("want delta %s and before %s (recorded):\n%s", m[2], m[1], out)
	}
}

const selfKillProg = `#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/syscall.h>
static long counter;
static pid_t main_tid;
static const char *mode;
static void *worker(void *arg) {
	counter += (long)arg;   /* line 13 */
	if (!strcmp(mode, "tabort")) abort();
	if (!strcmp(mode, "tgkill")) syscall(SYS_tgkill, getpid(), main_tid, SIGTERM);
	if (!strcmp(mode, "texit")) exit(3);
	return 0;
}
int main(int argc, char **argv) {
	unsigned seed;
	getrandom(&seed, sizeof seed, 0);
	mode = argv[1];
	main_tid = syscall(SYS_gettid);
	counter = 1 + (seed & 0xff); /* line 24: never 0, the write changes it */
	printf("counter %ld add %u\n", counter, 1 + (seed >> 28));
	fflush(stdout);
	if (!strcmp(mode, "raise")) raise(SIGTERM);
	if (!strcmp(mode, "kill")) kill(getpid(), SIGABRT);
	if (!strcmp(mode, "exit")) exit(2);
	pthread_t t;
	pthread_create(&t, 0, worker, (void *)(long)(1 + (seed >> 28))); /* never 0: the write changes counter */
	if (!strcmp(mode, "tgkill")) for (;;) pause();
	pthread_join(t, 0);
	return 0;
}
`

// From each kind of stop a program causes itself (raise, kill of its
// own pid, exit, abort in a thread, tgkill from another thread, exit in
// a thread), and from the SIGKILL stop just before the process dies:
// reverse-stepi goes one instruction back (to the system call; for a
// thread blocked in pause() while another thread ran, first to the
// instant before the signal), and a watchpoint with reverse-continue
// finds the last write, in the thread that made it.
func TestGDBReverseFromSelfInflicted(t *testing.T) {
	needGDB(t)
	cases := []struct {
		mode, stop, line string
	}{
		{"raise", "received signal SIGTERM", "24"},
		{"kill", "received signal SIGABRT", "24"},
		{"exit", "received signal SIGKILL", "24"},
		{"tabort", "received signal SIGABRT", "13"},
		{"tgkill", "received signal SIGTERM", "13"},
		{"texit", "received signal SIGKILL", "13"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			traceDir, rec := recordCrash(t, "selfkill", selfKillProg, c.mode)
			m := regexp.MustCompile(`counter (\d+) add (\d+)`).FindStringSubmatch(string(rec.Stdout))
			if m == nil {
				t.Fatalf("recorded: %v", rec)
			}
			cmds := []string{"continue", "reverse-stepi", "x/i $pc"}
			want := []string{"syscall"}
			if c.mode == "tgkill" {
				// The main thread sat in pause() while the worker ran: one
				// step back is the instant before the signal, after the
				// worker's write, still in the call; the next one is the
				// call's syscall instruction.
				cmds = append(cmds, "reverse-stepi", "x/i $pc")
				want = []string{"pause", "syscall"}
			}
			if c.stop != "received signal SIGKILL" {
				// Also from the stop before the exit that follows.
				cmds = append(cmds, "continue", "continue", "reverse-stepi", "x/i $pc")
				want = append(want, want[0])
			}
			cmds = append(cmds, "watch -l counter", "reverse-continue", "info line *$pc")
			out := gdbBatch(t, traceDir, cmds...)
			if !strings.Contains(out, c.stop) {
				t.Fatalf("no %q:\n%s", c.stop, out)
			}
			if strings.Contains(out, "No more reverse-execution history") || strings.Contains(out, "E01") {
				t.Fatalf("went back to the start (or failed):\n%s", out)
			}
			var got []string
			for _, m := range regexp.MustCompile(`=> 0x[0-9a-f]+ <([^>+]*)[^>]*>:\s+(\S+)`).FindAllStringSubmatch(out, -1) {
				if m[2] == "syscall" {
					got = append(got, "syscall")
				} else if strings.Contains(m[1], "pause") {
					got = append(got, "pause")
				} else {
					got = append(got, m[0])
				}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("reverse-stepi stops: got %q, want %q (the system call before the stop):\n%s", got, want, out)
			}
			line := regexp.MustCompile(`Line (\d+) of "[^"]*selfkill.c"`).FindStringSubmatch(out)
			if line == nil || line[1] != c.line {
				t.Fatalf("want the last write to counter at line %s:\n%s", c.line, out)
			}
			newv := m[1]
			if c.line == "13" {
				a, _ := strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[2])
				newv = strconv.Itoa(a + b)
			}
			if !strings.Contains(out, "Old value = "+newv+"\n") { // backwards: old is after the write
				t.Fatalf("want the recorded value %s written:\n%s", newv, out)
			}
		})
	}
}

// restart to a checkpoint (one taken in a thread other than the first,
// one after reverse-finish) keeps gdb's thread numbers, reports no
// stray signal, and info checkpoints says where each one is.
func TestGDBRestartCheckpointThreads(t *testing.T) {
	needGDB(t)
	// reverse-finish from the SIGABRT stop once went back to _start when
	// no timed snapshot lay between libc's loading and the abort: a
	// breakpoint in libc planted before libc was mapped was dropped
	// (internal/session TestLibraryBreakpointFromStart).
	if msg := restartCheckpointThreads(t); msg != "" {
		t.Fatal(msg)
	}
}

// restartCheckpointThreads runs TestGDBRestartCheckpointThreads
// and says what was wrong ("" when nothing).
func restartCheckpointThreads(t *testing.T) string {
	traceDir, _ := recordCrash(t, "selfkill", selfKillProg, "tabort")
	out := gdbBatch(t, traceDir,
		"break worker", "continue", "next", "checkpoint", "info threads",
		"delete", "continue", "reverse-finish", "checkpoint", "info checkpoints",
		"restart 1", "info threads", "bt 1",
		"restart 2", "bt 1")
	if strings.Contains(out, "SIGTRAP") {
		return fmt.Sprintf("a stray SIGTRAP:\n%s", out)
	}
	if strings.Count(out, "Thread 2 stopped.") != 2 {
		return fmt.Sprintf("want two restarts to thread 2, with no signal:\n%s", out)
	}
	threads := regexp.MustCompile(`(?m)^\* 2 +Thread \d+\.\d+ +(?:\(.*\) +)?worker \(arg=0x[0-9a-f]+\) at .*selfkill.c:14$`).FindAllString(out, -1)
	if len(threads) != 2 {
		return fmt.Sprintf("want thread 2 (and only it) in worker at line 14, before and after restart 1:\n%s", out)
	}
	cks := regexp.MustCompile(`(?m)^(\d)\t\d+\t(.*)$`).FindAllStringSubmatch(out, -1)
	if len(cks) != 2 || !strings.Contains(cks[0][2], "worker at ") || !strings.Contains(cks[0][2], "selfkill.c:14") ||
		cks[1][2] == "" || strings.Contains(cks[1][2], "0x0") {
		return fmt.Sprintf("info checkpoints does not say where they are:\n%s", out)
	}
	bts := regexp.MustCompile(`(?m)^#0 +(.*)$`).FindAllStringSubmatch(out, -1)
	if len(bts) != 2 || !strings.Contains(bts[0][1], "worker (") || !strings.HasPrefix(strings.TrimPrefix(bts[1][1], "0x"), strings.Fields(cks[1][2])[0]) && !strings.Contains(bts[1][1], strings.Fields(cks[1][2])[0]) {
		return fmt.Sprintf("restart did not go to the checkpoints (%v):\n%s", bts, out)
	}
	return ""
}

const libdelLib = `#include <sys/random.h>
long libvar;
__attribute__((noinline)) long libfunc(long x) {
	long r = x * 3 + libvar; /* line 4 */
	return r;
}
void libinit(void) { getrandom(&libvar, sizeof libvar, 0); libvar &= 0xffff; }
`

const libdelMain = `#include <stdio.h>
long libfunc(long);
void libinit(void);
extern long libvar;
int main(void) {
	libinit();
	printf("libvar %ld r %ld\n", libvar, libfunc(7));
	return 0;
}
`

// gdb finds the symbols of a program and of its library that were
// deleted after recording: with its default sysroot ("target:"), it
// reads them through the server's host I/O (vFile), which serves the
// copies captured in the trace; /proc/PID/maps is the recorded one.
func TestGDBSymbolsOfDeletedBinary(t *testing.T) {
	needGDB(t)
	dir := t.TempDir()
	build := filepath.Join(dir, "build")
	if err := os.Mkdir(build, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"libdel.c": libdelLib, "main.c": libdelMain} {
		if err := writeFile(filepath.Join(build, name), src); err != nil {
			t.Fatal(err)
		}
	}
	lib, bin := filepath.Join(build, "libdel.so"), filepath.Join(build, "deleted")
	for _, args := range [][]string{
		{"-O0", "-g", "-shared", "-fPIC", "-o", lib, filepath.Join(build, "libdel.c")},
		{"-O0", "-g", "-o", bin, filepath.Join(build, "main.c"), lib, "-Wl,-rpath," + build},
	} {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	traceDir := filepath.Join(dir, "trace")
	rec, err := run(ctx60(t), dir, "", gorrBin, "record", "-o", traceDir, bin)
	m := regexp.MustCompile(`libvar (\d+) r (\d+)`).FindStringSubmatch(string(rec.Stdout))
	if err != nil || rec.Code != 0 || m == nil {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	if err := os.RemoveAll(build); err != nil {
		t.Fatal(err)
	}
	lines := startDebugServer(t, traceDir)
	addr := regexp.MustCompile(`target extended-remote (127\.0\.0\.1:\d+)`).FindStringSubmatch(strings.Join(lines, "\n"))
	if addr == nil {
		t.Fatalf("launch lines: %q", lines)
	}
	// No executable on the command line, gdb's own sysroot.
	out, _ := exec.CommandContext(ctx60(t), "gdb", "-batch", "-nx", "-ex", "set breakpoint pending on",
		"-ex", "target extended-remote "+addr[1], "-ex", "break libfunc", "-ex", "continue",
		"-ex", "bt 2", "-ex", "print libvar", "-ex", "info line *$pc", "-ex", "info sharedlibrary", "-ex", "info proc mappings",
		"-ex", "kill").CombinedOutput()
	s := string(out)
	if !strings.Contains(s, "libfunc (x=7) at ") || !strings.Contains(s, "main () at ") {
		t.Fatalf("no symbols for the deleted program and library:\n%s", s)
	}
	if !strings.Contains(s, "$1 = "+m[1]+"\n") {
		t.Fatalf("libvar: want %s (recorded):\n%s", m[1], s)
	}
	if !regexp.MustCompile(`Line 4 of "[^"]*libdel.c"`).MatchString(s) {
		t.Fatalf("no line information for the library:\n%s", s)
	}
	if !regexp.MustCompile(`Yes .*` + regexp.QuoteMeta(lib)).MatchString(s) {
		t.Fatalf("the library's symbols were not read:\n%s", s)
	}
	if !strings.Contains(s, lib+"\n") || !strings.Contains(s, "[stack]") || strings.Contains(s, "unable to open /proc file") {
		t.Fatalf("want the recorded mappings (the library, the stack):\n%s", s)
	}
}

// From a checkpoint restart: restart to a checkpoint taken at a
// breakpoint, then reverse-finish to the caller (its locals as
// recorded), and a watchpoint with reverse-continue finds the earlier
// write, with the loop variable that made it.
func TestGDBReverseFromCheckpointRestart(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordCrash(t, "assertfail", assertProg)
	m := regexp.MustCompile(`before (\d+) delta (\d+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil {
		t.Fatalf("recorded: %v", rec)
	}
	out := gdbBatch(t, traceDir,
		"break bump", "continue", "checkpoint", "delete", "continue", "restart 1",
		"reverse-finish", "info line *$pc", "print before", "print delta",
		"watch -l item->count", "reverse-continue", "info line *$pc", "print i")
	if !strings.Contains(out, "Program received signal SIGABRT") {
		t.Fatalf("did not run on to the abort before the restart:\n%s", out)
	}
	if strings.Contains(out, "No more reverse-execution history") || strings.Contains(out, "E01") || strings.Contains(out, "SIGTRAP") {
		t.Fatalf("went back to the start, failed or a stray signal:\n%s", out)
	}
	lines := regexp.MustCompile(`Line (\d+) of "[^"]*assertfail.c"`).FindAllStringSubmatch(out, -1)
	if len(lines) != 2 || lines[0][1] != "23" || lines[1][1] != "18" {
		t.Fatalf("want the call of bump at line 23, then the first write at line 18:\n%s", out)
	}
	vals := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, v := range vals {
		got = append(got, v[1])
	}
	if want := []string{m[1], m[2], "3"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("printed %v, want before, delta and i %v:\n%s", got, want, out)
	}
}

const execProg = `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/random.h>
static long stage;
int main(int argc, char **argv) {
	unsigned seed;
	getrandom(&seed, sizeof seed, 0);
	if (argc > 1) {
		stage = atol(argv[1]) + (seed & 7);
		printf("child stage %ld\n", stage);
		return 0;
	}
	stage = 1 + (seed & 0xff); /* line 14: never 0, the write changes it */
	printf("parent stage %ld\n", stage);
	fflush(stdout);
	char arg[32];
	snprintf(arg, sizeof arg, "%ld", stage);
	execl("/proc/self/exe", argv[0], arg, (char *)0);
	return 1;
}
`

// At an exec of the debugged program the replay stops in the old image,
// at the execve, with no signal, and goes no further forwards (as rr);
// from there reverse-stepi goes to the syscall instruction, and a
// watchpoint with reverse-continue finds the last write before the exec.
func TestGDBReverseFromExec(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordCrash(t, "execself", execProg)
	m := regexp.MustCompile(`parent stage (\d+)\n`).FindStringSubmatch(string(rec.Stdout))
	if m == nil || !strings.Contains(string(rec.Stdout), "child stage") {
		t.Fatalf("recorded: %v", rec)
	}
	out := gdbBatch(t, traceDir,
		"continue", "continue", "reverse-stepi", "x/i $pc",
		"watch stage", "reverse-continue", "info line *$pc")
	if n := strings.Count(out, "Program stopped."); n != 2 {
		t.Fatalf("want the stop at the exec twice (continue does not leave it), got %d:\n%s", n, out)
	}
	if !regexp.MustCompile(`Program stopped\.\n0x[0-9a-f]+ in [^\n]*execve`).MatchString(out) || strings.Contains(out, "child stage") {
		t.Fatalf("want the stop in execve, before the new program runs:\n%s", out)
	}
	if strings.Contains(out, "No more reverse-execution history") || strings.Contains(out, "E01") || strings.Contains(out, "SIG") {
		t.Fatalf("went back to the start, failed or a signal:\n%s", out)
	}
	if !regexp.MustCompile(`=> 0x[0-9a-f]+ <[^>]*execve[^>]*>:\s+syscall`).MatchString(out) {
		t.Fatalf("reverse-stepi from the exec stop did not go to the syscall instruction:\n%s", out)
	}
	if !strings.Contains(out, "Old value = "+m[1]+"\nNew value = 0\n") ||
		!regexp.MustCompile(`Line 14 of "[^"]*execself.c"`).MatchString(out) {
		t.Fatalf("want the write of %s at line 14:\n%s", m[1], out)
	}
}
