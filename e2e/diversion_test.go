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

// Diversions: calls made from the debugger run in a live copy of the
// replayed process and leave the replay untouched.

const divertProg = `#include <stdio.h>
#include <sys/random.h>
long secret, hits;
__attribute__((noinline)) int add(int a, int b) { return a + b; }
__attribute__((noinline)) long scaled(long k) { hits++; return k * secret; }
__attribute__((noinline)) void crash(void) { *(volatile int *)0 = 1; }
int main(void) {
	unsigned int r = 0;
	if (getrandom(&r, sizeof r, 0) != sizeof r) return 1;
	secret = r % 100000 + 1;
	printf("secret=%ld\n", secret);
	long total = 0;
	for (int i = 0; i < 3; i++) {
		total += i * secret; /* line 14 */
		total += 1;
	}
	printf("total=%ld hits=%ld\n", total, hits);
	return 0;
}
`

// gdb's `print f(x)` in a replay: the results come from the recorded
// state (a value that came from getrandom), a crash in the called
// function is survived, and continue, next and reverse-next afterwards
// still show the recorded values (the calls left no trace).
func TestGDBDiversion(t *testing.T) {
	needGDB(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := writeFile(src, divertProg); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	if out, err := exec.Command("gcc", "-O0", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	traceDir := filepath.Join(dir, "trace")
	rec, err := run(ctx60(t), dir, "", gorrBin, "record", "-o", traceDir, bin)
	if err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	m := regexp.MustCompile(`secret=(\d+)`).FindSubmatch(rec.Stdout)
	if m == nil {
		t.Fatalf("recorded output %q", rec.Stdout)
	}
	secret, _ := strconv.ParseInt(string(m[1]), 10, 64)
	out := gdbBatch(t, traceDir,
		"break prog.c:14", "continue", "continue",
		"print add(2,3)", "print scaled(3)", "print hits",
		"print crash()", "print total",
		"next", "print total", "print hits",
		"reverse-next", "print total",
		"continue", "print total", "print i", "print add(i,40)",
		"continue", "continue")
	got := regexp.MustCompile(`(?m)^\$\d+ = (-?\d+)$`).FindAllStringSubmatch(out, -1)
	s := strconv.FormatInt
	wantSeq := []string{
		"5", s(3*secret, 10), "1", // calls, and what scaled changed, in the diversion
		"1",                  // total at the second hit, after the crash
		s(1+secret, 10), "0", // next: the replay, where scaled never ran
		"1",                        // reverse-next
		s(2+secret, 10), "2", "42", // the third hit, and a call there
	}
	if len(got) != len(wantSeq) {
		t.Fatalf("want printed values %v, gdb said:\n%s", wantSeq, out)
	}
	for i := range wantSeq {
		if got[i][1] != wantSeq[i] {
			t.Fatalf("value %d: gdb printed %s, want %s (secret %d)\n%s", i, got[i][1], wantSeq[i], secret, out)
		}
	}
	for _, w := range []string{"The program being debugged was signaled while in a function called from GDB", "exited normally"} {
		if !strings.Contains(out, w) {
			t.Errorf("gdb output lacks %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "secret=") != 1 || !strings.Contains(out, "total="+s(3+3*secret, 10)+" hits=0") {
		t.Errorf("the replay's output should be the recorded one, once:\n%s", out)
	}
}

const divertGoProg = `package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
)

var secret int

//go:noinline
func double(x int) int { return 2 * x }

//go:noinline
func scaled(k int) int { return k * secret }

func main() {
	var b [2]byte
	rand.Read(b[:])
	secret = int(binary.LittleEndian.Uint16(b[:])) + 1
	fmt.Println("secret", secret)
	total := 0
	for i := 0; i < 3; i++ {
		total += i * secret // line 24
		total++
	}
	fmt.Println("total", total, double(1), scaled(0))
}
`

// Delve's call in dlv replay: double(21) and a function reading a
// global filled from crypto/rand, then the replay goes on as recorded.
func TestDelveCall(t *testing.T) {
	dlv := findDelve(t)
	allowDelve(t)
	dir := t.TempDir()
	bindir := rrOnPath(t, dir)
	src := filepath.Join(dir, "prog", "main.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(src, divertGoProg); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "prog", "go.mod"), "module prog\ngo 1.26\n"); err != nil {
		t.Fatal(err)
	}
	bin := buildDelveProg(t, src)
	env := append(os.Environ(), "PATH="+bindir+":"+os.Getenv("PATH"), "NO_COLOR=1", "TERM=dumb")
	traceDir := filepath.Join(dir, "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	rec := exec.CommandContext(ctx, filepath.Join(bindir, "rr"), "record", "-o", traceDir, bin)
	rec.Env = env
	recOut, err := rec.Output()
	if err != nil {
		t.Fatalf("rr record: %v", err)
	}
	m := regexp.MustCompile(`secret (\d+)`).FindSubmatch(recOut)
	if m == nil {
		t.Fatalf("recorded output %q", recOut)
	}
	secret, _ := strconv.Atoi(string(m[1]))
	script := filepath.Join(dir, "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"break main.go:24", "continue", "continue",
		"call double(21)", "call scaled(3)", "print total",
		"next", "print total", "rev next", "print total",
		"continue", "print total", "exit",
	}, "\n")+"\n"), 0o644)
	cmd := exec.CommandContext(ctx, dlv, "replay", traceDir, "--init", script, "--allow-non-terminal-interactive=true")
	cmd.Env = env
	cmd.Dir = filepath.Dir(src)
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("dlv timed out:\n%s", out)
	}
	rets := regexp.MustCompile(`(?m)^\s+~r0: (-?\d+)$`).FindAllStringSubmatch(string(out), -1)
	if len(rets) != 2 || rets[0][1] != "42" || rets[1][1] != strconv.Itoa(3*secret) {
		t.Fatalf("call results %v, want 42 and %d:\n%s", rets, 3*secret, out)
	}
	vals := regexp.MustCompile(`(?m)^(-?\d+)$`).FindAllStringSubmatch(string(out), -1)
	var got []string
	for _, v := range vals {
		got = append(got, v[1])
	}
	// total at the second hit, after next, after rev next, at the third hit.
	wantSeq := []string{"1", strconv.Itoa(1 + secret), "1", strconv.Itoa(2 + secret)}
	if strings.Join(got, " ") != strings.Join(wantSeq, " ") {
		t.Fatalf("printed values %v, want %v:\n%s", got, wantSeq, out)
	}
}
