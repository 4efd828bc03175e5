// Package asyncpoint identifies the points where gorr preempts a thread or
// delivers an asynchronous signal between system calls, without a
// hardware counter. It decodes the instructions a thread executes near
// such a point (what memory they touch, whether they can be relocated),
// picks the instruction where the point is taken, and builds the "pad"
// replay installs there: a jump to generated code that compares the
// thread's registers and the memory words of the point's identity with
// their recorded values at native speed and traps only when all match.
package asyncpoint

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/x86decode"
)

// Insn is one decoded instruction at an address.
type Insn struct {
	PC  uint64
	Len int
	// Relocatable: the instruction can be copied to another address and
	// behaves the same there (after fixing a rip-relative displacement).
	Relocatable bool
	// Event: executing it makes the thread stop at an event of its own
	// (a system call, an int3 the recorder planted, a trapped rdtsc or
	// cpuid), so no preemption point is needed before it.
	Event bool
	// Accesses are the memory words the instruction reads or writes,
	// aligned down to 8 bytes.
	Accesses []uint64
	// RepString: a string instruction with a rep prefix, or a loop,
	// loope or loopne that jumps to itself (a rep in all but name: rr's
	// delay loops are "mov $10000000, %ecx; 1: loop 1b"). Single steps
	// stop after each of its iterations (with the same rip), a point
	// there has no site and is found by a breakpoint hit once per
	// iteration; its end is the next instruction, and the stepper
	// finishes it at native speed.
	RepString bool
	// PushesFlags: pushf. Single-stepped, it pushes the trap flag the
	// step set; the stepper must clear it in the pushed word.
	PushesFlags bool
}

// Decode decodes the instruction in code (bytes at pc) with the thread's
// registers r. ok is false for bytes that do not decode.
func Decode(code []byte, pc uint64, r *trace.Regs) (Insn, bool) {
	in := Insn{PC: pc}
	if len(code) >= 1 && code[0] == 0xcc {
		in.Len, in.Event = 1, true
		return in, true
	}
	inst, err := x86decode.Decode(code)
	if err != nil {
		return in, false
	}
	in.Len = inst.Len
	switch inst.Op {
	case x86asm.SYSCALL, x86asm.SYSENTER, x86asm.INT, x86asm.INTO, x86asm.RDTSC, x86asm.RDTSCP, x86asm.CPUID, x86asm.UD2, x86asm.HLT:
		in.Event = true
		return in, true
	}
	in.Relocatable = relocatable(&inst)
	in.RepString = isString(inst.Op) && hasRep(&inst) || selfLoop(&inst)
	in.PushesFlags = inst.Op == x86asm.PUSHF || inst.Op == x86asm.PUSHFQ || inst.Op == x86asm.PUSHFD
	in.Accesses = accesses(&inst, pc, r)
	return in, true
}

func relocatable(inst *x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.JMP, x86asm.CALL, x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ, x86asm.JE, x86asm.JECXZ, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JRCXZ,
		x86asm.JS, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.XBEGIN, x86asm.XABORT, x86asm.XEND,
		x86asm.PAUSE, x86asm.ENTER, x86asm.LEAVE:
		// Control transfers; pause is fine but pointless to patch.
		return false
	}
	for _, p := range inst.Prefix {
		if p == 0 {
			break
		}
		switch p &^ (x86asm.PrefixImplicit | x86asm.PrefixIgnored | x86asm.PrefixInvalid) {
		case x86asm.PrefixREP, x86asm.PrefixREPN:
			// A string instruction can be interrupted half-way (rcx
			// counts down): an arrival there is not an instruction start.
			if isString(inst.Op) {
				return false
			}
		}
	}
	return true
}

func hasRep(inst *x86asm.Inst) bool {
	for _, p := range inst.Prefix {
		if p == 0 {
			break
		}
		switch p &^ (x86asm.PrefixImplicit | x86asm.PrefixIgnored | x86asm.PrefixInvalid) {
		case x86asm.PrefixREP, x86asm.PrefixREPN:
			return true
		}
	}
	return false
}

// selfLoop tells whether inst is a loop, loope or loopne whose target is
// itself: it repeats until rcx (or ecx) runs out, or at once for loope
// and loopne when the zero flag says so (it does not change the flags).
func selfLoop(inst *x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		rel, ok := inst.Args[0].(x86asm.Rel)
		return ok && int(rel) == -inst.Len
	}
	return false
}

// memBytes is the size of inst's memory operands: x86asm leaves it 0
// for the string instructions, whose element (the one access a step of
// a rep makes) its name gives; a byte copy ending just before a watched
// word must not count as a read of it (the stub's record copy in front
// of a variable, TestGDBReadWatchpoints with the syscall buffer).
func memBytes(inst *x86asm.Inst) int {
	switch inst.Op {
	case x86asm.MOVSB, x86asm.STOSB, x86asm.LODSB, x86asm.SCASB, x86asm.CMPSB, x86asm.INSB, x86asm.OUTSB:
		return 1
	case x86asm.MOVSW, x86asm.STOSW, x86asm.LODSW, x86asm.SCASW, x86asm.CMPSW, x86asm.INSW, x86asm.OUTSW:
		return 2
	case x86asm.MOVSD, x86asm.STOSD, x86asm.LODSD, x86asm.SCASD, x86asm.CMPSD, x86asm.INSD, x86asm.OUTSD:
		if inst.MemBytes == 0 {
			return 4
		}
	case x86asm.MOVSQ, x86asm.STOSQ, x86asm.LODSQ, x86asm.SCASQ, x86asm.CMPSQ:
		return 8
	}
	return inst.MemBytes
}

func isString(op x86asm.Op) bool {
	switch op {
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ, x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ,
		x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ, x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ,
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ, x86asm.INSB, x86asm.INSW, x86asm.INSD, x86asm.OUTSB, x86asm.OUTSW, x86asm.OUTSD:
		return true
	}
	return false
}

// regIndex maps a 64-bit general register to its index in trace.Regs.
var regIndex = map[x86asm.Reg]int{
	x86asm.RAX: machine.RAX, x86asm.RCX: machine.RCX, x86asm.RDX: machine.RDX, x86asm.RBX: machine.RBX,
	x86asm.RSP: machine.RSP, x86asm.RBP: machine.RBP, x86asm.RSI: machine.RSI, x86asm.RDI: machine.RDI,
	x86asm.R8: machine.R8, x86asm.R9: machine.R9, x86asm.R10: machine.R10, x86asm.R11: machine.R11,
	x86asm.R12: machine.R12, x86asm.R13: machine.R13, x86asm.R14: machine.R14, x86asm.R15: machine.R15,
}

// accesses lists the aligned memory words inst touches, explicitly or
// through the stack.
func accesses(inst *x86asm.Inst, pc uint64, r *trace.Regs) []uint64 {
	var out []uint64
	add := func(addr uint64, size int) {
		if size <= 0 {
			size = 8
		}
		if size > 32 {
			size = 32
		}
		for w := addr &^ 7; w < addr+uint64(size); w += 8 {
			out = append(out, w)
		}
	}
	switch inst.Op {
	case x86asm.LEA, x86asm.NOP, x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW, x86asm.CLFLUSH:
	default:
		for _, a := range inst.Args {
			m, ok := a.(x86asm.Mem)
			if !ok {
				continue
			}
			if addr, ok := effective(m, inst, pc, r); ok {
				add(addr, memBytes(inst))
			}
		}
	}
	sp := r[machine.RSP]
	switch inst.Op {
	case x86asm.PUSH, x86asm.PUSHF, x86asm.PUSHFQ, x86asm.CALL:
		add(sp-8, 8)
	case x86asm.POP, x86asm.POPF, x86asm.POPFQ, x86asm.RET:
		add(sp, 8)
	}
	return out
}

func effective(m x86asm.Mem, inst *x86asm.Inst, pc uint64, r *trace.Regs) (uint64, bool) {
	var addr uint64
	switch m.Segment {
	case 0, x86asm.DS, x86asm.SS, x86asm.ES, x86asm.CS:
	case x86asm.FS:
		addr = r[machine.FSBASE]
	case x86asm.GS:
		addr = r[machine.GSBASE]
	default:
		return 0, false
	}
	switch {
	case m.Base == x86asm.RIP:
		addr += pc + uint64(inst.Len)
	case m.Base != 0:
		i, ok := regIndex[m.Base]
		if !ok {
			return 0, false
		}
		addr += r[i]
	}
	if m.Index != 0 {
		i, ok := regIndex[m.Index]
		if !ok {
			return 0, false
		}
		addr += r[i] * uint64(m.Scale)
	}
	return addr + uint64(m.Disp), true
}

// ripRelative reports whether inst addresses memory relative to rip.
func ripRelative(inst *x86asm.Inst) (int64, bool) {
	for _, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RIP {
			return m.Disp, true
		}
	}
	return 0, false
}
