package replay_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/testrec"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

const markSrc = `#include <stdio.h>
#include <time.h>
#include <unistd.h>
long total;
__attribute__((noinline)) void mark(long i) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	total += ts.tv_nsec + i;
}
int main(void) {
	for (long i = 0; i < 3; i++) {
		mark(i);
		getppid();
	}
	printf("%ld %d\n", total, getpid());
	return 3;
}
`

// Advance stops where the constraints ask, in the middle of an event
// too, and goes on from there: at a breakpoint (the pc moved back onto
// it), at the single step the caller made off it, at the next hit, and
// before the exit; then at the end, with the recorded status.
func TestAdvanceStops(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "mark.c")
	os.WriteFile(src, []byte(markSrc), 0o644)
	bin := filepath.Join(dir, "mark")
	if out, err := exec.Command("gcc", "-O1", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("gcc: %v %s", err, out)
	}
	mark := testrec.Symbols(t, bin, "mark")["mark"]
	traceDir := filepath.Join(dir, "trace")
	testrec.Record(t, traceDir, []string{bin}, testrec.Options{Header: trace.Header{Argv: []string{bin}}})

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	stub, err := tracee.WriteStub(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(traceDir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	e := replay.NewEngine(replay.Options{Reader: rd, BindCPU: -1}, stub, 0)
	defer e.KillAll()
	c := replay.Constraints{Boundaries: true}
	var st replay.Stop
	for { // to the program's exec
		if st, err = e.Advance(c); err != nil || st.Kind != replay.StopBoundary {
			t.Fatalf("before the exec: stop %v, %v", st.Kind, err)
		}
		if st.Ev.Kind == trace.KindExec {
			break
		}
	}
	pid := st.Ev.NewTid
	task := e.Task(pid)
	var orig [1]byte
	if err := task.Mem().ReadMem(mark, orig[:]); err != nil {
		t.Fatal(err)
	}
	if err := task.Mem().WriteMem(mark, []byte{0xcc}); err != nil {
		t.Fatal(err)
	}
	c = replay.Constraints{Marks: true, Breakpoints: map[uint64]byte{mark: orig[0]}, Debugged: pid}
	var hits, steps int
	exiting := false
	for {
		st, err = e.Advance(c)
		if err != nil {
			t.Fatalf("advance: %v", err)
		}
		c.Trap = replay.TrapReply{}
		switch st.Kind {
		case replay.StopBreakpoint:
			hits++
			if st.Addr != mark || st.Task.Rec() != pid || e.RegsOf(pid)[ptrace.RIP] != mark || e.Boundary() != nil {
				t.Fatalf("hit %d: at 0x%x (pc 0x%x) by %d, boundary %v; want 0x%x by %d mid-event",
					hits, st.Addr, e.RegsOf(pid)[ptrace.RIP], st.Task.Rec(), e.Boundary() != nil, mark, pid)
			}
			// Off the breakpoint by a step, as a debugger does.
			task.Mem().WriteMem(mark, orig[:])
			if err := e.StepInsn(st.Task); err != nil {
				t.Fatal(err)
			}
			c.Trap.Stepping = true
		case replay.StopStepped:
			steps++
			if st.Addr == mark || st.Addr != e.RegsOf(pid)[ptrace.RIP] {
				t.Fatalf("step off the breakpoint at 0x%x stopped at 0x%x (pc 0x%x)", mark, st.Addr, e.RegsOf(pid)[ptrace.RIP])
			}
			task.Mem().WriteMem(mark, []byte{0xcc})
			if err := st.Task.Thread().Resume(st.Mode, 0); err != nil {
				t.Fatal(err)
			}
		case replay.StopExiting:
			if hits != 3 || steps != 3 {
				t.Fatalf("before the exit after %d hits and %d steps, want 3 of each", hits, steps)
			}
			exiting = true
		case replay.StopEnd:
			if st.Result == nil || st.Result.Status.ExitStatus() != 3 || !exiting {
				t.Fatalf("end: %+v (stopped before the exit: %v)", st.Result, exiting)
			}
			return
		default:
			t.Fatalf("unexpected stop %v", st.Kind)
		}
	}
}
