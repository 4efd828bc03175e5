package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Real programs nobody here wrote, doing real work: each is recorded,
// replayed from another directory, and must print the same bytes and end
// with the same status. Every one prints values that differ between runs
// (pids, times, random numbers, ports), so a replay that re-ran the
// program would be caught. A program that is not installed is skipped
// (.ci/run installs them from the distribution's packages).

// needPrograms skips t unless every named program is on PATH.
func needPrograms(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed (.ci/run installs it with apt-get)", n)
		}
	}
}

// writeTree creates files (path relative to dir: content) in a new
// temporary directory and returns a Program whose setup copies them
// into the recording's scratch directory.
func writeTree(t *testing.T, name string, files map[string]string) Program {
	t.Helper()
	src := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(p, content); err != nil {
			t.Fatal(err)
		}
	}
	return Program{Name: name, Setup: "cp -a " + src + "/. ."}
}

// realRun records and replays argv (within limit) and compares the runs.
func realRun(t *testing.T, p Program, limit time.Duration, argv ...string) Run {
	t.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Skipf("%s not installed", argv[0])
	}
	argv = append([]string{path}, argv[1:]...)
	start := time.Now()
	rec, rep := recordReplayWithin(t, p, argv, limit)
	t.Logf("recorded and replayed in %v", time.Since(start).Round(time.Millisecond))
	if rec.Code != 0 || rec.Signal != 0 {
		t.Fatalf("recorded run failed:\n%v", rec)
	}
	compare(t, rec, rep)
	t.Logf("recorded and replayed output:\n%s", head(rec.Stdout, 20))
	return rec
}

// head returns the first n lines of b.
func head(b []byte, n int) string {
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...\n")
	}
	return strings.Join(lines, "")
}

// node: timers, and an HTTP server and client on loopback in one process.
func TestRealNode(t *testing.T) {
	needPrograms(t, "node")
	p := writeTree(t, "node", map[string]string{"main.js": `
const http = require('http');
const t0 = process.hrtime.bigint();
let ticks = 0;
const iv = setInterval(() => { ticks++; }, 5);
const server = http.createServer((req, res) => {
  res.end('pid=' + process.pid + ' rand=' + Math.random() + ' url=' + req.url);
});
server.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  console.log('listening on port', port);
  let left = 3;
  for (let i = 0; i < 3; i++) {
    setTimeout(() => {
      http.get({host: '127.0.0.1', port, path: '/req' + i}, (res) => {
        let body = '';
        res.on('data', (c) => body += c);
        res.on('end', () => {
          console.log('response', i, res.statusCode, body);
          if (--left === 0) {
            clearInterval(iv);
            server.close(() => {
              console.log('done at', Date.now(), 'after', (process.hrtime.bigint() - t0).toString(), 'ns, ticks>0:', ticks > 0);
            });
          }
        });
      });
    }, 10 * i);
  }
});
`})
	realRun(t, p, 3*time.Minute, "node", "main.js")
}

// goModule is a module without dependencies: libraries that import
// nothing (so a cold build compiles only them, not the standard
// library), one with an assembly function (so the go command also runs
// asm), and a main package that uses the standard library.
var goModule = map[string]string{
	"go.mod":        "module example.com/gorrbuild\n\ngo 1.21\n",
	"a/a.go":        "package a\n\nfunc Sum(xs ...int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n",
	"b/b.go":        "package b\n\nimport \"example.com/gorrbuild/a\"\n\nfunc Twice(x int) int { return a.Sum(x, x) }\n",
	"c/c.go":        "package c\n\nimport (\n\t\"example.com/gorrbuild/a\"\n\t\"example.com/gorrbuild/b\"\n)\n\nfunc F(x int) int { return a.Sum(b.Twice(x), 1) }\n",
	"d/d.go":        "package d\n\n// Add is written in assembly.\nfunc Add(x, y int64) int64\n",
	"d/add_amd64.s": "#include \"textflag.h\"\n\nTEXT ·Add(SB),NOSPLIT,$0-24\n\tMOVQ x+0(FP), AX\n\tADDQ y+8(FP), AX\n\tMOVQ AX, ret+16(FP)\n\tRET\n",
	"main.go":       "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n\n\t\"example.com/gorrbuild/c\"\n\t\"example.com/gorrbuild/d\"\n)\n\nfunc main() {\n\tfmt.Println(\"hello\", c.F(os.Getpid()), d.Add(1, 2), time.Now().UnixNano())\n}\n",
}

// A cold go build (empty GOCACHE, no network, no dependencies): the go
// command starts the compiler and assembler (and their -V=full version
// queries) as child processes of a multi-threaded Go program.
//
// By default only the module's library packages are built and vetted:
// about 17 processes (two go commands, compile, asm, vet), 15 s recorded
// and replayed on this 2-core machine. A cold build of the main package
// compiles the standard library too (about 120 processes, 4.7 million
// events; 4.5 minutes to record and 2.5 to replay here, 18.5 in all
// while other jobs loaded the machine), too slow for
// CI's budget: GORR_E2E_LONG=1 runs it as well.
// goTelemetryOff, put before a go command in sh -c, gives it a private
// configuration directory with Go's telemetry off.
const goTelemetryOff = "mkdir -p cfg/go/telemetry && echo off > cfg/go/telemetry/mode && XDG_CONFIG_HOME=$PWD/cfg"

func TestRealGoBuild(t *testing.T) {
	needPrograms(t, "go", "sh")
	p := writeTree(t, "gobuild", goModule)
	// XDG_CONFIG_HOME with telemetry off: Go's telemetry counter files
	// are mapped shared and written by every go process on the machine,
	// outside the recording too (docs/limitations.md).
	env := goTelemetryOff + " GOCACHE=$PWD/gocache GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOENV=off"
	t.Run("libraries", func(t *testing.T) {
		realRun(t, p, 8*time.Minute, "sh", "-c",
			env+" go build ./a ./b ./c ./d && "+env+" go vet ./a ./b ./c && echo built by $$ at $(date +%s%N) && find gocache -type f | wc -l")
	})
	t.Run("cold-std", func(t *testing.T) {
		if os.Getenv("GORR_E2E_LONG") == "" {
			t.Skip("a cold build of a main package compiles the standard library (about 120 processes, 7 minutes recorded and replayed); set GORR_E2E_LONG=1")
		}
		realRun(t, p, 45*time.Minute, "sh", "-c", env+" go build -o hello . && ./hello")
	})
}

// make -j2 of a multi-file C project: two gcc pipelines at a time.
func TestRealMake(t *testing.T) {
	needPrograms(t, "make", "gcc")
	files := map[string]string{"util.h": "int f0(int);\n"}
	var objs []string
	const n = 6
	for i := 0; i < n; i++ {
		next := "x"
		if i+1 < n {
			next = fmt.Sprintf("f%d(x + %d)", i+1, i)
		}
		files[fmt.Sprintf("f%d.c", i)] = fmt.Sprintf("int f%d(int x);\nint f%d(int x) { return %s; }\n", i+1, i, next)
		objs = append(objs, fmt.Sprintf("f%d.o", i))
	}
	files["main.c"] = `#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "util.h"
int main(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("result=%d pid=%d t=%ld.%09ld\n", f0(getpid() % 100), getpid(), (long)ts.tv_sec, ts.tv_nsec);
	return 0;
}
`
	files["Makefile"] = "OBJS = main.o " + strings.Join(objs, " ") + "\n" +
		"prog: $(OBJS)\n\tgcc -o $@ $(OBJS)\n" +
		"%.o: %.c util.h\n\tgcc -O1 -c -o $@ $<\n" +
		"run: prog\n\t./prog\n"
	p := writeTree(t, "make", files)
	realRun(t, p, 6*time.Minute, "make", "-j2", "--no-print-directory", "run")
}

// git gc on a repository with a few commits (repack, prune, pack-refs,
// reflog expire: several git processes, pack-objects with threads).
func TestRealGitGC(t *testing.T) {
	needPrograms(t, "git", "sh")
	p := Program{Name: "gitgc", Setup: `set -e
git init -q repo && cd repo
for i in 1 2 3 4 5; do
	date +%N > f$i; head -c 2000 /dev/urandom | od -An -tx1 > r$i
	git add . && git -c user.name=a -c user.email=a@b commit -qm "commit $i"
done`}
	realRun(t, p, 4*time.Minute, "sh", "-c",
		"cd repo && git gc --quiet && git count-objects -v && ls .git/objects/pack && git log --format=%H && git fsck --no-progress && echo at $(date +%N)")
}

// redis-server on a loopback port, driven by redis-cli from the same
// recorded script, shut down by a command so it ends deterministically.
func TestRealRedis(t *testing.T) {
	needPrograms(t, "redis-server", "redis-cli", "sh")
	port := freePort(t)
	script := fmt.Sprintf(`set -e
P=%d
redis-server --port $P --bind 127.0.0.1 --save '' --appendonly no --daemonize no --logfile redis.log --dir "$PWD" &
S=$!
until redis-cli -p $P ping >/dev/null 2>&1; do sleep 0.05; done
redis-cli -p $P set k "$(date +%%N)"
redis-cli -p $P get k
redis-cli -p $P incrby n $$
redis-cli -p $P rpush l a b c
redis-cli -p $P lrange l 0 -1
redis-cli -p $P time
redis-cli -p $P info server | grep -E '^(process_id|run_id|tcp_port):'
redis-cli -p $P shutdown nosave || true
wait $S || true
grep -c . redis.log >/dev/null
echo server $S stopped
`, port)
	p := writeTree(t, "redis", map[string]string{"run.sh": script})
	realRun(t, p, 4*time.Minute, "sh", "run.sh")
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sqlite3 with a database file, random() and datetime('now').
func TestRealSQLite(t *testing.T) {
	needPrograms(t, "sqlite3")
	p := writeTree(t, "sqlite", map[string]string{"q.sql": `
CREATE TABLE t(i INTEGER PRIMARY KEY, r INTEGER, d TEXT, b TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 500)
INSERT INTO t SELECT i, random(), datetime('now', 'subsec'), hex(randomblob(8)) FROM c;
CREATE INDEX tr ON t(r);
SELECT count(*), sum(r % 1000), min(d) <= max(d) FROM t;
SELECT i, r, b FROM t ORDER BY r LIMIT 3;
BEGIN; DELETE FROM t WHERE i % 2 = 0; COMMIT;
SELECT count(*), datetime('now'), julianday('now'), random();
`})
	realRun(t, p, 2*time.Minute, "sqlite3", "db.sqlite", ".read q.sql")
}

// bash with traps (EXIT, ERR, a signal), subshells, command
// substitution, a pipeline into a loop and a background job.
func TestRealBash(t *testing.T) {
	needPrograms(t, "bash")
	p := writeTree(t, "bash", map[string]string{"s.sh": `
trap 'echo "exit trap, status $?"' EXIT
trap 'echo "got USR1 in $BASHPID"' USR1
kill -USR1 $$
echo "main $$ random $RANDOM $SRANDOM time $EPOCHREALTIME"
( echo "subshell $BASHPID"; exit 3 )
echo "subshell status $?"
x=$(echo "cmdsub $BASHPID"; date +%N)
echo "$x"
printf '%s\n' a b c | while read -r l; do echo "pipe $l in $BASHPID"; done
{ sleep 0.01; echo "background job $BASHPID"; } &
wait $!
echo "job status $?"
set -E
trap 'echo "ERR trap at line $LINENO"' ERR
f() { false; }
f
( trap 'echo "subshell exit trap $BASHPID"' EXIT; : )
exit 7
`})
	p.Exit = 7
	path, _ := exec.LookPath("bash")
	rec, rep := recordReplayWithin(t, p, []string{path, "s.sh"}, 2*time.Minute)
	if rec.Code != 7 {
		t.Fatalf("recorded run exited %d, want 7\n%v", rec.Code, rec)
	}
	compare(t, rec, rep)
}

// A parent and a child interleaving lines on one stdout: the replay
// prints the same bytes in the same order, on a pipe and on a terminal
// (where a write can wait in the kernel while the other process writes).
func TestRealInterleave(t *testing.T) {
	bin := cprog(t, "interleave", interleaveProg)
	t.Run("pipe", func(t *testing.T) {
		rec, rep := recordReplayWithin(t, Program{Name: "interleave"}, []string{bin, "1000"}, 2*time.Minute)
		if rec.Code != 0 {
			t.Fatalf("recorded run failed:\n%v", rec)
		}
		sameOrder(t, rec, rep)
		compare(t, rec, rep)
	})
	t.Run("tty", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		traceDir := filepath.Join(t.TempDir(), "trace")
		rec, err := runOnTTY(ctx, t.TempDir(), gorrBin, "record", "-o", traceDir, bin, "2000")
		if err != nil || rec.Code != 0 {
			t.Fatalf("record: %v\n%v", err, rec)
		}
		rep, err := runOnTTY(ctx, t.TempDir(), gorrBin, "replay", "-a", traceDir)
		if err != nil {
			t.Fatalf("replay: %v\n%v", err, rep)
		}
		sameOrder(t, rec, rep)
		compare(t, rec, rep)
	})
}

// sameOrder fails t unless rep printed rec's stdout exactly, saying
// whether only the order of the lines differs.
func sameOrder(t *testing.T, rec, rep Run) {
	t.Helper()
	if bytes.Equal(rec.Stdout, rep.Stdout) {
		return
	}
	diff := firstDifference(rec.Stdout, rep.Stdout)
	if sameLines(rec.Stdout, rep.Stdout) {
		t.Fatalf("replay printed the recorded lines in another order: %s", diff)
	}
	t.Fatalf("replay printed other lines: %s", diff)
}

const interleaveProg = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static void lines(const char *who, int n) {
	char buf[128];
	struct timespec ts;
	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		int len = snprintf(buf, sizeof buf, "%s %d line %d t=%ld.%09ld\n", who, getpid(), i, (long)ts.tv_sec, ts.tv_nsec);
		if (write(1, buf, len) != len) exit(1);
		if (i % 7 == 0) usleep(200);
	}
}
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	pid_t c = fork();
	if (c == 0) { lines("child", n); return 0; }
	lines("parent", n);
	int st;
	waitpid(c, &st, 0);
	printf("child %d exited %d\n", c, WEXITSTATUS(st));
	return 0;
}
`

// runOnTTY runs a command with its stdout on a new pseudo-terminal and
// returns what the terminal received (stderr is a pipe, stdin empty).
func runOnTTY(ctx context.Context, dir string, name string, args ...string) (Run, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return Run{}, err
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		return Run{}, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		return Run{}, fmt.Errorf("pty number: %w", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return Run{}, err
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&out, master) // ends with EIO once the slave is closed everywhere
	}()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout = slave
	var e bytes.Buffer
	cmd.Stderr = &e
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	slave.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	r := Run{Stdout: out.Bytes(), Stderr: e.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		r.Code, err = ws.ExitStatus(), nil
		if ws.Signaled() {
			r.Code, r.Signal = 0, int(ws.Signal())
		}
	}
	if ctx.Err() != nil {
		return r, fmt.Errorf("timed out: %w", ctx.Err())
	}
	return r, err
}

// sameLines tells whether a and b hold the same lines in some order.
func sameLines(a, b []byte) bool {
	x, y := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// firstDifference describes the first line at which two outputs differ.
func firstDifference(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: recorded %q, replayed %q (%d vs %d lines)", i+1, x, y, len(al), len(bl))
		}
	}
	return "no line differs"
}
