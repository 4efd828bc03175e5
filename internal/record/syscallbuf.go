package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// bufState is the recorder's view of one address space's system-call
// buffer (internal/syscallbuf): how far it has been drained. Threads and
// CLONE_VM children share it; fork copies it; exec replaces it.
type bufState struct {
	mapped  bool
	readPos uint32 // bytes of records already turned into events
	gen     uint32 // the header's generation those bytes belong to
	next    uint64 // next free trampoline
	// populated is the address below which the records' pages are
	// present: written by the stub, or populated ahead by the recorder
	// (populateBuf).
	populated uint64
	// vclock is the vDSO's own clock_gettime [start, end) when the stub
	// calls it (VclockSlot set): code that runs inside a buffered call,
	// which replay does not run.
	vclock     [2]uint64
	vclockCode uint64 // what VclockSlot holds, once onExecDone wrote it
	// pointCost is how long the latest preemption point taken in the
	// address space took (the watchdog waits about as long for a
	// yield before it asks for another).
	pointCost time.Duration
}

// inVclock tells whether rip is in the vDSO's clock_gettime that the
// stub calls for a buffered clock_gettime (past the redirected entry:
// only the stub gets there).
func (b *bufState) inVclock(rip uint64) bool {
	return b != nil && rip > b.vclock[0] && rip < b.vclock[1]
}

// setupBuf maps the stub and its buffer into t's fresh address space,
// installs the seccomp filter (once: descendants inherit it) and
// redirects the system-call sites of the mapped executables. Called at
// exec before the snapshot, so everything it writes is part of it. A
// process where Base is taken simply runs without the buffer. Given the
// process's mappings as read before, it returns them with the buffer's
// (nil without the buffer).
func (r *recorder) setupBuf(t *task, maps []tracee.Map) ([]tracee.Map, error) {
	t.buf = &bufState{}
	if ok, err := r.mapBuf(t); !ok || err != nil {
		return nil, err
	}
	if err := t.mem.WriteMem(syscallbuf.Base, syscallbuf.Code()); err != nil {
		return nil, err
	}
	if err := t.mem.WriteMem(syscallbuf.FprogAt, syscallbuf.Fprog()); err != nil {
		return nil, err
	}
	// Writes to fds 0-2 are traced while they may be the recorder's
	// stdout or stderr (or are closed: the number may become one).
	var stdio [4]byte
	for fd := 0; fd <= 2; fd++ {
		if flag, open := r.stdioFlagOpen(t, fd); flag != 0 || !open {
			stdio[0] |= 1 << fd
		}
	}
	if err := t.mem.WriteMem(syscallbuf.Hdr+syscallbuf.HdrStdio, stdio[:]); err != nil {
		return nil, err
	}
	if !r.filterOn {
		ret, _, err := tracee.Inject(t.tid, t.sc, unix.SYS_SECCOMP, 1 /* SECCOMP_SET_MODE_FILTER */, 0, syscallbuf.FprogAt)
		if err == nil && ret == -int64(unix.EACCES) {
			// Without CAP_SYS_ADMIN a filter needs no_new_privs (as rr).
			if _, err = tracee.MustInject(t.tid, t.sc, unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1); err == nil {
				ret, _, err = tracee.Inject(t.tid, t.sc, unix.SYS_SECCOMP, 1, 0, syscallbuf.FprogAt)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("install the syscall-buffer filter: %w", err)
		}
		if ret != 0 {
			r.logf("no syscall buffer: seccomp: %d", ret)
			return nil, nil
		}
		r.filterOn = true
	}
	t.buf.mapped = true
	maps, ok := withBufMaps(maps)
	if !ok {
		var err error
		if maps, err = tracee.Maps(t.tid); err != nil {
			return nil, err
		}
	}
	for _, m := range maps {
		if m.Name == "[vdso]" {
			// The time functions, rewritten into `mov; syscall; ret` by
			// r.vdso (onExecDone), go through the stub too.
			code := r.vdso.Patched()
			var sites []syscallbuf.Site
			rewritten := uint64(len(code)) == m.Size()
			if rewritten {
				if r.vdsoBufSites == nil {
					r.vdsoBufSites = syscallbuf.ScanMem(code) // the same in every process
					for i, s := range r.vdsoBufSites {
						if s.Ret && s.Nr == unix.SYS_CLOCK_GETTIME && s.Off == r.vdso.Clock().Off {
							r.vdsoBufSites[i].Vclock = true
						}
					}
				}
				sites = r.vdsoBufSites
			} else {
				code = make([]byte, m.Size())
				if err := t.mem.ReadMem(m.Start, code); err != nil {
					continue
				}
				sites = syscallbuf.ScanMem(code)
			}
			writes := syscallbuf.Patch(sites, m.Start, 0, m.End-m.Start, &t.buf.next)
			if clock := r.vdso.Clock(); rewritten && r.vdsoClockUsable(t, clock) {
				// The stub reads the clock in the vDSO itself (VclockCode
				// runs the displaced start of clock_gettime, then the
				// rest); the redirected entry goes to VclockEntry.
				at := t.buf.next
				t.buf.next += syscallbuf.TrampLen
				start := m.Start + clock.Off
				writes = append(writes, trace.MemWrite{Addr: at, Data: syscallbuf.VclockCode(at, start+uint64(len(clock.Displaced)), clock.Displaced)})
				t.buf.vclock = [2]uint64{start, start + clock.Size}
				t.buf.vclockCode = at + 16 // VclockSlot, written after the snapshot (onExecDone)
			}
			if err := t.mem.WriteCode(writes); err != nil {
				return nil, fmt.Errorf("redirect the vDSO's functions: %w", err)
			}
			continue
		}
		if m.Prot&unix.PROT_EXEC == 0 || m.Inode == 0 || len(m.Name) == 0 || m.Name[0] != '/' {
			continue
		}
		rel, _, err := r.capture(t, m)
		if err != nil {
			return nil, err
		}
		if _, err := r.patchBufSites(t, rel, m.Start, m.Offset, m.End-m.Start); err != nil {
			return nil, err
		}
	}
	return maps, nil
}

// vdsoClockUsable tells whether t's stub may read the clock in its
// vDSO (the one r.vdso rewrote) rather than make clock_gettime: the
// function's start can be displaced, the kernel does not trap rdtsc in t
// (the vDSO reads the counter), and the kernel's clock source is one the
// vDSO reads without a system call (a call the stub does not make
// itself would stop, inside a call replay does not run).
func (r *recorder) vdsoClockUsable(t *task, clock tracee.VDSOClock) bool {
	if clock.Displaced == nil || t.kern.tsc {
		return false
	}
	if r.vdsoClockSource == 0 {
		r.vdsoClockSource = 2
		src, err := osfile.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
		switch strings.TrimSpace(string(src)) {
		case "tsc", "kvm-clock", "hyperv_clocksource_tsc_page":
			if err == nil {
				r.vdsoClockSource = 1
			}
		}
	}
	return r.vdsoClockSource == 1
}

// withBufMaps returns maps, the mappings of an address space read before
// mapBuf, with the two mappings mapBuf made; false when a mapping
// borders them (the kernel may have merged them with it: the maps must
// be read again).
func withBufMaps(maps []tracee.Map) ([]tracee.Map, bool) {
	i := 0
	for i < len(maps) && maps[i].End <= syscallbuf.Base {
		i++
	}
	if i > 0 && maps[i-1].End == syscallbuf.Base || i < len(maps) && maps[i].Start <= syscallbuf.Base+syscallbuf.Size {
		return nil, false
	}
	anon := func(start, end uint64, prot uint32) tracee.Map {
		return tracee.Map{Start: start, End: end, Prot: prot, Dev: "00:00"}
	}
	return slices.Insert(slices.Clone(maps), i,
		anon(syscallbuf.Base, syscallbuf.TrampEnd, unix.PROT_READ|unix.PROT_EXEC),
		anon(syscallbuf.TrampEnd, syscallbuf.Base+syscallbuf.Size, unix.PROT_READ|unix.PROT_WRITE)), true
}

// mapBuf maps the stub's code and trampolines (read-only, executable:
// setupBuf writes them as a debugger writes code) and the buffer, with
// one stop: both mmaps run as one injected batch (tracee.InjectBatchInRegs)
// whose code sits for the while at the start of the vDSO page holding
// t.sc, the bytes there put back after. ok is false when Base is taken.
func (r *recorder) mapBuf(t *task) (ok bool, err error) {
	const noreplace = unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_FIXED_NOREPLACE
	calls := []tracee.Call{
		{Nr: unix.SYS_MMAP, Args: [6]uint64{syscallbuf.Base, syscallbuf.TrampEnd - syscallbuf.Base, unix.PROT_READ | unix.PROT_EXEC, noreplace, ^uint64(0), 0}},
		{Nr: unix.SYS_MMAP, Args: [6]uint64{syscallbuf.TrampEnd, syscallbuf.Base + syscallbuf.Size - syscallbuf.TrampEnd, unix.PROT_READ | unix.PROT_WRITE, noreplace, ^uint64(0), 0}},
	}
	code := t.sc &^ (pageSize - 1)
	saved := make([]byte, tracee.BatchCode(len(calls)))
	if err := t.mem.ReadMem(code, saved); err != nil {
		return false, fmt.Errorf("map the syscall buffer: %w", err)
	}
	res, err := tracee.InjectBatchInRegs(t.tid, t.mem, code, calls)
	if werr := t.mem.WriteMem(code, saved); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return false, fmt.Errorf("map the syscall buffer: %w", err)
	}
	if uint64(res[0]) == syscallbuf.Base && uint64(res[1]) == syscallbuf.TrampEnd {
		return true, nil
	}
	// Taken (in part): undo what was mapped, and run without the buffer.
	for i, c := range calls {
		if uint64(res[i]) == c.Args[0] {
			if _, err := tracee.MustInject(t.tid, t.sc, unix.SYS_MUNMAP, c.Args[0], c.Args[1]); err != nil {
				return false, fmt.Errorf("map the syscall buffer: %w", err)
			}
		}
	}
	r.logf("tid %d: no syscall buffer (0x%x is taken: %d, %d)", t.tid, syscallbuf.Base, res[0], res[1])
	return false, nil
}

// patchBufSites redirects the syscall sites of the captured file rel
// mapped at start from offset off (length n), and returns the writes
// (also made in the tracee). A file's sites are found once per recording,
// and kept between recordings in the site cache under the capture's
// digest (decoding libc's system calls takes tens of milliseconds).
func (r *recorder) patchBufSites(t *task, rel string, start, off, n uint64) ([]trace.MemWrite, error) {
	if t.buf == nil || !t.buf.mapped {
		return nil, nil
	}
	sites, ok := r.bufSites[rel]
	if !ok {
		t0 := time.Now()
		var digest string
		if d, ok := r.w.FileDigest(rel); ok {
			digest = d.SHA256
		}
		sites, _ = patch.CachedScan(r.w.Dir()+"/"+rel, "syscallbuf", digest, r.opts.SiteCache, syscallbuf.Scan) // not an ELF file: nothing to patch
		r.bufSites[rel] = sites
		r.since(phScan, t0)
	}
	writes := syscallbuf.Patch(sites, start, off, n, &t.buf.next)
	if err := t.mem.WriteCode(writes); err != nil {
		return nil, fmt.Errorf("redirect the syscall sites of %s: %w", rel, err)
	}
	return writes, nil
}

// drainBuf turns the records t's buffered calls appended since the last
// drain into SYSCALL_ENTRY/SYSCALL_EXIT events. Called at each stop of
// the thread that ran user code, before that stop's own event: the calls
// happened in its run, before the stop.
func (r *recorder) drainBuf(t *task) error {
	b := t.buf
	if b == nil || !b.mapped {
		return nil
	}
	// The bytes are scratch space for this drain only (the trace writer
	// copies what it is given), allocated once for a full buffer.
	if r.drainBytes == nil {
		r.drainBytes = make([]byte, syscallbuf.BufSize)
	}
	// The header and the records from the last drain's end to the end of
	// their page, with one read: most drains need no more (the records
	// the header then counts past the page are read after).
	var hdr [16]byte
	at := syscallbuf.Hdr + syscallbuf.HdrLen + uint64(b.readPos)
	ahead := r.drainBytes[:pageSize-at%pageSize] // (drainBytes holds a full buffer)
	r.drainAhead.Cover(r.drainBytes, len(ahead))
	if b.readPos >= syscallbuf.Cap || t.mem.ReadRegions(tracee.Region{Addr: syscallbuf.Hdr, Data: hdr[:]}, tracee.Region{Addr: at, Data: ahead}) != nil {
		ahead = nil
		if err := t.mem.ReadMem(syscallbuf.Hdr, hdr[:]); err != nil {
			return nil // gone
		}
	}
	fill := binary.LittleEndian.Uint32(hdr[syscallbuf.HdrFill:])
	gen := binary.LittleEndian.Uint32(hdr[syscallbuf.HdrGen:])
	if binary.LittleEndian.Uint32(hdr[syscallbuf.HdrLocked:]) == 0 {
		r.populateBuf(t, fill)
	}
	if gen != b.gen {
		b.gen, b.readPos, ahead = gen, 0, nil
	}
	if fill <= b.readPos {
		return nil
	}
	n := int(fill - b.readPos)
	if n > len(r.drainBytes) {
		r.drainBytes = make([]byte, n)
		ahead = nil
	}
	buf := r.drainBytes[:n]
	r.drainAhead.Cover(r.drainBytes, n)
	if got := min(len(ahead), n); got < n {
		if err := t.mem.ReadMem(syscallbuf.Hdr+syscallbuf.HdrLen+uint64(b.readPos)+uint64(got), buf[got:]); err != nil {
			return fmt.Errorf("tid %d: read the syscall buffer: %w", t.tid, err)
		}
	}
	b.readPos = fill
	cur, err := t.thread().GetRegs()
	if err != nil {
		// Killed (SIGKILL from outside) as it stopped: its calls are
		// still recorded. The records have every register a call sets;
		// the segment and base registers come from its last drain.
		if err := r.lost(t, err); err != nil {
			return err
		}
		cur = t.segRegs
		if cur == (trace.Regs{}) {
			cur = t.entry
		}
	} else {
		t.segRegs = cur
	}
	// The records go into the trace as they are (trace.WriteRun); the
	// reader makes each call's two events of them. The events all get
	// the time of the drain (the calls were made since the thread's last
	// stop).
	defer r.since(phEmit, time.Now())
	run := trace.Run{Tid: int32(t.tid), Cur: &cur, Rip: syscallbuf.SyscallRet, Flags: syscallbuf.EventFlag,
		Time: uint64(time.Since(r.start)), Records: buf, ExitFlags: r.runFlags[:0]}
	var fdFlags map[int]uint64 // stdioFlag of the fds written to, once each
	start := 0                 // offset of the run's first record
	for off := 0; off < len(buf); run.Calls++ {
		rec, next, err := syscallbuf.Next(buf, off)
		if err != nil {
			return fmt.Errorf("tid %d: %w", t.tid, err)
		}
		if fileMapRecord(&rec) {
			// The call is written on its own, with the mapped file: the
			// run so far first, a new one after it.
			run.Records = buf[start:off]
			if err := r.w.WriteRun(&run); err != nil {
				return fmt.Errorf("write trace: %w", err)
			}
			if err := r.drainedFileMap(t, &run, &rec); err != nil {
				return err
			}
			r.calls.get(rec.Nr).Buffered++
			r.bufCalls++
			start, off = next, next
			run.Calls, run.ExitFlags = -1, run.ExitFlags[:0]
			continue
		}
		off = next
		if fd := int(int32(rec.Regs[0])); (rec.Nr == unix.SYS_WRITE || rec.Nr == unix.SYS_PWRITE64) && rec.Ret > 0 && (fd < 0 || fd > 2) {
			// (The stub buffers writes to fds 0-2 only once a traced
			// write showed they are not the recorder's stdio, and
			// traces them again after anything gives them another
			// file: HdrStdio.)
			flag, ok := fdFlags[fd]
			if !ok {
				flag = r.stdioFlag(t, fd)
				if fdFlags == nil {
					fdFlags = map[int]uint64{}
				}
				fdFlags[fd] = flag
			}
			if flag != 0 {
				run.ExitFlags = append(run.ExitFlags, trace.RunFlag{Index: run.Calls, Bits: flag})
			}
		}
		r.calls.get(rec.Nr).Buffered++
		r.bufCalls++
	}
	r.runFlags = run.ExitFlags
	run.Records = buf[start:]
	if err := r.w.WriteRun(&run); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	// The thread's last event is now a drained call, which no stop
	// stands at: a loop of buffered calls comes back to the registers of
	// an earlier event (timer: a handler's rt_sigreturn into the stub),
	// and a signal must not be taken for one that arrived there.
	t.setLast(trace.Regs{}, false)
	return nil
}

// bufAhead is how far past the records the recorder keeps the pages of
// a syscall buffer populated, until they reach bufWhole; then it
// populates the whole buffer.
const (
	bufAhead = 64 << 10
	bufWhole = 16 << 10
)

// populateBuf makes the pages of t's buffer present ahead of its
// records (fill bytes) by writing zeros to them through /proc/PID/mem: a
// first write by the stub costs a page fault, 11-14 us in a PVM guest,
// against about 1 us for a page the kernel populates for the recorder's
// write. Up to bufAhead past fill, half of that at least at a time; once
// the records reach bufWhole, the rest of the buffer at once: a thread
// may fill the megabyte between two stops (python's start-up read its
// modules' files through the buffer, 1 MB in one run, and faulted in 253
// pages of it; the mutex benchmark's threads the whole buffer). A
// program that makes few calls (a shell's /bin/true) gets no more than
// the first chunk.
//
// Only pages no record ever reached are written, and only while no call
// holds the buffer (HdrLocked clear: a call between its reservation and
// its commit may have written its record past fill): they hold zeros, as
// in replay, whose checksums leave pages of zeros out anyway.
func (r *recorder) populateBuf(t *task, fill uint32) {
	b := t.buf
	recs := uint64(syscallbuf.Hdr + syscallbuf.HdrLen)
	at := recs + uint64(fill)
	b.populated = max(b.populated, (at+pageSize-1)&^(pageSize-1))
	whole := fill >= bufWhole
	end := at + bufAhead
	if whole {
		end = recs + syscallbuf.Cap
	}
	end = min(end, recs+syscallbuf.Cap) &^ (pageSize - 1)
	if b.populated >= end || !whole && b.populated-at >= bufAhead/2 {
		return
	}
	if r.zeros == nil {
		r.zeros = make([]byte, bufAhead)
	}
	for b.populated < end {
		n := min(end-b.populated, uint64(len(r.zeros)))
		if t.mem.WriteMem(b.populated, r.zeros[:n]) != nil {
			return // (the stub's faults populate the rest)
		}
		b.populated += n
	}
}

// fileMapRecord tells whether rec is an mmap of a file that succeeded
// (the stub buffers private, non-executable ones).
func fileMapRecord(rec *syscallbuf.Record) bool {
	return rec.Nr == unix.SYS_MMAP && rec.Regs[3]&unix.MAP_ANONYMOUS == 0 && (rec.Ret >= 0 || rec.Ret < -4095)
}

// drainedFileMap writes the buffered mmap of a file rec, drained from
// t's buffer with the run whose records precede it, as the two events
// the trace reader would make of its record (trace.CallRecord.EventsInto),
// with the mapped file recorded at the exit as for a traced mmap.
func (r *recorder) drainedFileMap(t *task, run *trace.Run, rec *syscallbuf.Record) error {
	var entryRegs, exitRegs trace.Regs
	entry, exit := &trace.Event{Regs: &entryRegs}, &trace.Event{Regs: &exitRegs}
	rec.EventsInto(run.Tid, run.Cur, run.Rip, run.Flags, entry, exit)
	if err := r.recordFileMap(t, exit, uint64(rec.Ret), linux.Args(rec.Regs[:6]), true); err != nil {
		return err
	}
	if err := r.emit(entry); err != nil {
		return err
	}
	return r.emit(exit)
}

// ranPastTraced tells whether t, standing in the stub right after a
// call with the registers of its last event, the exit of a traced call
// from the stub's buffered instruction, has made another call from the
// stub since: it came back to the same registers (a loop of identical
// calls) with that call in the kernel or not yet committed. The stub
// clears the header's traced word, which markTraced set at that exit,
// when it reserves the next record.
func (r *recorder) ranPastTraced(t *task, regs *trace.Regs) bool {
	if t.buf == nil || !t.buf.mapped || regs[ptrace.RIP] != syscallbuf.SyscallRet ||
		int64(regs[ptrace.ORIGRAX]) < 0 || int64(regs[ptrace.RAX]) == -int64(unix.ENOSYS) {
		return false
	}
	var w [4]byte
	if err := t.mem.ReadMem(syscallbuf.Hdr+syscallbuf.HdrTraced, w[:]); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(w[:]) == 0
}

// markTraced tells the stub, at the exit of a call made from its
// buffered instruction that the recorder saw (the thread was resumed to
// stop at every call, or its call blocked and was restarted under
// ptrace), that the call is recorded already: the stub then appends no
// record for it. The write is part of the exit event, so replay makes it
// at the same point. A call the kernel restarts is not final yet.
func (r *recorder) markTraced(t *task, ev *trace.Event, ret int64) error {
	if t.buf == nil || !t.buf.mapped || t.entry[ptrace.RIP] != syscallbuf.SyscallRet {
		return nil
	}
	switch ret {
	case -512, -513, -514, -516:
		// The kernel may restart the call (no handler, SA_RESTART) or
		// turn it into EINTR for a handler. A restart must stop too, or
		// its result would be lost: the thread stops at every call until
		// it restarts this one or its handler returns without a restart.
		t.forceTrace = true
	}
	return r.setHdr(t, ev, syscallbuf.HdrTraced)
}

// stdioBits sets (on) or clears the HdrStdio bits in mask of t's buffer
// at the exit event ev (made in the tracee now and by replay at that
// event). Bits are cleared only in a process whose descriptors and
// memory go together (stdioShared).
func (r *recorder) stdioBits(t *task, ev *trace.Event, mask uint32, on bool) error {
	if t.buf == nil || !t.buf.mapped || !on && r.stdioShared[t.tgid] {
		return nil
	}
	var w [4]byte
	if err := t.mem.ReadMem(syscallbuf.Hdr+syscallbuf.HdrStdio, w[:]); err != nil {
		return r.lost(t, err)
	}
	old := binary.LittleEndian.Uint32(w[:])
	v := old &^ mask
	if on {
		v = old | mask
	}
	if v == old {
		return nil
	}
	b := binary.LittleEndian.AppendUint32(nil, v)
	if err := t.mem.WriteMem(syscallbuf.Hdr+syscallbuf.HdrStdio, b); err != nil {
		return r.lost(t, err)
	}
	ev.Mem = append(ev.Mem, trace.MemWrite{Addr: syscallbuf.Hdr + syscallbuf.HdrStdio, Data: b})
	return nil
}

// setHdr sets a header flag of t's buffer at the exit event ev (made in
// the tracee now and by replay at that event).
func (r *recorder) setHdr(t *task, ev *trace.Event, field uint64) error {
	one := []byte{1, 0, 0, 0}
	if err := t.mem.WriteMem(syscallbuf.Hdr+field, one); err != nil {
		return r.lost(t, err)
	}
	ev.Mem = append(ev.Mem, trace.MemWrite{Addr: syscallbuf.Hdr + field, Data: one})
	return nil
}

// disableBuf turns the buffer off for t's process from the exit event ev
// on, after a call that makes buffered calls need a stop: the program's
// own seccomp filter (its verdicts and SIGSYS come between the stub's
// call and its record). After a MAP_SHARED file mapping or an open
// /proc/PID/mem only the calls that write file data (their writes change
// memory that the recorder must capture at the call) are sent through
// ptrace from then on (HdrNoWrites). Children inherit the flags with the
// memory.
func (r *recorder) disableBuf(t *task, ev *trace.Event, nr int, a [6]uint64, ret int64) error {
	if ret < 0 {
		return nil
	}
	if nr == unix.SYS_SECCOMP && a[0] == 1 || nr == unix.SYS_PRCTL && a[0] == unix.PR_SET_SECCOMP {
		t.ownFilter = true
		if nr == unix.SYS_SECCOMP && a[1]&1 != 0 { // SECCOMP_FILTER_FLAG_TSYNC
			// Every thread of the process now runs the filter too.
			tgid := tracee.Tgid(t.tid)
			for _, o := range r.tasks {
				if tracee.Tgid(o.tid) == tgid {
					o.ownFilter = true
				}
			}
		}
	}
	if t.buf == nil || !t.buf.mapped {
		return nil
	}
	var field uint64
	switch nr {
	case unix.SYS_SECCOMP:
		if a[0] == 1 { // SECCOMP_SET_MODE_FILTER
			field = syscallbuf.HdrDisabled
		}
	case unix.SYS_PRCTL:
		if a[0] == unix.PR_SET_SECCOMP {
			field = syscallbuf.HdrDisabled
		}
	case unix.SYS_MMAP:
		if a[3]&unix.MAP_SHARED != 0 && a[3]&unix.MAP_ANONYMOUS == 0 && (a[2]&unix.PROT_WRITE != 0 || fdWritable(t.tid, int(int32(a[4])))) {
			// (A read-only view of a file opened read-only, such as
			// glibc's gconv cache, is left out: limitations.md.)
			field = syscallbuf.HdrNoWrites
		}
	case unix.SYS_OPEN, unix.SYS_OPENAT, unix.SYS_OPENAT2:
		name, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", t.tid, ret))
		if strings.HasPrefix(name, "/proc/") && strings.HasSuffix(name, "/mem") {
			field = syscallbuf.HdrNoWrites
		}
	}
	if field == 0 {
		return nil
	}
	return r.setHdr(t, ev, field)
}

// fdWritable tells whether fd of thread tid was opened for writing (true
// when that cannot be read).
func fdWritable(tid, fd int) bool {
	b, err := osfile.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", tid, fd))
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return err != nil || flags&unix.O_ACCMODE != unix.O_RDONLY
		}
	}
	return true
}

// stubInterrupted handles the watchdog's signal in the stub. A buffered
// call blocked in the kernel (interrupted, to be restarted) is
// "descheduled" as rr does: the thread is moved to the stub's
// DeschedEntry with the call's number (restart_syscall for a call the
// kernel resumes so) in rax, where the stub releases the buffer, so that
// other threads use it meanwhile, and makes the call again from a traced
// instruction: an ordinary traced call that may block while other
// threads run, recorded once, by ptrace (the stub abandons the record it
// had reserved). A call the signal ended with EINTR (one the kernel
// never restarts) is made again the same way: the program never sees
// the watchdog's signal. Anywhere else in the stub the thread just
// continues (it leaves the stub within a few instructions; a point
// inside it is never taken).
func (r *recorder) stubInterrupted(t *task, regs *trace.Regs) error {
	if err := r.reprobe(t, regs); err != nil {
		return err
	}
	if regs[ptrace.RIP] == syscallbuf.SyscallRet && !probing(t) {
		nr := regs[ptrace.ORIGRAX]
		switch int64(regs[ptrace.RAX]) {
		case -int64(unix.EINTR), -512, -513, -514:
		case -516: // ERESTART_RESTARTBLOCK
			// The kernel resumes the call with restart_syscall, which
			// writes that call's outputs (onExit).
			t.interrupted = &interruptedCall{sc: linux.Lookup(linux.Nr(nr)), args: linux.Args(ptrace.SyscallArgs(regs))}
			nr = unix.SYS_RESTART_SYSCALL
		default:
			return r.resumeUser(t)
		}
		regs[ptrace.RIP] = syscallbuf.DeschedEntry
		regs[ptrace.RAX] = nr
		if err := t.thread().SetRegs(regs); err != nil {
			return r.lost(t, err)
		}
	}
	return r.resumeUser(t)
}

// probing tells whether t's stub is in a probe (HdrProbeNr set): a call
// made with a zero timeout that returns at once, after which the stub
// itself makes the blocking call traced if needed. It is not moved to
// DeschedEntry (the probe's state is in the shared header, which other
// threads would then use): the kernel restarts it where it is.
func probing(t *task) bool {
	var nr [4]byte
	return t.mem.ReadMem(syscallbuf.Hdr+syscallbuf.HdrProbeNr, nr[:]) == nil && nr != [4]byte{}
}

// reprobe makes a probe that a signal gorr does not deliver now (its
// watchdog's, an asynchronous one it holds) interrupted with
// -ERESTART_RESTARTBLOCK start again at the stub's buffered instruction
// with its own number, instead of resuming as restart_syscall: replay
// sees the thread arrive there with that number (the interrupted
// attempt leaves no trace). With its zero timeout the probe made again
// is the same call.
func (r *recorder) reprobe(t *task, regs *trace.Regs) error {
	if !r.bufOn || regs[ptrace.RIP] != syscallbuf.SyscallRet || int64(regs[ptrace.RAX]) != -516 || !probing(t) {
		return nil
	}
	regs[ptrace.RAX] = regs[ptrace.ORIGRAX]
	regs[ptrace.RIP] = syscallbuf.SyscallInsn
	if err := t.thread().SetRegs(regs); err != nil {
		return r.lost(t, err)
	}
	return nil
}

// vsysCaller is the return address of a call into the vsyscall page
// (0 if it cannot be read).
func (r *recorder) vsysCaller(t *task, regs *trace.Regs) uint64 {
	ret, err := t.mem.ReadU64(regs[ptrace.RSP])
	if err != nil {
		return 0
	}
	return ret
}
