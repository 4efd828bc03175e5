package session_test

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/session"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// threadsSrc has threads blocked in a futex wait (a condition variable)
// and in a pipe read for most of the run, one created and exiting in
// the middle, and one keeping state in an SSE register across system
// calls; every thread calls mark.
const threadsSrc = `#include <stdio.h>
#include <unistd.h>
#include <pthread.h>
long total;
__attribute__((noinline)) void mark(long i) { total += i; asm volatile("" ::: "memory"); }
pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
int ready, fds[2];
static void *waiter(void *a) {
	pthread_mutex_lock(&mu);
	while (!ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	for (long i = 0; i < 40; i++) { mark(i); getppid(); }
	return 0;
}
static void *reader(void *a) {
	char c;
	long n = 0;
	while (read(fds[0], &c, 1) == 1) { mark(c); n++; }
	return (void *)n;
}
static void *brief(void *a) { for (long i = 0; i < 20; i++) { mark(i); getppid(); } return 0; }
// Keeps a value in xmm9 across 200 system calls, then passes it to
// getpid as its first argument (compared at its entry): a recreated
// thread without its XSAVE area diverges there.
static void *sse(void *a) {
	long out;
	asm volatile("movq %1, %%xmm9\n\t"
		"mov $200, %%r12\n"
		"1:\n\t"
		"mov $110, %%eax\n\tsyscall\n\t"
		"dec %%r12\n\tjnz 1b\n\t"
		"movq %%xmm9, %%rdi\n\t"
		"mov $39, %%eax\n\tsyscall\n\t"
		"mov %%rdi, %0"
		: "=r"(out) : "r"(0x5eed1234abcdL) : "rax", "rcx", "r11", "rdi", "r12", "xmm9", "memory");
	mark(out);
	return 0;
}
int main(void) {
	pipe(fds);
	pthread_t w, r, b, x;
	pthread_create(&w, 0, waiter, 0);
	pthread_create(&r, 0, reader, 0);
	pthread_create(&x, 0, sse, 0);
	for (long i = 0; i < 60; i++) { mark(i); getppid(); }
	pthread_create(&b, 0, brief, 0);
	pthread_join(b, 0);
	for (long i = 0; i < 60; i++) { mark(i); if (i % 10 == 0) write(fds[1], "x", 1); getppid(); }
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(w, 0);
	pthread_join(x, 0);
	close(fds[1]);
	void *n;
	pthread_join(r, &n);
	for (long i = 0; i < 40; i++) { mark(i); getppid(); }
	printf("%ld %ld\n", total, (long)n);
	return 0;
}
`

// goThreadsSrc runs goroutines on several threads (GOMAXPROCS 4) that
// allocate enough to make the garbage collector run.
const goThreadsSrc = `package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

var (
	mu   sync.Mutex
	sink [][]byte
)

//go:noinline
func compute(i int) int {
	os.Getppid()
	b := make([]byte, 64<<10)
	b[i%len(b)] = byte(i)
	mu.Lock()
	sink = append(sink, b)
	if len(sink) > 40 {
		sink = nil
	}
	mu.Unlock()
	return int(b[i%len(b)]) + i
}

func main() {
	runtime.GOMAXPROCS(4)
	var wg sync.WaitGroup
	total := make([]int, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				total[g] += compute(i + g)
			}
		}(g)
	}
	wg.Wait()
	runtime.GC()
	fmt.Println(total)
}
`

func goSym(t *testing.T, traceDir, name string) uint64 { return goSymB(t, traceDir, name) }

// goSymB returns the address of symbol name in the Go program recordGo
// built for traceDir.
func goSymB(t testing.TB, traceDir, name string) uint64 {
	t.Helper()
	f, err := elf.Open(filepath.Join(filepath.Dir(traceDir), "prog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}

func checkThreaded(t *testing.T, st session.SnapshotStats) {
	t.Helper()
	t.Logf("snapshots %+v", st)
	if st.Threaded == 0 {
		t.Fatalf("no snapshot of a multi-threaded process: %+v", st)
	}
	if st.ThreadsRebuilt == 0 {
		t.Fatalf("no restore recreated threads: %+v", st)
	}
}

func TestSnapshotStressThreads(t *testing.T) {
	dir, _ := recordC(t, threadsSrc, nil, "mark")
	checkThreaded(t, stressSnapshots(t, dir))
}

func TestSnapshotStressGoThreads(t *testing.T) {
	checkThreaded(t, stressSnapshots(t, recordGo(t, goThreadsSrc)))
}

// reverseOps runs reverse execution from the middle with a breakpoint at bp
// in a session with snapshots and one without, and compares each stop.
func reverseOps(t *testing.T, traceDir string, bp uint64, so session.SnapshotOptions) session.SnapshotStats {
	ref, _ := openSession(t, traceDir, session.SnapshotOptions{Off: true})
	s, _ := openSession(t, traceDir, so)
	for _, x := range []*session.Session{ref, s} {
		deadline(t, time.Minute, "continue to the end", func(r *report) {
			if st, err := x.Continue(); err != nil || st.Kind != session.StopExiting {
				r.Errorf("continue: %+v %v", st, err)
			}
		})
	}
	// From the middle (where the threads live), and back.
	pos := s.Position().Event
	for _, x := range []*session.Session{ref, s} {
		deadline(t, time.Minute, "goto", func(r *report) {
			if _, err := x.Goto(pos * 6 / 10); err != nil {
				r.Errorf("goto %d: %v", pos*6/10, err)
			}
		})
		if err := x.SetBreakpoint(bp); err != nil {
			t.Fatal(err)
		}
	}
	type op struct {
		name string
		do   func(*session.Session) (session.DebugStop, error)
	}
	rc := op{"reverse-continue", (*session.Session).ReverseContinue}
	rs := op{"reverse-step", (*session.Session).ReverseStep}
	step := op{"step", func(x *session.Session) (session.DebugStop, error) { return x.Step(x.Position().Tid) }}
	cont := op{"continue", (*session.Session).Continue}
	ops := []op{rc, rs, rs, rc, rc, step, rs}
	for i := 0; i < 4; i++ {
		ops = append(ops, rc, rc, rc, rs)
	}
	ops = append(ops, cont, cont, rc)
	for i, o := range ops {
		var a, b session.DebugStop
		var errA, errB error
		deadline(t, 2*time.Minute, o.name, func(r *report) {
			a, errA = o.do(ref)
			b, errB = o.do(s)
		})
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%d %s: %v / %v", i, o.name, errA, errB)
		}
		if a.Kind != b.Kind || a.Tid != b.Tid {
			t.Fatalf("%d %s: stop %+v from snapshots, %+v from the start", i, o.name, b, a)
		}
		pa, pb := ref.Position(), s.Position()
		if pa.Event != pb.Event || pa.Steps != pb.Steps || pa.Addr != pb.Addr || pa.Tid != pb.Tid {
			t.Fatalf("%d %s: position %+v from snapshot at %d, %+v from the start", i, o.name, pb, s.SnapshotStats().LastRunFrom, pa)
		}
		ra, _, err1 := ref.Regs(a.Tid)
		rb, _, err2 := s.Regs(b.Tid)
		if err1 != nil || err2 != nil || ra != rb {
			t.Fatalf("%d %s: registers of %d differ (from snapshot at %d): %v %v", i, o.name, b.Tid, s.SnapshotStats().LastRunFrom, err1, err2)
		}
		ma, _ := ref.ReadMem(ra[19], 64) // rsp
		mb, _ := s.ReadMem(rb[19], 64)
		if string(ma) != string(mb) {
			t.Fatalf("%d %s: stacks differ", i, o.name)
		}
	}
	t.Logf("position %d, %d events replayed with snapshots", pos, s.SnapshotStats().EventsReplayed)
	return s.SnapshotStats()
}

func TestSnapshotReverseThreads(t *testing.T) {
	dir, syms := recordC(t, threadsSrc, nil, "mark")
	checkThreaded(t, reverseOps(t, dir, syms["mark"], session.SnapshotOptions{Interval: time.Nanosecond, Max: 8}))
}

func TestSnapshotReverseGoThreads(t *testing.T) {
	dir := recordGo(t, goThreadsSrc)
	checkThreaded(t, reverseOps(t, dir, goSym(t, dir, "main.compute"), session.SnapshotOptions{Interval: 2 * time.Millisecond, Max: 16}))
}

// Snapshots between preemption points (SCHED events) restore and go on
// exactly.
func TestSnapshotStressPreempt(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "c", "preempt_spin_counter.c"))
	if err != nil {
		t.Skip(err)
	}
	dir, _ := recordC(t, string(src), nil)
	rd := mustEvents(t, dir)
	if rd == 0 {
		t.Skip("no preemption point recorded")
	}
	t.Logf("%d preemption points", rd)
	checkThreaded(t, stressSnapshots(t, dir))
}

// A thread recreated by a restore gets its SSE registers back: a run
// from a snapshot taken while a thread keeps a value in xmm9 across
// system calls to the call that reads it.
func TestSnapshotThreadXState(t *testing.T) {
	dir, _ := recordC(t, threadsSrc, nil, "mark")
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var check, first uint64 // the getpid reading xmm9; the sse thread's first getppid
	var sseTid int32
	for n := uint64(1); ; n++ {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		if ev.Kind == trace.KindSyscallEntry && ev.Sysno == 39 && ev.Regs != nil && ev.Regs[ptrace.RDI] == 0x5eed1234abcd {
			check, sseTid = n, ev.Tid
			break
		}
	}
	rd.Close()
	if check == 0 {
		t.Fatal("no getpid(0x5eed1234abcd) in the trace")
	}
	rd, _ = trace.Open(dir)
	for n := uint64(1); n < check; n++ {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		if first == 0 && ev.Tid == sseTid && ev.Kind == trace.KindSyscallEntry && ev.Sysno == 110 {
			first = n
		}
	}
	rd.Close()
	ref, _ := openSession(t, dir, session.SnapshotOptions{Off: true})
	s, _ := openSession(t, dir, session.SnapshotOptions{Interval: time.Hour})
	pinned := false
	for b := first + 2; b < check-2 && !pinned; b++ {
		deadline(t, time.Minute, "goto", func(r *report) {
			if _, err := s.Goto(b); err != nil {
				r.Errorf("goto %d: %v", b, err)
			}
		})
		n, _ := s.Checkpoint()
		if st := s.SnapshotStats(); st.Live > 0 && st.Threaded > 0 {
			pinned = true
			t.Logf("snapshot at %d (xmm9 loaded at %d, read at %d)", b, first, check)
		} else {
			s.DeleteCheckpoint(n)
		}
	}
	if !pinned {
		t.Fatal("no snapshot of the threads between the loading of xmm9 and its use")
	}
	for _, x := range []*session.Session{ref, s} {
		deadline(t, time.Minute, "goto", func(r *report) {
			if _, err := x.Goto(check + 1); err != nil {
				r.Errorf("goto %d: %v", check+1, err)
			}
		})
	}
	st := s.SnapshotStats()
	if st.LastRunFrom >= check || st.ThreadsRebuilt == 0 {
		t.Fatalf("the run did not start from the snapshot: %+v", st)
	}
	ra, _, _ := ref.Regs(sseTid)
	rb, _, _ := s.Regs(sseTid)
	if ra != rb {
		t.Fatalf("registers of %d differ", sseTid)
	}
}

// mustEvents counts the preemption points of a trace.
func mustEvents(t *testing.T, dir string) int {
	t.Helper()
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	n := 0
	for {
		ev, err := rd.Next()
		if err != nil {
			return n
		}
		if ev.Kind == trace.KindSched {
			n++
		}
	}
}
