package trace

import (
	"encoding/binary"
	"fmt"

	"github.com/gorr-debugger/gorr/internal/machine"
)

// Call records. A stretch of system calls drained from a thread's
// syscall buffer is stored as the buffer held them (a run frame, evRun):
// one record per call, in the layout gorr's in-process stub writes
// (package syscallbuf), which is thus part of the trace format. Each
// record stands for the call's SYSCALL_ENTRY and SYSCALL_EXIT events,
// which the Reader rebuilds (CallRecord.EventsInto); storing the
// records costs the recorder a copy, where encoding two events a call
// cost it most of its time in programs that make many cheap calls.
//
// A record, little endian, 8-byte aligned:
//
//	0   uint32 size of the record (a multiple of 8, >= CallRecordHead)
//	4   uint32 call number
//	8   int64  result
//	16  14 x uint64: rdi rsi rdx r10 r8 r9 rbx rbp r12 r13 r14 r15 rsp eflags, as at the syscall instruction
//	128 uint64 address where the kernel wrote the output bytes
//	136 uint64 number of output bytes, which follow at 144 (then padding)

// CallRecordHead is the size of a call record's fixed part.
const CallRecordHead = 144

// CallRecord is one buffered call.
type CallRecord struct {
	Nr   int
	Ret  int64
	Regs [14]uint64 // rdi rsi rdx r10 r8 r9 rbx rbp r12 r13 r14 r15 rsp eflags, as at the syscall instruction
	Addr uint64     // where the kernel wrote Data
	Data []byte
}

// NextCallRecord decodes the record at offset off of buf (off < len(buf))
// and returns it with the offset of the record after it; its Data alias
// buf.
func NextCallRecord(buf []byte, off int) (r CallRecord, next int, err error) {
	if len(buf)-off < CallRecordHead {
		return r, off, fmt.Errorf("truncated call record at %d", off)
	}
	b := buf[off:]
	size := int(binary.LittleEndian.Uint32(b))
	r = CallRecord{Nr: int(binary.LittleEndian.Uint32(b[4:])), Ret: int64(binary.LittleEndian.Uint64(b[8:]))}
	for i := range r.Regs {
		r.Regs[i] = binary.LittleEndian.Uint64(b[16+8*i:])
	}
	r.Addr = binary.LittleEndian.Uint64(b[128:])
	n := binary.LittleEndian.Uint64(b[136:])
	if size < CallRecordHead || size > len(b) || n > uint64(size-CallRecordHead) || size%8 != 0 {
		return CallRecord{}, off, fmt.Errorf("bad call record at %d (size %d, %d bytes written)", off, size, n)
	}
	if n > 0 {
		r.Data = b[CallRecordHead : CallRecordHead+int(n) : CallRecordHead+int(n)]
	}
	return r, off + size, nil
}

// entryRax is rax at a system call's entry stop: -ENOSYS.
const entryRax = ^uint64(0) - 37

// EventsInto writes into entry and exit the SYSCALL_ENTRY and
// SYSCALL_EXIT events of record r of thread tid, with the registers
// ptrace would have shown at the call's entry and exit stops: cur
// supplies what the record does not hold (segment registers and bases),
// rip is the address after the syscall instruction (rip and rcx) and
// flags the events' Flags. entry.Regs and exit.Regs must point to
// registers it may overwrite; exit.Mem's array is reused.
func (r *CallRecord) EventsInto(tid int32, cur *Regs, rip, flags uint64, entry, exit *Event) {
	regs := entry.Regs
	*regs = *cur
	g := &r.Regs
	regs[machine.RDI], regs[machine.RSI], regs[machine.RDX], regs[machine.R10], regs[machine.R8], regs[machine.R9] = g[0], g[1], g[2], g[3], g[4], g[5]
	regs[machine.RBX], regs[machine.RBP], regs[machine.R12], regs[machine.R13], regs[machine.R14], regs[machine.R15] = g[6], g[7], g[8], g[9], g[10], g[11]
	regs[machine.RSP], regs[machine.EFLAGS], regs[machine.R11] = g[12], g[13], g[13]
	regs[machine.RAX] = entryRax // as the kernel sets it at entry
	regs[machine.ORIGRAX] = uint64(r.Nr)
	regs[machine.RIP], regs[machine.RCX] = rip, rip
	*entry = Event{Kind: KindSyscallEntry, Tid: tid, Sysno: int32(r.Nr), Regs: regs, Flags: flags}
	out := exit.Regs
	*out = *regs
	out[machine.RAX] = uint64(r.Ret)
	mem := exit.Mem[:0]
	*exit = Event{Kind: KindSyscallExit, Tid: tid, Sysno: int32(r.Nr), Result: r.Ret, Regs: out, Flags: flags}
	if len(r.Data) > 0 {
		exit.Mem = append(mem, MemWrite{Addr: r.Addr, Data: r.Data})
	}
}

// A Run is a stretch of one thread's buffered calls as the syscall
// buffer held them, for Writer.WriteRun.
type Run struct {
	Tid     int32
	Cur     *Regs  // what the records do not hold (CallRecord.EventsInto)
	Rip     uint64 // the address after the stub's syscall instruction
	Flags   uint64 // Flags of every event of the run
	Time    uint64
	Records []byte // Calls records, as NextCallRecord reads them
	Calls   int
	// ExitFlags are bits or'ed into the Flags of some exits: pairs of
	// (call index, bits), in increasing index order.
	ExitFlags []RunFlag
}

// RunFlag is bits added to the Flags of the exit of call Index of a run.
type RunFlag struct {
	Index int
	Bits  uint64
}

// RunAhead is the calls of a run that the next events of a Reader
// belong to, from the one whose entry Next returns next.
type RunAhead struct {
	Tid   int32
	Rip   uint64 // rip and rcx at each call (CallRecord.EventsInto)
	Flags uint64 // Flags of each event, but for the exits of Flagged on
	Cur   *Regs  // what the records do not hold (CallRecord.EventsInto)
	// Records are the calls' records, as NextCallRecord reads them. They
	// are the Reader's: valid until it moves on.
	Records []byte
	Calls   int
	// Flagged is the index among the calls ahead of the first whose
	// exit has bits added to Flags (Run.ExitFlags); Calls if none.
	Flagged int
}

// RunAhead tells whether the next events are calls of a run, starting
// with the entry of one, and returns them. A Reader that does not
// prefetch knows a run once it returned one of its events.
func (r *Reader) RunAhead() (RunAhead, bool) {
	run := r.runAhead()
	if run == nil || run.exit != nil || run.index == run.calls {
		return RunAhead{}, false
	}
	a := RunAhead{Tid: run.tid, Rip: run.rip, Flags: run.flags, Cur: &run.cur,
		Records: run.recs[run.off:], Calls: run.calls - run.index}
	a.Flagged = a.Calls
	if len(run.exits) > 0 {
		a.Flagged = run.exits[0].Index - run.index
	}
	return a, true
}

// runAhead is the run the next events belong to, if known.
func (r *Reader) runAhead() *callRun {
	if r.pf != nil {
		return r.pf.ahead() // (the other fields are its goroutine's)
	}
	if r.err != nil || r.pending != nil {
		return nil
	}
	return r.run
}

// SkipCalls drops the next k calls of the run ahead (RunAhead): Next
// returns the event after their exits, numbered as if they had been
// returned (Mark). k must not exceed the calls ahead.
func (r *Reader) SkipCalls(k int) {
	run := r.runAhead()
	if k <= 0 || run == nil || run.exit != nil || k > run.calls-run.index {
		panic(fmt.Sprintf("trace: skip %d calls of a run ahead of %v", k, run != nil))
	}
	for range k {
		run.off += int(binary.LittleEndian.Uint32(run.recs[run.off:])) // checked by decodeRun
	}
	run.index += k
	for len(run.exits) > 0 && run.exits[0].Index < run.index {
		run.exits = run.exits[1:]
	}
	done := run.done()
	if r.pf != nil {
		r.pf.evs += 2 * k
		if done {
			r.pf.run = nil
		}
		return
	}
	r.n += 2 * uint64(k)
	if done {
		r.run = nil
	}
}

// PutHead writes r's call number, result, registers, output address and
// count into the record at the start of rec (as NextCallRecord reads
// them), and not its size or output bytes.
func (r *CallRecord) PutHead(rec []byte) {
	binary.LittleEndian.PutUint32(rec[4:], uint32(r.Nr))
	binary.LittleEndian.PutUint64(rec[8:], uint64(r.Ret))
	for i, v := range r.Regs {
		binary.LittleEndian.PutUint64(rec[16+8*i:], v)
	}
	binary.LittleEndian.PutUint64(rec[128:], r.Addr)
	binary.LittleEndian.PutUint64(rec[136:], uint64(len(r.Data)))
}
