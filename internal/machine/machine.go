// Package machine is the x86-64 machine model gorr shares between its
// packages (a leaf: it imports nothing of gorr's): the general
// registers in the kernel's user_regs_struct order (Regs, their indices
// and names), the system-call argument registers, and the layout of the
// XSAVE area that PTRACE_GETREGSET NT_X86_XSTATE returns.
//
// internal/ptrace, internal/trace and internal/asyncpoint use it.
// ptrace keeps aliases of the register indices (ptrace.RAX, ...),
// RegNames and SyscallArgs/SetSyscallArgs, and trace keeps trace.Regs
// as an alias of Regs, so code written against those names compiles
// unchanged.
package machine

// Regs is the x86-64 user_regs_struct in kernel order (27 words).
type Regs [27]uint64

// Indices into Regs, in user_regs_struct order.
const (
	R15 = iota
	R14
	R13
	R12
	RBP
	RBX
	R11
	R10
	R9
	R8
	RAX
	RCX
	RDX
	RSI
	RDI
	ORIGRAX
	RIP
	CS
	EFLAGS
	RSP
	SS
	FSBASE
	GSBASE
	DS
	ES
	FS
	GS
)

// RegNames names the registers in user_regs_struct order.
var RegNames = [27]string{"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss",
	"fs_base", "gs_base", "ds", "es", "fs", "gs"}

// SyscallArgs returns the six syscall argument registers.
func SyscallArgs(r *Regs) [6]uint64 {
	return [6]uint64{r[RDI], r[RSI], r[RDX], r[R10], r[R8], r[R9]}
}

// SetSyscallArgs stores six syscall arguments.
func SetSyscallArgs(r *Regs, a [6]uint64) {
	r[RDI], r[RSI], r[RDX], r[R10], r[R8], r[R9] = a[0], a[1], a[2], a[3], a[4], a[5]
}

// Layout of the XSAVE area in the standard format (as PTRACE_GETREGSET
// NT_X86_XSTATE returns it).
const (
	// LegacyLen is the size of the FXSAVE part (what PTRACE_GETFPREGS
	// returns).
	LegacyLen = 512
	// HeaderEnd is where the extended components begin (after the
	// XSAVE header).
	HeaderEnd = 576
	// YmmOffset is the AVX component (upper halves of ymm0-15), the same
	// on every x86-64 CPU that has it.
	YmmOffset = 576
	YmmLen    = 256
)
