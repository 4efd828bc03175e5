package ptrace

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startTraced starts path under PTRACE_TRACEME from the calling (locked)
// OS thread and returns its thread, stopped at its exec SIGTRAP, with
// Options set. The process is killed after limit (so no wait hangs) and
// at the end of the test.
func startTraced(t *testing.T, limit time.Duration, path string, args ...string) Thread {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("start %s: %v", path, err)
	}
	pid := cmd.Process.Pid
	timer := time.AfterFunc(limit, func() { _ = unix.Kill(pid, unix.SIGKILL) })
	t.Cleanup(func() {
		timer.Stop()
		_ = unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WALL|unix.WNOHANG, nil)
	})
	th := NewThread(pid)
	st, err := th.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != StopSignal || st.Signal != int(unix.SIGTRAP) {
		t.Fatalf("first stop of %s: %v, want the exec SIGTRAP", path, st)
	}
	if err := th.SetOptions(Options); err != nil {
		t.Fatal(err)
	}
	return th
}

// TestThread traces /bin/true: registers and FP state, a single step, a
// request from another OS thread (ESRCH), then a run to its exit through
// its system-call stops.
func TestThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	th := startTraced(t, 20*time.Second, "/bin/true")

	regs, err := th.GetRegs()
	if err != nil {
		t.Fatal(err)
	}
	if regs[RIP] == 0 || regs[RSP] == 0 {
		t.Fatalf("registers at exec: rip 0x%x rsp 0x%x", regs[RIP], regs[RSP])
	}
	if err := th.SetRegs(&regs); err != nil {
		t.Fatal(err)
	}
	fx, err := th.GetFPRegs()
	if err != nil {
		t.Fatal(err)
	}
	if err := th.SetFPRegs(fx); err != nil {
		t.Fatal(err)
	}
	if xs, err := th.GetXState(4096); err != nil || len(xs) < 512 {
		t.Fatalf("XSAVE area: %d bytes, %v", len(xs), err)
	}
	if _, err := th.GetSigMask(); err != nil {
		t.Fatal(err)
	}

	// The rule: from any other OS thread the tracee is not ours.
	other := make(chan error)
	go func() {
		runtime.LockOSThread() // a thread of its own, never the tracer
		_, err := th.GetRegs()
		other <- err
	}()
	if err := <-other; !errors.Is(err, unix.ESRCH) {
		t.Fatalf("GetRegs from another OS thread: %v, want ESRCH", err)
	}

	st, err := th.RunUntil(Step, 0, AcceptAny)
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != StopSignal || st.Signal != int(unix.SIGTRAP) {
		t.Fatalf("after a step: %v", st)
	}
	if si, err := th.GetSigInfo(); err != nil || si.Code() != 2 /* TRAP_TRACE */ {
		t.Fatalf("siginfo after a step: code %d, %v", si.Code(), err)
	}
	stepped, err := th.GetRegs()
	if err != nil {
		t.Fatal(err)
	}
	if stepped[RIP] == regs[RIP] {
		t.Fatalf("the step did not move rip 0x%x", regs[RIP])
	}

	// Run to the exit: every system call stops at its entry and exit; the
	// last entry is exit_group, then PTRACE_EVENT_EXIT with the status.
	entries, exits, last := 0, 0, -1
	st, err = th.RunUntil(Syscall, 0, func(st Stop) (Action, error) {
		switch st.Kind {
		case StopSyscallEntry:
			entries++
			info, err := th.GetSyscallInfo()
			if err != nil {
				return Accept, err
			}
			last = int(info.Nr)
		case StopSyscallExit:
			exits++
		case StopEvent, StopExited:
			return Accept, nil
		}
		return Again, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != StopEvent || st.Event != unix.PTRACE_EVENT_EXIT {
		t.Fatalf("end of the run: %v, want PTRACE_EVENT_EXIT", st)
	}
	if entries < 2 || exits != entries-1 || last != unix.SYS_EXIT_GROUP {
		t.Fatalf("%d entries, %d exits, last call %d; want exits = entries-1 and exit_group last", entries, exits, last)
	}
	if msg, err := th.EventMsg(); err != nil || msg != 0 {
		t.Fatalf("exit status 0x%x, %v; want 0", msg, err)
	}
	st, err = th.RunUntil(Cont, 0, func(st Stop) (Action, error) { return AcceptIf(st.Kind == StopExited), nil })
	if err != nil || st.Kind != StopExited || !st.Status.Exited() || st.Status.ExitStatus() != 0 {
		t.Fatalf("exit: %v, %v", st, err)
	}
}

// TestKillAll kills a traced sleeper and reaps it.
func TestKillAll(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	th := startTraced(t, 20*time.Second, "/bin/sleep", "30")
	if err := th.Resume(Cont, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := th.Poll(); ok || err != nil {
		t.Fatalf("poll of a sleeping tracee: ok %v, %v", ok, err)
	}
	if left := KillAll([]Thread{th}, 10*time.Second); len(left) != 0 {
		t.Fatalf("not reaped: %v", left)
	}
	if _, err := th.Wait(); !errors.Is(err, unix.ECHILD) {
		t.Fatalf("wait after KillAll: %v, want ECHILD", err)
	}
}

// TestWaitUntilActions drives a traced sleeper through signal stops: a
// signal passed over (Again) is not delivered, one resumed by the caller
// (Resumed) is not resumed twice, a delivered one (Deliver) kills it.
func TestWaitUntilActions(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	th := startTraced(t, 20*time.Second, "/bin/sleep", "30")
	if err := th.Resume(Cont, 0); err != nil {
		t.Fatal(err)
	}
	pid := th.Tid()
	if err := unix.Kill(pid, unix.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var seen []int
	st, err := th.WaitUntil(Cont, func(st Stop) (Action, error) {
		switch st.Kind {
		case StopEvent: // PTRACE_EVENT_EXIT
			return Again, nil
		case StopExited:
			return Accept, nil
		}
		seen = append(seen, st.Signal)
		switch unix.Signal(st.Signal) {
		case unix.SIGUSR1:
			_ = unix.Kill(pid, unix.SIGUSR2)
			return Again, nil
		case unix.SIGUSR2:
			if err := th.Resume(Cont, 0); err != nil {
				return Accept, err
			}
			_ = unix.Kill(pid, unix.SIGTERM)
			return Resumed, nil
		case unix.SIGTERM:
			return Deliver(st.Signal), nil
		}
		return Accept, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || st.Kind != StopExited || st.Signal != int(unix.SIGTERM) {
		t.Fatalf("signals %v, end %v; want USR1, USR2, TERM and death by SIGTERM", seen, st)
	}
}

// deep calls f under n frames of a small function.
//
//go:noinline
func deep(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	deep(n-1, f)
}

// TestRequestsSurviveStackGrowth reads registers and syscall info ever
// deeper on the goroutine's stack, so that the stack grows (is copied
// elsewhere) right inside the request at every doubling: a buffer on the
// stack must still be where the kernel writes it.
func TestRequestsSurviveStackGrowth(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	th := startTraced(t, 20*time.Second, "/bin/true")
	st, err := th.RunUntil(Syscall, 0, AcceptAny)
	if err != nil || st.Kind != StopSyscallEntry {
		t.Fatalf("first stop: %v, %v; want a system-call entry", st, err)
	}
	want, err := th.GetRegs()
	if err != nil {
		t.Fatal(err)
	}
	for d := 0; d < 2000; d++ {
		deep(d, func() {
			r, e := th.GetRegs()
			if e != nil {
				err = e
				return
			}
			if r != want {
				t.Errorf("depth %d: registers read as rip 0x%x orig_rax %d, want 0x%x %d", d, r[RIP], int64(r[ORIGRAX]), want[RIP], int64(want[ORIGRAX]))
			}
			info, e := th.GetSyscallInfo()
			if e != nil {
				err = e
				return
			}
			if info.Op != unix.PTRACE_SYSCALL_INFO_ENTRY || info.Nr != want[ORIGRAX] {
				t.Errorf("depth %d: syscall info op %d nr %d, want the entry of %d", d, info.Op, info.Nr, want[ORIGRAX])
			}
		})
		if err != nil || t.Failed() {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestPollUntil polls a traced sleeper until a condition holds, then
// until its death by a signal.
func TestPollUntil(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	th := startTraced(t, 20*time.Second, "/bin/sleep", "30")
	if err := th.Resume(Cont, 0); err != nil {
		t.Fatal(err)
	}
	polls := 0
	_, stopped, err := th.PollUntil(func() bool { polls++; return polls == 5 }, AcceptAny)
	if err != nil || stopped || polls != 5 {
		t.Fatalf("poll of a sleeper: stopped %v after %d polls, %v", stopped, polls, err)
	}
	if err := unix.Kill(th.Tid(), unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st, stopped, err := th.PollUntil(func() bool { return false }, func(st Stop) (Action, error) {
		return AcceptIf(st.Kind == StopExited), nil
	})
	if err != nil || !stopped || st.Signal != int(unix.SIGKILL) {
		t.Fatalf("poll until death: %v stopped %v, %v", st, stopped, err)
	}
}
