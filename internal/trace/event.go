package trace

import "github.com/gorr-debugger/gorr/internal/machine"

// Kind is the kind of an event frame.
type Kind uint8

// Event kinds. New kinds may be added at the end only.
const (
	KindInvalid Kind = iota
	// KindSyscallEntry: task Tid stopped at the entry of syscall Sysno.
	// Regs holds the registers at entry.
	KindSyscallEntry
	// KindSyscallExit: syscall Sysno of task Tid completed with Result;
	// Mem holds what the kernel wrote; Regs the registers at exit.
	KindSyscallExit
	// KindSignal: signal Signo was delivered to task Tid at the position
	// given by Regs (the registers before delivery). For a handled signal,
	// Mem holds the signal frame, Regs2 the registers at handler entry and
	// XState the extended state there. SigInfo is the 128-byte siginfo.
	// Flags (record.Sig*): 1 handled, 2 ignored, 4 fatal, 8 stopped the
	// process (job control; nothing to replay).
	KindSignal
	// KindExec: task Tid completed an execve; Maps describes the new
	// address space, Mem the bytes of its non-file mappings and of file
	// pages that differ from the file; Regs the registers after exec.
	KindExec
	// KindNewTask: task Tid created task NewTid (clone/fork/vfork);
	// Flags holds the clone flags.
	KindNewTask
	// KindExit: task Tid exited; Result holds the wait status; Mem the
	// robust futex words the kernel marked as it died in an exit call
	// (replay writes them at its PTRACE_EVENT_EXIT stop).
	KindExit
	// KindInstruction: a trapped instruction (rdtsc, rdtscp, cpuid) was
	// emulated; Regs holds registers before, Regs2 after.
	KindInstruction
	// KindMmap: a file mapping created by a syscall (attached to the
	// preceding syscall exit of Tid); Maps holds the mapping.
	KindMmap
	// KindSched: task Tid reached a preemption point between system
	// calls (it is switched out there, or a held signal is delivered
	// there). Regs are its registers at the point, Mem the identity words
	// (8-byte values the thread's loop touched), XState the XSAVE area
	// (only up to xmm15 in older traces), Checksum a memory checksum
	// leaving out Skip (0: not taken; StackSum then sums the thread's
	// stack around rsp), Flags the
	// length of the site at rip in its low byte (0: none) and in bits
	// 8-15 1 + the Regs index of the register the pad tests first (0:
	// none), PageSums the digests of the checksummed pages, Result the
	// address of a syscall instruction. See docs/preemption.md.
	KindSched
	// KindPtraceWrite: an emulated ptracer (another tracee) changed task
	// Tid while it was in an emulated ptrace stop: Mem holds bytes it
	// wrote (PTRACE_POKEDATA), Regs2 the new registers (SETREGS,
	// POKEUSER), XState the new extended state (SETFPREGS). Also: the
	// robust futex words the kernel marked FUTEX_OWNER_DIED when Tid was
	// killed (it stands at its PTRACE_EVENT_EXIT stop; a thread dying in
	// an exit call has them in its KindExit event's Mem instead).
	KindPtraceWrite
)

// Flags of KindExec and KindSyscallExit events that say where the kernel
// traps rdtsc, rdtscp and cpuid (PR_SET_TSC, cpuid faulting). Without
// them every process traps them; a process whose executable memory is
// all code the recorder scanned and patched (each such instruction an
// int3 it emulates) needs no kernel trap, which makes every context
// switch into and out of it cheaper (docs/determinism.md). Replay sets
// the same, or traps more (harmless: no untrapped process runs one of
// these instructions except through its int3).
const (
	// ExecUntrapped (KindExec): the new process runs with these
	// instructions untrapped by the kernel.
	ExecUntrapped = 1
	// TrapsAfter (KindSyscallExit): the call gave its process executable
	// memory the recorder could not scan (anonymous, writable, shared or
	// not an ELF file's code): from this event on, every thread of the
	// process traps them, each before it next runs user code.
	TrapsAfter = 0x400
)

// Regs is the x86-64 user_regs_struct in kernel order (27 words); it is
// internal/machine's, aliased here so the format's users keep the name.
type Regs = machine.Regs

// MemWrite is a span of bytes written into the tracee's memory.
type MemWrite struct {
	Addr uint64
	Data []byte
}

// Span is a range of tracee addresses.
type Span struct {
	Addr, Len uint64
}

// Mapping describes one mapping of an address space.
type Mapping struct {
	Start, End uint64
	Prot       uint32 // PROT_* bits
	Flags      uint32 // MAP_* bits (MAP_SHARED or MAP_PRIVATE, MAP_ANONYMOUS)
	Offset     uint64 // file offset
	Name       string // path as the tracee saw it, or [stack], [vdso], ...
	// File is the name, relative to the trace directory, of the captured
	// copy of the backing file; empty for anonymous mappings.
	File string
}

// Event is one frame of the event stream. Its number is implicit: the
// first event is number 1.
type Event struct {
	Kind   Kind
	Tid    int32
	Sysno  int32
	Result int64
	Signo  int32
	NewTid int32
	Flags  uint64
	// Time is when the event was recorded, in nanoseconds since the
	// recording started (0 in traces written before it existed). (It
	// sits with the fields every event's replay reads, in the struct's
	// first cache line: replay's loop reads it first.)
	Time    uint64
	Regs    *Regs
	Regs2   *Regs
	XState  []byte
	SigInfo []byte
	Mem     []MemWrite
	Maps    []Mapping
	// Text carries a free-form string (exec path, command line joined
	// with NUL bytes for KindExec).
	Text string
	// Checksum, when non-zero, is a checksum of the process's writable
	// memory after the event (record --checksum); replay verifies it.
	Checksum uint64
	// StackSum, when non-zero, is a checksum of the stack of task Tid
	// around its stack pointer (KindSched points taken without Checksum).
	StackSum uint64
	// Skip lists the bytes a KindSched event's Checksum (or a system
	// call exit's, the thread's dead stack only) leaves out: the
	// output buffers of system calls other threads of the process had in
	// flight (the kernel may write them at any moment; replay writes them
	// at those threads' exit events).
	Skip []Span
	// PageSums, for a KindSched event with Checksum, lists the pages the
	// checksum covers with a 16-bit digest of each (asyncpoint.PageSums
	// encoding): replay finds which pages differ at a candidate arrival.
	PageSums []byte
}
