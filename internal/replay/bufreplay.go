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
// The calls of a stretch are mostly taken from the records the trace
// stores them as (a run, trace.CallRecord), without the two events each
// stands for (trace.Reader.SkipCalls): the replay's event count moves
// past them, and the records are compared with what the stub filled.
// Only a run's last call, and the first call of a stretch, are read as
// events, so that a stretch that cannot be placed is always found before
// any call was taken without its events.
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
	first, last uint64    // event numbers of the first entry and the last exit
	calls       []bufCall // as replayed (after Tamper)
	at          []uint64  // each call's record
	// recs holds the records of the calls taken from the trace's run
	// without their events (bufCall.off); tmpl, rip and flags rebuild
	// their events for a report or a tamperer.
	recs       []byte
	tmpl       trace.Regs
	rip, flags uint64
}

// bufCall is one call of a stretch: its entry and exit events, or (entry
// nil) its record at off in bufRun.recs, read from the trace's run
// without events (trace.Reader.SkipCalls).
type bufCall struct {
	entry, exit *trace.Event
	off         int
	out         int  // output bytes
	exec        bool // the stub makes it for real (stubExecutes)
}

func (b *bufRun) owns(n uint64) bool { return b != nil && n >= b.first && n <= b.last }

// call returns the recorded call c.
func (b *bufRun) call(c *bufCall) trace.CallRecord {
	if c.entry == nil {
		rec, _, _ := trace.NextCallRecord(b.recs, c.off) // checked by the trace reader
		return rec
	}
	rec := trace.CallRecord{Nr: int(c.entry.Sysno), Ret: c.exit.Result, Regs: callRegs(c.entry.Regs)}
	if len(c.exit.Mem) == 1 {
		rec.Addr, rec.Data = c.exit.Mem[0].Addr, c.exit.Mem[0].Data
	}
	return rec
}

// callRegs returns the registers a call record holds of regs.
func callRegs(r *trace.Regs) [14]uint64 {
	return [14]uint64{
		r[ptrace.RDI], r[ptrace.RSI], r[ptrace.RDX], r[ptrace.R10], r[ptrace.R8], r[ptrace.R9],
		r[ptrace.RBX], r[ptrace.RBP], r[ptrace.R12], r[ptrace.R13], r[ptrace.R14], r[ptrace.R15],
		r[ptrace.RSP], r[ptrace.EFLAGS]}
}

// events returns the recorded entry and exit events of call c.
func (b *bufRun) events(c *bufCall, tid int32) (entry, exit *trace.Event) {
	if c.entry != nil {
		return c.entry, c.exit
	}
	rec := b.call(c)
	entry, exit = &trace.Event{Regs: new(trace.Regs)}, &trace.Event{Regs: new(trace.Regs)}
	rec.EventsInto(tid, &b.tmpl, b.rip, b.flags, entry, exit)
	return entry, exit
}

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
// buffer that the stub can replay (ok): no write to gorr's stdio to
// echo, no checksum to take at its exit, at most the one output region,
// and a call bufReplayable lets in; exec says whether the stub makes it.
func bufPair(entry, exit *trace.Event) (ok, exec bool) {
	if entry == nil || exit == nil || entry.Kind != trace.KindSyscallEntry || entry.Flags != syscallbuf.EventFlag ||
		entry.Regs == nil || entry.Regs[ptrace.RIP] != syscallbuf.SyscallRet || !syscallbuf.IsBuffered(int(entry.Sysno)) ||
		exit.Kind != trace.KindSyscallExit || exit.Tid != entry.Tid || exit.Sysno != entry.Sysno ||
		exit.Flags != syscallbuf.EventFlag || exit.Checksum != 0 || len(exit.Maps) != 0 ||
		len(exit.Mem) > 1 || len(exit.Mem) == 1 && len(exit.Mem[0].Data) == 0 {
		return false, false
	}
	return bufReplayable(int(entry.Sysno), ptrace.SyscallArgs(entry.Regs), exit.Result, outBytes(exit))
}

// bufRecordOK is bufPair for a call of a run read without its events
// (whose events have the stub's flags and rip and carry no checksum,
// mapping or more than the record's bytes).
func bufRecordOK(rec *trace.CallRecord) (ok, exec bool) {
	if !syscallbuf.IsBuffered(rec.Nr) {
		return false, false
	}
	return bufReplayable(rec.Nr, [6]uint64(rec.Regs[:6]), rec.Ret, len(rec.Data))
}

// bufReplayable tells whether the stub can replay the buffered call
// nr(a) that returned ret and wrote out bytes in the recording (ok):
// a call replay emulates, whose result and bytes the stub takes, or one
// replay makes for real that the stub can make (exec: stubExecutes; the
// buffered brk, which replay turns into another call, stops as under
// ptrace).
func bufReplayable(nr int, a [6]uint64, ret int64, out int) (ok, exec bool) {
	if !executesReturning(nr, a, ret) {
		return true, false
	}
	return out == 0 && stubExecutes(nr, a, ret), true
}

// stubExecutes tells whether the buffered call nr(a) that returned ret
// in the recording, one replay makes for real, is one the stub can make
// in a placed stretch (syscallbuf.PlaceExec): an anonymous private mmap
// (at its recorded address), munmap, mprotect, madvise or brk (as the
// mmap or munmap of the pages its break crossed), which change only the
// address space, never block and need nothing of the replayer after
// them. Each would otherwise cost two stops.
func stubExecutes(nr int, a [6]uint64, ret int64) bool {
	switch nr {
	case unix.SYS_MMAP:
		return a[3]&unix.MAP_ANONYMOUS != 0 && a[3]&unix.MAP_SHARED_VALIDATE == unix.MAP_PRIVATE && ret >= 0
	case unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_MADVISE, unix.SYS_BRK:
		return true
	}
	return false
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
	if err != nil {
		return false, err
	}
	ok, exec := bufPair(ev, x)
	if !ok {
		return false, nil
	}
	fill, ok, err := rp.bufFill(ev, t)
	if !ok || err != nil {
		return false, err
	}
	// The stretch reuses the slices of the task's last stretch (spare):
	// a replay of many buffered calls starts thousands.
	b := t.spare
	if b == nil {
		b = &bufRun{}
	}
	t.spare = nil
	b.calls, b.recs = append(b.calls[:0], bufCall{entry: ev, exit: x, out: outBytes(x), exec: exec}), b.recs[:0]
	room := int(syscallbuf.Cap) - int(fill) - int(syscallbuf.RecordLen(b.calls[0].out))
	skipped := 0     // calls whose events the queue will not return
	stopEnd := false // another task's event follows: stop t after the stretch
	// notPlaced leaves the calls to stop one by one, which calls taken
	// without their events cannot (never: their run's last call and what
	// follows it are read as events, and they fit in the buffer as in
	// the recording).
	notPlaced := func(why string) (bool, error) {
		t.spare = b
		if skipped > 0 {
			return false, rp.diverge(ev, "buffered calls taken from their records cannot be replayed: "+why)
		}
		return false, nil
	}
	for i := 1; ; i += 2 {
		// The calls of a run that follow are taken from their records,
		// without events (trace.Reader.SkipCalls): all but the run's
		// last, whose events the search goes on from.
		if len(b.calls) < bufRunPiece {
			if a, ok := rp.q.runAhead(i); ok && a.Tid == ev.Tid && a.Rip == syscallbuf.SyscallRet && a.Flags == syscallbuf.EventFlag {
				if k := b.takeRecords(&a, bufRunPiece-len(b.calls), &room); k > 0 {
					rp.q.skipCalls(k)
					skipped += k
				}
			}
		}
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
			if ok, exec := bufPair(x, y); ok {
				if len(b.calls) == bufRunPiece {
					stopEnd = true // the next piece starts at x
					break
				}
				b.calls = append(b.calls, bufCall{entry: x, exit: y, out: outBytes(y), exec: exec})
				room -= int(syscallbuf.RecordLen(outBytes(y)))
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
		rp.bufSlowTo = rp.n + 2*uint64(len(b.calls)) - 1
		return notPlaced("a stop each is needed")
	}
	if rp.opts.Tamper != nil {
		// The events ahead are tampered with when their turn comes; the
		// stretch uses tampered copies now.
		b.tamper(rp.n, ev.Tid, rp.opts.Tamper)
		if ok, _ := bufPair(b.calls[0].entry, b.calls[0].exit); !ok {
			return notPlaced("the first is not one")
		}
	}
	calls := len(b.calls)
	b.at = slices.Grow(b.at[:0], calls)[:calls]
	end := fill
	for k := range b.calls {
		b.at[k] = syscallbuf.RecordAt(end)
		end += syscallbuf.RecordLen(b.calls[k].out)
	}
	if end > syscallbuf.Cap {
		// Not where the recording had them: the slow path reports it.
		return notPlaced("they do not fit in the buffer")
	}
	// One read and one write of the span keep the padding between the
	// records (which the stub does not write) as it is.
	span := rp.bufScratch(int(syscallbuf.RecordAt(end) - b.at[0]))
	if err := t.mem.ReadMem(b.at[0], span); err != nil {
		return false, err
	}
	execs := false // calls the stub makes for real: t runs with PTRACE_CONT
	for k := range b.calls {
		rec := b.call(&b.calls[k])
		if b.calls[k].exec {
			var arg uint64
			switch rec.Nr {
			case unix.SYS_MMAP:
				arg = fixedAnonFlags(rec.Regs[3])
			case unix.SYS_BRK:
				// The stub maps or unmaps the pages the break crossed,
				// as a brk replayed with a stop does (prepare); the
				// placed stretch runs (or diverges) before the task's
				// next event, so the break moves now.
				old, moved := t.proc.moveBrk(uint64(rec.Ret))
				if !moved {
					syscallbuf.Place(span[b.at[k]-b.at[0]:], rec.Ret, nil)
					continue
				}
				arg = pageUp(old)
			}
			syscallbuf.PlaceExec(span[b.at[k]-b.at[0]:], rec.Ret, arg)
			execs = true
			continue
		}
		syscallbuf.Place(span[b.at[k]-b.at[0]:], rec.Ret, rec.Data)
	}
	// A stretch whose calls the stub makes runs with PTRACE_CONT, under
	// which the thread's next system call would run too: it stops at the
	// stub's trap as it takes the last call, and goes on from there
	// under SYSEMU to its next event. One stop for the stretch instead
	// of two a call.
	stopEnd = stopEnd || execs
	var ctlBuf [12]byte
	ctl := binary.LittleEndian.AppendUint32(ctlBuf[:0], uint32(calls))
	ctl = append(ctl, 0, 0, 0, 0) // HdrReplaying
	if stopEnd {
		ctl = append(ctl, 1, 0, 0, 0) // HdrReplayStop
	}
	// The records and the count in one system call.
	if err := t.mem.WriteRegions(tracee.Region{Addr: b.at[0], Data: span}, tracee.Region{Addr: syscallbuf.Hdr + syscallbuf.HdrReplayLeft, Data: ctl}); err != nil {
		return false, err
	}
	b.first, b.last = rp.n, rp.n+2*uint64(calls)-1
	t.bufRun = b
	if !stopEnd {
		return true, nil
	}
	// Another task's event comes next (or the stub makes calls): t runs
	// through the stretch now and stops at the stub's trap before its
	// last call's result (as held inside the stub after a call that
	// stopped).
	mode := ptrace.Sysemu
	if execs {
		mode = ptrace.Cont
	}
	if _, err := rp.runTo(ev, t, mode, ptrace.StopSignal, int(unix.SIGTRAP)); err != nil {
		return true, err
	}
	r, err := t.thread().GetRegs()
	if err != nil {
		return true, err
	}
	if r[ptrace.RIP] != syscallbuf.ReplayEnd+1 {
		return true, &DivergenceError{Event: b.last - 1, Tid: t.rec,
			What: fmt.Sprintf("a SIGTRAP at rip 0x%x instead of the end of the buffered calls", r[ptrace.RIP])}
	}
	t.bufRec = syscallbuf.RecordLen(b.calls[calls-1].out)
	// Checked at that stop (runTo, endBufRun): only the stretch's events
	// are still to pass over.
	t.bufRun, t.spare = &bufRun{first: b.first, last: b.last}, b
	return true, nil
}

// bufFill returns where in t's buffer the stub writes the record of its
// next call; ok is false when that is unknown, and the calls stop one by
// one.
func (rp *replayer) bufFill(ev *trace.Event, t *rtask) (fill uint32, ok bool, err error) {
	var hdr [syscallbuf.HdrReplayStop + 4]byte
	if err := t.mem.ReadMem(syscallbuf.Hdr, hdr[:]); err != nil {
		return 0, false, nil // no buffer here: let the stop-per-call path report it
	}
	fill = binary.LittleEndian.Uint32(hdr[syscallbuf.HdrFill:])
	if binary.LittleEndian.Uint32(hdr[syscallbuf.HdrReplayLeft:]) != 0 {
		return 0, false, rp.diverge(ev, "the syscall buffer still holds replayed calls from an earlier stretch")
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return 0, false, err
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
				return 0, false, nil
			}
			fill += t.bufRec
		}
	case syscallbuf.ReplayEnd + 1:
		// Held at the end of a stretch (stopEnd): the stub commits its
		// last record first.
		if t.bufRec == 0 {
			return 0, false, nil
		}
		fill += t.bufRec
	}
	return fill, true, nil
}

// takeRecords appends to b up to max calls of the run ahead a, taken
// from their records, as long as the stub can replay them (bufPair) and
// their records fit in the room left in the buffer, but never the run's
// last call, and returns how many it took.
func (b *bufRun) takeRecords(a *trace.RunAhead, max int, room *int) int {
	max = min(max, a.Flagged, a.Calls-1)
	k, off := 0, 0
	for k < max {
		rec, next, err := trace.NextCallRecord(a.Records, off)
		size := int(syscallbuf.RecordLen(len(rec.Data)))
		if err != nil || size > *room {
			break
		}
		ok, exec := bufRecordOK(&rec)
		if !ok {
			break
		}
		b.calls = append(b.calls, bufCall{off: len(b.recs) + off, out: len(rec.Data), exec: exec})
		*room -= size
		k, off = k+1, next
	}
	if k > 0 {
		if len(b.recs) == 0 {
			b.tmpl, b.rip, b.flags = *a.Cur, a.Rip, a.Flags
		}
		b.recs = append(b.recs, a.Records[:off]...)
	}
	return k
}

// tamper passes the events of b's calls after the first entry (event n)
// to the test hook f. The events are copies; a call kept as its record
// gets what f changed of its number, registers, result and output bytes.
func (b *bufRun) tamper(n uint64, tid int32, f func(uint64, *trace.Event)) {
	for k := range b.calls {
		c := &b.calls[k]
		if c.entry == nil {
			entry, exit := b.events(c, tid)
			f(n, entry)
			f(n+1, exit)
			rec := b.call(c)
			rec.Nr, rec.Regs, rec.Ret = int(entry.Sysno), callRegs(entry.Regs), exit.Result
			if len(exit.Mem) == 1 && len(exit.Mem[0].Data) == len(rec.Data) {
				copy(rec.Data, exit.Mem[0].Data) // (rec.Data is b.recs')
			}
			rec.PutHead(b.recs[c.off:])
		} else {
			if k > 0 {
				c.entry = copyEvent(c.entry)
				f(n, c.entry)
			}
			c.exit = copyEvent(c.exit)
			f(n+1, c.exit)
			c.out = outBytes(c.exit)
		}
		// What f changed may make a call the stub made one it emulates,
		// or the other way.
		rec := b.call(c)
		_, c.exec = bufReplayable(rec.Nr, [6]uint64(rec.Regs[:6]), rec.Ret, c.out)
		n += 2
	}
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
	defer func() { t.spare = b }()
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
		c := &b.calls[k]
		got, size, n := syscallbuf.ParseHead(span[b.at[k]-b.at[0]:])
		want := b.call(c)
		var d []string
		if c.entry != nil && !sameCall(&got, c.entry) || c.entry == nil && (got.Nr != want.Nr || got.Regs != want.Regs) {
			entry, _ := b.events(c, t.rec)
			g, _ := syscallbuf.Events(&got, t.rec, entry.Regs)
			d = compareRegs(entry.Regs, g.Regs)
		}
		if got.Ret != want.Ret {
			// A call the stub made returned something else.
			d = append(d, fmt.Sprintf("result: recorded %#x, replay %#x", uint64(want.Ret), uint64(got.Ret)))
		}
		if atTrap && k == calls-1 {
			// (its output fields come after the trap)
		} else if n != uint64(c.out) || c.out > 0 && got.Addr != want.Addr {
			d = append(d, fmt.Sprintf("output: recorded %d bytes at 0x%x, replay %d bytes at 0x%x", c.out, want.Addr, n, got.Addr))
		} else if size != syscallbuf.RecordLen(c.out) {
			d = append(d, fmt.Sprintf("buffer record of %d bytes, %d expected", size, syscallbuf.RecordLen(c.out)))
		}
		if len(d) > 0 {
			return &DivergenceError{Event: b.first + 2*uint64(k), Tid: t.rec, What: "entering " + linux.Name(want.Nr) + " (replayed from the syscall buffer)", Diffs: d}
		}
	}
	if left != 0 {
		k := calls - left
		return &DivergenceError{Event: b.first + 2*uint64(k), Tid: t.rec,
			What: fmt.Sprintf("expected the buffered %s, but the thread stopped first at rip 0x%x", linux.Name(b.call(&b.calls[k]).Nr), r[ptrace.RIP])}
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
		rec.Regs == callRegs(r)
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
