package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// bufEvent is one event of a trace as the syscall-buffer tests see it.
type bufEvent struct {
	n     uint64
	kind  trace.Kind
	tid   int32
	nr    int32
	rip   uint64
	ret   int64
	flags uint64
	args  [6]uint64
}

// recordBuffered records bin with the syscall buffer on, checks that
// replay reproduces its output and returns the trace's events.
func recordBuffered(t *testing.T, bin string, extra ...string) (string, Run, []bufEvent) {
	t.Helper()
	ctx := ctx60(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	args := append([]string{"record", "--syscall-buffer", "-o", traceDir}, extra...)
	rec, err := run(ctx, t.TempDir(), "", gorrBin, append(args, bin)...)
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
	if err != nil || rep.Code != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("replay differs: %v\n=== recording\n%v\n=== replay\n%v", err, rec, rep)
	}
	h, evs := readBufEvents(t, traceDir)
	if !h.SyscallBuffer {
		t.Fatal("the trace header does not say the syscall buffer was on")
	}
	return traceDir, rec, evs
}

// testdataC returns the source of the corpus program testdata/c/NAME.c.
func testdataC(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "c", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// readBufEvents returns the header and the events of the trace in
// traceDir.
func readBufEvents(t *testing.T, traceDir string) (trace.Header, []bufEvent) {
	t.Helper()
	r, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var evs []bufEvent
	for n := uint64(1); ; n++ {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		e := bufEvent{n: n, kind: ev.Kind, tid: ev.Tid, nr: ev.Sysno, ret: ev.Result, flags: ev.Flags}
		if ev.Regs != nil {
			e.rip = ev.Regs[ptrace.RIP]
			e.args = ptrace.SyscallArgs(ev.Regs)
		}
		evs = append(evs, e)
	}
	return r.Header(), evs
}

// buffered counts the entries made from the stub's buffered instruction.
func buffered(evs []bufEvent, nr int32) int {
	n := 0
	for _, e := range evs {
		if e.kind == trace.KindSyscallEntry && e.rip == syscallbuf.SyscallRet && (nr < 0 || e.nr == nr) {
			n++
		}
	}
	return n
}

// A buffered read that blocks (the pipe is empty) must not stop the
// other thread: the watchdog interrupts it, the kernel restarts it under
// ptrace, and it waits in the kernel as a traced call while the writer
// computes and then writes.
func TestSyscallBufferBlockedRead(t *testing.T) {
	bin := cprog(t, "bufblock", `#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static int p[2];
static char got[64];
static void *reader(void *a) {
	(void)a;
	ssize_t n = read(p[0], got, sizeof got - 1); /* blocks: nothing written yet */
	printf("reader got %zd bytes: %s\n", n, got);
	return NULL;
}
int main(void) {
	struct timespec t0, t1;
	pipe(p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th;
	pthread_create(&th, NULL, reader, NULL);
	usleep(20000); /* the reader blocks first */
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 30000000; i++) x += i ^ (x >> 3);
	char msg[64];
	snprintf(msg, sizeof msg, "pid %d sum %lu", getpid(), (unsigned long)x);
	write(p[1], msg, strlen(msg));
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("took %ld us\n", (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
	return 0;
}
`)
	_, rec, evs := recordBuffered(t, bin)
	if !bytes.Contains(rec.Stdout, []byte("reader got")) {
		t.Fatalf("unexpected output:\n%s", rec.Stdout)
	}
	// The reader's read came from the stub and ended as a traced call:
	// an entry at the stub's instruction whose exit is the data.
	var found bool
	for i, e := range evs {
		if e.kind == trace.KindSyscallEntry && e.rip == syscallbuf.SyscallRet && e.nr == 0 {
			for _, x := range evs[i+1:] {
				if x.tid == e.tid && x.kind == trace.KindSyscallExit {
					found = found || x.ret > 0
					break
				}
			}
		}
	}
	if !found {
		t.Fatalf("no read from the syscall buffer's stub returned the pipe's data (%d buffered calls)", buffered(evs, -1))
	}
}

// A signal that arrives while a buffered call blocks (SIGALRM during a
// read of an empty pipe, with a handler that itself makes a buffered
// call) is delivered at the same point in replay: replay checks the
// registers at the signal event and at every call after it.
func TestSyscallBufferSignalDuringCall(t *testing.T) {
	bin := cprog(t, "bufsig", `#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int alarms;
static int nullfd;
static void on_alarm(int s) {
	(void)s;
	alarms++;
	write(nullfd, "x", 1); /* a call from the stub's code, nested */
}
int main(void) {
	int p[2];
	pipe(p);
	nullfd = open("/dev/null", O_WRONLY);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	pid_t c = fork();
	if (c == 0) {
		usleep(60000);
		char m[32];
		snprintf(m, sizeof m, "from %d", getpid());
		write(p[1], m, strlen(m));
		_exit(0);
	}
	struct itimerval it = {{0, 0}, {0, 15000}};
	setitimer(ITIMER_REAL, &it, NULL);
	char buf[64] = {0};
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	waitpid(c, NULL, 0);
	printf("read %zd '%s' alarms %d\n", n, buf, alarms);
	return 0;
}
`)
	_, rec, evs := recordBuffered(t, bin)
	if !bytes.Contains(rec.Stdout, []byte("alarms 1")) {
		t.Fatalf("the alarm did not interrupt the read:\n%s", rec.Stdout)
	}
	var sig bool
	for _, e := range evs {
		sig = sig || e.kind == trace.KindSignal
	}
	if !sig || buffered(evs, -1) == 0 {
		t.Fatalf("want a signal event and calls from the stub (signal %v, %d from the stub)", sig, buffered(evs, -1))
	}
}

// A handler with SA_RESTART interrupts a buffered read that blocks and
// writes the bytes it waits for: the kernel restarts the read at the
// stub's buffered instruction when the handler returns, and the read
// then returns at once. That restarted call must be recorded too (it
// stops: the stub appends no record after a call the recorder saw).
func TestSyscallBufferSignalRestart(t *testing.T) {
	bin := cprog(t, "bufrestart", `#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static int p[2];
static char msg[32];
static void on_alarm(int s) {
	(void)s;
	write(p[1], msg, strlen(msg));
}
int main(void) {
	pipe(p);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(msg, sizeof msg, "%d-%ld", getpid(), (long)ts.tv_nsec);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	char a[4] = {0}, b[32] = {0};
	ssize_t n = read(p[0], a, 3); /* blocks until the handler writes */
	ssize_t m = read(p[0], b, sizeof b - 1); /* the rest, at once */
	printf("read %zd '%s' then %zd '%s'\n", n, a, m, b);
	return 0;
}
`)
	_, rec, evs := recordBuffered(t, bin)
	if !bytes.Contains(rec.Stdout, []byte("read 3 ")) {
		t.Fatalf("unexpected output:\n%s", rec.Stdout)
	}
	var sig bool
	for _, e := range evs {
		sig = sig || e.kind == trace.KindSignal
	}
	if !sig {
		t.Fatal("want a signal event")
	}
}

const bufFillProg = `#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	static char buf[60000];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (char)(i * 7 + ts.tv_nsec);
	pwrite(fd, buf, sizeof buf, 0);
	unsigned long sum = 0;
	for (int r = 0; r < 80; r++) {
		ssize_t n = pread(fd, buf, sizeof buf, 0); /* about 60 KB per record */
		for (ssize_t i = 0; i < n; i += 97) sum = sum * 31 + (unsigned char)buf[i];
		lseek(fd, r, SEEK_SET);
	}
	close(fd);
	unlink(argv[1]);
	printf("pid %d t %ld sum %lu\n", getpid(), (long)ts.tv_nsec, sum);
	return 0;
}
`

// The buffer fills: 80 reads of 60 KB do not fit in its 1 MiB, so the
// stub makes the call that does not fit through ptrace (the recorder
// drains the buffer there) and starts over. With --checksum, replay also
// compares memory (the buffer included) at every traced call.
func TestSyscallBufferFills(t *testing.T) {
	bin := cprog(t, "buffill", bufFillProg)
	wrapper := filepath.Join(t.TempDir(), "run.sh")
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+bin+" "+data+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, evs := recordBuffered(t, wrapper, "--checksum")
	resets := 0
	for _, e := range evs {
		if e.kind == trace.KindSyscallEntry && e.rip == syscallbuf.ResetRet {
			resets++
		}
	}
	if resets < 3 || buffered(evs, 17) < 10 {
		t.Fatalf("want several buffer resets and buffered preads, got %d resets, %d buffered preads", resets, buffered(evs, 17))
	}
}

// replayTampered replays traceDir with a bit of event n's registers
// flipped (GORR_TEST_TAMPER_EVENT), and returns what replay printed on
// stderr; the replay must fail.
func replayTampered(t *testing.T, traceDir string, n uint64) string {
	t.Helper()
	return replayTamperedWith(t, traceDir, "GORR_TEST_TAMPER_EVENT", n)
}

// replayTamperedWith is replayTampered with the test hook hook
// (cmd/gorr/testhooks_gorrtest.go) corrupting event n.
func replayTamperedWith(t *testing.T, traceDir, hook string, n uint64) string {
	t.Helper()
	cmd := exec.CommandContext(ctx60(t), gorrBin, "replay", "-a", traceDir)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", hook, n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("replay of a tampered trace succeeded")
	}
	return stderr.String()
}

// A divergence at a call drained from the buffer is reported with that
// call's event number, like any other.
func TestSyscallBufferDivergenceReported(t *testing.T) {
	bin := cprog(t, "buffill", bufFillProg)
	wrapper := filepath.Join(t.TempDir(), "run.sh")
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+bin+" "+data+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	traceDir, _, evs := recordBuffered(t, wrapper)
	// A buffered pread between two other buffered calls.
	var target uint64
	for i := len(evs) / 2; i+2 < len(evs) && target == 0; i++ {
		e := evs[i]
		if e.kind == trace.KindSyscallEntry && e.rip == syscallbuf.SyscallRet && e.nr == 17 &&
			evs[i-1].rip == syscallbuf.SyscallRet && evs[i+2].rip == syscallbuf.SyscallRet {
			target = e.n
		}
	}
	if target == 0 {
		t.Fatal("no buffered pread inside a buffered stretch")
	}
	stderr := replayTampered(t, traceDir, target)
	want := fmt.Sprintf("diverged at event %d", target)
	// The pread lies inside a stretch the stub replays from the buffer
	// without a stop: the divergence is found in the record it filled.
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "rdi: recorded") ||
		!strings.Contains(stderr, "replayed from the syscall buffer") {
		t.Fatalf("want %q and the differing register in:\n%s", want, stderr)
	}
}

// longStretchProg makes 3000 buffered calls in a row, none of which the
// recorder stops at: one stretch that replay runs in pieces of
// bufRunPiece calls. Each read of /dev/urandom feeds the sum, so a replay
// that ran the calls instead of taking their results prints another sum.
const longStretchProg = `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0) return 1;
	unsigned long sum = 0;
	for (int i = 0; i < 1500; i++) {
		unsigned char b[8];
		if (read(fd, b, sizeof b) != sizeof b) return 2;
		for (int j = 0; j < 8; j++) sum = sum * 131 + b[j];
		sum += getpid();
	}
	close(fd);
	printf("pid %d sum %lu\n", getpid(), sum);
	return 0;
}
`

// A stretch of buffered calls longer than replay's piece is replayed in
// several pieces: the output is the recording's, and a divergence in a
// later piece is reported at its own event.
func TestSyscallBufferLongStretch(t *testing.T) {
	bin := cprog(t, "longstretch", longStretchProg)
	traceDir, _, evs := recordBuffered(t, bin)
	if n := buffered(evs, 0); n < 1400 {
		t.Fatalf("want about 1500 buffered reads, got %d", n)
	}
	// The 1200th buffered read: past the first two pieces of 512 calls.
	var target uint64
	seen := 0
	for _, e := range evs {
		if e.kind == trace.KindSyscallEntry && e.rip == syscallbuf.SyscallRet && e.nr == 0 {
			if seen++; seen == 1200 {
				target = e.n
				break
			}
		}
	}
	if target == 0 {
		t.Fatal("no 1200th buffered read")
	}
	stderr := replayTampered(t, traceDir, target)
	want := fmt.Sprintf("diverged at event %d", target)
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "replayed from the syscall buffer") {
		t.Fatalf("want %q in:\n%s", want, stderr)
	}
}

// -n turns the buffer off and says so in the header.
func TestSyscallBufferOff(t *testing.T) {
	bin := cprog(t, "buffill", bufFillProg)
	traceDir := filepath.Join(t.TempDir(), "trace")
	data := filepath.Join(t.TempDir(), "data")
	rec, err := run(ctx60(t), t.TempDir(), "", gorrBin, "record", "--syscall-buffer", "-n", "-o", traceDir, bin, data)
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	r, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header().SyscallBuffer {
		t.Fatal("header says the buffer was on with -n")
	}
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Regs != nil && syscallbuf.IsStub(ev.Regs[ptrace.RIP]) {
			t.Fatalf("event at the stub (0x%x) with -n", ev.Regs[ptrace.RIP])
		}
	}
}

// The buffer is on without a flag, and GORR_SYSCALL_BUFFER=0 turns it
// off; the trace header says which.
func TestSyscallBufferDefault(t *testing.T) {
	bin := cprog(t, "buffill", bufFillProg)
	for _, c := range []struct {
		env string
		on  bool
	}{{"GORR_SYSCALL_BUFFER=", true}, {"GORR_SYSCALL_BUFFER=0", false}} {
		traceDir := filepath.Join(t.TempDir(), "trace")
		data := filepath.Join(t.TempDir(), "data")
		rec, err := run(ctx60(t), t.TempDir(), "", "env", c.env, gorrBin, "record", "-o", traceDir, bin, data)
		if err != nil || rec.Code != 0 {
			t.Fatalf("%s: record: %v\n%v", c.env, err, rec)
		}
		h, evs := readBufEvents(t, traceDir)
		on, stub := h.SyscallBuffer, buffered(evs, -1)
		if on != c.on || (stub > 0) != c.on {
			t.Errorf("%s: header says buffer %v, %d events at the stub; want buffer %v", c.env, on, stub, c.on)
		}
	}
}

// A statically linked program's own wrappers are redirected too (the
// executable's code is scanned like libc's).
func TestSyscallBufferStatic(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "s.c")
	if err := os.WriteFile(src, []byte(`#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
	char buf[32];
	struct stat st;
	long tot = 0;
	int fd = open("/proc/self/stat", O_RDONLY);
	for (int i = 0; i < 50; i++) {
		lseek(fd, 0, SEEK_SET);
		tot += read(fd, buf, sizeof buf);
		fstat(fd, &st);
		tot += getpid() % 3;
	}
	printf("tot %ld %.20s\n", tot, buf);
	return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "s")
	if out, err := exec.Command("gcc", "-O1", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("no static libc: %v\n%s", err, out)
	}
	_, _, evs := recordBuffered(t, bin)
	if n := buffered(evs, 0); n < 50 {
		t.Fatalf("%d reads from the stub, want 50", n)
	}
}

// The corpus program syscallbuf_file_calls makes each file call the
// buffer covers from glibc's wrappers: each must be drained from the
// buffer at least once (not just pass through the stub to ptrace), and
// a write after a writable MAP_SHARED mapping must go through ptrace.
func TestSyscallBufferFileCalls(t *testing.T) {
	src := testdataC(t, "syscallbuf_file_calls")
	bin := cprog(t, "filecalls", src)
	wrapper := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\ncd "+t.TempDir()+" && exec "+bin+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, rec, evs := recordBuffered(t, wrapper)
	if !strings.Contains(string(rec.Stdout), "EXIT-SUCCESS") {
		t.Fatalf("no EXIT-SUCCESS:\n%v", rec)
	}
	calls := map[string]int32{"openat": 257, "close": 3, "fgetxattr": 193, "utimensat": 280, "copy_file_range": 326, "pread64": 17}
	if strings.Contains(string(rec.Stdout), "fsetxattr: ok") {
		calls["fsetxattr"], calls["flistxattr"] = 190, 196
	}
	for name, nr := range calls {
		if buffered(evs, nr) == 0 {
			t.Errorf("no buffered %s", name)
		}
	}
	// Writable opens are buffered, each followed by the stub's fstatfs of
	// the new descriptor; the pwrite64s come after /proc/self/mem was
	// opened for writing or beside a writable shared mapping: traced.
	if buffered(evs, 138) == 0 {
		t.Error("no buffered fstatfs after a writable open")
	}
	for _, e := range evs {
		if e.kind == trace.KindSyscallEntry && e.nr == 18 && e.rip == syscallbuf.SyscallRet {
			t.Errorf("event %d: a pwrite64 through /proc/self/mem or beside a writable MAP_SHARED mapping was buffered", e.n)
		}
	}
	if strings.Contains(string(rec.Stdout), "NOT written") {
		t.Errorf("a write through /proc/self/mem did not reach memory:\n%s", rec.Stdout)
	}
}

// rt_sigaction and ioctl TCGETS are buffered: the corpus program
// syscallbuf_sigaction_tcgets sets random actions (buffered), raises
// each signal (its handler must run, or it is ignored, as the recorder
// reads the disposition from /proc) and sets random terminal settings
// (traced), and reads them back (buffered) from glibc's wrappers; the
// replay, which takes the answers from the buffer, prints the same
// values.
func TestSyscallBufferQueries(t *testing.T) {
	src := testdataC(t, "syscallbuf_sigaction_tcgets")
	_, rec, evs := recordBuffered(t, cprog(t, "queries", src))
	out := string(rec.Stdout)
	if !strings.Contains(out, "EXIT-SUCCESS") || !strings.Contains(out, "sigaction(0): -1 EINVAL untouched=1") {
		t.Fatalf("unexpected output:\n%v", rec)
	}
	// The 8 sets and 8 queries (glibc refuses signal 0 itself).
	if n := buffered(evs, 13); n < 16 {
		t.Errorf("%d buffered rt_sigaction, want at least 16", n)
	}
	want := 1 // isatty of the pipe
	if strings.Contains(out, "pty: ") {
		want = 3 // the pty's tcgetattr twice and isatty
	}
	if n := buffered(evs, 16); n < want {
		t.Errorf("%d buffered ioctl, want at least %d", n, want)
	}
	// getrlimit (prlimit64 without a new limit) twice; setrlimit stays
	// traced.
	if n := buffered(evs, unix.SYS_PRLIMIT64); n < 2 {
		t.Errorf("%d buffered prlimit64, want at least 2", n)
	}
	for _, e := range evs {
		if e.kind == trace.KindSyscallEntry && e.nr == unix.SYS_PRLIMIT64 && e.args[2] != 0 && e.rip == syscallbuf.SyscallRet {
			t.Errorf("event %d: prlimit64 setting a limit was buffered", e.n)
		}
	}
}

// The stub makes the anonymous, private, non-executable mmaps and the
// mprotects, munmaps and madvises between other buffered calls, from
// two threads, and replay makes them again at their events (each stops
// there), then goes on placing the buffered calls after them.
// Executable memory, PROT_EXEC added and MADV_FREE stay traced.
func TestSyscallBufferMemoryCalls(t *testing.T) {
	src := testdataC(t, "syscallbuf_memory_calls")
	_, rec, evs := recordBuffered(t, cprog(t, "memcalls", src))
	if !strings.Contains(string(rec.Stdout), "EXIT-SUCCESS") {
		t.Fatalf("unexpected output:\n%v", rec)
	}
	// Two threads, 40 rounds each: an mmap, two mprotects and a munmap
	// a round, and the madvises of rounds with more than one page.
	for _, c := range []struct {
		nr   int32
		want int
	}{{unix.SYS_MMAP, 80}, {unix.SYS_MPROTECT, 160}, {unix.SYS_MUNMAP, 80}, {unix.SYS_MADVISE, 100}} {
		if n := buffered(evs, c.nr); n < c.want {
			t.Errorf("%d buffered %s, want at least %d", n, linux.Name(int(c.nr)), c.want)
		}
	}
	traced := map[string]int{}
	for _, e := range evs {
		if e.kind != trace.KindSyscallEntry {
			continue
		}
		fromStub := e.rip == syscallbuf.SyscallRet
		switch {
		case e.nr == unix.SYS_MMAP && e.args[2]&unix.PROT_EXEC != 0, e.nr == unix.SYS_MPROTECT && e.args[2]&unix.PROT_EXEC != 0:
			if fromStub {
				t.Errorf("event %d: %s with PROT_EXEC buffered", e.n, linux.Name(int(e.nr)))
			}
			traced[linux.Name(int(e.nr))]++
		case e.nr == unix.SYS_MADVISE && e.args[2] == unix.MADV_FREE:
			if fromStub {
				t.Errorf("event %d: madvise(MADV_FREE) buffered", e.n)
			}
			traced["madvise"]++
		}
	}
	if traced["mmap"] == 0 || traced["mprotect"] == 0 || traced["madvise"] != 1 {
		t.Errorf("traced calls %v: want the executable mmap, the mprotect adding PROT_EXEC and one MADV_FREE", traced)
	}
}

// Writes to descriptors 0-2 that are not the recorder's stdout or stderr
// (a pipe or /dev/null put there) are buffered, closes of them too;
// every write that reaches the recorder's stdout after the descriptors
// changed is traced, so replay reproduces the output (recordBuffered
// compares it), also after a vfork child put the pipe on its own 1.
func TestSyscallBufferStdioDescriptors(t *testing.T) {
	src := testdataC(t, "syscallbuf_stdio_fds")
	_, rec, evs := recordBuffered(t, cprog(t, "stdiofds", src))
	if !strings.Contains(string(rec.Stdout), "EXIT-SUCCESS") {
		t.Fatalf("unexpected output:\n%v", rec)
	}
	low := func(nr int32) (buf, traced int) {
		for _, e := range evs {
			if e.kind == trace.KindSyscallEntry && e.nr == nr && e.args[0] <= 2 {
				if e.rip == syscallbuf.SyscallRet {
					buf++
				} else {
					traced++
				}
			}
		}
		return buf, traced
	}
	// The five writes into the pipe and two of the three into /dev/null
	// (the first after the reopen is traced).
	if buf, traced := low(unix.SYS_WRITE); buf < 7 || traced < 8 {
		t.Errorf("writes to fds 0-2: %d buffered (want at least 7), %d traced (want at least 8: every one to the recorder's stdio)", buf, traced)
	}
	if buf, traced := low(unix.SYS_CLOSE); buf < 2 || traced != 0 {
		t.Errorf("closes of fds 0-2: %d buffered (want at least 2), %d traced", buf, traced)
	}
}

// The calls that change only names and metadata and the path-based
// queries (cp -a makes getxattr, llistxattr, setxattr, removexattr,
// mkdirat and fchownat for every directory) are buffered, and replay
// writes the queries' outputs back.
func TestSyscallBufferMetadata(t *testing.T) {
	src := testdataC(t, "syscallbuf_metadata")
	_, rec, evs := recordBuffered(t, cprog(t, "metadata", src))
	out := string(rec.Stdout)
	if !strings.Contains(out, "EXIT-SUCCESS") || !strings.Contains(out, "rmdir: 0 ok") {
		t.Fatalf("unexpected output:\n%v", rec)
	}
	// glibc makes some of these through another number (mkdir through
	// mkdir or mkdirat, say): each name is buffered under one of its
	// numbers.
	for _, c := range []struct {
		name string
		nrs  []int32
	}{
		{"mkdir", []int32{83, 258}}, {"symlink", []int32{88, 266}}, {"link", []int32{86, 265}},
		{"readlink", []int32{89, 267}}, {"chmod", []int32{90, 91, 268}}, {"chown", []int32{92, 93, 94, 260}},
		{"rename", []int32{82, 264, 316}}, {"unlink", []int32{87, 263}}, {"rmdir", []int32{84, 263}},
		{"setxattr", []int32{188, 189}}, {"getxattr", []int32{191, 192}}, {"listxattr", []int32{194, 195}},
		{"removexattr", []int32{197, 198, 199}},
	} {
		n := 0
		for _, nr := range c.nrs {
			n += buffered(evs, nr)
		}
		if n == 0 {
			t.Errorf("no buffered %s (numbers %v)", c.name, c.nrs)
		}
	}
}

// FUTEX_WAKE is buffered (glibc's __lll_lock_wake and the condition
// variables' wakes); the waits stay on the ptrace path, and the woken
// threads still run in the recorded order.
func TestSyscallBufferFutexWake(t *testing.T) {
	src := testdataC(t, "syscallbuf_futex_wake")
	_, rec, evs := recordBuffered(t, cprog(t, "futexwake", src))
	if !strings.Contains(string(rec.Stdout), "EXIT-SUCCESS") {
		t.Fatalf("no EXIT-SUCCESS:\n%v", rec)
	}
	if buffered(evs, 202) == 0 {
		t.Fatal("no buffered futex wake")
	}
}

// Two threads compute with a buffered getpid every 1024 iterations: their
// timeslices (1 ms) end at a getpid the stub traces when the recorder
// asks it to (YieldFlag), not at asynchronous points, and replay, which
// asks the stub before those calls, reproduces the interleaving.
func TestSyscallBufferYield(t *testing.T) {
	src := testdataC(t, "syscallbuf_yield")
	_, rec, evs := recordBuffered(t, cprog(t, "yield", src), "--timeslice=1ms")
	yields, points, switches := 0, 0, 0
	var last int32
	for _, e := range evs {
		switch {
		case e.kind == trace.KindSyscallEntry && e.flags&syscallbuf.YieldFlag != 0:
			if e.rip != syscallbuf.TracedRet || e.nr != 39 {
				t.Errorf("event %d: a yield at call %d from rip 0x%x", e.n, e.nr, e.rip)
			}
			yields++
		case e.kind == trace.KindSched:
			points++
		}
		if e.kind == trace.KindSyscallEntry && e.nr == 39 {
			if last != 0 && e.tid != last {
				switches++
			}
			last = e.tid
		}
	}
	t.Logf("%d yields, %d points, %d switches between the threads' getpids; %s", yields, points, switches, rec.Stdout)
	if yields == 0 || switches < 2 {
		t.Fatalf("%d yields, %d switches: the timeslices did not end at buffered calls", yields, switches)
	}
	if points > yields {
		t.Errorf("%d preemption points for %d yields: most timeslices should end at a call", points, yields)
	}
}

// The corpus program buffered_goroutines, a static Go program, makes its
// file calls, id queries and futex wakes through the Go runtime's sites
// (Syscall6, rawSyscallNoError, runtime.read, futex, gettid...): each
// must be drained from the buffer, not only pass through the stub.
func TestSyscallBufferGoSites(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "buffered_goroutines")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/go/buffered_goroutines")
	cmd.Dir = rootDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	_, rec, evs := recordBuffered(t, bin)
	if !strings.Contains(string(rec.Stdout), "EXIT-SUCCESS") {
		t.Fatalf("no EXIT-SUCCESS:\n%v", rec)
	}
	for name, nr := range map[string]int32{"read": 0, "close": 3, "fstat": 5, "pread64": 17, "getpid": 39,
		"fcntl": 72, "gettid": 186, "futex": 202, "epoll_ctl": 233, "openat": 257} {
		if buffered(evs, nr) == 0 {
			t.Errorf("no buffered %s", name)
		}
	}
}

// A static musl program: its cancellable calls (read, pread, close) all
// end in __syscall_cp_c's `syscall; ret`, redirected with the moves before
// the syscall displaced into the trampoline; lseek's `syscall; mov %rax,
// %rdi; jmp __syscall_ret` with the tail jump made from the trampoline;
// fstat and getpid are sites of glibc's shapes.
func TestSyscallBufferMusl(t *testing.T) {
	if _, err := exec.LookPath("musl-gcc"); err != nil {
		t.Skip("no musl-gcc (apt-get install musl-tools)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	if err := os.WriteFile(src, []byte(`#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
int main(void) {
	char buf[32];
	struct stat st;
	struct timespec ts;
	long tot = 0;
	int fd = open("/proc/self/stat", O_RDONLY);
	for (int i = 0; i < 50; i++) {
		tot += pread(fd, buf, sizeof buf, 0);
		tot += read(fd, buf, 1);
		tot += lseek(fd, 0, SEEK_SET);
		fstat(fd, &st);
		tot += getpid() % 3;
	}
	close(fd);
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("tot %ld %.20s %ld\n", tot, buf, (long)ts.tv_nsec);
	return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "m")
	if out, err := exec.Command("musl-gcc", "-O2", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("musl-gcc: %v\n%s", err, out)
	}
	_, _, evs := recordBuffered(t, bin)
	for name, nr := range map[string]int32{"read": 0, "close": 3, "fstat": 5, "lseek": 8, "pread64": 17, "getpid": 39} {
		if n := buffered(evs, nr); n == 0 || nr != 3 && n < 50 {
			t.Errorf("%d buffered %s", n, name)
		}
	}
}

// The header lists the captured files a MAP_SHARED mapping used, and
// only those: replay maps its own copies of them (a private mapping of
// such a file shows the writes made through the shared one) and the
// captured files themselves for the rest.
func TestSharedFilesListed(t *testing.T) {
	bin := cprog(t, "sharedlist", `#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
int main(int argc, char **argv) {
	unsigned char r[8];
	getrandom(r, sizeof r, 0);
	int s = open("shared.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	int p = open("private.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ftruncate(s, 4096);
	write(p, r, sizeof r);
	char *sm = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, s, 0);
	char *view = mmap(0, 4096, PROT_READ, MAP_PRIVATE, s, 0);
	unsigned char *pm = mmap(0, 4096, PROT_READ, MAP_PRIVATE, p, 0);
	if (sm == MAP_FAILED || view == MAP_FAILED || pm == MAP_FAILED) return 1;
	snprintf(sm, 64, "token %02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
	printf("view: %s private: %02x%02x\n", view, pm[0], pm[1]);
	return 0;
}
`)
	wrapper := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\ncd "+t.TempDir()+" && exec "+bin+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	traceDir, rec, _ := recordBuffered(t, wrapper)
	if !strings.Contains(string(rec.Stdout), "view: token ") {
		t.Fatalf("the private view does not show the shared write:\n%v", rec)
	}
	r, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if !h.SharedFilesListed {
		t.Fatal("the header does not list the shared files")
	}
	var shared []string
	for _, f := range h.SharedFiles {
		if !strings.Contains(f, "gconv") { // glibc maps its gconv cache MAP_SHARED
			shared = append(shared, f)
		}
	}
	if len(shared) != 1 || !strings.HasSuffix(shared[0], "shared.dat") {
		t.Fatalf("shared files %q, want only shared.dat", h.SharedFiles)
	}
}
