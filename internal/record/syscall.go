package record

import (
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Event flags on syscall exits.
const (
	FlagStdout = 1 << 0 // the call wrote to the recorder's stdout
	FlagStderr = 1 << 1 // ... or stderr
)

// Event flags on signals.
const (
	SigHandled = 1 << 0 // a user handler ran; Mem/Regs2/XState describe the frame
	SigIgnored = 1 << 1 // discarded (ignored disposition or a stop signal)
	SigFatal   = 1 << 2 // the default action killed the process
)

// UnsupportedError reports a system call gorr cannot record.
type UnsupportedError struct {
	Tid    int
	Name   string
	Reason string
}

func (e *UnsupportedError) Error() string {
	what := "made system call " + e.Name
	if strings.Contains(e.Name, " ") {
		what = "hit a " + e.Name
	}
	if e.Reason == "" {
		return fmt.Sprintf("tid %d %s, which gorr does not support", e.Tid, what)
	}
	return fmt.Sprintf("tid %d %s, which gorr does not support: %s", e.Tid, what, e.Reason)
}

func (r *recorder) onEntry(t *task) error {
	regs, err := ptrace.GetRegs(t.tid)
	if err != nil {
		return r.lost(t, err)
	}
	nr := int(int64(regs[ptrace.ORIGRAX]))
	sc := linux.Lookup(nr)
	if sc == nil {
		return &UnsupportedError{Tid: t.tid, Name: linux.Name(nr), Reason: "unknown system call number"}
	}
	if sc.Unsupported != "" {
		return &UnsupportedError{Tid: t.tid, Name: sc.Name, Reason: sc.Unsupported}
	}
	t.sysno, t.sc0, t.entry = nr, sc, regs
	if err := r.emit(&trace.Event{Kind: trace.KindSyscallEntry, Tid: int32(t.tid), Sysno: int32(nr), Regs: &regs}); err != nil {
		return err
	}
	t.lastRegs = regs
	// Signals that arrived while the thread ran user code are raised again
	// now, at a point replay can find: they interrupt this call if it
	// blocks and are delivered when it returns.
	for _, si := range t.deferred {
		sig := si.Signo()
		t.reraised[sig] = si
		if err := unix.Tgkill(tracee.Tgid(t.tid), t.tid, unix.Signal(sig)); err != nil {
			return fmt.Errorf("re-raise signal %d in tid %d: %w", sig, t.tid, err)
		}
	}
	t.deferred = nil
	t.nullify = false
	a := ptrace.SyscallArgs(&regs)
	switch nr {
	case unix.SYS_RSEQ:
		// rseq lets the kernel rewrite user memory and registers at
		// preemption points; refuse it so libc falls back.
		r.nullifyCall(t, -int64(unix.ENOSYS))
	case unix.SYS_PRCTL:
		if a[0] == unix.PR_SET_TSC {
			r.nullifyCall(t, 0)
		}
	case unix.SYS_ARCH_PRCTL:
		switch a[0] {
		case 0x1012: // ARCH_SET_CPUID: keep cpuid trapped
			r.nullifyCall(t, 0)
		case 0x1011: // ARCH_GET_CPUID
			r.nullifyCall(t, 1)
		}
	case unix.SYS_MADVISE:
		if a[2] == unix.MADV_FREE {
			// MADV_FREE frees pages only under memory pressure: not reproducible.
			r.nullifyCall(t, 0)
		}
	case unix.SYS_SCHED_SETAFFINITY:
		r.nullifyCall(t, 0)
	case unix.SYS_PTRACE, unix.SYS_WAIT4, unix.SYS_WAITID:
		if err := r.ptraceEntry(t, nr, a); err != nil {
			return err
		}
	case unix.SYS_SHMAT:
		return &UnsupportedError{Tid: t.tid, Name: "shmat", Reason: "System V shared memory cannot be replayed yet"}
	}
	if t.nullify {
		regs[ptrace.ORIGRAX] = ^uint64(0)
		if err := ptrace.SetRegs(t.tid, &regs); err != nil {
			return r.lost(t, err)
		}
	}
	t.state = stKernel
	if err := ptrace.Resume(t.tid, ptrace.Syscall, 0); err != nil {
		return r.lost(t, err)
	}
	switch {
	case nr == unix.SYS_EXIT || nr == unix.SYS_EXIT_GROUP:
		return r.exitNow(t, nr)
	case nr == unix.SYS_EXECVE || nr == unix.SYS_EXECVEAT || nr == unix.SYS_VFORK:
		// Their next stop may come under another tid or only after other
		// tasks ran: wait for any task.
	case !sc.MayBlock:
		r.fast = t
	default:
		// Give the call a chance to complete without blocking; if it
		// does not, other tasks run while it sleeps.
		_, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		st, ok, err := ptrace.Wait(t.tid, true)
		if err != nil {
			return err
		}
		if ok {
			return r.handle(st)
		}
	}
	return nil
}

func (r *recorder) nullifyCall(t *task, ret int64) {
	t.nullify = true
	t.nullRet = ret
}

func (r *recorder) onExit(t *task) error {
	regs, err := ptrace.GetRegs(t.tid)
	if err != nil {
		return r.lost(t, err)
	}
	t.at = atExit
	t.state = stReady
	if t.nullify {
		regs[ptrace.RAX] = uint64(t.nullRet)
		regs[ptrace.ORIGRAX] = uint64(t.sysno)
		if err := ptrace.SetRegs(t.tid, &regs); err != nil {
			return r.lost(t, err)
		}
		t.nullify = false
	}
	if err := r.ptraceExitFix(t, &regs); err != nil {
		return err
	}
	ret := int64(regs[ptrace.RAX])
	if t.execed && (t.sysno == unix.SYS_EXECVE || t.sysno == unix.SYS_EXECVEAT) && ret == 0 {
		t.execed = false
		if err := r.onExecDone(t, t.exFormer); err != nil {
			return err
		}
		return r.ptraceExec(t)
	}
	ev := &trace.Event{Kind: trace.KindSyscallExit, Tid: int32(t.tid), Sysno: int32(t.sysno), Result: ret, Regs: &regs}
	a := linux.Args(ptrace.SyscallArgs(&t.entry))
	if t.sc0 != nil {
		regions, err := t.sc0.OutputRegions(a, ret, t.mem)
		if err != nil {
			return fmt.Errorf("%s: %w", describe(t), err)
		}
		for _, reg := range regions {
			buf := make([]byte, reg.Len)
			n := t.mem.ReadPartial(reg.Addr, buf)
			if n > 0 {
				ev.Mem = append(ev.Mem, trace.MemWrite{Addr: reg.Addr, Data: buf[:n]})
			}
		}
	}
	if ret >= 0 || ret < -4095 {
		if err := r.exitSpecial(t, ev, a, ret); err != nil {
			return err
		}
	}
	t.lastRegs = regs
	// Only when no other thread is running user code: otherwise memory is
	// changing under the checksum.
	if r.opts.Checksum && r.running == nil {
		if ev.Checksum, err = tracee.Checksum(t.tid, t.mem); err != nil {
			return fmt.Errorf("%s: checksum: %w", describe(t), err)
		}
	}
	return r.emit(ev)
}

// exitSpecial records what the declarative table cannot express: mapped
// files, clone's parent tid, writes to the recorder's stdio.
func (r *recorder) exitSpecial(t *task, ev *trace.Event, a linux.Args, ret int64) error {
	switch t.sysno {
	case unix.SYS_MMAP:
		if a[3]&unix.MAP_ANONYMOUS == 0 {
			return r.recordFileMap(t, ev, uint64(ret), a)
		}
	case unix.SYS_MREMAP:
		return r.recordRemap(t, ev, uint64(ret), a)
	case unix.SYS_CLONE:
		if a[0]&unix.CLONE_PARENT_SETTID != 0 && a[2] != 0 {
			buf := make([]byte, 4)
			if t.mem.ReadMem(a[2], buf) == nil {
				ev.Mem = append(ev.Mem, trace.MemWrite{Addr: a[2], Data: buf})
			}
		}
	case unix.SYS_CLONE3:
		flags, _ := t.mem.ReadU64(a[0])
		if flags&unix.CLONE_PARENT_SETTID != 0 {
			ptid, _ := t.mem.ReadU64(a[0] + 24)
			buf := make([]byte, 4)
			if ptid != 0 && t.mem.ReadMem(ptid, buf) == nil {
				ev.Mem = append(ev.Mem, trace.MemWrite{Addr: ptid, Data: buf})
			}
		}
		if flags&unix.CLONE_PIDFD != 0 {
			pfd, _ := t.mem.ReadU64(a[0] + 8)
			buf := make([]byte, 4)
			if pfd != 0 && t.mem.ReadMem(pfd, buf) == nil {
				ev.Mem = append(ev.Mem, trace.MemWrite{Addr: pfd, Data: buf})
			}
		}
	case unix.SYS_WRITE, unix.SYS_WRITEV, unix.SYS_PWRITE64, unix.SYS_PWRITEV, unix.SYS_PWRITEV2:
		if ret > 0 {
			ev.Flags |= r.stdioFlag(t, int(int32(a[0])))
			if err := r.procMemWrite(t, a, ret); err != nil {
				return err
			}
			return r.refreshSharedMaps(t, ev, int(int32(a[0])))
		}
	case unix.SYS_FTRUNCATE, unix.SYS_FALLOCATE, unix.SYS_COPY_FILE_RANGE, unix.SYS_SENDFILE, unix.SYS_SPLICE:
		return r.refreshSharedMaps(t, ev, int(int32(a[1])))
	}
	return nil
}

// refreshSharedMaps handles a write through a file descriptor to a file
// that this process also maps MAP_SHARED: the kernel updates the mapping
// (same page cache), which replay's anonymous copy would not see, so the
// mapping's new content is recorded.
func (r *recorder) refreshSharedMaps(t *task, ev *trace.Event, fd int) error {
	if len(r.sharedFiles) == 0 || fd < 0 {
		return nil
	}
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd), &st) != nil || !r.sharedFiles[st.Ino] {
		return nil
	}
	maps, err := tracee.Maps(t.tid)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Shared && m.Inode == st.Ino && m.Size() <= 64<<20 {
			buf := make([]byte, m.Size())
			n := t.mem.ReadPartial(m.Start, buf)
			ev.Mem = append(ev.Mem, trace.MemWrite{Addr: m.Start, Data: buf[:n]})
		}
	}
	return nil
}

// stdioFlag says whether fd in the tracee is the recorder's own stdout or
// stderr, whose output replay reproduces.
func (r *recorder) stdioFlag(t *task, fd int) uint64 {
	if fd < 0 {
		return 0
	}
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd), &st) != nil {
		return 0
	}
	same := func(o unix.Stat_t) bool { return o.Ino != 0 && o.Ino == st.Ino && o.Dev == st.Dev }
	switch {
	case same(r.stdio[1]):
		return FlagStdout
	case same(r.stdio[2]):
		return FlagStderr
	}
	return 0
}

// exitNow lets a thread's exit complete before anything else runs, so the
// kernel's clear_child_tid write (which wakes pthread_join) happens at a
// point replay reproduces. A non-leader thread is reaped at once; a
// leader stays a zombie until its threads exit, so we wait until it is
// one. For exit_group the other threads are killed and reported later.
func (r *recorder) exitNow(t *task, nr int) error {
	for {
		st, _, err := ptrace.Wait(t.tid, false)
		if err != nil {
			return err
		}
		if st.Kind == ptrace.StopExited {
			return r.onExited(t, st)
		}
		if st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXIT {
			if stopped, err := r.ptraceExitStop(t); stopped || err != nil {
				return err
			}
			break
		}
		if err := ptrace.Resume(t.tid, ptrace.Syscall, 0); err != nil {
			return r.lost(t, err)
		}
	}
	t.dying = true
	t.state = stKernel
	if err := ptrace.Resume(t.tid, ptrace.Cont, 0); err != nil {
		return r.lost(t, err)
	}
	if nr == unix.SYS_EXIT_GROUP {
		return nil
	}
	for i := 0; ; i++ {
		st, ok, err := ptrace.Wait(t.tid, true)
		if err != nil {
			return err
		}
		if ok && st.Kind == ptrace.StopExited {
			return r.onExited(t, st)
		}
		if tracee.IsZombie(t.tid) {
			return nil
		}
		time.Sleep(time.Duration(min(i, 100)) * 10 * time.Microsecond)
	}
}
