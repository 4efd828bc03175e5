package record

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
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
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	nr := linux.Nr(regs[ptrace.ORIGRAX])
	if rip := regs[ptrace.RIP]; rip >= syscallbuf.VsyscallBase && rip < syscallbuf.VsyscallBase+0x1000 {
		// Only the buffer's seccomp filter sees the kernel's emulation
		// of the legacy vsyscall page, and it makes no syscall stops:
		// the call cannot be recorded here. The callers Scan recognises
		// were redirected to the stub.
		return &UnsupportedError{Tid: t.tid, Name: "call into the vsyscall page", Reason: fmt.Sprintf("%s from a caller gorr did not redirect (return address 0x%x; only `mov $entry, %%rax; call *%%rax` is)", linux.Name(nr), r.vsysCaller(t, &regs))}
	}
	if t.buf.inVclock(regs[ptrace.RIP]) {
		// The vDSO's clock_gettime, which the stub calls inside a
		// buffered call (replay does not run it), fell back to the
		// system call: the kernel's clock source changed to one the vDSO
		// cannot read since the process started.
		return &UnsupportedError{Tid: t.tid, Name: linux.Name(nr), Reason: "the vDSO's clock_gettime, called by the syscall buffer, made a system call (the kernel's clock source changed during the recording); record with -n to leave the buffer off"}
	}
	// A number outside the table (nil sc) runs: the kernel answers ENOSYS
	// without side effects, which onExit checks.
	sc := linux.Lookup(nr)
	if sc != nil && sc.Unsupported != "" {
		return &UnsupportedError{Tid: t.tid, Name: sc.Name, Reason: sc.Unsupported}
	}
	t.sysno, t.sc0, t.entry = nr, sc, regs
	r.calls.traced(nr, regs[ptrace.RIP])
	if regs[ptrace.RIP] == syscallbuf.SyscallRet {
		t.forceTrace = false // the stub's call, restarted under ptrace
	}
	ev := &trace.Event{Kind: trace.KindSyscallEntry, Tid: int32(t.tid), Sysno: int32(nr), Regs: &regs}
	if t.yielded {
		// The call the stub traced for the watchdog's yield: replay sets
		// HdrYield before running the thread to it. Its timeslice is
		// over: another ready thread runs after it.
		if regs[ptrace.RIP] != syscallbuf.TracedRet {
			return fmt.Errorf("tid %d: the syscall buffer's stub took a yield, but the next call stopped at rip 0x%x, not at its traced instruction", t.tid, regs[ptrace.RIP])
		}
		t.yielded = false
		ev.Flags |= syscallbuf.YieldFlag
		r.sched.Preempted()
		r.yields++
	}
	if err := r.emit(ev); err != nil {
		return err
	}
	t.writeOpen = isWrite(nr)
	t.setLast(regs, false)
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
	if stopped, err := r.ptraceSyscallEntry(t); stopped || err != nil {
		return err
	}
	return r.entryContinue(t)
}

// entryContinue completes the entry of t's system call (after an emulated
// syscall-entry stop: the call its tracer left in t.entry).
func (r *recorder) entryContinue(t *task) error {
	nr, sc, regs := t.sysno, t.sc0, t.entry
	t.nullify = false
	a := ptrace.SyscallArgs(&regs)
	if t.emu != nil && t.emu.sysemu {
		// Entered under an emulated PTRACE_SYSEMU: the kernel does not
		// run the call; rax (-ENOSYS, or what the tracer set) stays.
		t.emu.sysemu = false
		r.nullifyCall(t, int64(regs[ptrace.RAX]))
	} else if syscallbuf.IsRdtscCall(nr, regs[ptrace.RIP]) {
		// The stub's rdtsc call, traced (no record free, a yield, a
		// thread stopping at every call): the counter is its result.
		a, d := cpu.Rdtsc()
		r.nullifyCall(t, int64(uint64(d)<<32|uint64(a)))
	} else {
		if ret, skip := sc.Skip(linux.Args(a)); skip {
			r.nullifyCall(t, ret)
		}
		if err := r.entrySpecial(t, nr, a); err != nil {
			return err
		}
		if t.nullify && !r.seccompAllows(t, nr, &regs) {
			t.nullify = false
		}
	}
	if t.nullify {
		regs[ptrace.ORIGRAX] = ^uint64(0)
		if err := t.thread().SetRegs(&regs); err != nil {
			return r.lost(t, err)
		}
	}
	t.state = stKernel
	if err := t.thread().Resume(ptrace.Syscall, 0); err != nil {
		return r.lost(t, err)
	}
	switch {
	case nr == unix.SYS_EXIT || nr == unix.SYS_EXIT_GROUP:
		return r.exitNow(t, nr)
	case nr == unix.SYS_EXECVE || nr == unix.SYS_EXECVEAT || nr == unix.SYS_VFORK:
		// Their next stop may come under another tid or only after other
		// tasks ran: wait for any task.
	case sc != nil && !sc.MayBlock:
		r.fast = t
	case isWrite(nr) && r.stdioFlag(t, int(int32(a[0]))) != 0:
		// A write to the recorder's stdout or stderr completes before
		// anything else runs: the trace then orders such writes as they
		// reached the output, and replay prints them in trace order.
		r.fast = t
	default:
		// Give the call a chance to complete without blocking; if it
		// does not, other tasks run while it sleeps. An unknown number
		// takes this path too: a newer kernel may implement it.
		_, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		st, ok, err := pollStop(t)
		if err != nil {
			return err
		}
		if ok {
			return r.handle(st)
		}
	}
	return nil
}

// entrySpecial handles the entries that need more than the table.
func (r *recorder) entrySpecial(t *task, nr int, a [6]uint64) error {
	switch nr {
	case unix.SYS_PRCTL:
		r.prctlTSC(t, a)
	case unix.SYS_PROCESS_VM_WRITEV:
		if int(int32(a[0])) != tracee.Tgid(t.tid) {
			return &UnsupportedError{Tid: t.tid, Name: "process_vm_writev", Reason: "writing another process's memory is not supported"}
		}
	case unix.SYS_PTRACE, unix.SYS_WAIT4, unix.SYS_WAITID:
		return r.ptraceEntry(t, nr, a)
	case unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO:
		r.noteKillVictims(t, nr, a)
	}
	return nil
}

// seccompAllows runs the task's seccomp filters on the call the recorder
// is about to answer itself (turning it into syscall -1, which the
// filters would judge instead). When they allow it, the recorder's
// answer stands. SECCOMP_RET_ERRNO becomes the answer. Any other action
// (trap, kill, trace) is left to the kernel: it returns false and the
// call goes in unchanged, where the filter stops it.
func (r *recorder) seccompAllows(t *task, nr int, regs *trace.Regs) bool {
	raw, err := t.thread().SeccompFilters()
	if err != nil || len(raw) == 0 {
		return true
	}
	if r.bufOn && len(raw) > 0 && bytes.Equal(raw[len(raw)-1], syscallbuf.Filter()) {
		// The syscall buffer's own filter (the oldest) has no say.
		raw = raw[:len(raw)-1]
		if len(raw) == 0 {
			return true
		}
	}
	filters := make([][]linux.BPFInsn, len(raw))
	for i, b := range raw {
		filters[i] = linux.DecodeBPF(b)
	}
	d := linux.SeccompData{Nr: int32(nr), IP: regs[ptrace.RIP], Args: linux.Args(ptrace.SyscallArgs(regs))}
	ret, err := linux.RunSeccomp(filters, &d)
	if err != nil {
		return true
	}
	switch linux.SeccompAction(ret) {
	case linux.SeccompRetAllow, linux.SeccompRetLog:
		return true
	case linux.SeccompRetErrno:
		t.nullRet = -linux.SeccompErrno(ret)
		return true
	}
	return false
}

// prctlTSC answers PR_SET_TSC and PR_GET_TSC from the mode the program
// set (t.tscSigsegv, inherited by its children): the recorder keeps rdtsc
// trapped whatever the program asks, and hides that.
func (r *recorder) prctlTSC(t *task, a [6]uint64) {
	switch a[0] {
	case unix.PR_SET_TSC:
		switch a[1] {
		case unix.PR_TSC_ENABLE, unix.PR_TSC_SIGSEGV:
			t.tscSigsegv = a[1] == unix.PR_TSC_SIGSEGV
			r.nullifyCall(t, 0)
		default:
			r.nullifyCall(t, -int64(unix.EINVAL))
		}
	case unix.PR_GET_TSC:
		mode := uint32(unix.PR_TSC_ENABLE)
		if t.tscSigsegv {
			mode = unix.PR_TSC_SIGSEGV
		}
		// Written now, read back as the call's output at exit.
		b := []byte{byte(mode), byte(mode >> 8), byte(mode >> 16), byte(mode >> 24)}
		if t.mem.WriteMem(a[1], b) != nil {
			r.nullifyCall(t, -int64(unix.EFAULT))
		} else {
			r.nullifyCall(t, 0)
		}
	}
}

// compatSyscall refuses a 32-bit system call made with int $0x80: its
// number and arguments follow the i386 table, which gorr does not record.
func (r *recorder) compatSyscall(t *task) error {
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	return &UnsupportedError{Tid: t.tid, Name: "32-bit system call (int $0x80)",
		Reason: fmt.Sprintf("i386 call number %d at 0x%x; only the x86-64 syscall instruction is recorded", uint32(regs[ptrace.ORIGRAX]), regs[ptrace.RIP]-2)}
}

func (r *recorder) nullifyCall(t *task, ret int64) {
	t.nullify = true
	t.nullRet = ret
}

// errRestartBlock is -ERESTART_RESTARTBLOCK: the call was interrupted by
// a signal and continues as restart_syscall after the handler.
const errRestartBlock = -516

// interruptedCall is a call that the kernel will resume with
// restart_syscall: its description and arguments say what the resumed
// call writes.
type interruptedCall struct {
	sc   *linux.Syscall
	args linux.Args
}

func (r *recorder) onExit(t *task) error {
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	t.at = atExit
	t.state = stReady
	if t.nullify {
		regs[ptrace.RAX] = uint64(t.nullRet)
		regs[ptrace.ORIGRAX] = uint64(t.sysno)
		if err := t.thread().SetRegs(&regs); err != nil {
			return r.lost(t, err)
		}
		t.nullify = false
	}
	if err := r.ptraceExitFix(t, &regs); err != nil {
		return err
	}
	if r.filterOn && !t.ownFilter && t.sysno == unix.SYS_PRCTL && t.entry[ptrace.RDI] == unix.PR_GET_SECCOMP && int64(regs[ptrace.RAX]) == 2 {
		// Only the syscall buffer's own filter is installed: the program
		// sees no filter, as without the buffer (rr does the same).
		regs[ptrace.RAX] = 0
		if err := t.thread().SetRegs(&regs); err != nil {
			return r.lost(t, err)
		}
	}
	ret := int64(regs[ptrace.RAX])
	if linux.Lookup(t.sysno) == nil && ret != -int64(unix.ENOSYS) && !syscallbuf.IsRdtscCall(t.sysno, t.entry[ptrace.RIP]) {
		return &UnsupportedError{Tid: t.tid, Name: linux.Name(t.sysno), Reason: linux.Unknown(t.sysno, ret)}
	}
	if t.execed && (t.sysno == unix.SYS_EXECVE || t.sysno == unix.SYS_EXECVEAT) && ret == 0 {
		t.execed = false
		if t.emu != nil {
			t.emu.exitStop = false // not emulated after an exec (limitations.md)
		}
		if err := r.onExecDone(t, t.exFormer); err != nil {
			return err
		}
		return r.ptraceExec(t)
	}
	ev := &trace.Event{Kind: trace.KindSyscallExit, Tid: int32(t.tid), Sysno: int32(t.sysno), Result: ret, Regs: &regs}
	a := linux.Args(ptrace.SyscallArgs(&t.entry))
	sc := t.sc0
	if t.sysno == unix.SYS_RESTART_SYSCALL && t.interrupted != nil {
		// The kernel resumed the call a signal interrupted (poll,
		// nanosleep, a futex wait...): it writes that call's outputs.
		sc, a = t.interrupted.sc, t.interrupted.args
	}
	switch {
	case ret == errRestartBlock:
		// A signal interrupted a call the kernel resumes with
		// restart_syscall once the handler returns.
		t.interrupted = &interruptedCall{sc: sc, args: a}
	case t.sysno == unix.SYS_RESTART_SYSCALL:
		// Kept until then: the handler makes calls of its own first.
		t.interrupted = nil
	}
	if sc != nil {
		regions, err := sc.OutputRegions(a, ret, t.mem)
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
	if t.sysno == unix.SYS_SCHED_YIELD {
		// As with rr, a yield lets every other ready thread run first
		// (programs ping-pong on it).
		r.sched.Preempted()
	}
	if err := r.markTraced(t, ev, ret); err != nil {
		return err
	}
	if r.bufOn {
		// forceTrace is not cleared at a handler's rt_sigreturn: with
		// nested handlers (a second signal delivered as the first
		// handler starts) the inner one returns into the outer handler,
		// and the interrupted stub call is restarted only when the outer
		// one returns. It is cleared when the thread next makes a call
		// from the stub's buffered instruction under ptrace (the restart,
		// or the next buffered call after an EINTR), see onEntry.
		if err := r.disableBuf(t, ev, t.sysno, [6]uint64(a), ret); err != nil {
			return err
		}
	}
	// rt_sigreturn returns to the interrupted context, often inside a
	// loop the thread may come round to with the same registers.
	t.setLast(regs, t.sysno == unix.SYS_RT_SIGRETURN)
	// Only when no other thread is running user code: otherwise memory is
	// changing under the checksum.
	// The thread's dead stack (below rsp and its red zone) is left out,
	// as at preemption points: what callees left there can differ in
	// replay (deadStack).
	if r.opts.Checksum && r.running == nil {
		if maps, err := tracee.Maps(t.tid); err == nil {
			if d, ok := deadStack(maps, regs[ptrace.RSP], regs[ptrace.FSBASE]); ok {
				ev.Skip = []trace.Span{d}
			}
		}
		if ev.Checksum, err = tracee.ChecksumSkip(t.tid, t.mem, 0, 0, ev.Skip, false); err != nil {
			return fmt.Errorf("%s: checksum: %w", describe(t), err)
		}
	}
	if err := r.emit(ev); err != nil {
		return err
	}
	t.writeOpen = false
	if t.victims != nil {
		if err := r.settleVictims(t, ret); err != nil {
			return err
		}
	}
	return r.ptraceSyscallExit(t)
}

// exitSpecial records what the declarative table cannot express: mapped
// files, clone's parent tid, writes to the recorder's stdio.
func (r *recorder) exitSpecial(t *task, ev *trace.Event, a linux.Args, ret int64) error {
	if uncoveredCall(t.sysno, a) {
		r.gainUncovered(t, ev)
	}
	switch t.sysno {
	case unix.SYS_SET_TID_ADDRESS:
		t.clearTid = a[0]
	case unix.SYS_MMAP:
		if a[3]&unix.MAP_ANONYMOUS == 0 {
			return r.recordFileMap(t, ev, uint64(ret), a, false)
		}
	case unix.SYS_MREMAP:
		return r.recordRemap(t, ev, uint64(ret), a)
	case unix.SYS_SHMAT:
		return r.recordShmat(t, ev, uint64(ret))
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
			fd := int(int32(a[0]))
			flag, _ := r.stdioFlagOpen(t, fd)
			ev.Flags |= flag
			if flag == 0 && fd >= 0 && fd <= 2 {
				// Not the recorder's stdio: the stub may buffer its
				// writes from now on.
				if err := r.stdioBits(t, ev, 1<<fd, false); err != nil {
					return err
				}
			}
			if err := r.procMemWrite(t, a, ret); err != nil {
				return err
			}
			return r.refreshSharedMaps(t, ev, int(int32(a[0])))
		}
	case unix.SYS_DUP2, unix.SYS_DUP3:
		if ret >= 0 && ret <= 2 {
			// Another file on that number: is it the recorder's stdio?
			flag, _ := r.stdioFlagOpen(t, int(ret))
			return r.stdioBits(t, ev, 1<<ret, flag != 0)
		}
	case unix.SYS_CLOSE:
		if fd := int64(int32(a[0])); fd >= 0 && fd <= 2 {
			return r.stdioBits(t, ev, 1<<fd, true)
		}
	case unix.SYS_CLOSE_RANGE:
		const closeRangeCloexec = 4
		if ret == 0 && a[2]&closeRangeCloexec == 0 && a[0] <= 2 && a[1] >= a[0] {
			var mask uint32
			for fd := a[0]; fd <= min(a[1], 2); fd++ {
				mask |= 1 << fd
			}
			return r.stdioBits(t, ev, mask, true)
		}
	case unix.SYS_FTRUNCATE, unix.SYS_FALLOCATE, unix.SYS_SENDFILE:
		return r.refreshSharedMaps(t, ev, int(int32(a[0])))
	case unix.SYS_COPY_FILE_RANGE, unix.SYS_SPLICE:
		return r.refreshSharedMaps(t, ev, int(int32(a[2])))
	}
	return nil
}

// refreshSharedMaps handles a write through a file descriptor to a file
// that this process also maps MAP_SHARED: the kernel updates the mapping
// (same page cache), which replay's copy of the file would not see, so
// the file's new size (a Mapping with only File and End) and the
// mapping's new content are recorded.
func (r *recorder) refreshSharedMaps(t *task, ev *trace.Event, fd int) error {
	if len(r.sharedFiles) == 0 || fd < 0 {
		return nil
	}
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd), &st) != nil || r.sharedFiles[st.Ino] == "" {
		return nil
	}
	ev.Maps = append(ev.Maps, trace.Mapping{End: uint64(st.Size), Flags: unix.MAP_SHARED, File: r.sharedFiles[st.Ino]})
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
	if len(ev.Mem) > 0 {
		return nil
	}
	return r.refreshOtherMaps(t, st.Ino)
}

// refreshOtherMaps handles a write through a file descriptor to a shared
// file this process does not map (any more) but another recorded process
// does: that process's mapping gets the new content, as a KindPtraceWrite
// event on one of its tasks (replay's copy of the file is shared by all
// its mappings, so one process is enough).
func (r *recorder) refreshOtherMaps(t *task, ino uint64) error {
	self := tracee.Tgid(t.tid)
	seen := map[int]bool{self: true}
	for _, o := range r.tasks {
		if o.dying || o.mem == nil {
			continue
		}
		tgid := tracee.Tgid(o.tid)
		if seen[tgid] {
			continue
		}
		seen[tgid] = true
		maps, err := tracee.Maps(o.tid)
		if err != nil {
			continue
		}
		var writes []trace.MemWrite
		for _, m := range maps {
			if m.Shared && m.Inode == ino && m.Size() <= 64<<20 {
				buf := make([]byte, m.Size())
				n := o.mem.ReadPartial(m.Start, buf)
				writes = append(writes, trace.MemWrite{Addr: m.Start, Data: buf[:n]})
			}
		}
		if len(writes) > 0 {
			return r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(o.tid), Mem: writes})
		}
	}
	return nil
}

// stdioFlag says whether fd in the tracee is the recorder's own stdout or
// stderr, whose output replay reproduces.
func (r *recorder) stdioFlag(t *task, fd int) uint64 {
	flag, _ := r.stdioFlagOpen(t, fd)
	return flag
}

// stdioFlagOpen is stdioFlag, and whether fd is open.
func (r *recorder) stdioFlagOpen(t *task, fd int) (uint64, bool) {
	if fd < 0 {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd), &st) != nil {
		return 0, false
	}
	same := func(o unix.Stat_t) bool { return o.Ino != 0 && o.Ino == st.Ino && o.Dev == st.Dev }
	switch {
	case same(r.stdio[1]):
		return FlagStdout, true
	case same(r.stdio[2]):
		return FlagStderr, true
	}
	return 0, true
}

// exitNow lets a thread's exit complete before anything else runs, so the
// kernel's clear_child_tid write (which wakes pthread_join) happens at a
// point replay reproduces. A non-leader thread is reaped at once; a
// leader stays a zombie until its threads exit, so we wait until it is
// one. For exit_group the other threads are killed and reported later.
func (r *recorder) exitNow(t *task, nr int) error {
	st, lost, err := r.waitUntil(t, ptrace.Syscall, func(st ptrace.Stop) (ptrace.Action, error) {
		return ptrace.AcceptIf(isDeath(st) || st.Kind == stopVanished), nil
	})
	switch {
	case lost || err != nil:
		return err
	case st.Kind == ptrace.StopExited:
		return r.onExited(t, st)
	case st.Kind == stopVanished:
		return r.lost(t, unix.ESRCH)
	}
	// At PTRACE_EVENT_EXIT. The wait below lets the kernel finish with
	// words that have waiters before anything else runs.
	var settle bool
	t.robust, settle = robustExit(t)
	if stopped, err := r.ptraceExitStop(t); stopped || err != nil {
		return err
	}
	t.dying = true
	t.state = stKernel
	if err := t.thread().Resume(ptrace.Cont, 0); err != nil {
		return r.lost(t, err)
	}
	if nr == unix.SYS_EXIT_GROUP {
		if settle {
			waitExited(t.tid)
		}
		return nil
	}
	// Past its PTRACE_EVENT_EXIT stop the task stops only at its end.
	st, exited, err := t.thread().PollUntil(func() bool { return tracee.IsZombie(t.tid) }, func(st ptrace.Stop) (ptrace.Action, error) {
		return ptrace.AcceptIf(st.Kind == ptrace.StopExited), nil
	})
	if !exited || err != nil {
		return err
	}
	return r.onExited(t, st)
}
