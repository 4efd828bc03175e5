// Package syscallbuf is gorr's in-process system-call buffer: a small
// piece of code mapped into every recorded process at a fixed address
// (Base) that makes the common, side-effect-light system calls itself
// and appends each result, with the registers it was made with and the
// bytes the kernel wrote, to a buffer in the same mapping. A seccomp
// filter (Filter) lets only that code's own syscall instruction through
// without a ptrace stop; the recorder drains the buffer into ordinary
// SYSCALL_ENTRY/SYSCALL_EXIT events at the thread's next stop (Next,
// Record.Events), marked EventFlag. The libc and static-binary wrappers
// that make these calls are redirected to the code by patching
// `syscall; cmp $imm32, %rax` sites into jumps to per-site trampolines
// (Scan, Patch).
//
// In replay the same code runs. The replayer may write the results and
// output bytes of a stretch of buffered calls into the buffer ahead of
// the thread (Place, HdrReplayLeft): the stub then takes each call's
// result from there instead of making it, fills in the rest of the
// record as after a real call, and the replayer compares the records
// with the recording at the thread's next stop (internal/replay).
//
// The package only knows the layout and the bytes; internal/record
// injects them.
package syscallbuf

import (
	"encoding/binary"
	"fmt"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/trace"
)

//go:generate sh gen.sh

// Layout is the version of the stub, the mapping's layout and the record
// format. The trace header stores it (SyscallBufferLayout); replay
// refuses a trace recorded with another one, as its stub would not be
// the code the recording ran. 0 in headers: the first layout (128-byte
// header, 0x90000-byte mapping), before the field existed; 2: the stub
// without the replay fields (HdrReplayLeft, HdrReplaying) and drained
// events without EventFlag; 3: without HdrReplayStop and ReplayEnd; 4: without
// DeschedEntry (a blocked call kept the buffer locked); 5: without
// HdrYield; 6: ioctl TCGETS and rt_sigaction queries traced; 7:
// rt_sigaction that sets an action traced; 8: the path-based xattr calls,
// readlink(at) and the calls that change only names and metadata
// (mkdir, unlink, rename, link, symlink, chmod, chown and their variants,
// setxattr, removexattr) traced; 9: mmap, mprotect, munmap, brk,
// madvise and prlimit64 traced, write, pwrite64 and close of fds 0-2
// always traced (no HdrStdio), a 256-byte header; 10: without RdtscEntry
// and RdtscNr; 11: mmap of a file always traced (no HdrPendLo, HdrPendHi);
// 12: the vDSO's clock_gettime redirected as any `mov; syscall; ret`
// function (no VclockEntry, VclockSlot), records up to the buffer's end
// (no VstackLen); 13: the stub never made a call in replay (no
// RexecInsn, ExecMark), the seccomp program at Base+0xc00; 14: the stub
// made no brk in replay, the seccomp program at Base+0xc40 and its
// sock_fprog at Base+0xf00.
const Layout = 15

// EventFlag is set in the Flags of the SYSCALL_ENTRY and SYSCALL_EXIT
// events drained from the buffer (layout 3 on), which replay may take
// through the buffer without a stop per call.
const EventFlag = 0x100

// YieldFlag is set in the Flags of the SYSCALL_ENTRY event of the call
// the stub traced because the recorder had set HdrYield (the thread's
// timeslice was over): replay sets HdrYield before running the thread
// to that event.
const YieldFlag = 0x200

// CheckTrace says why a trace recorded with the buffer cannot be
// replayed by this gorr (nil when it can, or when the buffer was off).
func CheckTrace(h trace.Header) error {
	if !h.SyscallBuffer || h.SyscallBufferLayout == Layout {
		return nil
	}
	return fmt.Errorf("the trace was recorded with system-call buffer layout %d and this gorr replays layout %d only: replay it with the gorr that recorded it (%s)", h.SyscallBufferLayout, Layout, h.GorrVersion)
}

// The mapping at Base (Size bytes, private, anonymous): the stub's code
// page, the trampolines, then the buffer: a header followed by records.
const (
	Base      = 0x70000000
	TrampBase = Base + 0x1000
	TrampEnd  = Base + 0x10000
	Hdr       = Base + 0x10000
	BufSize   = 0x100000
	// VstackLen is the end of the buffer that holds no records: the
	// stack the stub calls the vDSO's clock_gettime on (zeroed after
	// each call, as replay, which does not make it, finds it).
	VstackLen = 1024
	// Cap is the bytes of records the buffer holds.
	Cap      = BufSize - HdrLen - VstackLen
	Size     = 0x110000
	FilterAt = Base + 0xc80 // the seccomp program, in the code page
	// VclockSlot (u64, the code page's last word) is the address of the
	// vDSO's own clock_gettime made callable again (VclockCode), or 0: a
	// clock_gettime that came through VclockEntry then reads the clock
	// there, without a system call, for the clocks the vDSO reads itself
	// (stub_amd64.S vclock_call). The record is that of the system call
	// either way. The recorder writes it after the exec's snapshot, so
	// that replay, which must make the call (or take it from the record)
	// where the recording made it, never has it; the code page is not
	// writable, so no checksum sees the difference.
	VclockSlot = Base + 0xff8

	// Header fields (u32 each, at Hdr+offset).
	HdrFill   = 0  // bytes of records after the header
	HdrLocked = 4  // the stub is between its reservation and its commit
	HdrTraced = 8  // set by the recorder: the call was recorded by ptrace
	HdrGen    = 12 // incremented each time the stub empties the buffer
	// HdrDisabled, set by the recorder, sends every call through ptrace
	// (a process whose writes or calls need what only a stop can see:
	// its own seccomp filter, a MAP_SHARED file, /proc/PID/mem).
	HdrDisabled = 16
	// HdrNoWrites, set by the recorder, sends the calls that change a
	// file's data (write, pwrite64, copy_file_range, ioctl FICLONE)
	// through ptrace: the process maps a file MAP_SHARED or has
	// /proc/PID/mem open, and the recorder must capture what such a write
	// changes in memory.
	HdrNoWrites = 20
	// HdrReplayLeft, set by the replayer only, is the number of calls
	// to come whose records it wrote into the buffer (Place): the stub
	// takes their results from there instead of making them, one record
	// a call, decrementing it. Always 0 in a recording.
	HdrReplayLeft = 24
	// HdrReplaying is set by the stub between taking a replayed call's
	// result and copying its output bytes out of the record (0 again
	// when the call returns).
	HdrReplaying = 28
	// HdrReplayStop, set by the replayer only, makes the stub trap
	// (int3 at ReplayEnd) when it takes the last call HdrReplayLeft
	// counted, before that call's result; it clears it.
	HdrReplayStop = 32
	// HdrProbeNr is the number of the call the stub probes without
	// blocking (a futex wait, poll, epoll_wait, epoll_pwait, made first
	// with a zero timeout), 0 for others; HdrProbeArg (u64) the argument
	// the probe replaced (the timeout). The stub sets both at the call's
	// entry and, after the probe, makes the call again as the program
	// made it, traced, when the probe says it would block
	// (stub_amd64.S probed). Hdr+48..Hdr+64 stays zero: the probe's
	// zero timespec (HdrZeroTS).
	HdrProbeNr  = 36
	HdrProbeArg = 40
	HdrZeroTS   = 48
	// HdrBlocked..+64 is a bit per descriptor 0-511 whose buffered read
	// or write blocked (set by the stub's desched_entry, cleared by a
	// close through the stub): the stub traces its reads and writes,
	// except every 64th of those calls (counted in HdrBlockedN, u32, for
	// all descriptors), which clears the bit and is buffered.
	HdrBlocked  = 64
	HdrBlockedN = 248
	// HdrYield, set by the recorder when the running thread's timeslice
	// is over, sends the next call through the stub to ptrace (the
	// stub clears it): the recorder switches threads at that call's
	// stop, with no asynchronous point to take. The replayer sets it
	// before running a thread to an entry marked YieldFlag; the stub
	// looks at it only when no placed calls are left (HdrReplayLeft 0).
	HdrYield = 252
	// Hdr+128..Hdr+248 is where the stub's own fstatfs of a descriptor
	// it opened for writing writes (stub_amd64.S, opened).
	//
	// HdrStdio (u32) has a bit per descriptor 0-2 whose write and
	// pwrite64 calls the stub traces: set by the recorder while the
	// descriptor may be its own stdout or stderr (their output is
	// echoed in replay, which needs the stop), cleared by the recorder
	// when a traced write shows that it is not; a close through the
	// stub sets it (the number may be given to another file next), and
	// so does the recorder after dup2, dup3, close_range and traced
	// closes onto those numbers.
	HdrStdio = 256
	// HdrPendLo and HdrPendHi (u64 each) bound the files mapped through
	// the buffer (private, not executable) since the thread's last
	// traced call through the stub (0, 0 when none): the stub traces a
	// munmap or MAP_FIXED mmap that reaches them (mprotect and madvise
	// leave the file mapped), so that each such file is still mapped
	// when the recorder drains the call at the thread's next stop and
	// captures it (internal/record drainedFileMap). The stub sets both
	// after such an mmap and clears HdrPendHi when it makes a traced
	// call.
	HdrPendLo = 264
	HdrPendHi = 272
	HdrLen    = 512 // records start at Hdr+HdrLen

	recHdr = trace.CallRecordHead // record header; the written bytes follow
)

// Addresses of the stub's entry and instructions.
const (
	Entry = Base + offEntry
	// ResetRet is the address after the traced call the stub makes when
	// the buffer is full (it empties the buffer after it).
	ResetRet = Base + offResetInsn + 2
	// SyscallRet is the address after the buffered syscall instruction
	// (the instruction pointer the seccomp filter and ptrace see).
	SyscallRet = Base + offScRet
	// SyscallInsn is the buffered syscall instruction itself (where a
	// call the kernel restarts after a signal handler resumes).
	SyscallInsn = SyscallRet - 2
	// ReplayEnd is the stub's int3 after the last call of a stretch the
	// replayer placed with HdrReplayStop (replay only): the thread stops
	// with rip ReplayEnd+1.
	ReplayEnd = Base + offReplayEnd
	// DeschedEntry is where the recorder moves a thread whose buffered
	// call blocked (it stood at SyscallRet with a restart code): the stub
	// releases the buffer and makes the call again from DeschedRet-2, a
	// traced instruction, then returns (stub_amd64.S desched_entry).
	DeschedEntry = Base + offDeschedEntry
	// DeschedRet is the address after that traced instruction.
	DeschedRet = Base + offDeschedInsn + 2
	// TracedRet is the address after the stub's traced syscall
	// instruction (calls it does not buffer, and yields).
	TracedRet = Base + offTracedInsn + 2
	// YieldJcc is the stub's jump to its yield path, right after it
	// read HdrYield; YieldPath..TracedRet-2 is that path, which clears
	// HdrYield just before the traced syscall (see YieldTaken).
	YieldJcc  = Base + offYieldJcc
	YieldPath = Base + offYield
	// RdtscEntry is what the rdtsc trampolines call instead of the
	// instruction: it returns the counter in edx:eax and keeps every
	// other register and the flags (stub_amd64.S rdtsc_entry).
	RdtscEntry = Base + offRdtscEntry
	// RdtscInsn is the rdtsc the stub executes for a buffered RdtscNr
	// call (recording only). Where the kernel traps rdtsc (PR_SET_TSC)
	// the recorder answers its SIGSEGV without an event of its own: the
	// count is the call's result.
	RdtscInsn = Base + offRdtscInsn
	// RdtscTrap is the int3-patched rdtsc RdtscEntry runs instead of the
	// call in a process whose calls are all traced (HdrDisabled).
	RdtscTrap = Base + offRdtscTrap
	// VclockEntry is where the vDSO's clock_gettime is redirected (a
	// site marked Vclock): a buffered clock_gettime that reads the vDSO
	// when VclockSlot allows it.
	VclockEntry = Base + offVclockEntry
	// RexecInsn is the syscall instruction from which the stub makes, in
	// replay, a placed call whose record the replayer marked (ExecMark):
	// a call that changes the address space, which replay must make too.
	// Replay runs such a stretch with PTRACE_CONT (stub_amd64.S
	// replayed).
	RexecInsn = Base + offRexecInsn
)

// A record the replayer places (Place) for a call the stub makes for
// real (PlaceExec) holds ExecMark at RecExecMark and, for an mmap, the
// flags to map with at RecExecFlags: where the stub writes the output
// region's address and size only after the call.
const (
	ExecMark     = 0x6b72616d63657865
	RecExecMark  = 128
	RecExecFlags = 136
)

// VclockCode is the block at t that makes the vDSO's clock_gettime,
// whose first instructions the redirection overwrote, callable at t+16:
// those instructions (displaced, relocatable: no branch, nothing
// relative to rip), then a jump to the rest of the function at back.
// Its first 16 bytes are the slots (t+16, back), as in Trampoline.
func VclockCode(t, back uint64, displaced []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, t+16)
	b = binary.LittleEndian.AppendUint64(b, back)
	b = append(b, displaced...)
	b = append(b, 0xff, 0x24, 0x25) // jmp *(t+8)
	b = binary.LittleEndian.AppendUint32(b, uint32(t+8))
	return b
}

// YieldTaken tells whether a thread stopped with registers regs has
// taken the yield the recorder asked for (HdrYield) although the word
// may still read 1: it read it and is about to jump to the yield path
// (at YieldJcc with ZF clear), or is on that path before the traced
// syscall. (In a recording no placed calls send it back from there.)
func YieldTaken(regs *trace.Regs) bool {
	const zf = 1 << 6
	rip := regs[machine.RIP]
	return rip == YieldJcc && regs[machine.EFLAGS]&zf == 0 || rip >= YieldPath && rip < TracedRet-2
}

// IsStub tells whether addr is in the stub's code or trampolines.
func IsStub(addr uint64) bool { return addr >= Base && addr < TrampEnd }

// Buffered lists the calls the stub may buffer: those the declarative
// table (internal/linux) marks Buffered, and RdtscNr; stub_amd64.S must
// match it (TestStubMatchesTable). The stub decides from a call's
// arguments whether it makes it itself; every other call it is handed
// goes through a traced syscall instruction.
var Buffered = append(linux.BufferedCalls(), RdtscNr)

var buffered = func() (b [linux.MaxNr + 1]bool) {
	for _, nr := range Buffered {
		if nr <= linux.MaxNr {
			b[nr] = true
		}
	}
	return b
}()

// IsBuffered tells whether nr is in Buffered.
func IsBuffered(nr int) bool {
	return nr == RdtscNr || nr >= 0 && nr < len(buffered) && buffered[nr]
}

// RdtscNr is gorr's own call number for an rdtsc instruction that a
// trampoline sends to the stub (RdtscEntry): above every Linux number,
// so that the kernel answers it with ENOSYS. Buffered, the stub reads the
// counter after that answer and makes it the call's result (the
// recording's SYSCALL_EXIT, which replay hands back as any buffered
// call's); traced, the recorder answers it with the counter itself.
// Replay never reads the counter: the result is in the trace.
const RdtscNr = 1000

// IsRdtscCall tells whether call nr made at rip is the stub's rdtsc call
// (the same number from anywhere else is an unknown call: ENOSYS).
func IsRdtscCall(nr int, rip uint64) bool { return nr == RdtscNr && IsStub(rip) }

// Code returns the stub's code page content (the code and the seccomp
// program at FilterAt).
func Code() []byte {
	page := make([]byte, 0x1000)
	copy(page, stubCode)
	copy(page[FilterAt-Base:], Filter())
	return page
}

// FilterLen is the number of instructions in Filter.
func FilterLen() int { return len(Filter()) / 8 }

const (
	bpfLdWAbs = 0x20
	bpfJeqK   = 0x15
	bpfRetK   = 0x06

	auditArchX86_64 = 0xc000003e
	retAllow        = 0x7fff0000
	retTrace        = 0x7ff00000
)

// Filter returns the classic-BPF seccomp program: ALLOW for a call in
// Buffered made from the stub's buffered syscall instruction, TRACE (a
// ptrace stop) for everything else.
func Filter() []byte {
	var p []byte
	ins := func(code uint16, jt, jf uint8, k uint32) {
		p = binary.LittleEndian.AppendUint16(p, code)
		p = append(p, jt, jf)
		p = binary.LittleEndian.AppendUint32(p, k)
	}
	n := len(Buffered)
	// Instructions: 0 ld arch, 1 jeq, 2 ld ip lo, 3 jeq, 4 ld ip hi, 5
	// jeq, 6 ld nr, 7..6+n jeq nr, 7+n ret trace, 8+n ret allow.
	trace := func(at int) uint8 { return uint8(7 + n - at - 1) }
	ins(bpfLdWAbs, 0, 0, 4)
	ins(bpfJeqK, 0, trace(1), auditArchX86_64)
	ins(bpfLdWAbs, 0, 0, 8)
	ins(bpfJeqK, 0, trace(3), uint32(SyscallRet))
	ins(bpfLdWAbs, 0, 0, 12)
	ins(bpfJeqK, 0, trace(5), uint32(uint64(SyscallRet)>>32))
	ins(bpfLdWAbs, 0, 0, 0)
	for i, nr := range Buffered {
		at := 7 + i
		ins(bpfJeqK, uint8(8+n-at-1), 0, uint32(nr))
	}
	ins(bpfRetK, 0, 0, retTrace)
	ins(bpfRetK, 0, 0, retAllow)
	return p
}

// Fprog returns a struct sock_fprog for the filter at FilterAt.
func Fprog() []byte {
	b := binary.LittleEndian.AppendUint16(nil, uint16(FilterLen()))
	b = append(b, 0, 0, 0, 0, 0, 0)
	return binary.LittleEndian.AppendUint64(b, FilterAt)
}

// FprogAt is where Fprog is kept (after the filter, in the code page).
const FprogAt = Base + 0xfe0

// Record is one buffered call, in the layout the stub writes, which the
// trace stores as it is (trace.CallRecord).
type Record = trace.CallRecord

// Next decodes the record at offset off of buf (off < len(buf)) and
// returns it with the offset of the record after it; its Data alias buf.
// A drain walks the buffer's bytes between two fill positions with it.
func Next(buf []byte, off int) (r Record, next int, err error) {
	r, next, err = trace.NextCallRecord(buf, off)
	if err != nil {
		return r, off, fmt.Errorf("syscall buffer: %w", err)
	}
	if !IsBuffered(r.Nr) {
		return Record{}, off, fmt.Errorf("syscall buffer: record at %d for call %d, which is not buffered", off, r.Nr)
	}
	return r, next, nil
}

// Events returns the SYSCALL_ENTRY and SYSCALL_EXIT events of record r
// of thread tid, with the registers ptrace would have shown at the
// call's entry stop. cur supplies what the stub does not save (segment
// registers and bases, which only traced calls change).
func Events(r *Record, tid int32, cur *trace.Regs) (entry, exit *trace.Event) {
	entry, exit = &trace.Event{Regs: new(trace.Regs)}, &trace.Event{Regs: new(trace.Regs)}
	r.EventsInto(tid, cur, SyscallRet, EventFlag, entry, exit)
	return entry, exit
}

// RecordAt is the address of the record at fill position fill.
func RecordAt(fill uint32) uint64 { return Hdr + HdrLen + uint64(fill) }

// RecordLen is the size of a record with n output bytes (the stub
// rounds it up to 8; the padding is not written).
func RecordLen(n int) uint32 { return uint32(recHdr+n+7) &^ 7 }

// RecordHead is how many bytes of a record ParseHead needs.
const RecordHead = recHdr

// Place writes a call's result and output bytes into rec, the bytes of
// the record the stub will fill when it replays the call
// (HdrReplayLeft); the stub writes the rest of the record itself. rec
// must hold RecordLen(len(data)) bytes.
func Place(rec []byte, ret int64, data []byte) {
	binary.LittleEndian.PutUint64(rec[8:], uint64(ret))
	binary.LittleEndian.PutUint64(rec[RecExecMark:], 0)
	copy(rec[recHdr:], data)
}

// PlaceExec writes into rec, the record the stub is to fill for its next
// call in replay, that the stub makes the call for real (from
// RexecInsn): an mmap at address ret with flags arg; a brk that set the
// break to ret, by mapping or unmapping the pages between arg (the old
// break, rounded up to a page) and ret rounded up (the stub picks mmap
// or munmap); any other call with its own arguments. The kernel's
// result then replaces ret, except a brk's that succeeded.
func PlaceExec(rec []byte, ret int64, arg uint64) {
	binary.LittleEndian.PutUint64(rec[8:], uint64(ret))
	binary.LittleEndian.PutUint64(rec[RecExecMark:], ExecMark)
	binary.LittleEndian.PutUint64(rec[RecExecFlags:], arg)
}

// ParseHead decodes the fixed part of the record at the start of b
// (RecordHead bytes): the size, the call, the registers, the result and
// where and how many output bytes (Data stays nil).
func ParseHead(b []byte) (r Record, size uint32, n uint64) {
	size = binary.LittleEndian.Uint32(b)
	r = Record{Nr: int(binary.LittleEndian.Uint32(b[4:])), Ret: int64(binary.LittleEndian.Uint64(b[8:]))}
	for i := range r.Regs {
		r.Regs[i] = binary.LittleEndian.Uint64(b[16+8*i:])
	}
	r.Addr = binary.LittleEndian.Uint64(b[128:])
	return r, size, binary.LittleEndian.Uint64(b[136:])
}
