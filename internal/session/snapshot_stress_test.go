package session_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/session"
	"github.com/gorr-debugger/gorr/internal/testrec"
)

const forkSrc = `#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
#include <pthread.h>
long total;
__attribute__((noinline)) void mark(long i) { total += i; asm volatile("" ::: "memory"); }
static void *worker(void *arg) { for (long i = 0; i < 50; i++) { mark(i); getppid(); } return 0; }
int main(void) {
	for (long i = 0; i < 100; i++) { mark(i); getppid(); }
	pid_t c = fork();
	if (c == 0) {
		for (long i = 0; i < 100; i++) { mark(i); getpid(); }
		_exit(3);
	}
	int st;
	waitpid(c, &st, 0);
	for (long i = 0; i < 100; i++) { mark(i); getppid(); }
	pthread_t th;
	pthread_create(&th, 0, worker, 0);
	pthread_join(th, 0);
	for (long i = 0; i < 100; i++) { mark(i); getppid(); }
	printf("%ld %d\n", total, WEXITSTATUS(st));
	return 0;
}
`

const goSrc = `package main

import (
	"fmt"
	"math/rand"
	"os"
	"time"
)

var calls int

//go:noinline
func compute(i int) int {
	calls++
	os.Getppid()
	return rand.Intn(1000000) + i*10000000 + int(time.Now().UnixNano()%1000)
}

func main() {
	var vs []int
	for i := 0; i < 30; i++ {
		vs = append(vs, compute(i))
	}
	fmt.Println(vs[0], vs[1], vs[2])
}
`

func recordGo(t testing.TB, src string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\ngo 1.21\n"), 0o644)
	bin := filepath.Join(dir, "prog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	traceDir := filepath.Join(dir, "trace")
	testrec.Record(t, traceDir, []string{bin}, testrec.Options{})
	return traceDir
}

// stressSnapshots takes a snapshot at every boundary where one can be
// taken, then goes to many events from them and compares with runs from
// the start.
func stressSnapshots(t *testing.T, traceDir string) session.SnapshotStats {
	ref, _ := openSession(t, traceDir, session.SnapshotOptions{Off: true})
	s, _ := openSession(t, traceDir, session.SnapshotOptions{Interval: time.Nanosecond, Max: 100000})
	var end session.DebugStop
	deadline(t, time.Minute, "continue to the end", func(r *report) {
		var err error
		end, err = s.Continue()
		if err != nil {
			r.Errorf("continue: %+v %v", end, err)
		}
		// The reference stands there too (a goto keeps the thread).
		if _, err := ref.Continue(); err != nil {
			r.Errorf("continue: %v", err)
		}
	})
	st := s.SnapshotStats()
	t.Logf("end at event %d; snapshots %+v", end.Event, st)
	if st.Taken == 0 {
		t.Fatalf("no snapshot")
	}
	step := max(end.Event/40, 1)
	for e := uint64(3); e < end.Event; e += step {
		var a, b session.DebugStop
		var errA, errB error
		deadline(t, time.Minute, fmt.Sprintf("goto %d", e), func(r *report) {
			a, errA = ref.Goto(e)
			b, errB = s.Goto(e)
		})
		if (errA == nil) != (errB == nil) || a.Kind != b.Kind {
			t.Fatalf("goto %d: %+v %v from snapshot at %d; %+v %v from the start", e, b, errB, s.SnapshotStats().LastRunFrom, a, errA)
		}
		if errA != nil {
			continue
		}
		ra, _, _ := ref.Regs(a.Tid)
		rb, _, _ := s.Regs(b.Tid)
		if ra != rb || a.Tid != b.Tid {
			t.Fatalf("goto %d: registers of %d differ from snapshot at %d", e, b.Tid, s.SnapshotStats().LastRunFrom)
		}
	}
	// And on to the end from a late snapshot.
	deadline(t, time.Minute, "continue", func(r *report) {
		for i := 0; i < 10; i++ {
			st, err := s.Continue()
			if err != nil || st.Kind == session.StopExited {
				return
			}
		}
	})
	return s.SnapshotStats()
}

func TestSnapshotStressForkThreads(t *testing.T) {
	dir, _ := recordC(t, forkSrc, nil, "mark")
	stressSnapshots(t, dir)
}

func TestSnapshotStressGo(t *testing.T) {
	stressSnapshots(t, recordGo(t, goSrc))
}
