package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

func ctx60(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// cprog compiles a small C program written inline.
func cprog(t *testing.T, name, src string) string {
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

const pidTimeProg = `#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(void) {
	struct timespec ts;
	for (int i = 0; i < 200; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%d pid=%d t=%ld.%09ld\n", i, getpid(), (long)ts.tv_sec, ts.tv_nsec);
		fflush(stdout);
		usleep(1000);
	}
	return 0;
}
`

// A recorded result that replay did not reproduce must be reported as a
// divergence naming the event, not replayed silently.
func TestDivergenceReported(t *testing.T) {
	bin := cprog(t, "pidtime", pidTimeProg)
	traceDir := filepath.Join(t.TempDir(), "trace")
	ctx := ctx60(t)
	if rec, err := run(ctx, t.TempDir(), "", gorrBin, "record", "-o", traceDir, bin); err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	// Pick a syscall-entry event in the middle of the trace.
	dump := exec.Command(gorrBin, "dump", "--json", traceDir)
	out, err := dump.Output()
	if err != nil {
		t.Fatal(err)
	}
	var target int
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) / 2; i < len(lines); i++ {
		if strings.Contains(lines[i], `"SYSCALL_ENTRY"`) {
			m := regexp.MustCompile(`"event":(\d+)`).FindStringSubmatch(lines[i])
			target, _ = strconv.Atoi(m[1])
			break
		}
	}
	if target == 0 {
		t.Fatal("no syscall entry in the second half of the trace")
	}
	cmd := exec.CommandContext(ctx, gorrBin, "replay", "-a", traceDir)
	cmd.Env = append(os.Environ(), fmt.Sprintf("GORR_TEST_TAMPER_EVENT=%d", target))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if err == nil {
		t.Fatalf("replay of a tampered trace succeeded")
	}
	want := fmt.Sprintf("diverged at event %d", target)
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "rdi: recorded") {
		t.Fatalf("want %q and the differing register in:\n%s", want, stderr.String())
	}
}

// A recorder killed with SIGKILL leaves a trace that replays up to its
// last written event and then says it is incomplete.
func TestKilledRecorder(t *testing.T) {
	// Long enough (about 3 s) that the kill always lands mid-recording.
	bin := cprog(t, "pidtime", strings.Replace(pidTimeProg, "i < 200", "i < 3000", 1))
	traceDir := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(gorrBin, "record", "-o", traceDir, bin)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)
	// Let a flush happen, then kill.
	time.Sleep(150 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	rep, err := run(ctx60(t), t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Code == 0 || !bytes.Contains(rep.Stderr, []byte("incomplete")) {
		t.Fatalf("want an incomplete-trace report\n%v", rep)
	}
	// What was replayed is a prefix of what the recording printed.
	if !bytes.HasPrefix(stdout.Bytes(), rep.Stdout) {
		t.Fatalf("replayed output is not a prefix of the recorded output\nrecorded:\n%s\nreplayed:\n%s", stdout.Bytes(), rep.Stdout)
	}
	if len(rep.Stdout) == 0 {
		t.Logf("no output was flushed before the kill (recorded %d bytes)", stdout.Len())
	}
}

func TestTraceDirectoryConventions(t *testing.T) {
	save := t.TempDir()
	bin := cprog(t, "pidtime", pidTimeProg)
	ctx := ctx60(t)
	env := append(os.Environ(), "GORR_TRACE_DIR="+save)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, gorrBin, "record", "--print-trace-dir=3", bin)
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{w}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	w.Close()
	printed, _ := io.ReadAll(r)
	want := filepath.Join(save, "pidtime-0")
	if strings.TrimSpace(string(printed)) != want {
		t.Fatalf("--print-trace-dir wrote %q, want %q", printed, want)
	}
	st, err := os.Stat(want)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("trace dir mode %v (%v), want 0700", st.Mode().Perm(), err)
	}
	ents, _ := os.ReadDir(want)
	for _, e := range ents {
		info, _ := e.Info()
		if !e.IsDir() && info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want private", e.Name(), info.Mode().Perm())
		}
	}
	if l, err := os.Readlink(filepath.Join(save, "latest-trace")); err != nil || l != "pidtime-0" {
		t.Fatalf("latest-trace -> %q (%v)", l, err)
	}
	// A second recording gets the next number; replay by bare name works.
	cmd = exec.CommandContext(ctx, gorrBin, "record", bin)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"replay", "-a", "pidtime-1"}, {"replay", "-a", "-q"}, {"ps", "pidtime-0"}, {"traceinfo"}, {"ls"}} {
		cmd = exec.CommandContext(ctx, gorrBin, args...)
		cmd.Env = env
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gorr %v: %v\n%s", args, err, out)
		}
		if args[0] == "replay" && args[2] == "-q" && len(out) != 0 {
			t.Fatalf("replay -q printed output: %s", out)
		}
		if args[0] == "ls" && !strings.Contains(string(out), "pidtime-1") {
			t.Fatalf("ls: %s", out)
		}
		if args[0] == "ps" && !regexp.MustCompile(`(?m)^\d+\t--\t0\t`).Match(out) {
			t.Fatalf("ps: %s", out)
		}
	}
	cmd = exec.CommandContext(ctx, gorrBin, "rm", "pidtime-0")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rm: %v %s", err, out)
	}
	if _, err := os.Stat(want); err == nil {
		t.Fatal("rm left the trace")
	}
}

func TestClearErrors(t *testing.T) {
	ctx := ctx60(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"record", "/nonexistent/prog"}, "cannot run /nonexistent/prog"},
		{[]string{"record"}, "no program given"},
		{[]string{"record", "--bogus", "true"}, "unknown option --bogus"},
		{[]string{"replay", "-a", "/nonexistent/trace"}, "/nonexistent/trace"},
		{[]string{"replay", "-a", t.TempDir()}, "not a gorr trace"},
		{[]string{"frobnicate"}, "unknown command"},
	}
	for _, c := range cases {
		r, err := run(ctx, t.TempDir(), "", gorrBin, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if r.Code == 0 || !bytes.Contains(r.Stderr, []byte(c.want)) {
			t.Errorf("gorr %v: want failure mentioning %q\n%v", c.args, c.want, r)
		}
	}
}

// Programs nobody here wrote record and replay identically.
func TestRealPrograms(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "x.c"), []byte("#include <stdio.h>\nint main(void){puts(\"compiled\");return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		argv []string
		need string
	}{
		{"sh-pipeline", []string{"sh", "-c", "echo $$ $(date +%N) | tr 0-9 a-j | cat; ls / | wc -l; head -c 16 /dev/urandom | od -An -tx1"}, "sh"},
		{"python3", []string{"python3", "-c", "import os,time,random; print(os.getpid(), time.time(), random.random(), os.urandom(8).hex())"}, "python3"},
		{"perl", []string{"perl", "-e", "print $$, ' ', time, ' ', rand(), qq(\\n)"}, "perl"},
		{"gcc", []string{"sh", "-c", "gcc -o x" + strconv.Itoa(os.Getpid()) + " x.c && ./x" + strconv.Itoa(os.Getpid()) + " && date +%N"}, "gcc"},
		{"git", []string{"sh", "-c", "git init -q repo && cd repo && date +%N > f && git add f && git -c user.name=a -c user.email=a@b commit -qm m && git log --format=%H%n%ad"}, "git"},
		{"tar-gzip", []string{"sh", "-c", "mkdir -p d && head -c 3000 /dev/urandom > d/r && date +%N > d/t && tar czf a.tgz d && tar tzvf a.tgz && md5sum a.tgz"}, "tar"},
		{"go-version", []string{"sh", "-c", goTelemetryOff + " go version"}, "go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(c.need); err != nil {
				t.Skipf("%s not installed", c.need)
			}
			p := Program{Name: c.name, Setup: "cp " + filepath.Join(work, "x.c") + " ."}
			path, _ := exec.LookPath(c.argv[0])
			argv := append([]string{path}, c.argv[1:]...)
			rec, rep := recordReplay(t, p, argv)
			if rec.Code != 0 {
				t.Fatalf("recorded run failed:\n%v", rec)
			}
			compare(t, rec, rep)
		})
	}
}

// A thread that spins without system calls while another thread is ready
// cannot be preempted yet: recording must stop with a clear error, not hang.
// Preemption points (threads preempted between system calls) are
// verified like every other event: a point whose recorded registers or
// identity memory word were altered is reported as a divergence at that
// event, never passed silently.
func TestPreemptionPointVerified(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(rootDir, "testdata", "c", "preempt_compute_threads.c"))
	if err != nil {
		t.Fatal(err)
	}
	bin := cprog(t, "compute", string(src))
	traceDir := filepath.Join(t.TempDir(), "trace")
	ctx := ctx60(t)
	rec, err := run(ctx, t.TempDir(), "", gorrBin, "record", "--timeslice=5ms", "-o", traceDir, bin, "3")
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	out, err := exec.Command(gorrBin, "dump", "--json", traceDir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var points []int
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, `"SCHED"`) && strings.Contains(line, `"mem_bytes"`) {
			m := regexp.MustCompile(`"event":(\d+)`).FindStringSubmatch(line)
			n, _ := strconv.Atoi(m[1])
			points = append(points, n)
		}
	}
	if len(points) < 3 {
		t.Fatalf("want several preemption points with memory words, got events %v", points)
	}
	target := points[len(points)/2]
	for _, c := range []struct{ env, diff string }{
		{fmt.Sprintf("GORR_TEST_TAMPER_EVENT=%d", target), "looked for rip"},
		{fmt.Sprintf("GORR_TEST_TAMPER_MEM=%d", target), "looked for rip"},
	} {
		cmd := exec.CommandContext(ctx, gorrBin, "replay", "-a", traceDir)
		cmd.Env = append(os.Environ(), c.env)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil {
			t.Fatalf("%s: replay of a tampered trace succeeded", c.env)
		}
		want := fmt.Sprintf("diverged at event %d", target)
		if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "preemption point") {
			t.Fatalf("%s: want %q about the preemption point in:\n%s", c.env, want, stderr.String())
		}
		if !strings.Contains(stderr.String(), c.diff) {
			t.Errorf("%s: want the point's registers (%q) in:\n%s", c.env, c.diff, stderr.String())
		}
	}
	// Untouched, the same trace replays.
	rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
	if err != nil || rep.Code != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("replay: %v\n%v", err, rep)
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

// record --checksum: replay verifies a checksum of writable memory at
// every system call, catching a wrong byte that registers alone miss.
func TestChecksumMode(t *testing.T) {
	bin := cprog(t, "sums", `#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>
int main(void) {
	static unsigned char buf[64];
	getrandom(buf, sizeof buf, 0);
	unsigned sum = 0;
	for (int i = 0; i < 64; i++) sum += buf[i];
	usleep(1000);
	printf("sum=%u pid=%d\n", sum, getpid());
	return 0;
}
`)
	traceDir := filepath.Join(t.TempDir(), "trace")
	ctx := ctx60(t)
	// Without the syscall buffer (-n): the exits drained from it carry
	// no checksum, so the tampered getrandom would be caught at a later
	// call's checksum only.
	rec, err := run(ctx, t.TempDir(), "", gorrBin, "record", "-n", "--checksum", "-o", traceDir, bin)
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
	if err != nil || rep.Code != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("checksummed replay: %v\n%v", err, rep)
	}
	// Each checksum leaves out the thread's stack below its red zone
	// (what callees left there may differ in replay).
	r, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	sums := 0
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != trace.KindSyscallExit || ev.Checksum == 0 {
			continue
		}
		sums++
		if len(ev.Skip) != 1 || ev.Skip[0].Addr+ev.Skip[0].Len != ev.Regs[ptrace.RSP]-128 {
			t.Fatalf("checksummed %s exit (rsp 0x%x) skips %+v, want the stack below the red zone", linux.Name(int(ev.Sysno)), ev.Regs[ptrace.RSP], ev.Skip)
		}
	}
	r.Close()
	if sums == 0 {
		t.Fatal("no checksummed system-call exit")
	}
	// Find the getrandom exit and corrupt the bytes it returned.
	out, _ := exec.Command(gorrBin, "dump", "--json", traceDir).Output()
	var target string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, `"syscall":"getrandom"`) && strings.Contains(line, "SYSCALL_EXIT") {
			target = regexp.MustCompile(`"event":(\d+)`).FindStringSubmatch(line)[1]
			// dump shows the checksum and the bytes it leaves out.
			if !strings.Contains(line, `"checksum":"0x`) || !strings.Contains(line, `"skip":["0x`) {
				t.Fatalf("dump of a checksummed exit without its checksum and skip: %s", line)
			}
		}
	}
	if target == "" {
		t.Fatalf("no getrandom exit in:\n%s", out)
	}
	cmd := exec.CommandContext(ctx, gorrBin, "replay", "-a", traceDir)
	cmd.Env = append(os.Environ(), "GORR_TEST_TAMPER_MEM="+target)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "diverged at event "+target) || !strings.Contains(string(msg), "memory checksum") {
		t.Fatalf("want a checksum divergence at event %s:\n%s", target, msg)
	}
}

// record --chaos (random thread choices, streaks and timeslices) on
// threads that compute without system calls: every recording replays
// exactly, and the recordings differ.
func TestChaosPreemption(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(rootDir, "testdata", "c", "preempt_compute_threads.c"))
	if err != nil {
		t.Fatal(err)
	}
	bin := cprog(t, "compute", string(src))
	ctx := ctx60(t)
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		traceDir := filepath.Join(t.TempDir(), "trace")
		rec, err := run(ctx, t.TempDir(), "", gorrBin, "record", "--chaos", "-o", traceDir, bin, "3")
		if err != nil || rec.Code != 0 {
			t.Fatalf("record: %v\n%v", err, rec)
		}
		rep, err := run(ctx, t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
		if err != nil || rep.Code != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
			t.Fatalf("replay %d differs: %v\nrecorded:\n%s\nreplayed:\n%v", i, err, rec.Stdout, rep)
		}
		seen[string(rec.Stdout)] = true
	}
	if len(seen) < 2 {
		t.Fatal("three chaos recordings printed the same output")
	}
}
