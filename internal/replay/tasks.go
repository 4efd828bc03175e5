package replay

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// exec completes an execve (or, for the first event, starts the stub)
// and rebuilds the recorded address space.
func (rp *replayer) exec(ev *trace.Event) error {
	var t *rtask
	if len(rp.tasks) == 0 {
		// The initial process: start the stub under ptrace.
		cmd := exec.Cmd{Path: rp.stub, Args: []string{rp.stub}, SysProcAttr: &syscall.SysProcAttr{Ptrace: true}}
		if rp.opts.Bundle != nil {
			cmd.ExtraFiles = []*os.File{rp.opts.Bundle.ro} // bundleFd
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start replay: %w", err)
		}
		pid := cmd.Process.Pid
		th := ptrace.NewThread(pid)
		st, err := th.Wait()
		if err != nil {
			return err
		}
		if st.Kind != ptrace.StopSignal {
			return fmt.Errorf("replay stub did not stop after exec: %v", st)
		}
		if err := th.SetOptions(ptrace.Options); err != nil {
			return err
		}
		t = &rtask{rec: ev.NewTid, real: pid, proc: &rproc{}}
		rp.initial = ev.NewTid
	} else {
		var err error
		if t, err = rp.task(ev); err != nil {
			return err
		}
		if !t.execStub {
			return rp.diverge(ev, "exec event without an execve in progress")
		}
		t.execStub = false
		delete(rp.tasks, t.rec)
		t.rec = ev.NewTid
		t.proc = &rproc{}
	}
	_ = t.mem.Close()
	var err error
	if t.mem, err = tracee.OpenMem(t.real); err != nil {
		return err
	}
	rp.tasks[t.rec] = t
	t.atEntry, t.executing, t.inCall = false, false, false
	t.clearTid = 0 // exec forgets it
	t.pid = 0
	delete(rp.fdSeen, t.tgid()) // its O_CLOEXEC descriptors are closed
	return rp.rebuild(ev, t)
}

// rebuild replaces the stub's address space by the recorded one.
func (rp *replayer) rebuild(ev *trace.Event, t *rtask) error {
	cur, err := tracee.Maps(t.real)
	if err != nil {
		return err
	}
	var want []tracee.Map
	for _, m := range ev.Maps {
		want = append(want, tracee.Map{Start: m.Start, End: m.End})
	}
	// The files of the recorded mappings, mapped as the kernel mapped
	// them: through the descriptors the process has of them already
	// (inherited, see cloexec), or opened by the first batch.
	type fileMap struct {
		path  string
		oflag uint64
		fd    int64
		open  int // index of the openat in the first batch, or -1
	}
	files := make([]*fileMap, len(ev.Maps))
	offs := make([]uint64, len(ev.Maps)) // the file offset each maps
	var paths []byte
	byPath := map[string]*fileMap{}
	fromBundle := &fileMap{fd: bundleFd, open: -1}
	for i, m := range ev.Maps {
		offs[i] = m.Offset
		if m.File == "" || m.Flags&unix.MAP_SHARED != 0 {
			continue
		}
		if _, off, ok, err := rp.bundled(t, &ev.Maps[i], true); err != nil {
			return err
		} else if ok {
			files[i], offs[i] = fromBundle, off
			continue
		}
		path, oflag, err := rp.mapTarget(&ev.Maps[i])
		if err != nil {
			return err
		}
		f := byPath[fdKey(oflag, path)]
		if f == nil {
			f = &fileMap{path: path, oflag: oflag, open: -1}
			if fd, ok := rp.openedIn(t, path, oflag); ok {
				f.fd = fd
			} else {
				f.open = len(paths) // offset for now
				paths = append(append(paths, path...), 0)
			}
			byPath[fdKey(oflag, path)] = f
		}
		files[i] = f
	}
	// The scratch mapping holds the code of the injected batches (and the
	// paths to open): the first unmaps the stub, opens the files, maps
	// them and the recorded anonymous mappings (writable, to be filled);
	// the second protects those as recorded and sets the process's
	// state; each without a stop per call.
	code := tracee.BatchSize(2*len(ev.Maps) + len(cur) + len(byPath) + 8)
	scratchLen := pageUp(code + uint64(len(paths)) + 16)
	scratch := tracee.FindGap(scratchLen, cur, want)
	if _, err := tracee.MustInject(t.real, tracee.StubEntry, unix.SYS_MMAP, scratch, scratchLen, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uint64(0), 0); err != nil {
		return fmt.Errorf("replay exec: %w", err)
	}
	if len(paths) > 0 {
		if err := t.mem.WriteMem(scratch+code, paths); err != nil {
			return fmt.Errorf("replay exec: %w", err)
		}
	}
	var calls []tracee.Call
	for _, m := range cur {
		if m.Name == "[vsyscall]" {
			continue
		}
		calls = append(calls, tracee.Call{Nr: unix.SYS_MUNMAP, Args: [6]uint64{m.Start, m.Size()}})
	}
	atFdcwd := int64(unix.AT_FDCWD)
	var opened []*fileMap
	for _, f := range byPath {
		if f.open < 0 {
			continue
		}
		calls = append(calls, tracee.Call{Nr: unix.SYS_OPENAT, Args: [6]uint64{uint64(atFdcwd), scratch + code + uint64(f.open), f.oflag | rp.cloexec(t)}})
		f.open = len(calls) - 1
		opened = append(opened, f)
	}
	for i, m := range ev.Maps {
		if f := files[i]; f != nil {
			c := tracee.Call{Nr: unix.SYS_MMAP, Args: [6]uint64{m.Start, m.End - m.Start, uint64(m.Prot), mapFlags(&ev.Maps[i]), uint64(f.fd), offs[i]}}
			if f.open >= 0 {
				c.FdOf = f.open + 1
			}
			calls = append(calls, c)
			continue
		}
		flags := uint64(m.Flags&(unix.MAP_SHARED|unix.MAP_PRIVATE)) | unix.MAP_FIXED | unix.MAP_ANONYMOUS
		if m.Name == "[stack]" {
			flags |= unix.MAP_GROWSDOWN
		}
		calls = append(calls, tracee.Call{Nr: unix.SYS_MMAP, Args: [6]uint64{m.Start, m.End - m.Start, unix.PROT_READ | unix.PROT_WRITE, flags, ^uint64(0), 0}})
	}
	res, err := tracee.InjectBatch(t.real, t.mem, scratch, calls)
	if err != nil {
		return fmt.Errorf("replay exec: rebuild the recorded mappings: %w", err)
	}
	for i, ret := range res {
		if ret < 0 && ret > -4096 || calls[i].Nr == unix.SYS_MMAP && uint64(ret) != calls[i].Args[0] {
			return fmt.Errorf("replay exec: rebuild the recorded mappings: injected syscall %d (args %#x) returned %d", calls[i].Nr, calls[i].Args, ret)
		}
	}
	for _, f := range opened {
		f.fd = res[f.open]
		rp.keepFd(t, f.path, f.oflag, f.fd)
	}
	// The recorded content: the anonymous mappings' (writable until the
	// next batch) and the differences of the file mappings from their
	// files (patched sites, the partial page before the bss), written
	// into them as a debugger writes: those in read-only file mappings
	// (a hundred patched sites in ld.so and the executable) gathered
	// into spans (WriteCode), the rest with process_vm_writev.
	ro := map[int][]trace.MemWrite{} // by mapping, so that no span crosses into another
	for _, w := range ev.Mem {
		if i := slices.IndexFunc(ev.Maps, func(m trace.Mapping) bool { return w.Addr >= m.Start && w.Addr < m.End }); i >= 0 && files[i] != nil && ev.Maps[i].Prot&unix.PROT_WRITE == 0 && w.Addr+uint64(len(w.Data)) <= ev.Maps[i].End {
			ro[i] = append(ro[i], w)
			continue
		}
		if err := t.mem.WriteFast(w.Addr, w.Data); err != nil {
			return fmt.Errorf("replay exec: %w", err)
		}
	}
	for _, ws := range ro {
		if err := t.mem.WriteCode(ws); err != nil {
			return fmt.Errorf("replay exec: %w", err)
		}
	}
	calls = calls[:0]
	for i, m := range ev.Maps {
		if files[i] == nil && m.Prot != unix.PROT_READ|unix.PROT_WRITE {
			calls = append(calls, tracee.Call{Nr: unix.SYS_MPROTECT, Args: [6]uint64{m.Start, m.End - m.Start, uint64(m.Prot)}})
		}
	}
	// No core files from replayed crashes: RLIMIT_CORE 0 (the limit is
	// read from the zeroed end of the scratch mapping).
	// rdtsc and cpuid trapped by kernel as in the recording (traps.go).
	trap := ev.Flags&trace.ExecUntrapped == 0
	tsc, cpuid := uint64(unix.PR_TSC_ENABLE), uint64(1)
	if trap {
		tsc, cpuid = unix.PR_TSC_SIGSEGV, 0
	}
	calls = append(calls,
		tracee.Call{Nr: unix.SYS_PRCTL, Args: [6]uint64{unix.PR_SET_TSC, tsc}},
		tracee.Call{Nr: unix.SYS_PRLIMIT64, Args: [6]uint64{0, unix.RLIMIT_CORE, scratch + scratchLen - 16, 0}},
		tracee.Call{Nr: unix.SYS_ARCH_PRCTL, Args: [6]uint64{0x1012, cpuid}}) // ARCH_SET_CPUID: may fail (no CPUID faulting)
	t.trapped, t.proc.trap = trap, trap
	if res, err = tracee.InjectBatch(t.real, t.mem, scratch, calls); err != nil {
		return fmt.Errorf("replay exec: %w", err)
	}
	for i, ret := range res[:len(res)-1] {
		if ret < 0 && ret > -4096 {
			return fmt.Errorf("replay exec: injected syscall %d (args %#x) failed: %w", calls[i].Nr, calls[i].Args, unix.Errno(-ret))
		}
	}
	if err := t.mem.WriteMem(scratch, []byte{0x0f, 0x05}); err != nil {
		return err
	}
	if _, err := tracee.MustInject(t.real, scratch, unix.SYS_MUNMAP, scratch, scratchLen); err != nil {
		return err
	}
	regs := *ev.Regs
	return t.thread().SetRegs(&regs)
}

func (rp *replayer) newTask(ev *trace.Event) error {
	t, err := rp.task(ev)
	if err != nil {
		return err
	}
	if !t.executing {
		return rp.diverge(ev, "new task without a clone in progress")
	}
	st, err := rp.runTo(ev, t, ptrace.Syscall, ptrace.StopEvent, 0)
	if err != nil {
		return err
	}
	switch st.Event {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
	default:
		return rp.diverge(ev, fmt.Sprintf("expected a clone event, got event %d", st.Event))
	}
	msg, err := t.thread().EventMsg()
	if err != nil {
		return err
	}
	if t.restoreMem != nil {
		// The clone3 arguments were changed for replay (no CLONE_VFORK);
		// put them back before anyone runs (the child shares the memory).
		if err := t.mem.WriteMem(t.restoreMem.Addr, t.restoreMem.Data); err != nil {
			return err
		}
		t.restoreMem = nil
	}
	child := &rtask{rec: ev.NewTid, real: int(msg), proc: t.proc, trapped: t.trapped}
	if ev.Flags&unix.CLONE_CHILD_CLEARTID != 0 {
		switch ev.Sysno {
		case unix.SYS_CLONE:
			child.clearTid = t.entry[ptrace.R10]
		case unix.SYS_CLONE3:
			child.clearTid, _ = t.mem.ReadU64(t.entry[ptrace.RDI] + 16)
		}
	}
	if ev.Flags&unix.CLONE_VM == 0 {
		child.proc = t.proc.clone()
	}
	cst, err := child.thread().Wait()
	if err != nil {
		return err
	}
	if cst.Kind == ptrace.StopExited {
		return rp.diverge(ev, "new task died at birth")
	}
	if child.mem, err = tracee.OpenMem(child.real); err != nil {
		return err
	}
	if ev.Flags&unix.CLONE_THREAD == 0 {
		rp.inheritFds(t, child)
	}
	for _, m := range ev.Mem {
		if err := child.mem.WriteMem(m.Addr, m.Data); err != nil {
			return err
		}
	}
	if ev.Regs != nil {
		r, err := child.thread().GetRegs()
		if err != nil {
			return err
		}
		want := *ev.Regs
		if t.rewritten {
			// The call's number and arguments were changed for replay
			// (vfork without CLONE_VFORK); the child inherited them.
			for _, i := range []int{ptrace.ORIGRAX, ptrace.RDI, ptrace.RSI, ptrace.RDX, ptrace.R10, ptrace.R8, ptrace.R9} {
				r[i] = want[i]
			}
		}
		if d := compareRegs(&want, &r); len(d) > 0 {
			return rp.diverge(ev, fmt.Sprintf("new task %d", ev.NewTid), d...)
		}
		if err := child.thread().SetRegs(&want); err != nil {
			return err
		}
	}
	rp.tasks[child.rec] = child
	return nil
}

func (rp *replayer) instruction(ev *trace.Event) error {
	t, err := rp.task(ev)
	if err != nil {
		return err
	}
	sig := int(ev.Signo)
	if sig == 0 {
		sig = int(unix.SIGSEGV)
	}
	if _, err := rp.runTo(ev, t, ptrace.Sysemu, ptrace.StopSignal, sig); err != nil {
		return err
	}
	r, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	if d := compareRegs(ev.Regs, &r); len(d) > 0 {
		return rp.diverge(ev, "at a trapped instruction", d...)
	}
	after := *ev.Regs2
	return t.thread().SetRegs(&after)
}

func (rp *replayer) signal(ev *trace.Event) error {
	t, err := rp.task(ev)
	if err != nil {
		return err
	}
	var si ptrace.SigInfo
	copy(si[:], ev.SigInfo)
	if syncSignal(&si) && !ptraceResumed(ev) {
		if _, err := rp.runTo(ev, t, ptrace.Sysemu, ptrace.StopSignal, int(ev.Signo)); err != nil {
			return err
		}
	} else if rp.stepDue(t) && ev.Flags&1 != 0 {
		// A single step due here ends at the handler's first instruction
		// (delivering the signal is the step), as it does under rr.
		rp.stepStarted()
		rp.stepEndsAtBoundary(t)
	}
	r, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	if d := compareRegs(ev.Regs, &r); len(d) > 0 {
		return rp.diverge(ev, "delivering "+signalName(int(ev.Signo)), d...)
	}
	if syncSignal(&si) || ev.Signo == int32(unix.SIGABRT) || ev.Flags&4 != 0 { // faults, aborts and fatal signals stop
		if err := rp.signalStop(t, int(ev.Signo)); err != nil {
			return err
		}
	}
	switch {
	case ev.Flags&1 != 0: // handled
		t.restart = false
		t.proc.interrupted(ev.Regs[ptrace.RIP])
		for _, m := range ev.Mem {
			if err := t.mem.WriteFast(m.Addr, m.Data); err != nil {
				return err
			}
		}
		after := *ev.Regs2
		if err := t.thread().SetRegs(&after); err != nil {
			return err
		}
		if err := t.thread().SetXState(ev.XState); err != nil {
			return err
		}
	case ev.Flags&4 != 0: // fatal: the recorded process died of it
		if err := rp.beforeExit(t); err != nil {
			return err
		}
		rp.killGroup(t)
	}
	return nil
}

// threadGroup lists the live tasks of t's thread group, t included.
func (rp *replayer) threadGroup(t *rtask) []*rtask {
	tgid := tracee.Tgid(t.real)
	var g []*rtask
	for _, o := range rp.tasks {
		if !o.gone && o.proc == t.proc && (o == t || tracee.Tgid(o.real) == tgid) {
			g = append(g, o)
		}
	}
	return g
}

// killGroup kills t's process for real, as the recorded one died.
func (rp *replayer) killGroup(t *rtask) {
	g := rp.threadGroup(t)
	_ = unix.Kill(t.real, unix.SIGKILL)
	for _, o := range g {
		o.killed = true
	}
}

// awaitExitStop brings t, whose process was killed, to its
// PTRACE_EVENT_EXIT stop and holds it there. The kernel wakes a killed
// thread from its ptrace stop at once but lets it reach its exit stop
// only when it next runs, so until then the thread cannot be examined
// (ptrace answers ESRCH). The recorder took what it saw at that stop (the
// result of a write the thread was in as it died) from there too.
func (rp *replayer) awaitExitStop(ev *trace.Event, t *rtask) error {
	if t.atExit {
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		st, ok, err := t.thread().Poll()
		switch {
		case err != nil && ok && errors.Is(err, unix.ESRCH):
			continue // an earlier stop it left when killed
		case err != nil:
			return fmt.Errorf("task %d (tid %d) after its process was killed: %w", t.rec, t.real, err)
		case ok && st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT:
			t.atExit = true
			return nil
		case ok && st.Kind == ptrace.StopExited:
			t.gone = true
			return rp.diverge(ev, "the task died without the PTRACE_EVENT_EXIT stop where the recording saw the end of its system call")
		case ok:
			_ = t.thread().Resume(ptrace.Cont, 0)
			continue
		}
		if tracee.IsZombie(t.real) {
			return rp.diverge(ev, "the task died without the PTRACE_EVENT_EXIT stop where the recording saw the end of its system call")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("task %d (tid %d) did not reach its exit stop within 10s of its process being killed", t.rec, t.real)
		}
		time.Sleep(time.Duration(min(i, 100)) * 10 * time.Microsecond)
	}
}

// exit makes sure a task that exited in the recording is gone.
func (rp *replayer) exit(ev *trace.Event) error {
	t := rp.tasks[ev.Tid]
	if ev.Tid == rp.initial {
		rp.status = unix.WaitStatus(ev.Result)
	}
	if t == nil {
		return nil
	}
	delete(rp.tasks, ev.Tid)
	defer t.mem.Close()
	status := unix.WaitStatus(ev.Result)
	if t.gone {
		return nil
	}
	switch {
	case t.atExit:
		// Held at its exit stop since an earlier event of its death.
		if err := rp.exitWrites(ev, t); err != nil {
			return err
		}
		t.atExit = false
		_ = t.thread().Resume(ptrace.Cont, 0)
	case status.Signaled() && !t.killed:
		// (A second SIGKILL for a killed task could cost it its exit
		// stop.)
		rp.killGroup(t)
	}
	// A wait error ends the wait: the task is gone.
	var werr error
	_, _ = t.thread().WaitUntil(ptrace.Cont, func(st ptrace.Stop) (ptrace.Action, error) {
		if st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT {
			if werr = rp.exitWrites(ev, t); werr != nil {
				return ptrace.Accept, werr
			}
		}
		if st.Kind == ptrace.StopExited {
			return ptrace.Accept, nil
		}
		return ptrace.Onward, nil
	})
	return werr
}

// exitWrites applies, at t's PTRACE_EVENT_EXIT stop (its address space
// still there), what the recorded kernel wrote into memory as the thread
// died and replay's kernel does not: the robust futex words holding its
// tid, marked FUTEX_OWNER_DIED (replay's tid differs). They come with the
// task's exit event.
func (rp *replayer) exitWrites(exit *trace.Event, t *rtask) error {
	for _, w := range exit.Mem {
		if err := t.mem.WriteMem(w.Addr, w.Data); err != nil {
			return rp.diverge(exit, fmt.Sprintf("robust futex word at 0x%x of the dying thread: %v", w.Addr, err))
		}
	}
	return nil
}

func signalName(sig int) string { return fmt.Sprintf("signal %d", sig) }

// exitNow runs an exit or exit_group that t is entering: the task stops
// once more at PTRACE_EVENT_EXIT, then dies. A thread (not the group
// leader) calling exit is reaped at once; a leader lingers as a zombie
// until its threads are gone, so we only wait until it is one.
func (rp *replayer) exitNow(ev *trace.Event, t *rtask) error {
	var group []*rtask
	if ev.Sysno == unix.SYS_EXIT_GROUP {
		group = rp.threadGroup(t)
	}
	st, err := t.thread().RunUntil(ptrace.Syscall, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		if st.Kind == ptrace.StopExited || st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT {
			return ptrace.Accept, nil
		}
		return ptrace.Onward, nil
	})
	if err != nil {
		return err
	}
	if st.Kind == ptrace.StopExited {
		t.gone = true
		return nil
	}
	if out, err := rp.outcome(ev.Tid); err == nil && out != nil && out.Kind == trace.KindExit {
		if err := rp.exitWrites(out, t); err != nil {
			return err
		}
	}
	if err := t.thread().Resume(ptrace.Cont, 0); err != nil {
		return err
	}
	if ev.Sysno == unix.SYS_EXIT_GROUP {
		// The kernel killed the other threads before this one's exit
		// stop. It is reaped at its exit event, after them.
		for _, o := range group {
			if o != t {
				o.killed = true
			}
		}
		return nil
	}
	return waitDeadOrZombie(t.real, &t.gone)
}

// waitDeadOrZombie waits until tid is reaped (a non-leader thread) or a
// zombie (a leader whose threads live on).
func waitDeadOrZombie(tid int, gone *bool) error {
	_, exited, err := ptrace.NewThread(tid).PollUntil(func() bool { return tracee.IsZombie(tid) }, func(st ptrace.Stop) (ptrace.Action, error) {
		return ptrace.AcceptIf(st.Kind == ptrace.StopExited), nil
	})
	if exited {
		*gone = true
	}
	return err
}

// execStub runs the stub's execve that t is entering and holds t at the
// syscall-exit stop, in the stub's address space.
func (rp *replayer) execStub(ev *trace.Event, t *rtask) error {
	leader := tracee.Tgid(t.real)
	if err := rp.resume(t, ptrace.Syscall); err != nil {
		return err
	}
	// The kernel kills the caller's other threads and waits for them
	// before the exec completes; they stop at PTRACE_EVENT_EXIT and must
	// be let go. The exec event arrives under the leader's tid. Several
	// threads are waited for at once, so this polls each (Thread.Poll)
	// rather than running one of them with RunUntil.
	var siblings []*rtask
	for _, o := range rp.tasks {
		if o != t && o.proc == t.proc && !o.gone {
			siblings = append(siblings, o)
		}
	}
	for i := 0; ; i++ {
		progressed := false
		alone := len(siblings) == 0 && t.real == leader
		for _, tid := range []int{t.real, leader} {
			var st ptrace.Stop
			ok := true
			var err error
			if alone {
				// No other thread to let go: block until the exec's stop
				// (polling slept up to 0.3 ms more than an exec takes).
				if st, err = ptrace.NewThread(tid).Wait(); err != nil {
					return fmt.Errorf("exec of tid %d: %w", tid, err)
				}
			} else if st, ok, err = ptrace.NewThread(tid).Poll(); err != nil || !ok {
				continue
			}
			progressed = true
			if st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXEC {
				if w := t.execSaved; w != nil {
					// t.mem still refers to the old address space, which
					// lives on if a vfork parent shares it.
					_ = t.mem.WriteMem(w.Addr, w.Data)
					t.execSaved = nil
				}
				if st.Tid != t.real {
					for k, o := range rp.tasks {
						if o.real == st.Tid && o != t {
							_ = o.mem.Close()
							delete(rp.tasks, k)
						}
					}
					t.real = st.Tid
				}
				if err := t.thread().Resume(ptrace.Syscall, 0); err != nil {
					return err
				}
				if _, err := rp.waitStop(t, ptrace.Syscall); err != nil {
					return err
				}
				t.execStub = true
				t.executing = false
				return nil
			}
			if st.Kind == ptrace.StopExited {
				if tid == t.real {
					return rp.diverge(ev, "task died during exec")
				}
				continue
			}
			if tid == t.real && st.Kind != ptrace.StopEvent {
				return rp.diverge(ev, fmt.Sprintf("expected exec, got %v", st))
			}
			if tid != t.real && st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT {
				for _, o := range siblings {
					if o.real == tid {
						rp.diesInExec(o)
					}
				}
			}
			_ = ptrace.NewThread(tid).Resume(ptrace.Cont, 0)
		}
		for _, o := range siblings {
			if o.gone || o.real == leader {
				continue
			}
			st, ok, err := o.thread().Poll()
			if err != nil {
				o.gone = true
				continue
			}
			if ok {
				progressed = true
				if st.Kind == ptrace.StopExited {
					o.gone = true
				} else {
					if st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT {
						rp.diesInExec(o)
					}
					_ = o.thread().Resume(ptrace.Cont, 0)
				}
			}
		}
		if !progressed {
			time.Sleep(time.Duration(min(i, 100)) * 10 * time.Microsecond)
		}
	}
}
