package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// report collects the failures f finds inside deadline: they reach the
// test only if f ends in time (a testing.T must not be used once its
// test has ended, and f may outlive it).
type report struct {
	mu   sync.Mutex
	msgs []string
}

func (r *report) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// abandonedTests holds the tests whose deadline left a goroutine still
// using their sessions: their cleanup does not close them under it.
var abandonedTests sync.Map

func abandoned(t testing.TB) bool {
	_, ok := abandonedTests.Load(t)
	return ok
}

// grace is how long deadline waits, after the time box, for f to give
// up once the replayed processes are being killed.
const grace = 30 * time.Second

// deadline runs f, failing the test if it takes longer than d on an idle
// machine. The box grows with the machine's load (up to 8 d) but always
// ends before the test binary's own time-out, so a slow run fails here,
// with its name, and not by the binary's panic. At the time-out, the
// processes the test replays are killed (again and again, snapshots and
// new runs included) until f returns; f's failures, reported through r,
// are passed on only if it returns in time. If f still runs after a
// grace period, the test fails without waiting for it and its sessions
// are left open (closing them under f would break it).
func deadline(t testing.TB, d time.Duration, what string, f func(r *report)) {
	t.Helper()
	box := timeBox(t, d)
	r := &report{}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	timer := time.NewTimer(box)
	defer timer.Stop()
	select {
	case <-done:
		for _, m := range r.msgs {
			t.Error(m)
		}
		return
	case <-timer.C:
	}
	t.Errorf("%s: no answer within %v (%v on an idle machine; load %s)", what, box.Round(time.Second), d, loadAvg())
	end := time.After(grace)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		killDescendants()
		select {
		case <-done:
			t.FailNow()
		case <-end:
			abandonedTests.Store(t, true)
			t.Fatalf("%s: still running %v after its replayed processes were killed; sessions left open", what, grace)
		case <-tick.C:
		}
	}
}

// timeBox is d scaled by the load per CPU (1 to 8 times), ending at the
// latest a minute before the test binary's time-out.
func timeBox(t testing.TB, d time.Duration) time.Duration {
	box := d
	if l, err := strconv.ParseFloat(strings.Fields(loadAvg() + " 0")[0], 64); err == nil {
		f := min(max(l/float64(runtime.NumCPU()), 1), 8)
		box = time.Duration(float64(d) * f)
	}
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dt.Deadline(); ok {
			left := time.Until(end) - grace - 30*time.Second
			box = max(min(box, left), min(d, 10*time.Second))
		}
	}
	return box
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

// killDescendants sends SIGKILL to every process descended from this one
// (the replayed processes of every session, their snapshots, their
// children).
func killDescendants() {
	kids := map[int][]int{}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(s[i+1:])
		pid, err1 := strconv.Atoi(strings.Fields(s)[0])
		if len(fs) < 2 || err1 != nil {
			continue
		}
		ppid, _ := strconv.Atoi(fs[1])
		kids[ppid] = append(kids[ppid], pid)
	}
	todo := []int{os.Getpid()}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		for _, k := range kids[p] {
			_ = syscall.Kill(k, syscall.SIGKILL)
			todo = append(todo, k)
		}
	}
}
