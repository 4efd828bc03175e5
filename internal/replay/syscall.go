package replay

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

const pageSize = 4096

func pageUp(v uint64) uint64 { return (v + pageSize - 1) &^ (pageSize - 1) }

// outcome finds the event that ends tid's current system call.
func (rp *replayer) outcome(tid int32) (*trace.Event, error) {
	return rp.q.find(tid, func(e *trace.Event) bool {
		return e.Kind == trace.KindSyscallExit || e.Kind == trace.KindExec || e.Kind == trace.KindExit
	})
}

// replayExecutes lists the calls the replayer can run for real: prepare
// rewrites some of them (mmap, mremap, brk, execve, exit, vfork, clone
// with CLONE_VFORK), the others run as recorded. It must equal the table's
// Execute entries (TestExecuteHandlers).
var replayExecutes = map[int]bool{
	unix.SYS_MMAP: true, unix.SYS_MUNMAP: true, unix.SYS_MPROTECT: true, unix.SYS_PKEY_MPROTECT: true,
	unix.SYS_MREMAP: true, unix.SYS_MADVISE: true, unix.SYS_BRK: true, unix.SYS_ARCH_PRCTL: true,
	unix.SYS_CLONE: true, unix.SYS_CLONE3: true, unix.SYS_FORK: true, unix.SYS_VFORK: true,
	unix.SYS_EXECVE: true, unix.SYS_EXECVEAT: true, unix.SYS_EXIT: true, unix.SYS_EXIT_GROUP: true,
	unix.SYS_RT_SIGRETURN: true, unix.SYS_SET_TID_ADDRESS: true, unix.SYS_MODIFY_LDT: true,
	unix.SYS_SETRLIMIT: true, unix.SYS_PRLIMIT64: true,
	unix.SYS_SHMAT: true, unix.SYS_SHMDT: true, // mmap of a copy of the segment, munmap
	unix.SYS_MLOCK: true, unix.SYS_MLOCK2: true, unix.SYS_MUNLOCK: true, // locked pages change what madvise may drop
	unix.SYS_MLOCKALL: true, unix.SYS_MUNLOCKALL: true,
}

// executes says whether the call described by entry and its outcome runs
// for real in replay. The table decides (linux.Execute, its ExecuteIf
// condition, and not a call the recorder answered itself); a call that
// failed in the recording is emulated.
func executes(nr int, a [6]uint64, out *trace.Event) bool {
	if out == nil {
		return nr == unix.SYS_EXIT || nr == unix.SYS_EXIT_GROUP
	}
	if out.Kind == trace.KindExec || out.Kind == trace.KindExit {
		return true
	}
	return executesReturning(nr, a, out.Result)
}

// executesReturning is executes for a call whose outcome is a syscall
// exit with result ret.
func executesReturning(nr int, a [6]uint64, ret int64) bool {
	if nr == unix.SYS_RT_SIGRETURN {
		return true // rt_sigreturn's "result" is the restored rax
	}
	if ret < 0 && ret > -4096 {
		return failedCallActs(nr, a)
	}
	switch nr {
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_EXIT, unix.SYS_EXIT_GROUP:
		// They run only when the recording exec'd or exited (above); a
		// seccomp trap leaves a syscall exit with rax = the number.
		return false
	}
	sc := linux.Lookup(nr)
	if sc == nil || sc.Replay != linux.Execute || !replayExecutes[nr] {
		return false
	}
	if _, skip := sc.Skip(linux.Args(a)); skip {
		return false // the recorder answered it without the kernel
	}
	return sc.ExecuteIf == nil || sc.ExecuteIf(linux.Args(a))
}

// needsOutcome tells whether replay must read ahead for the outcome of
// call nr to decide how to run it: calls that run for real when they
// succeed (their result places mappings, tasks...), execve and the exit
// calls. Every other call is emulated whatever it returned, and its
// outcome may be millions of events away: a thread blocked in futex or
// read until its process's exit_group kills it (the go command's idle
// threads during a build) has no SYSCALL_EXIT, only an EXIT at the very
// end. Such a thread is simply held at its syscall-entry stop; whatever
// killed it in the recording (exit_group, a sibling's execve, a fatal
// signal, all replayed) kills it there too, and its EXIT event reaps it.
func needsOutcome(nr int, a [6]uint64) bool {
	switch nr {
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_EXIT, unix.SYS_EXIT_GROUP:
		return true
	}
	return executes(nr, a, &trace.Event{Kind: trace.KindSyscallExit})
}

func (rp *replayer) syscallEntry(ev *trace.Event) error {
	t, err := rp.task(ev)
	if err != nil {
		return err
	}
	if t.bufRun.owns(rp.n) {
		return nil // the stub replays it (bufreplay.go)
	}
	if ev.Regs == nil {
		return rp.diverge(ev, "syscall entry without registers")
	}
	if ev.Flags&syscallbuf.EventFlag != 0 {
		if ok, err := rp.startBufRun(ev, t); ok || err != nil {
			return err
		}
	}
	nr := int(ev.Sysno)
	a := ptrace.SyscallArgs(ev.Regs)
	var out *trace.Event
	exe := false
	if needsOutcome(nr, a) {
		if out, err = rp.outcome(ev.Tid); err != nil {
			return err
		}
		exe = executes(nr, a, out)
	}
	mode := ptrace.Sysemu
	if exe {
		mode = ptrace.Syscall
	}
	if ev.Flags&syscallbuf.YieldFlag != 0 {
		// The recorder ended the thread's timeslice here: its stub traced
		// this call because HdrYield was set, after the buffered calls
		// before it (a placed stretch comes first: the stub looks at the
		// flag only when none is left). The stub clears it.
		if err := t.mem.WriteMem(syscallbuf.Hdr+syscallbuf.HdrYield, []byte{1, 0, 0, 0}); err != nil {
			return rp.diverge(ev, fmt.Sprintf("cannot ask the syscall buffer's stub to trace this call: %v", err))
		}
	}
	if _, err := rp.runTo(ev, t, mode, ptrace.StopSyscallEntry, 0); err != nil {
		return err
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	if ev.Regs[ptrace.RIP] == syscallbuf.DeschedRet && regs[ptrace.RIP] == syscallbuf.SyscallRet {
		if exe {
			// (The buffered calls replay executes never block.)
			return rp.diverge(ev, "a buffered call that blocked, which replay would have to run for real")
		}
		if err := rp.desched(ev, t, &regs); err != nil {
			return err
		}
	}
	if d := compareRegs(ev.Regs, &regs); len(d) > 0 {
		return rp.diverge(ev, "entering "+linux.Name(nr), d...)
	}
	if regs[ptrace.R11] != ev.Regs[ptrace.R11] {
		// Single-stepped onto the syscall: r11 caught TF.
		regs[ptrace.R11] = ev.Regs[ptrace.R11]
		if err := t.thread().SetRegs(&regs); err != nil {
			return err
		}
	}
	t.atEntry, t.executing, t.entry = true, exe, regs
	t.lastEntry = rp.n
	t.inCall = true
	t.rewritten, t.fileMap, t.mappedFile = false, nil, false
	if exe && nr == unix.SYS_SET_TID_ADDRESS {
		t.clearTid = a[0]
	}
	if exe {
		return rp.prepare(ev, t, out)
	}
	return nil
}

// fixedAnonFlags are the flags replay maps with for an mmap whose
// recorded flags are flags: anonymous, at the recorded address
// (MAP_FIXED), with what of flags shapes the mapping.
func fixedAnonFlags(flags uint64) uint64 {
	f := flags&(unix.MAP_SHARED|unix.MAP_PRIVATE|unix.MAP_SHARED_VALIDATE|unix.MAP_GROWSDOWN|unix.MAP_NORESERVE|unix.MAP_STACK|unix.MAP_HUGETLB|unix.MAP_LOCKED|unix.MAP_POPULATE) | unix.MAP_FIXED | unix.MAP_ANONYMOUS
	if f&unix.MAP_SHARED_VALIDATE == unix.MAP_SHARED_VALIDATE {
		f = f&^unix.MAP_SHARED_VALIDATE | unix.MAP_SHARED
	}
	return f
}

// prepare rewrites a call that runs for real so that it reproduces the
// recording: mappings land at their recorded addresses and are
// anonymous (their content comes from the trace), brk becomes mmap or
// munmap, execve runs the stub.
func (rp *replayer) prepare(ev *trace.Event, t *rtask, out *trace.Event) error {
	r := t.entry
	a := ptrace.SyscallArgs(&r)
	switch int(ev.Sysno) {
	case unix.SYS_MMAP:
		res := uint64(out.Result)
		flags := fixedAnonFlags(a[3])
		prot := a[2]
		if fileBacked(out) {
			m := out.Maps[0]
			path, oflag, err := rp.mapTarget(&m)
			if err != nil {
				return err
			}
			fd, off, ok, err := rp.mapSource(t, &m, path, oflag)
			if err != nil {
				return err
			}
			if !ok {
				off = m.Offset
				if fd, ok, err = rp.openAtEntry(t, path, oflag); err != nil {
					return err
				}
			}
			if ok {
				// The call maps the file itself, where it was recorded.
				ptrace.SetSyscallArgs(&r, [6]uint64{m.Start, m.End - m.Start, uint64(m.Prot), mapFlags(&m), uint64(fd), off})
				t.rewritten, t.mappedFile = true, true
				break
			}
			// A readable placeholder, replaced by the file at the exit.
			t.fileMap = &m
			prot, flags = unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED|unix.MAP_NORESERVE
		} else if len(out.Maps) > 0 || len(out.Mem) > 0 {
			if len(out.Maps) > 0 {
				m := out.Maps[0]
				t.fileMap = &m
			}
			prot |= unix.PROT_READ | unix.PROT_WRITE
		}
		ptrace.SetSyscallArgs(&r, [6]uint64{res, a[1], prot, flags, ^uint64(0), 0})
		t.rewritten = true
	case unix.SYS_MREMAP:
		res := uint64(out.Result)
		if res != a[0] {
			ptrace.SetSyscallArgs(&r, [6]uint64{a[0], a[1], a[2], unix.MREMAP_MAYMOVE | unix.MREMAP_FIXED | a[3]&unix.MREMAP_DONTUNMAP, res, 0})
		} else {
			ptrace.SetSyscallArgs(&r, [6]uint64{a[0], a[1], a[2], 0, 0, 0})
		}
		t.rewritten = true
	case unix.SYS_SHMAT:
		if len(out.Maps) == 0 {
			return rp.diverge(ev, "shmat without its segment in the trace")
		}
		m := out.Maps[0]
		t.fileMap = &m
		r[ptrace.ORIGRAX] = unix.SYS_MMAP
		ptrace.SetSyscallArgs(&r, [6]uint64{m.Start, m.End - m.Start, unix.PROT_READ, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_FIXED | unix.MAP_NORESERVE, ^uint64(0), 0})
		t.rewritten = true
	case unix.SYS_SHMDT:
		size, err := rp.shmSize(t, a[0])
		if err != nil {
			return rp.diverge(ev, err.Error())
		}
		r[ptrace.ORIGRAX] = unix.SYS_MUNMAP
		ptrace.SetSyscallArgs(&r, [6]uint64{a[0], size, 0, 0, 0, 0})
		t.rewritten = true
	case unix.SYS_BRK:
		res := uint64(out.Result)
		old, _ := t.proc.moveBrk(res)
		switch {
		case pageUp(res) > pageUp(old):
			r[ptrace.ORIGRAX] = unix.SYS_MMAP
			ptrace.SetSyscallArgs(&r, [6]uint64{pageUp(old), pageUp(res) - pageUp(old), unix.PROT_READ | unix.PROT_WRITE, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_FIXED, ^uint64(0), 0})
		case pageUp(res) < pageUp(old):
			r[ptrace.ORIGRAX] = unix.SYS_MUNMAP
			ptrace.SetSyscallArgs(&r, [6]uint64{pageUp(res), pageUp(old) - pageUp(res), 0, 0, 0, 0})
		default:
			r[ptrace.ORIGRAX] = ^uint64(0) // nothing to do: skip the call
		}
		t.rewritten = true
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT:
		if out.Kind != trace.KindExec {
			break
		}
		if err := rp.beforeExec(t); err != nil { // the session's stop (driver.go)
			return err
		}
		// Exec the stub instead; the recorded image is rebuilt from the trace.
		sp := r[ptrace.RSP] - 8192
		path := append([]byte(rp.stub), 0)
		argv := make([]byte, 16)
		binary.LittleEndian.PutUint64(argv, sp)
		// Keep what we overwrite: a vfork parent still uses this memory
		// after the exec and must find it as in the recording.
		saved := make([]byte, (len(path)+7)&^7+len(argv))
		if err := t.mem.ReadMem(sp, saved); err != nil {
			return err
		}
		t.execSaved = &trace.MemWrite{Addr: sp, Data: saved}
		if err := t.mem.WriteMem(sp, path); err != nil {
			return err
		}
		if err := t.mem.WriteMem(sp+uint64(len(path)+7)&^7, argv); err != nil {
			return err
		}
		av := sp + uint64(len(path)+7)&^7
		r[ptrace.ORIGRAX] = unix.SYS_EXECVE
		ptrace.SetSyscallArgs(&r, [6]uint64{sp, av, av + 8, 0, 0, 0})
		if err := t.thread().SetRegs(&r); err != nil {
			return err
		}
		// Exec now: in the recording the old address space was released
		// during this call, before anything that follows (a vfork parent
		// may unmap the stack holding the stub's path right after).
		return rp.execStub(ev, t)
	case unix.SYS_EXIT, unix.SYS_EXIT_GROUP:
		if ev.Sysno == unix.SYS_EXIT_GROUP || len(rp.debugTasksOf(t)) == 1 {
			if err := rp.beforeExit(t); err != nil {
				return err
			}
		}
		// Exit right away, as the recorder did, so that the kernel's
		// clear_child_tid write lands at the same point of the timeline.
		t.exitCall = true
		return rp.exitNow(ev, t)
	case unix.SYS_VFORK:
		// Without CLONE_VFORK the parent does not block in the kernel; it
		// stays held until the trace says it runs, after the child's exec.
		r[ptrace.ORIGRAX] = unix.SYS_CLONE
		ptrace.SetSyscallArgs(&r, [6]uint64{unix.CLONE_VM | uint64(unix.SIGCHLD), 0, 0, 0, 0, 0})
		t.rewritten = true
	case unix.SYS_CLONE:
		if a[0]&unix.CLONE_VFORK == 0 {
			return nil
		}
		a[0] &^= unix.CLONE_VFORK
		ptrace.SetSyscallArgs(&r, a)
		t.rewritten = true
	case unix.SYS_CLONE3:
		flags, err := t.mem.ReadU64(a[0])
		if err != nil || flags&unix.CLONE_VFORK == 0 {
			return nil
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], flags&^unix.CLONE_VFORK)
		if err := t.mem.WriteMem(a[0], b[:]); err != nil {
			return err
		}
		t.restoreMem = &trace.MemWrite{Addr: a[0], Data: binary.LittleEndian.AppendUint64(nil, flags)}
		return nil
	default:
		return nil
	}
	return t.thread().SetRegs(&r)
}

func (rp *replayer) syscallExit(ev *trace.Event) error {
	if t := rp.tasks[ev.Tid]; t != nil && t.bufRun.owns(rp.n) {
		return nil // the stub replays it (bufreplay.go)
	}
	if out, ok := rp.takenAtDeath[ev]; ok {
		// The end of a call of a task an execve killed, taken at its
		// death (diesInExec).
		delete(rp.takenAtDeath, ev)
		if w := rp.echoWriter(ev); w != nil {
			_, _ = w.Write(out)
		}
		return nil
	}
	t, err := rp.task(ev)
	if err != nil {
		return err
	}
	if !t.atEntry && !t.executing {
		return rp.diverge(ev, "syscall exit for a task that is not in a syscall")
	}
	if t.killed {
		// Recorded at the thread's death (a write it was in when its
		// process was killed): replayed at the same stop.
		if t.executing {
			return rp.diverge(ev, "a system call that runs for real ended as its process was killed")
		}
		if err := rp.awaitExitStop(ev, t); err != nil {
			return err
		}
	}
	if t.executing {
		if err := rp.finishExecuted(ev, t); err != nil {
			return err
		}
		if ev.Flags&syscallbuf.EventFlag != 0 {
			t.bufRec = syscallbuf.RecordLen(0) // a buffered memory call writes nothing
		}
	} else {
		if err := rp.resizeShared(ev); err != nil {
			return err
		}
		for _, m := range ev.Mem {
			if err := t.mem.WriteFast(m.Addr, m.Data); err != nil {
				return fmt.Errorf("event %d: %w", rp.n, err)
			}
		}
		r, err := t.thread().GetRegs()
		if err != nil {
			return err
		}
		r[ptrace.RAX] = uint64(ev.Result)
		if err := t.thread().SetRegs(&r); err != nil {
			return err
		}
		if ev.Flags&syscallbuf.EventFlag != 0 {
			t.bufRec = syscallbuf.RecordLen(outBytes(ev)) // committed when the task runs on (bufreplay.go)
		}
	}
	switch ev.Result {
	case -512, -513, -514, -516:
		// The kernel restarts the call when no handler runs; rt_sigreturn
		// never restarts (it clears orig_rax).
		t.restart = ev.Sysno != unix.SYS_RT_SIGRETURN
	}
	t.executing = false
	t.inCall = false
	t.atEntry = true // still held; resumed by its next event
	if ev.Checksum != 0 {
		sum, err := tracee.ChecksumSkip(t.real, t.mem, 0, 0, ev.Skip, false)
		if err != nil {
			return err
		}
		if sum != ev.Checksum {
			return rp.diverge(ev, fmt.Sprintf("memory checksum after %s differs (recorded 0x%x, replay 0x%x)", linux.Name(int(ev.Sysno)), ev.Checksum, sum))
		}
	}
	return rp.echo(ev, t)
}

// finishExecuted completes a call that runs for real.
func (rp *replayer) finishExecuted(ev *trace.Event, t *rtask) error {
	if _, err := rp.runTo(ev, t, ptrace.Syscall, ptrace.StopSyscallExit, 0); err != nil {
		return err
	}
	r, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	real := int64(r[ptrace.RAX])
	nr := int(ev.Sysno)
	switch nr {
	case unix.SYS_MMAP, unix.SYS_MREMAP:
		if uint64(real) != uint64(ev.Result) {
			return rp.diverge(ev, fmt.Sprintf("%s returned 0x%x in replay, 0x%x recorded", linux.Name(nr), uint64(real), uint64(ev.Result)))
		}
	case unix.SYS_BRK:
	case unix.SYS_RT_SIGRETURN:
	default:
		if real < 0 && real > -4096 && (ev.Result >= 0 || ev.Result < -4095) {
			return rp.diverge(ev, fmt.Sprintf("%s failed in replay (%s) but succeeded in the recording", linux.Name(nr), linux.ErrnoName(int(-real))))
		}
	}
	if t.restoreMem != nil {
		if err := t.mem.WriteMem(t.restoreMem.Addr, t.restoreMem.Data); err != nil {
			return err
		}
		t.restoreMem = nil
	}
	if t.rewritten {
		// Put back the registers the rewrite changed.
		copy(r[:], t.entry[:])
		r[ptrace.ORIGRAX] = uint64(nr)
	}
	r[ptrace.RAX] = uint64(ev.Result)
	if nr == unix.SYS_RT_SIGRETURN && ev.Regs != nil {
		if d := compareRegs(ev.Regs, &r); len(d) > 0 {
			return rp.diverge(ev, "after rt_sigreturn", d...)
		}
	}
	if err := t.thread().SetRegs(&r); err != nil {
		return err
	}
	if m := t.fileMap; m != nil && m.File != "" {
		if err := rp.mapFile(t, m, r[ptrace.RIP]-2); err != nil {
			return err
		}
	}
	// A private file mapping's recorded patches (int3s, jumps and
	// trampolines, a few hundred over libc) are made in few writes, as
	// the recorder made them; anything else one write each.
	if !t.mappedFile || t.entry[ptrace.R10]&unix.MAP_SHARED != 0 || t.mem.WriteCode(ev.Mem) != nil {
		for _, m := range ev.Mem {
			if err := t.mem.WriteMem(m.Addr, m.Data); err != nil {
				return fmt.Errorf("event %d: %w", rp.n, err)
			}
		}
	}
	if nr == unix.SYS_MMAP && !t.mappedFile && (t.fileMap != nil || len(ev.Mem) > 0) {
		sc := r[ptrace.RIP] - 2
		if _, err := tracee.MustInject(t.real, sc, unix.SYS_MPROTECT, uint64(ev.Result), t.entry[ptrace.RSI], t.entry[ptrace.RDX]); err != nil {
			return err
		}
	}
	t.fileMap, t.mappedFile = nil, false
	return nil
}

// diesInExec takes what the recording saw at the PTRACE_EVENT_EXIT stop
// of o, a task killed by a sibling's execve, and replay cannot take where
// the trace has it: the end of a call o was in (a write partly done)
// comes before the EXEC event, but replay runs the execve at its entry,
// and o's memory is gone by then. What that write wrote to gorr's
// stdout or stderr is read here, at o's exit stop, and replayed at the
// event (syscallExit).
func (rp *replayer) diesInExec(o *rtask) {
	if !o.atEntry || o.executing {
		return
	}
	ev, err := rp.q.find(o.rec, func(*trace.Event) bool { return true })
	if err != nil || ev == nil || ev.Kind != trace.KindSyscallExit {
		return
	}
	var out bytes.Buffer
	if ev.Flags&3 != 0 && ev.Result > 0 {
		_ = echoTo(&out, ev, o)
	}
	if rp.takenAtDeath == nil {
		rp.takenAtDeath = map[*trace.Event][]byte{}
	}
	rp.takenAtDeath[ev] = out.Bytes()
}

// echoWriter is where the output of write event ev goes (nil: nowhere).
func (rp *replayer) echoWriter(ev *trace.Event) io.Writer {
	var w io.Writer
	switch {
	case ev.Flags&1 != 0:
		w = rp.opts.Stdout
	case ev.Flags&2 != 0:
		w = rp.opts.Stderr
	}
	if w == nil || ev.Result <= 0 || rp.n <= rp.echoFrom {
		return nil
	}
	return w
}

// echo reproduces a recorded write to the recorder's stdout or stderr.
func (rp *replayer) echo(ev *trace.Event, t *rtask) error {
	w := rp.echoWriter(ev)
	if w == nil {
		return nil
	}
	return echoTo(w, ev, t)
}

// echoTo copies the bytes write event ev of t wrote to w.
func echoTo(w io.Writer, ev *trace.Event, t *rtask) error {
	a := ptrace.SyscallArgs(&t.entry)
	left := uint64(ev.Result)
	switch ev.Sysno {
	case unix.SYS_WRITE, unix.SYS_PWRITE64:
		buf := make([]byte, left)
		if err := t.mem.ReadMem(a[1], buf); err != nil {
			return err
		}
		_, _ = w.Write(buf)
	case unix.SYS_WRITEV, unix.SYS_PWRITEV:
		for i := uint64(0); i < a[2] && left > 0; i++ {
			iov := make([]byte, 16)
			if err := t.mem.ReadMem(a[1]+16*i, iov); err != nil {
				return err
			}
			base, n := binary.LittleEndian.Uint64(iov), binary.LittleEndian.Uint64(iov[8:])
			if n > left {
				n = left
			}
			buf := make([]byte, n)
			if err := t.mem.ReadMem(base, buf); err != nil {
				return err
			}
			_, _ = w.Write(buf)
			left -= n
		}
	}
	return nil
}

// debugTasksOf lists the live tasks sharing t's address space.
func (rp *replayer) debugTasksOf(t *rtask) []*rtask {
	var out []*rtask
	for _, o := range rp.tasks {
		if !o.gone && o.proc == t.proc {
			out = append(out, o)
		}
	}
	return out
}
