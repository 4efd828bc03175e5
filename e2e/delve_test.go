package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const delveProg = `package main

import (
	"fmt"
	"math/rand"
	"time"
)

var calls int

//go:noinline
func compute(i int) int {
	calls++
	v := rand.Intn(1000000) + i*10000000 + int(time.Now().UnixNano()%1000)
	return v
}

func main() {
	var vs []int
	for i := 0; i < 3; i++ {
		vs = append(vs, compute(i))
	}
	fmt.Println(vs[0], vs[1], vs[2])
}
`

// findDelve returns the dlv binary, or skips when Delve is not installed
// (.ci/run installs it with go install).
func findDelve(t *testing.T) string {
	if p, err := exec.LookPath("dlv"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "dlv")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("Delve is not installed (go install github.com/go-delve/delve/cmd/dlv@v1.27.2)")
	return ""
}

// allowDelve lowers perf_event_paranoid to 1 for the test: Delve refuses
// to use rr (and so gorr) above that, although gorr needs no counters.
func allowDelve(t *testing.T) {
	const knob = "/proc/sys/kernel/perf_event_paranoid"
	b, err := os.ReadFile(knob)
	if err != nil {
		t.Skip(err)
	}
	old, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if old <= 1 {
		return
	}
	if err := os.WriteFile(knob, []byte("1"), 0o644); err != nil {
		t.Skipf("Delve needs %s <= 1 and this test cannot set it: %v", knob, err)
	}
	t.Cleanup(func() { os.WriteFile(knob, []byte(strconv.Itoa(old)), 0o644) })
}

func TestDelveReplay(t *testing.T) {
	dlv := findDelve(t)
	allowDelve(t)
	dir := t.TempDir()
	bindir := rrOnPath(t, dir)
	src := writeDelveProg(t, dir)
	bin := buildDelveProg(t, src)
	env := append(os.Environ(), "PATH="+bindir+":"+os.Getenv("PATH"), "NO_COLOR=1", "TERM=dumb")
	traceDir := filepath.Join(dir, "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rec := exec.CommandContext(ctx, filepath.Join(bindir, "rr"), "record", "-o", traceDir, bin)
	rec.Env = env
	recOut, err := rec.Output()
	if err != nil {
		t.Fatalf("rr record: %v", err)
	}
	want := strings.Fields(string(recOut))
	if len(want) != 3 {
		t.Fatalf("recorded output %q", recOut)
	}
	script := filepath.Join(dir, "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"break main.compute", "continue", "continue", "next", "next", "next", "print v",
		"rewind", "print i", "rev next", "goroutines",
		"step", "stepout", "print calls", "goroutine 1 bt",
		"continue", "step", "rev stepout", "checkpoint", "checkpoints", "print i",
		"continue", "restart c1", "print i",
		"restart", "continue", "next", "next", "next", "print v", "exit",
	}, "\n")+"\n"), 0o644)
	cmd := exec.CommandContext(ctx, dlv, "replay", traceDir, "--init", script, "--allow-non-terminal-interactive=true")
	cmd.Env = env
	cmd.Dir = filepath.Dir(src)
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("dlv timed out:\n%s", out)
	}
	// Values printed by Delve: v of the second call, i after rewind, v of
	// the first call after a restart.
	vals := regexp.MustCompile(`(?m)^(-?\d+)$`).FindAllStringSubmatch(string(out), -1)
	var got []string
	for _, v := range vals {
		got = append(got, v[1])
	}
	// v of the second call; i after rewind; calls after stepping out of the
	// second call; i at the third call's entry (reached backwards by rev
	// stepout), and again after running to the end and restarting from
	// checkpoint c1 taken there; v of the first call after a restart.
	wantSeq := []string{want[1], "1", "2", "2", "2", want[0]}
	if len(got) != len(wantSeq) {
		t.Fatalf("want printed values %v, got %v:\n%s", wantSeq, got, out)
	}
	for i := range wantSeq {
		if got[i] != wantSeq[i] {
			t.Fatalf("value %d: Delve printed %s, want %s\n%s", i, got[i], wantSeq[i], out)
		}
	}
	// rev next from compute's first line returns to the call in main, and
	// the goroutine list there says so.
	for _, s := range []string{"> main.main() ./main.go:21", "* Goroutine 1 - User: ./main.go:21", "Values returned:", "in main.main", "Checkpoint c1 created", "c1 "} {
		if !strings.Contains(string(out), s) {
			t.Errorf("Delve output lacks %q:\n%s", s, out)
		}
	}
}

// dlv debug --backend=rr records through gorr (rr record
// --print-trace-dir=3) and then replays the recording.
func TestDelveRecordsThroughRR(t *testing.T) {
	dlv := findDelve(t)
	allowDelve(t)
	dir := t.TempDir()
	bindir := rrOnPath(t, dir)
	pkg := filepath.Dir(writeDelveProg(t, dir))
	script := filepath.Join(dir, "cmds")
	os.WriteFile(script, []byte("break main.compute\ncontinue\nnext\nnext\nnext\nprint v\nexit\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, dlv, "debug", "--backend=rr", "--init", script, "--allow-non-terminal-interactive=true")
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), "PATH="+bindir+":"+os.Getenv("PATH"), "NO_COLOR=1", "TERM=dumb", "GORR_TRACE_DIR="+filepath.Join(dir, "traces"))
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("dlv timed out:\n%s", out)
	}
	// The recorded run printed three numbers; v of the first call must be
	// the first of them.
	rec := regexp.MustCompile(`(?m)^(\d+) (\d+) (\d+)$`).FindStringSubmatch(string(out))
	vals := regexp.MustCompile(`(?m)^(\d+)$`).FindAllStringSubmatch(string(out), -1)
	if rec == nil || len(vals) == 0 || vals[len(vals)-1][1] != rec[1] {
		t.Fatalf("want v == %v (first recorded value):\n%s", rec, out)
	}
}

// rrOnPath links gorr as dir/bin/rr (Delve runs the rr it finds on PATH)
// and returns dir/bin.
func rrOnPath(t *testing.T, dir string) string {
	t.Helper()
	bindir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bindir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(gorrBin, filepath.Join(bindir, "rr")); err != nil {
		t.Fatal(err)
	}
	return bindir
}

// writeDelveProg writes delveProg as module "prog" in dir/prog and returns
// the path of its main.go.
func writeDelveProg(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "prog", "main.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(delveProg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prog", "go.mod"), []byte("module prog\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// buildDelveProg builds the program without optimisations, for debugging.
func buildDelveProg(t *testing.T, src string) string {
	t.Helper()
	bin := filepath.Join(filepath.Dir(src), "prog")
	build := exec.Command("go", "build", "-gcflags=all=-N -l", "-o", bin, ".")
	build.Dir = filepath.Dir(src)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

const delvePanicProg = `package main

import (
	"fmt"
	"math/rand"
)

type item struct{ count int }

var items []*item

//go:noinline
func corrupt(it *item, by int) {
	it.count -= by // line 14
}

//go:noinline
func check(it *item) {
	if it.count < 0 {
		panic(fmt.Sprintf("negative count %d", it.count)) // line 20
	}
}

func main() {
	for i := 0; i < 4; i++ {
		items = append(items, &item{count: rand.Intn(10)})
	}
	by := 100 + rand.Intn(50)
	fmt.Println("by", by)
	corrupt(items[2], by) // line 30
	for _, it := range items {
		check(it)
	}
}
`

// From a Go panic in Delve: rev next goes back through the panicking
// function, rewind stops at an earlier breakpoint with the recorded
// values, and after running on to the exit, rev step and rev stepout
// come back into the program's last instructions (Delve crashed there
// once: gorr answered the stop before the exit with a position at the
// start of the recording), and rewind and rev next from there go back to
// the panic.
func TestDelveReverseFromPanic(t *testing.T) {
	dlv := findDelve(t)
	allowDelve(t)
	dir := t.TempDir()
	bindir := rrOnPath(t, dir)
	src := filepath.Join(dir, "prog", "main.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(delvePanicProg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prog", "go.mod"), []byte("module prog\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildDelveProg(t, src)
	env := append(os.Environ(), "PATH="+bindir+":"+os.Getenv("PATH"), "NO_COLOR=1", "TERM=dumb")
	traceDir := filepath.Join(dir, "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rec := exec.CommandContext(ctx, filepath.Join(bindir, "rr"), "record", "-o", traceDir, bin)
	rec.Env = env
	var stderr strings.Builder
	rec.Stderr = &stderr
	recOut, _ := rec.Output()
	by := regexp.MustCompile(`by (\d+)`).FindStringSubmatch(string(recOut))
	count := regexp.MustCompile(`negative count (-\d+)`).FindStringSubmatch(stderr.String())
	if by == nil || count == nil {
		t.Fatalf("recorded: %q %q", recOut, stderr.String())
	}
	script := filepath.Join(dir, "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"continue", "rev next", "print it.count",
		"break main.corrupt", "rewind", "print by", "clear 1",
		"continue", "continue", "rev step", "rev stepout", "rewind", "rev next", "print it.count", "exit",
	}, "\n")+"\n"), 0o644)
	cmd := exec.CommandContext(ctx, dlv, "replay", traceDir, "--init", script, "--allow-non-terminal-interactive=true")
	cmd.Env = env
	cmd.Dir = filepath.Dir(src)
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if ctx.Err() != nil {
		t.Fatalf("dlv timed out:\n%s", out)
	}
	if err != nil || strings.Contains(out, "stepOutReverse") || strings.Contains(out, "no source for PC") || strings.Contains(out, "_rt0_amd64") {
		t.Fatalf("Delve failed (%v):\n%s", err, out)
	}
	for _, want := range []string{
		"[unrecovered-panic] runtime.fatalpanic()",
		"[Breakpoint 1] main.corrupt() ./main.go:13",
		"has exited",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q:\n%s", want, out)
		}
	}
	// After the exit, rev step and rev stepout are in the exit call and
	// its caller on the system stack.
	if !strings.Contains(out, "> runtime.exit() ") || !strings.Contains(out, "> runtime.fatalpanic.func2() ") {
		t.Fatalf("want rev step and rev stepout after the exit in runtime.exit and its caller:\n%s", out)
	}
	// rev next from the panic, at first and again after the exit (rewind
	// stops at the panic), lands in check at the panic's line, where
	// it.count is the recorded one.
	if n := strings.Count(out, "> main.check() ./main.go:20"); n != 2 {
		t.Fatalf("want main.check at line 20 twice, got %d:\n%s", n, out)
	}
	vals := regexp.MustCompile(`(?m)^(-?\d+)$`).FindAllString(out, -1)
	if strings.Join(vals, " ") != count[1]+" "+by[1]+" "+count[1] {
		t.Fatalf("want it.count %s, by %s, it.count %s; Delve printed %v:\n%s", count[1], by[1], count[1], vals, out)
	}
}

// After a normal exit (nothing stopped the program on the way), rev
// step and rev stepout come back into the program's last instructions
// (Delve 1.27.2 kept the registers of the start there: "no source for PC
// 0x0", then a crash in proc.stepOutReverse), and rewind to a breakpoint
// and rev stepout from it find the recorded values.
func TestDelveReverseFromExit(t *testing.T) {
	dlv := findDelve(t)
	allowDelve(t)
	dir := t.TempDir()
	bindir := rrOnPath(t, dir)
	src := writeDelveProg(t, dir)
	bin := buildDelveProg(t, src)
	env := append(os.Environ(), "PATH="+bindir+":"+os.Getenv("PATH"), "NO_COLOR=1", "TERM=dumb")
	traceDir := filepath.Join(dir, "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rec := exec.CommandContext(ctx, filepath.Join(bindir, "rr"), "record", "-o", traceDir, bin)
	rec.Env = env
	recOut, err := rec.Output()
	want := strings.Fields(string(recOut))
	if err != nil || len(want) != 3 {
		t.Fatalf("rr record: %v %q", err, recOut)
	}
	script := filepath.Join(dir, "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"continue", "rev step", "rev stepout",
		"break main.compute", "rewind", "print i", "rev stepout", "print vs", "exit",
	}, "\n")+"\n"), 0o644)
	cmd := exec.CommandContext(ctx, dlv, "replay", traceDir, "--init", script, "--allow-non-terminal-interactive=true")
	cmd.Env = env
	cmd.Dir = filepath.Dir(src)
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if ctx.Err() != nil {
		t.Fatalf("dlv timed out:\n%s", out)
	}
	if err != nil || strings.Contains(out, "stepOutReverse") || strings.Contains(out, "no source for PC") || strings.Contains(out, "_rt0_amd64") || strings.Contains(out, "Internal debugger error") || strings.Contains(out, "Process 0 ") {
		t.Fatalf("Delve failed (%v):\n%s", err, out)
	}
	for _, s := range []string{
		"has exited with status 0",
		"> runtime.exit() ",                          // rev step: the exit call's function
		"> runtime.main() ",                          // rev stepout: its caller
		"[Breakpoint 1] main.compute() ./main.go:12", // rewind: the last call
		"> main.main() ./main.go:21",                 // rev stepout: the call in main
		"[]int len: 2, cap: 2, [" + want[0] + "," + want[1] + "]",
	} {
		if !strings.Contains(out, s) {
			t.Fatalf("Delve output lacks %q:\n%s", s, out)
		}
	}
	if !regexp.MustCompile(`(?m)^2$`).MatchString(out) {
		t.Fatalf("print i after rewind: want 2 (the last call):\n%s", out)
	}
}

const delveNilProg = `package main

import (
	"fmt"
	"math/rand"
)

type node struct {
	next *node
	val  int
}

//go:noinline
func walk(n *node, k int) int {
	for i := 0; i < k; i++ {
		n = n.next // line 16: a nil dereference past the end
	}
	return n.val
}

func main() {
	var head *node
	length := 3 + rand.Intn(5)
	for i := 0; i < length; i++ {
		head = &node{next: head, val: rand.Intn(1000)}
	}
	fmt.Println("length", length, "head", head.val)
	fmt.Println(walk(head, length+1))
}
`

// From a Go nil dereference in Delve (a SIGSEGV the runtime turns into a
// panic): rev next and rev stepout go back through the runtime's panic
// to the faulting line, where the loop variable and the nil pointer are
// as recorded; rewind stops at an earlier breakpoint; after the exit,
// rev step and rev stepout work.
func TestDelveReverseFromNilDereference(t *testing.T) {
	dlv := findDelve(t)
	allowDelve(t)
	dir := t.TempDir()
	bindir := rrOnPath(t, dir)
	src := filepath.Join(dir, "prog", "main.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(delveNilProg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prog", "go.mod"), []byte("module prog\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildDelveProg(t, src)
	env := append(os.Environ(), "PATH="+bindir+":"+os.Getenv("PATH"), "NO_COLOR=1", "TERM=dumb")
	traceDir := filepath.Join(dir, "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rec := exec.CommandContext(ctx, filepath.Join(bindir, "rr"), "record", "-o", traceDir, bin)
	rec.Env = env
	var stderr strings.Builder
	rec.Stderr = &stderr
	recOut, _ := rec.Output()
	m := regexp.MustCompile(`length (\d+) head`).FindStringSubmatch(string(recOut))
	if m == nil || !strings.Contains(stderr.String(), "nil pointer dereference") {
		t.Fatalf("recorded: %q %q", recOut, stderr.String())
	}
	length, _ := strconv.Atoi(m[1])
	script := filepath.Join(dir, "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"continue", "rev next", "rev stepout", "rev stepout", "print i", "print n", "print k",
		"break main.walk", "rewind", "print k", "clear 1",
		"continue", "continue", "rev step", "rev stepout", "exit",
	}, "\n")+"\n"), 0o644)
	cmd := exec.CommandContext(ctx, dlv, "replay", traceDir, "--init", script, "--allow-non-terminal-interactive=true")
	cmd.Env = env
	cmd.Dir = filepath.Dir(src)
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if ctx.Err() != nil {
		t.Fatalf("dlv timed out:\n%s", out)
	}
	if err != nil || strings.Contains(out, "stepOutReverse") || strings.Contains(out, "no source for PC") || strings.Contains(out, "Internal debugger error") {
		t.Fatalf("Delve failed (%v):\n%s", err, out)
	}
	for _, want := range []string{
		"[unrecovered-panic] runtime.fatalpanic()",
		"> runtime.panicmem() ",
		"> runtime.sigpanic() ",
		"> main.walk() ./main.go:16 ",
		"*main.node nil",
		"[Breakpoint 1] main.walk() ./main.go:14",
		"has exited",
		"> runtime.exit() ",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q:\n%s", want, out)
		}
	}
	// i at the fault is the list's length, k one more (also at walk's
	// entry, reached by rewind).
	vals := regexp.MustCompile(`(?m)^(-?\d+)$`).FindAllString(out, -1)
	if want := strconv.Itoa(length) + " " + strconv.Itoa(length+1) + " " + strconv.Itoa(length+1); strings.Join(vals, " ") != want {
		t.Fatalf("want i, k, k = %s; Delve printed %v:\n%s", want, vals, out)
	}
}
