package hunt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fake returns a runner whose n-th run (1-based, in start order) exits
// with status(n), and a NewDir making directories under root.
func fake(t *testing.T, status func(n int) int) (Runner, func() (string, error), *sync.Map) {
	root := t.TempDir()
	var made, ran atomic.Int64
	cpus := &sync.Map{}
	newDir := func() (string, error) {
		d := filepath.Join(root, "t-"+string(rune('a'+made.Add(1))))
		return d, os.Mkdir(d, 0o700)
	}
	run := func(ctx context.Context, dir string, cpu int) (Outcome, error) {
		n := int(ran.Add(1))
		cpus.Store(cpu, true)
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
		st := status(n)
		return Outcome{Status: unix.WaitStatus(st << 8), Output: []byte("run output\n")}, nil
	}
	return run, newDir, cpus
}

func left(t *testing.T, dirs []Failure) {
	t.Helper()
	for _, f := range dirs {
		if _, err := os.Stat(f.Dir); err != nil {
			t.Fatalf("kept %s is gone: %v", f.Dir, err)
		}
	}
}

func TestKeepsFirstFailures(t *testing.T) {
	run, newDir, cpus := fake(t, func(n int) int {
		if n%5 == 0 {
			return 3
		}
		return 0
	})
	var progress bytes.Buffer
	sum, err := Hunt(context.Background(), Options{Run: run, NewDir: newDir, MaxRuns: 100, Jobs: 1, Keep: 2, CPUs: []int{7}, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Kept) != 2 || sum.Kept[0].Run != 5 || sum.Kept[1].Run != 10 || sum.Runs != 10 || sum.Failed != 2 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Kept[0].Status.ExitStatus() != 3 || sum.Rate() != 0.2 {
		t.Fatalf("summary %+v", sum)
	}
	left(t, sum.Kept)
	ents, _ := os.ReadDir(filepath.Dir(sum.Kept[0].Dir))
	if len(ents) != 2 {
		t.Fatalf("passing runs left directories: %v", ents)
	}
	if _, ok := cpus.Load(7); !ok {
		t.Fatal("the run was not given the CPU")
	}
	if !bytes.Contains(progress.Bytes(), []byte("run 5 failed (exit status 3), kept")) {
		t.Fatalf("progress:\n%s", progress.Bytes())
	}
}

func TestMaxRunsAndOutput(t *testing.T) {
	run, newDir, _ := fake(t, func(int) int { return 0 })
	sum, err := Hunt(context.Background(), Options{Run: run, NewDir: newDir, MaxRuns: 7, Jobs: 3})
	if err != nil || sum.Runs != 7 || len(sum.Kept) != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	run, newDir, _ = fake(t, func(int) int { return 0 })
	sum, err = Hunt(context.Background(), Options{Run: run, NewDir: newDir, MaxRuns: 7, Jobs: 2, FailIfOutput: regexp.MustCompile("output")})
	if err != nil || len(sum.Kept) != 1 || !sum.Kept[0].Matched {
		t.Fatalf("%+v %v", sum, err)
	}
}

func TestCancelKeepsFailures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	root := t.TempDir()
	n := 0
	newDir := func() (string, error) {
		n++
		d := filepath.Join(root, string(rune('a'+n)))
		return d, os.Mkdir(d, 0o700)
	}
	var runs atomic.Int64
	run := func(c context.Context, dir string, cpu int) (Outcome, error) {
		if runs.Add(1) == 1 {
			return Outcome{Status: unix.WaitStatus(1 << 8)}, nil
		}
		cancel()
		<-c.Done()
		return Outcome{}, c.Err()
	}
	sum, err := Hunt(ctx, Options{Run: run, NewDir: newDir, MaxRuns: 100, Jobs: 1, Keep: 5})
	if err != nil || !sum.Interrupted || len(sum.Kept) != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Fatalf("the cancelled run's directory is left: %v", ents)
	}
}
