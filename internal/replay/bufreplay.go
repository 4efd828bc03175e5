package replay

import (
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// A stretch of calls drained from a task's system-call buffer is
// replayed the way rr replays a buffer flush: before the task runs, the
// replayer writes each call's recorded result and output bytes into the
// record the stub will fill for it (syscallbuf.Place) and tells the
// stub how many there are (HdrReplayLeft). The stub then makes none of
// these calls: it takes the result and copies the bytes out of the
// record, and fills in the rest of the record (the call and the
// registers it was made with) as after a real call. The stretch's events
// are counted without a stop; at the task's next stop, the event after
// the stretch, the records are compared with the recorded entries
// (endBufRun), so a divergence inside the stretch is reported with the
// number of the event where it happened and the registers that differ.
//
// Only when nothing needs a stop inside the stretch and the next stop is
// one replay runs the task to anyway: no debugger session (its
// breakpoints, steps and positions count stops), no write to gorr's
// stdout or stderr, and the task's next event is its own syscall entry,
// trapped instruction, synchronous signal or preemption point (whose
// search rejects the arrivals inside the stretch, bufPending), or
// another task's event (then the task runs through the stretch at once
// and stops at the stub's trap as it takes the last call,
// HdrReplayStop).
// Otherwise the calls stop one by one at the stub's syscall instruction
// as any other call.

// bufRun is a stretch of buffered calls of one task under way.
type bufRun struct {
	first, last uint64         // event numbers of the first entry and the last exit
	evs         []*trace.Event // the entry and exit of each call, as replayed (after Tamper)
	at          []uint64       // each call's record
}

func (b *bufRun) owns(n uint64) bool { return b != nil && n >= b.first && n <= b.last }

// bufRunPiece bounds the calls placed and run at a time (a full buffer
// holds thousands): a longer stretch is taken in pieces, each ended as a
// stretch followed by another task's event is (the task runs through it
// at once and stops at the stub's trap), the next starting at the next
// call. The decoded events of a piece (about 900 bytes a call) then stay
// in the CPU's cache between the three passes over them (startBufRun,
// the replay loop, endBufRun); the events of one stretch of 5000 calls
// did not, and each pass missed the cache at each event. Each piece
// costs one stop more.
const bufRunPiece = 512

// bufPair tells whether entry and exit are one call drained from the
// buffer that the stub can replay: no write to gorr's stdio to echo, no
// checksum to take at its exit, at most the one output region, and not
// a call replay makes for real (the buffered mmap, munmap, mprotect,
// brk and madvise that change memory stop, as they do under ptrace).
func bufPair(entry, exit *trace.Event) bool {
	return entry != nil && exit != nil && entry.Kind == trace.KindSyscallEntry && entry.Flags == syscallbuf.EventFlag &&
		entry.Regs != nil && entry.Regs[ptrace.RIP] == syscallbuf.SyscallRet && syscallbuf.IsBuffered(int(entry.Sysno)) &&
		exit.Kind == trace.KindSyscallExit && exit.Tid == entry.Tid && exit.Sysno == entry.Sysno &&
		exit.Flags == syscallbuf.EventFlag && exit.Checksum == 0 && len(exit.Maps) == 0 &&
		(len(exit.Mem) == 0 || len(exit.Mem) == 1 && len(exit.Mem[0].Data) > 0) &&
		!executes(int(entry.Sysno), ptrace.SyscallArgs(entry.Regs), exit)
}

// stopsAfterBufRun tells whether ev, a task's next event after a
// stretch of its buffered calls, is one replay runs the task to with
// runTo, so that the stretch ends there.
func stopsAfterBufRun(ev *trace.Event) bool {
	switch ev.Kind {
	case trace.KindSyscallEntry, trace.KindInstruction:
		return true
	case trace.KindSched:
		// The search for the point runs through the stretch; an arrival
		// at the site before the stub has replayed all of it is not the
		// point (bufPending).
		return true
	case trace.KindSignal:
		var si ptrace.SigInfo
		copy(si[:], ev.SigInfo)
		return syncSignal(&si) && !ptraceResumed(ev)
	}
	return false
}

// copyEvent copies what Tamper may change in ev.
func copyEvent(ev *trace.Event) *trace.Event {
	c := *ev
	if ev.Regs != nil {
		r := *ev.Regs
		c.Regs = &r
	}
	c.Mem = make([]trace.MemWrite, len(ev.Mem))
	for i, m := range ev.Mem {
		c.Mem[i] = trace.MemWrite{Addr: m.Addr, Data: append([]byte(nil), m.Data...)}
	}
	return &c
}

// startBufRun is called at ev, the entry of a call t made through its
// buffer. When ev starts a stretch the stub can replay, it places the
// stretch in t's buffer and returns true: the stretch's events are then
// passed over (syscallEntry, syscallExit) and t runs through the calls
// at its next event.
func (rp *replayer) startBufRun(ev *trace.Event, t *rtask) (bool, error) {
	if rp.driven() || t.killed || t.atExit || t.restart || t.executing || t.gone || rp.n <= rp.bufSlowTo {
		return false, nil
	}
	x, err := rp.q.peek(0)
	if err != nil || !bufPair(ev, x) {
		return false, err
	}
	// The stretch's slices reuse those of the task's last stretch
	// (reuse): a replay of many buffered calls starts thousands.
	evs := append(t.runEvs[:0], ev, x)
	stopEnd := false // another task's event follows: stop t after the stretch
	for i := 1; ; i += 2 {
		// x, i places ahead, is the next event after the calls so far.
		x, err := rp.q.peek(i)
		if err != nil {
			return false, err
		}
		if x != nil && x.Tid == ev.Tid {
			y, err := rp.q.peek(i + 1)
			if err != nil {
				return false, err
			}
			if bufPair(x, y) {
				if len(evs) == 2*bufRunPiece {
					stopEnd = true // the next piece starts at x
					break
				}
				evs = append(evs, x, y)
				continue
			}
			if stopsAfterBufRun(x) {
				break
			}
		}
		if x != nil && x.Tid != ev.Tid {
			stopEnd = true
			break
		}
		// The calls stop one by one; their entries need not look again.
		rp.bufSlowTo = rp.n + uint64(len(evs)) - 1
		return false, nil
	}
	if rp.opts.Tamper != nil {
		// The events ahead are tampered with when their turn comes; the
		// stretch uses tampered copies now.
		for i := 1; i < len(evs); i++ {
			evs[i] = copyEvent(evs[i])
			rp.opts.Tamper(rp.n+uint64(i), evs[i])
		}
		if !bufPair(evs[0], evs[1]) {
			return false, nil
		}
	}
	var hdr [syscallbuf.HdrReplayStop + 4]byte
	if err := t.mem.ReadMem(syscallbuf.Hdr, hdr[:]); err != nil {
		return false, nil // no buffer here: let the stop-per-call path report it
	}
	fill := binary.LittleEndian.Uint32(hdr[syscallbuf.HdrFill:])
	if binary.LittleEndian.Uint32(hdr[syscallbuf.HdrReplayLeft:]) != 0 {
		return false, rp.diverge(ev, "the syscall buffer still holds replayed calls from an earlier stretch")
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return false, err
	}
	switch regs[ptrace.RIP] {
	case syscallbuf.ResetRet:
		fill = 0 // held after the call that empties the buffer, which the stub resets next
	case syscallbuf.SyscallRet:
		// Held after a buffered call that stopped (another task's event
		// came between it and this stretch): unless the recorder marked
		// that call traced, the stub commits its record first.
		if binary.LittleEndian.Uint32(hdr[syscallbuf.HdrTraced:]) == 0 {
			if t.bufRec == 0 {
				return false, nil
			}
			fill += t.bufRec
		}
	case syscallbuf.ReplayEnd + 1:
		// Held at the end of a stretch (stopEnd): the stub commits its
		// last record first.
		if t.bufRec == 0 {
			return false, nil
		}
		fill += t.bufRec
	}
	calls := len(evs) / 2
	at := slices.Grow(t.runAt[:0], calls)[:calls]
	end := fill
	for k := range calls {
		at[k] = syscallbuf.RecordAt(end)
		end += syscallbuf.RecordLen(outBytes(evs[2*k+1]))
		if end > syscallbuf.BufSize-syscallbuf.HdrLen {
			return false, nil // not where the recording had them: the slow path reports it
		}
	}
	// One read and one write of the span keep the padding between the
	// records (which the stub does not write) as it is.
	span := rp.bufScratch(int(syscallbuf.RecordAt(end) - at[0]))
	if err := t.mem.ReadMem(at[0], span); err != nil {
		return false, err
	}
	for k := range calls {
		x := evs[2*k+1]
		var data []byte
		if len(x.Mem) == 1 {
			data = x.Mem[0].Data
		}
		syscallbuf.Place(span[at[k]-at[0]:], x.Result, data)
	}
	var ctlBuf [12]byte
	ctl := binary.LittleEndian.AppendUint32(ctlBuf[:0], uint32(calls))
	ctl = append(ctl, 0, 0, 0, 0) // HdrReplaying
	if stopEnd {
		ctl = append(ctl, 1, 0, 0, 0) // HdrReplayStop
	}
	// The records and the count in one system call.
	if err := t.mem.WriteRegions(tracee.Region{Addr: at[0], Data: span}, tracee.Region{Addr: syscallbuf.Hdr + syscallbuf.HdrReplayLeft, Data: ctl}); err != nil {
		return false, err
	}
	t.bufRun = &bufRun{first: rp.n, last: rp.n + uint64(len(evs)) - 1, evs: evs, at: at}
	t.runEvs, t.runAt = nil, nil // the run's now, until endBufRun
	if !stopEnd {
		return true, nil
	}
	// Another task's event comes next: t runs through the stretch now
	// and stops at the stub's trap before its last call's result (as
	// held inside the stub after a call that stopped).
	last := evs[len(evs)-1]
	if _, err := rp.runTo(ev, t, ptrace.Sysemu, ptrace.StopSignal, int(unix.SIGTRAP)); err != nil {
		return true, err
	}
	r, err := t.thread().GetRegs()
	if err != nil {
		return true, err
	}
	if r[ptrace.RIP] != syscallbuf.ReplayEnd+1 {
		return true, &DivergenceError{Event: rp.n + uint64(len(evs)) - 2, Tid: t.rec,
			What: fmt.Sprintf("a SIGTRAP at rip 0x%x instead of the end of the buffered calls", r[ptrace.RIP])}
	}
	t.bufRec = syscallbuf.RecordLen(outBytes(last))
	t.bufRun = &bufRun{first: rp.n, last: rp.n + uint64(len(evs)) - 1} // their events are passed over still
	t.reuse(evs, at)
	return true, nil
}

// reuse keeps the slices of t's stretch that has ended for its next
// (startBufRun), without the events (which would stay live otherwise).
func (t *rtask) reuse(evs []*trace.Event, at []uint64) {
	if evs == nil {
		return
	}
	clear(evs)
	t.runEvs, t.runAt = evs[:0], at[:0]
}

// bufScratch returns n bytes of the replayer's scratch buffer for the
// records of a stretch (startBufRun, endBufRun; neither keeps them). A
// stretch's records are up to a buffer's size: a new slice each time
// cost the mutex workload's replay about 900 page faults (10-13 µs each
// on a VM) as the kernel copied the records into fresh pages.
func (rp *replayer) bufScratch(n int) []byte {
	if cap(rp.bufSpan) < n {
		rp.bufSpan = make([]byte, n)
	}
	return rp.bufSpan[:n]
}

// outBytes is how many bytes the buffered call of exit event x wrote.
func outBytes(x *trace.Event) int {
	if len(x.Mem) == 1 {
		return len(x.Mem[0].Data)
	}
	return 0
}

// endBufRun checks, at t's first stop after a stretch of its buffered
// calls, that the stub replayed every call and that the records it
// filled say each was made as recorded: same call, argument and
// preserved registers, stack pointer and flags, and the output region
// where the recording had it.
func (rp *replayer) endBufRun(t *rtask) error {
	b := t.bufRun
	t.bufRun = nil
	if len(b.at) == 0 {
		// A stretch the task ran through at once (stopEnd in
		// startBufRun), checked at that stop: only its events were
		// still to pass over.
		return nil
	}
	defer t.reuse(b.evs, b.at)
	// The count of calls left and the records of all the calls, in one
	// system call (the stub has usually replayed them all).
	var lb [4]byte
	calls := len(b.at)
	span := rp.bufScratch(int(b.at[calls-1] + syscallbuf.RecordHead - b.at[0]))
	if err := t.mem.ReadRegions(tracee.Region{Addr: syscallbuf.Hdr + syscallbuf.HdrReplayLeft, Data: lb[:]}, tracee.Region{Addr: b.at[0], Data: span}); err != nil {
		return nil // gone: the stop's own error says why
	}
	left := int(binary.LittleEndian.Uint32(lb[:]))
	if left > calls {
		left = calls
	}
	if left != 0 {
		// Take the rest back, so that the task's later calls stop.
		_ = t.mem.WriteMem(syscallbuf.Hdr+syscallbuf.HdrReplayLeft, make([]byte, 8))
	}
	// Stopped at the stub's trap (stopEnd), the last call's record has
	// its registers but not yet its output fields.
	r, _ := t.thread().GetRegs()
	atTrap := r[ptrace.RIP] == syscallbuf.ReplayEnd+1
	done := calls - left
	for k := range done {
		entry, exit := b.evs[2*k], b.evs[2*k+1]
		rec, size, n := syscallbuf.ParseHead(span[b.at[k]-b.at[0]:])
		var d []string
		if !sameCall(&rec, entry) {
			got, _ := syscallbuf.Events(&rec, t.rec, entry.Regs)
			d = compareRegs(entry.Regs, got.Regs)
		}
		var addr uint64
		if len(exit.Mem) == 1 {
			addr = exit.Mem[0].Addr
		}
		if atTrap && k == calls-1 {
			// (its output fields come after the trap)
		} else if want := outBytes(exit); n != uint64(want) || want > 0 && rec.Addr != addr {
			d = append(d, fmt.Sprintf("output: recorded %d bytes at 0x%x, replay %d bytes at 0x%x", want, addr, n, rec.Addr))
		} else if size != syscallbuf.RecordLen(want) {
			d = append(d, fmt.Sprintf("buffer record of %d bytes, %d expected", size, syscallbuf.RecordLen(want)))
		}
		if len(d) > 0 {
			return &DivergenceError{Event: b.first + 2*uint64(k), Tid: t.rec, What: "entering " + linux.Name(int(entry.Sysno)) + " (replayed from the syscall buffer)", Diffs: d}
		}
	}
	if left != 0 {
		k := calls - left
		return &DivergenceError{Event: b.first + 2*uint64(k), Tid: t.rec,
			What: fmt.Sprintf("expected the buffered %s, but the thread stopped first at rip 0x%x", linux.Name(int(b.evs[2*k].Sysno)), r[ptrace.RIP])}
	}
	return nil
}

// bufPending tells whether t is inside a stretch of buffered calls that
// the stub has not replayed all of yet. No preemption point lies there:
// the recording took the task's next point after all of them.
func (rp *replayer) bufPending(t *rtask) bool {
	if t.bufRun == nil {
		return false
	}
	var b [4]byte
	return t.mem.ReadMem(syscallbuf.Hdr+syscallbuf.HdrReplayLeft, b[:]) == nil && binary.LittleEndian.Uint32(b[:]) != 0
}

// sameCall tells quickly whether the record the stub filled has the
// call and registers of the recorded entry (compareRegs says what
// differs, ignoring the trap and resume flags, when it has not).
func sameCall(rec *syscallbuf.Record, entry *trace.Event) bool {
	r := entry.Regs
	return rec.Nr == int(entry.Sysno) && r[ptrace.ORIGRAX] == uint64(rec.Nr) && r[ptrace.R11] == r[ptrace.EFLAGS] &&
		r[ptrace.RIP] == syscallbuf.SyscallRet && r[ptrace.RCX] == syscallbuf.SyscallRet && int64(r[ptrace.RAX]) == -int64(unix.ENOSYS) &&
		rec.Regs == [14]uint64{
			r[ptrace.RDI], r[ptrace.RSI], r[ptrace.RDX], r[ptrace.R10], r[ptrace.R8], r[ptrace.R9],
			r[ptrace.RBX], r[ptrace.RBP], r[ptrace.R12], r[ptrace.R13], r[ptrace.R14], r[ptrace.R15],
			r[ptrace.RSP], r[ptrace.EFLAGS]}
}

// desched moves t, stopped at the entry of a buffered call, to the
// stub's DeschedEntry with the recorded call's number (or
// restart_syscall) in rax, as the recorder did when the call blocked,
// and runs it to the entry of the call made again from the stub's
// traced instruction (syscallbuf.DeschedRet): the stub's own code
// releases the buffer and remembers the descriptor, as in the
// recording. The call itself is replayed as any traced call.
func (rp *replayer) desched(ev *trace.Event, t *rtask, regs *trace.Regs) error {
	regs[ptrace.RIP] = syscallbuf.DeschedEntry
	regs[ptrace.RAX] = ev.Regs[ptrace.ORIGRAX]
	if err := t.thread().SetRegs(regs); err != nil {
		return err
	}
	if _, err := rp.runTo(ev, t, ptrace.Sysemu, ptrace.StopSyscallEntry, 0); err != nil {
		return err
	}
	r, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	*regs = r
	return nil
}
