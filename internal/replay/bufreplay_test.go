package replay_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/testrec"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// traceEvents returns the events of the trace in dir.
func traceEvents(t *testing.T, dir string) []*trace.Event {
	t.Helper()
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var evs []*trace.Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// bufStretchEntry returns the number of a buffered call's entry that
// follows another buffered call of the same thread and is followed by
// one (inside a stretch the stub replays without stops), 0 if none.
func bufStretchEntry(t *testing.T, dir string) uint64 {
	t.Helper()
	evs := traceEvents(t, dir)
	buf := func(i int) bool {
		return i >= 0 && i < len(evs) && evs[i].Kind != trace.KindNewTask && evs[i].Flags&syscallbuf.EventFlag != 0
	}
	for i := range evs {
		if evs[i].Kind == trace.KindSyscallEntry && buf(i) && buf(i-1) && buf(i+2) && evs[i-1].Tid == evs[i].Tid && evs[i+2].Tid == evs[i].Tid {
			return uint64(i + 1)
		}
	}
	return 0
}

// A recording with the buffer replays (stretches of buffered calls
// without stops), and a call inside a stretch made with other registers
// than recorded is reported at its own event, with the register.
func TestBufferedStretchDivergence(t *testing.T) {
	dir, recorded := testrec.Shell(t, "cat /etc/passwd /etc/hostname /etc/passwd > /dev/null; echo $$ $(date +%s%N)", true)
	replayPrinting(t, dir, recorded)
	target := bufStretchEntry(t, dir)
	if target == 0 {
		t.Skip("no stretch of buffered calls in the recording (no patched libc?)")
	}
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = replay.Replay(replay.Options{Reader: rd, BindCPU: -1, Tamper: func(n uint64, ev *trace.Event) {
		if n == target {
			ev.Regs[ptrace.RDX] ^= 0x100
		}
	}})
	var div *replay.DivergenceError
	if !errors.As(err, &div) {
		t.Fatalf("want a divergence at event %d, got %v", target, err)
	}
	if div.Event != target || !strings.Contains(div.What, "replayed from the syscall buffer") || len(div.Diffs) == 0 || !strings.HasPrefix(div.Diffs[0], "rdx:") {
		t.Fatalf("want a divergence in rdx at event %d replayed from the buffer, got %v", target, div)
	}
	t.Log(div)
}

// The memory calls a program makes through its buffer (anonymous mmap,
// munmap, mprotect, madvise, and an mprotect that fails after changing
// part of its range) are made by the stub inside the stretches it
// replays, not stopped at two stops each: the replay reproduces the
// output (addresses, sums, the zeros after MADV_DONTNEED, the fault of a
// write to a page the failed mprotect changed) with far fewer stops than
// the calls. A recorded result the stub's call does not return is a
// divergence at that call's event.
func TestStubMakesMemoryCalls(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "memcalls")
	if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", bin, filepath.Join("..", "..", "testdata", "c", "buf_memcalls_threads.c")).CombinedOutput(); err != nil {
		t.Skipf("gcc: %v %s", err, out)
	}
	traceDir := filepath.Join(dir, "trace")
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{bin, "2", "200"}
	testrec.Record(t, traceDir, argv, testrec.Options{Header: trace.Header{Argv: argv}, Out: out, SyscallBuffer: true})
	out.Close()
	recorded, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	calls, mprotect := memCalls(t, traceDir)
	if calls < 1000 || mprotect == 0 {
		t.Fatalf("%d buffered memory calls recorded: want the program's", calls)
	}
	res := replayPrinting(t, traceDir, recorded)
	if res.Stops > uint64(calls)/4 {
		t.Errorf("replay stopped %d times for %d buffered memory calls: the stub did not make them", res.Stops, calls)
	}
	t.Logf("%d buffered memory calls, %d stops", calls, res.Stops)

	// A buffered mprotect recorded as failing: the stub's call succeeds.
	resultDiverges(t, traceDir, mprotect, -int64(unix.ENOMEM))
}

// replayPrinting replays the trace in dir and fails t unless it
// succeeds and prints what the recording printed (recorded).
func replayPrinting(t *testing.T, dir string, recorded []byte) *replay.Result {
	t.Helper()
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got bytes.Buffer
	res, err := replay.Replay(replay.Options{Reader: rd, Stdout: &got, Stderr: &got, BindCPU: -1})
	if err != nil || !bytes.Equal(got.Bytes(), recorded) {
		t.Fatalf("replay: %v, printed %q, recorded %q", err, got.Bytes(), recorded)
	}
	return res
}

// resultDiverges replays the trace in dir with the result of the
// buffered call whose entry is event entry changed to ret, and fails t
// unless replay reports a divergence in that call's result there.
func resultDiverges(t *testing.T, dir string, entry uint64, ret int64) {
	t.Helper()
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = replay.Replay(replay.Options{Reader: rd, BindCPU: -1, Tamper: func(n uint64, ev *trace.Event) {
		if n == entry+1 {
			ev.Result = ret
		}
	}})
	var div *replay.DivergenceError
	if !errors.As(err, &div) || div.Event != entry || len(div.Diffs) == 0 || !strings.HasPrefix(div.Diffs[0], "result:") {
		t.Fatalf("want a divergence in the result of the call at event %d, got %v", entry, err)
	}
	t.Log(div)
}

// memCalls counts the buffered memory calls of the trace in dir and
// returns the entry of a successful buffered mprotect inside a stretch
// (a buffered call of its thread before and after it).
func memCalls(t *testing.T, dir string) (calls int, mprotect uint64) {
	t.Helper()
	evs := traceEvents(t, dir)
	buf := func(i int, tid int32) bool {
		return i >= 0 && i < len(evs) && evs[i].Tid == tid && evs[i].Kind != trace.KindNewTask && evs[i].Flags&syscallbuf.EventFlag != 0
	}
	for i, ev := range evs {
		if ev.Kind != trace.KindSyscallEntry || ev.Flags&syscallbuf.EventFlag == 0 {
			continue
		}
		switch ev.Sysno {
		case unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MADVISE:
			calls++
		case unix.SYS_MPROTECT:
			calls++
			if mprotect == 0 && i+1 < len(evs) && evs[i+1].Result == 0 && buf(i-1, ev.Tid) && buf(i+2, ev.Tid) {
				mprotect = uint64(i + 1)
			}
		}
	}
	return calls, mprotect
}

// TestStubMovesBreak: a buffered brk that moves the heap's last page is
// made by the stub in replay (mapping or unmapping the pages between the
// old and the new break) inside a placed stretch, not with two stops;
// and one whose pages cannot be mapped is reported at its own event.
func TestStubMovesBreak(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "brk")
	if out, err := exec.Command("gcc", "-O1", "-o", bin, filepath.Join("..", "..", "testdata", "c", "buf_brk.c")).CombinedOutput(); err != nil {
		t.Skipf("gcc: %v %s", err, out)
	}
	traceDir := filepath.Join(dir, "trace")
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{bin, "300"}
	testrec.Record(t, traceDir, argv, testrec.Options{Header: trace.Header{Argv: argv}, Out: out, SyscallBuffer: true})
	out.Close()
	recorded, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	// The buffered brk calls, and one in the middle of a stretch that
	// grows the heap by pages.
	evs := traceEvents(t, dir+"/trace")
	brks, grow := 0, uint64(0)
	var brk uint64
	for i, ev := range evs {
		if ev.Kind != trace.KindSyscallEntry || ev.Sysno != unix.SYS_BRK || ev.Flags&syscallbuf.EventFlag == 0 || i+2 >= len(evs) {
			continue
		}
		brks++
		res := uint64(evs[i+1].Result)
		if grow == 0 && brk != 0 && res > brk+2*4096 && i > 0 && evs[i-1].Flags&syscallbuf.EventFlag != 0 && evs[i+2].Flags&syscallbuf.EventFlag != 0 {
			grow = uint64(i + 1)
		}
		brk = res
	}
	if brks < 300 || grow == 0 {
		t.Fatalf("%d buffered brk calls recorded (growing one inside a stretch: event %d): want the program's", brks, grow)
	}
	res := replayPrinting(t, traceDir, recorded)
	if res.Stops > uint64(brks)/4 {
		t.Errorf("replay stopped %d times for %d buffered brk calls: the stub did not make them", res.Stops, brks)
	}
	t.Logf("%d buffered brk calls, %d stops", brks, res.Stops)

	// A break moved beyond the address space: the stub's mmap fails.
	resultDiverges(t, traceDir, grow, 1<<48)
}
