package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const callsProg = `#include <stdio.h>
#include <sys/random.h>
static long secret;
__attribute__((noinline)) long twice(long v) {
	long r = v * 2 + secret; /* line 5 */
	return r;                /* line 6 */
}
int main(void) {
	getrandom(&secret, sizeof secret, 0);
	secret &= 0xffff;
	long a = 5;           /* line 11 */
	long b = twice(a);    /* line 12 */
	long c = b + 1;       /* line 13 */
	printf("secret %ld b %ld c %ld\n", secret, b, c);
	return 0;
}
`

// reverse-next over a line that calls a function comes back to that
// line (not to the start of the recording); reverse-step from the next
// line enters the callee at its last line; reverse-finish leaves it.
func TestGDBReverseOverCalls(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "calls", callsProg)
	recorded := string(rec.Stdout)
	m := regexp.MustCompile(`secret (\d+) b (\d+)`).FindStringSubmatch(recorded)
	if m == nil {
		t.Fatalf("recorded output: %q", recorded)
	}
	out := gdbBatch(t, traceDir,
		"break calls.c:12", "continue", "next", "print b", "info line *$pc",
		"reverse-next", "info line *$pc",
		"next", "reverse-step", "info line *$pc", "print r", "bt 1",
		"reverse-finish", "info line *$pc",
		"reverse-next", "info line *$pc", "reverse-next", "info line *$pc", "print a",
		"delete", "continue", "reverse-stepi", "bt 1")
	lines := regexp.MustCompile(`Line (\d+) of "[^"]*calls.c"`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, l := range lines {
		got = append(got, l[1])
	}
	// After next: 13; reverse-next: 12; next, reverse-step: 7 (the last
	// line of twice); reverse-finish: 12 (at the call); reverse-next: the
	// start of line 12, again: 11.
	want := []string{"13", "12", "7", "12", "12", "11"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("lines %v, want %v\n%s", got, want, out)
	}
	vals := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindAllStringSubmatch(out, -1)
	if len(vals) != 3 || vals[0][1] != m[2] || vals[1][1] != m[2] {
		t.Fatalf("want b = r = %s (recorded), gdb said:\n%s", m[2], out)
	}
	if !strings.Contains(out, "twice (v=5)") {
		t.Errorf("reverse-step did not enter twice:\n%s", out)
	}
	// From the stop just before the exit, one instruction back is in _exit.
	if !regexp.MustCompile(`received signal SIGKILL(?s:.*)#0 .*_exit`).MatchString(out) {
		t.Errorf("reverse-stepi from the exit did not stay in _exit:\n%s", out)
	}
}

const handlerProg = `#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
static volatile sig_atomic_t got;
static long token;
static void handler(int sig) {
	got = sig;            /* line 7 */
}
int main(void) {
	getrandom(&token, sizeof token, 0);
	signal(SIGUSR1, handler);
	raise(SIGUSR1);       /* line 12 */
	long after = token + got;
	printf("token %ld after %ld\n", token, after);
	return 0;
}
`

// Stopped in a signal handler, going backwards leaves the handler for
// the code the signal interrupted, and forwards again re-enters it.
func TestGDBReverseOutOfSignalHandler(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "handler", handlerProg)
	recorded := string(rec.Stdout)
	m := regexp.MustCompile(`token (-?\d+)`).FindStringSubmatch(recorded)
	if m == nil {
		t.Fatalf("recorded output: %q", recorded)
	}
	out := gdbBatch(t, traceDir,
		"break handler", "continue", "bt 1", "print token",
		"reverse-finish", "bt",
		"stepi", "bt 1",
		"delete", "break *handler", "reverse-continue", "reverse-stepi", "bt 1")
	if !strings.Contains(out, "#0  handler (sig=10)") {
		t.Fatalf("no stop in the handler:\n%s", out)
	}
	if v := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindStringSubmatch(out); v == nil || v[1] != m[1] {
		t.Fatalf("token: want %s (recorded), gdb said:\n%s", m[1], out)
	}
	// reverse-finish leaves the handler for the code the signal
	// interrupted (in raise, called from main); stepi enters it again (at
	// its first instruction); reverse-stepi from there leaves it too.
	bts := regexp.MustCompile(`(?m)^#0 .*$`).FindAllString(out, -1)
	if len(bts) != 4 {
		t.Fatalf("want four backtraces, gdb said:\n%s", out)
	}
	if strings.Contains(bts[1], "handler") || !strings.Contains(out, "main () at") {
		t.Fatalf("reverse-finish did not leave the handler (frame %q):\n%s", bts[1], out)
	}
	if !strings.Contains(bts[2], "handler (sig=") || strings.Contains(bts[2], "0x") {
		t.Fatalf("stepi did not re-enter the handler (frame %q):\n%s", bts[2], out)
	}
	if strings.Contains(bts[3], "handler") {
		t.Fatalf("reverse-stepi from the handler's first instruction did not leave it (frame %q):\n%s", bts[3], out)
	}
}

const threadsWatchProg = `#include <pthread.h>
#include <stdio.h>
#include <sys/random.h>
static long shared[2];
static long seeds[2];
static void *worker(void *arg) {
	long k = (long)arg;
	for (int i = 0; i < 3; i++) {
		shared[k] += seeds[k] + i;  /* line 9 */
	}
	return 0;
}
int main(void) {
	getrandom(seeds, sizeof seeds, 0);
	seeds[0] &= 0xffff;
	seeds[1] &= 0xffff;
	pthread_t t[2];
	for (long k = 0; k < 2; k++) pthread_create(&t[k], 0, worker, (void *)k);
	for (int k = 0; k < 2; k++) pthread_join(t[k], 0);
	printf("shared %ld %ld seeds %ld %ld\n", shared[0], shared[1], seeds[0], seeds[1]); /* line 20 */
	return 0;
}
`

// In a multi-threaded recording, a watchpoint set in the main thread and
// reverse-continue land on the write another thread made, in that
// thread, with its loop variables; the thread list follows.
func TestGDBReverseWatchOtherThread(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "tw", threadsWatchProg)
	m := regexp.MustCompile(`shared (-?\d+) (-?\d+) seeds (-?\d+) (-?\d+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil {
		t.Fatalf("recorded output: %q", rec.Stdout)
	}
	out := gdbBatch(t, traceDir,
		"break tw.c:20", "continue", "print shared[1]", "info threads",
		"watch shared[1]", "reverse-continue", "bt 1", "print k", "print i", "print seeds[1]", "info threads",
		"reverse-continue", "print i",
		"thread 1", "bt 1", "thread 2", "bt 1")
	vals := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, v := range vals {
		got = append(got, v[1])
	}
	// shared[1] at the end; in the worker at its last write: k=1, i=2, the
	// seed; one write earlier: i=1.
	want := []string{m[2], "1", "2", m[4], "1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("printed %v, want %v\n%s", got, want, out)
	}
	if !strings.Contains(out, "Hardware watchpoint 2: shared[1]") && !strings.Contains(out, "atchpoint 2: shared[1]") {
		t.Fatalf("no watchpoint report:\n%s", out)
	}
	if !regexp.MustCompile(`#0  .*worker \(arg=0x1\) at .*tw\.c:9`).MatchString(out) {
		t.Fatalf("the write was not found in the worker thread:\n%s", out)
	}
	if !regexp.MustCompile(`\[Switching to thread 1 \(Thread \d+\.\d+\)\]`).MatchString(out) ||
		!regexp.MustCompile(`\[Switching to thread 2 \(Thread \d+\.\d+\)\][^\n]*\n#0 [^\n]*worker`).MatchString(out) {
		t.Errorf("switching threads:\n%s", out)
	}
	if !regexp.MustCompile(`\* \d+\s+Thread \d+\.\d+\s+\S+ in worker`).MatchString(out) {
		t.Fatalf("the worker thread is not current after reverse-continue:\n%s", out)
	}
}

// A Go program under gdb: breakpoints on a Go function, its arguments
// and locals as the recorded run had them, and reverse-continue.
func TestGDBGoProgram(t *testing.T) {
	needGDB(t)
	dir := t.TempDir()
	bin := buildDelveProg(t, writeDelveProg(t, dir))
	traceDir := filepath.Join(dir, "trace")
	rec, err := run(ctx60(t), dir, "", gorrBin, "record", "-o", traceDir, bin)
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	want := strings.Fields(string(rec.Stdout))
	if len(want) != 3 {
		t.Fatalf("recorded output: %q", rec.Stdout)
	}
	out := gdbBatch(t, traceDir,
		"break main.compute", "continue", "continue", "print i", "next", "next", "next", "print v", "finish",
		"reverse-continue", "reverse-continue", "print i", "bt 2", "delete", "continue")
	for _, s := range []string{"main.compute (i=1", "main.compute (i=0", "in main.main () at", "received signal SIGKILL"} {
		if !strings.Contains(out, s) {
			t.Errorf("gdb output lacks %q:\n%s", s, out)
		}
	}
	vals := regexp.MustCompile(`(?m)^\$\d+ = (\d+)$`).FindAllStringSubmatch(out, -1)
	if len(vals) != 3 || vals[0][1] != "1" || vals[1][1] != want[1] || vals[2][1] != "0" {
		t.Errorf("print i, v, i: want 1, %s (recorded), then (after reverse-continue twice) 0:\n%s", want[1], out)
	}
	if !strings.Contains(out, strings.TrimSpace(string(rec.Stdout))) {
		t.Errorf("the replay under gdb did not print the recorded output %q:\n%s", rec.Stdout, out)
	}
}

const spinProg = `#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
static atomic_int flag;
static atomic_long spins;
static void *spinner(void *a) {
	while (!atomic_load(&flag))      /* line 9 */
		atomic_fetch_add(&spins, 1); /* line 10 */
	return a;                        /* line 11 */
}
int main(void) {
	uint64_t x;
	getrandom(&x, sizeof x, 0);
	pthread_t t;
	pthread_create(&t, 0, spinner, 0);
	for (long i = 0; i < 60000000L; i++) x = x * 6364136223846793005ULL + 1;
	long mid = atomic_load(&spins);  /* line 19 */
	for (long i = 0; i < 60000000L; i++) x = x * 6364136223846793005ULL + 1;
	atomic_store(&flag, 1);
	pthread_join(t, 0);
	printf("mid %ld spins %ld x %llu\n", mid, atomic_load(&spins), (unsigned long long)x); /* line 23 */
	return 0;
}
`

// A recording whose threads were preempted between system calls (a
// spinning thread) debugs like any other: values at breakpoints are the
// recorded ones, stepping inside the spin loop works, and reverse-continue
// crosses the preemption points.
func TestGDBPreemptedThreads(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "spin", spinProg)
	m := regexp.MustCompile(`mid (\d+) spins (\d+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil {
		t.Fatalf("recorded output: %q", rec.Stdout)
	}
	dump, err := exec.Command(gorrBin, "dump", traceDir).Output()
	if err != nil || !strings.Contains(string(dump), "SCHED") {
		t.Fatalf("the recording has no preemption point (%v)", err)
	}
	out := gdbBatch(t, traceDir,
		"break spin.c:23", "break spinner", "continue", "next", "next", "next", "next", "info line *$pc",
		"continue", "print mid", "print spins",
		"reverse-continue", "bt 1",
		"continue", "print spins")
	vals := regexp.MustCompile(`(?m)^\$\d+ = (\d+)$`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, v := range vals {
		got = append(got, v[1])
	}
	want := []string{m[1], m[2], m[2]}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("printed %v, want %v (recorded)\n%s", got, want, out)
	}
	if !regexp.MustCompile(`Line (9|10) of "[^"]*spin\.c"`).MatchString(out) {
		t.Errorf("stepping in the spin loop did not stay on its lines:\n%s", out)
	}
	if strings.Count(out, "Breakpoint 2, spinner") != 2 {
		t.Errorf("want the spinner breakpoint hit forwards and again backwards:\n%s", out)
	}

	// A breakpoint on the very instruction where replay looks for a
	// preemption point, inserted while the search is under way (the pad
	// over that instruction gives way to a breakpoint), hit, then deleted
	// (the search keeps its own breakpoint): the replay still ends with
	// the recorded values.
	js, err := exec.Command(gorrBin, "dump", "--json", traceDir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var site string
	for _, line := range strings.Split(string(js), "\n") {
		if strings.Contains(line, `"SCHED"`) && !strings.Contains(line, `"site_len":0`) {
			if r := regexp.MustCompile(`"rip":"(0x[0-9a-f]+)"`).FindStringSubmatch(line); r != nil {
				site = r[1]
				break
			}
		}
	}
	if site == "" {
		t.Fatalf("no preemption point with a site in:\n%s", js)
	}
	out = gdbBatch(t, traceDir,
		"break spin.c:23", "break spinner", "continue", "break *"+site, "continue", "print $pc",
		"delete 3", "continue", "print spins")
	if !strings.Contains(out, "Breakpoint 3, ") || !strings.Contains(out, "= (void (*)()) "+site) {
		t.Errorf("the breakpoint at the point's site %s was not hit:\n%s", site, out)
	}
	if !regexp.MustCompile(`(?m)^\$\d+ = ` + m[2] + `$`).MatchString(out) {
		t.Errorf("spins after the breakpoint games: want %s (recorded)\n%s", m[2], out)
	}
	// The same breakpoint set before the search starts (the search then
	// shares it), hit and deleted (the search goes back to a pad).
	out = gdbBatch(t, traceDir, "break spin.c:23", "break *"+site, "continue", "delete 2", "continue", "print spins")
	if !strings.Contains(out, "Breakpoint 2, ") || !regexp.MustCompile(`(?m)^\$\d+ = `+m[2]+`$`).MatchString(out) {
		t.Errorf("breakpoint at the site from the start: want a hit, then spins = %s (recorded)\n%s", m[2], out)
	}
}

const readWatchProg = `#include <stdio.h>
#include <sys/random.h>
static long table[8];
static long probe;
__attribute__((noinline)) long lookup(int k) { return table[k] + probe; } /* line 5 */
int main(void) {
	getrandom(table, sizeof table, 0);
	for (int i = 0; i < 8; i++) table[i] &= 0xffff;
	probe = table[0] ^ 0x55;                      /* line 9 */
	long sum = 0;
	for (int i = 1; i < 4; i++) sum += lookup(i); /* line 11 */
	printf("probe %ld sum %ld\n", probe, sum);    /* line 12 */
	return 0;
}
`

// rwatch and awatch (done by single steps, as debug registers do not
// fire here): reads stop forwards and backwards, with the recorded
// value; an access watchpoint also stops at the write.
func TestGDBReadWatchpoints(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "rw", readWatchProg)
	m := regexp.MustCompile(`probe (\d+)`).FindStringSubmatch(string(rec.Stdout))
	if m == nil {
		t.Fatalf("recorded output: %q", rec.Stdout)
	}
	out := gdbBatch(t, traceDir,
		"break main", "continue", "rwatch probe", "continue", "print k", "continue", "print k",
		"reverse-continue", "print k",
		"delete", "awatch probe", "reverse-continue", "info line *$pc")
	vals := regexp.MustCompile(`(?m)^\$\d+ = (\d+)$`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, v := range vals {
		got = append(got, v[1])
	}
	// The first read is in lookup(1) (the write at line 9 is not a read),
	// then lookup(2); backwards, lookup(1) again.
	if strings.Join(got, " ") != "1 2 1" {
		t.Fatalf("print k: %v, want [1 2 1]\n%s", got, out)
	}
	if strings.Count(out, "Hardware read watchpoint 2: probe\n\nValue = "+m[1]) != 3 {
		t.Errorf("want three read-watchpoint stops showing the recorded value %s:\n%s", m[1], out)
	}
	// Backwards from lookup(1), the access before is the write at line 9
	// (the stop is after it, on line 10).
	if !strings.Contains(out, "Hardware access (read/write) watchpoint 3: probe") || !regexp.MustCompile(`Line 10 of "[^"]*rw\.c"`).MatchString(out) {
		t.Errorf("awatch + reverse-continue did not stop after the write:\n%s", out)
	}
}

const pushfProg = `#include <stdio.h>
#include <sys/random.h>
int main(void) {
	unsigned r;
	getrandom(&r, sizeof r, 0);
	unsigned long f;
	__asm__ volatile("pushf\n\tpopf\n\tpushf\n\tpop %0" : "=r"(f));
	printf("r %u tf %lx\n", r, f & 0x100);
	return 0;
}
`

// Single-stepping pushf pushes the trap flag of the step; replay clears
// it, so a later popf does not leave the thread trapping and the values
// stay the recorded ones.
func TestGDBStepOverPushf(t *testing.T) {
	needGDB(t)
	traceDir, rec := recordC(t, "pushf", pushfProg)
	out := gdbBatch(t, traceDir, "break main", "continue", "next", "stepi", "stepi", "stepi", "stepi", "stepi", "stepi", "continue")
	if !strings.Contains(out, strings.TrimSpace(string(rec.Stdout))) || strings.Contains(out, "diverged") {
		t.Fatalf("want the recorded output %q after stepping over pushf/popf:\n%s", rec.Stdout, out)
	}
}
