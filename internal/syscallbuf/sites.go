package syscallbuf

import (
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/x86decode"
)

// Site is a redirectable system call in an ELF file: at Off (a file
// offset) `syscall` followed by Disp, the instructions displaced into the
// trampoline (at least 5 bytes, so that a 7-byte jump fits: glibc's
// `cmp $imm32, %rax|%eax`, or `mov %eax, %edx; [neg %edx;] cmp $imm32,
// %eax`; see displaced), with the number set just before by `mov $nr,
// %eax` or `xor %eax, %eax` to a call in Buffered, or by `mov %rdi, %rax`
// (glibc's syscall(2), Nr DynNr: the stub looks at the number it is
// handed).
//
// With Pre set (musl's `__syscall_cp_c`, whose `syscall; ret` is too
// short for the jump), the instructions just before the syscall are
// displaced too, run first by the trampoline, and Off is the first one's
// offset.
//
// With Ret set the site is a whole function `mov $nr, %eax; syscall;
// ret` (glibc's getpid and the like, and the vDSO functions gorr
// rewrites into that form), and Off is the mov's offset.
//
// With Vsys set the site is a call into the legacy vsyscall page, `mov
// $0xffffffffff600000|400|800, %rax; call *%rax` (Off the mov's offset,
// Nr the call the page's entry makes): the kernel emulates those calls
// without a syscall stop, and only the buffer's seccomp filter would
// see them. The mov's immediate is redirected to a trampoline that
// makes the call through the stub and returns as the page does.
//
// With TailLen set, Disp is followed by a direct jump of TailLen bytes to
// the function at file offset Tail (musl's `syscall; mov %rax, %rdi; jmp
// __syscall_ret`): the trampoline jumps there instead of back.
type Site struct {
	Off  uint64
	Nr   int
	Pre  []byte `json:",omitempty"`
	Disp []byte
	Ret  bool
	Vsys bool `json:",omitempty"`
	// Vclock marks the vDSO's clock_gettime (a Ret site the recorder
	// found in the vDSO it rewrote, never one scanned from a file): its
	// trampoline jumps to VclockEntry.
	Vclock  bool   `json:"-"`
	Tail    uint64 `json:",omitempty"`
	TailLen int    `json:",omitempty"`
}

// DynNr is the Nr of a site whose number is only known at run time.
const DynNr = -2

// Len is how many bytes the patch replaces.
func (s *Site) Len() uint64 {
	if s.Vsys {
		return vsysLen
	}
	if s.Ret {
		return siteLen
	}
	return uint64(len(s.Pre)) + 2 + uint64(len(s.Disp)) + uint64(s.TailLen)
}

// siteLen is how many bytes a patched `mov; syscall; ret` site replaces.
const siteLen = 8

// vsysLen is the length of a vsyscall call site (mov, call).
const vsysLen = 9

// VsyscallBase is the legacy vsyscall page: gettimeofday at +0, time at
// +0x400, getcpu at +0x800.
const VsyscallBase = 0xffffffffff600000

// vsysNr maps a vsyscall entry's offset in the page to its call.
var vsysNr = map[uint32]int{0: 96, 0x400: 201, 0x800: 309}

// isVsysCall tells whether code starts with `mov $entry, %rax; call
// *%rax` for an entry of the vsyscall page, and which call it makes.
func isVsysCall(code []byte) (int, bool) {
	if len(code) < vsysLen || code[0] != 0x48 || code[1] != 0xc7 || code[2] != 0xc0 || code[7] != 0xff || code[8] != 0xd0 {
		return 0, false
	}
	imm := binary.LittleEndian.Uint32(code[3:])
	if imm&^0xfff != uint32(VsyscallBase&0xffffffff) {
		return 0, false
	}
	nr, ok := vsysNr[imm&0xfff]
	return nr, ok
}

// maxDisp bounds the displaced instructions, maxPre those displaced
// from before the syscall.
const (
	maxDisp = 16
	maxPre  = 8
)

// trampLen is the space each trampoline takes: two 8-byte slots (the
// trampoline's code address, the address to return to) and the code.
const trampLen = 64

// TrampLen is the size of a trampoline block (the recorder allocates
// blocks of its own, such as VclockCode's, the same way).
const TrampLen = trampLen

// Scan finds the sites in the executable sections of an ELF file. Each
// is confirmed by decoding its function from the start, and skipped when
// a direct branch of the function lands inside the replaced bytes.
func Scan(r io.ReaderAt) ([]Site, error) {
	sections, err := patch.CodeSections(r)
	if err != nil {
		return nil, err
	}
	// The function starts again, with those of a Go binary linked
	// without symbols (.gopclntab), and every symbol's address.
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	starts := patch.FuncStarts(f)
	if len(starts) == 0 {
		starts = goFuncStarts(f)
	}
	var syms []uint64 // every symbol's address, of any type
	if ss, err := f.Symbols(); err == nil {
		for _, y := range ss {
			if y.Value != 0 {
				syms = append(syms, y.Value)
			}
		}
	}
	var out []Site
	for s := range sections {
		data := s.Data
		cands := map[int]bool{}
		for i := 0; i+siteLen <= len(data); i++ {
			if data[i] == 0x0f && data[i+1] == 0x05 {
				cands[i] = true
			}
			if isRetSite(data[i:]) {
				cands[i] = true
			}
			if _, ok := isVsysCall(data[i:]); ok {
				cands[i] = true
			}
		}
		if len(cands) == 0 {
			continue
		}
		// Each candidate's function, from its start to the next one
		// (s.Func's bounds, with the .gopclntab starts of a Go binary
		// without symbols).
		ends := map[int]int{}
		isSym := map[int]bool{} // the start is a function's, not the section's
		for c := range cands {
			addr := s.Addr + uint64(c)
			i := sort.Search(len(starts), func(i int) bool { return starts[i] > addr }) - 1
			b, e := 0, len(data)
			if i >= 0 && starts[i] >= s.Addr {
				b = int(starts[i] - s.Addr)
				isSym[b] = true
			}
			if i+1 < len(starts) && starts[i+1] < s.Addr+uint64(len(data)) {
				e = int(starts[i+1] - s.Addr)
			}
			ends[b] = e
		}
		funcs := map[int]bool{} // the function starts in the section
		for _, a := range starts {
			if a >= s.Addr && a < s.Addr+uint64(len(data)) {
				funcs[int(a-s.Addr)] = true
			}
		}
		found := map[int]found{} // syscall offset -> number, displaced bytes
		for b, e := range ends {
			decodeSites(data, b, e, isSym[b], funcs, cands, found)
		}
		// A symbol inside the replaced bytes is a label code may jump
		// to or look for (musl's __cp_end, which its cancellation
		// handler compares the interrupted pc with).
		for _, v := range syms {
			if v < s.Addr || v >= s.Addr+uint64(len(data)) {
				continue
			}
			at := int(v - s.Addr)
			for c, f := range found {
				n := siteLen
				if f.disp > 0 {
					n = 2 + f.disp + f.tailLen
				}
				if f.vsys {
					n = 7
				}
				if at > c-f.pre && at < c+n {
					delete(found, c)
				}
			}
		}
		offs := make([]int, 0, len(found))
		for c := range found {
			offs = append(offs, c)
		}
		sort.Ints(offs)
		for _, c := range offs {
			fo := s.Offset + uint64(c)
			f := found[c]
			st := Site{Off: fo, Nr: f.nr, Ret: f.disp == 0 && !f.vsys, Vsys: f.vsys}
			if f.disp > 0 {
				st.Disp = append([]byte(nil), data[c+2:c+2+f.disp]...)
			}
			if f.tailLen > 0 {
				st.Tail, st.TailLen = s.Offset+uint64(f.tail), f.tailLen
			}
			if f.pre > 0 {
				st.Off -= uint64(f.pre)
				st.Pre = append([]byte(nil), data[c-f.pre:c]...)
			}
			if k := len(out) - 1; k >= 0 && out[k].Off+out[k].Len() > st.Off {
				continue // overlaps the previous one (a `mov; syscall; ret` function's)
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// goFuncStarts returns the function entries a Go binary without a
// symbol table (linked with -s) still lists in its .gopclntab, sorted;
// nil if it has none.
func goFuncStarts(f *elf.File) []uint64 {
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil
	}
	data, err := pcln.Data()
	if err != nil {
		return nil
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil
	}
	out := make([]uint64, 0, len(tab.Funcs))
	for _, fn := range tab.Funcs {
		out = append(out, fn.Entry)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// found is a confirmed site: its number, how many bytes after the
// syscall instruction are displaced (0: a `mov; syscall; ret` function,
// or with vsys a vsyscall call site) and how many before it.
type found struct {
	nr, disp, pre int
	vsys          bool
	tail, tailLen int // a jump to the function at tail ends the displaced code
}

// decodeSites decodes the function [start, end), noting each candidate
// that is a real syscall instruction preceded by an instruction that sets
// eax to a buffered number (or copies it from rdi, or loads it from the
// stack: Go's ABI0 syscall stubs), or that uses the number its caller
// left in rax (sym: start is a function symbol's, and nothing before the
// syscall writes rax; Go's register-ABI Syscall6), and followed by
// instructions that can be displaced, unless a branch in the function
// lands inside the replaced bytes.
func decodeSites(data []byte, start, end int, sym bool, funcs, cands map[int]bool, out map[int]found) {
	prevNr := -1
	if sym {
		prevNr = DynNr
	}
	targets := map[int]bool{}
	var got []int
	var prev []int // the starts of the instructions since the last that cannot be displaced
	for pc := start; pc < end && pc < len(data); {
		inst, err := x86decode.Decode(data[pc:])
		if err != nil || inst.Len == 0 {
			pc++
			prevNr = -1
			prev = prev[:0]
			continue
		}
		if rel, ok := inst.Args[0].(x86asm.Rel); ok {
			targets[pc+inst.Len+int(rel)] = true
		}
		if nr, ok := isVsysCall(data[pc:]); ok && cands[pc] && inst.Len == 7 {
			out[pc] = found{nr: nr, vsys: true}
			got = append(got, pc)
		}
		if cands[pc] && isRetSite(data[pc:]) {
			out[pc] = found{nr: int(binary.LittleEndian.Uint32(data[pc+1:]))}
			got = append(got, pc)
		}
		if inst.Op == x86asm.SYSCALL && cands[pc] && (prevNr >= 0 && IsBuffered(prevNr) || prevNr == DynNr) {
			if n := displaced(data[pc+2 : min(len(data), end)]); n > 0 {
				out[pc] = found{nr: prevNr, disp: n}
				got = append(got, pc)
			} else if n, jl, to := jmpTail(data[pc+2 : min(len(data), end)]); n > 0 && funcs[pc+2+n+jl+to] {
				// A tail call: the flags are dead at a function's entry.
				out[pc] = found{nr: prevNr, disp: n, tail: pc + 2 + n + jl + to, tailLen: jl}
				got = append(got, pc)
			} else if n := retTail(data[pc+2 : min(len(data), end)]); n > 0 && sym {
				// Too short: take the moves before the syscall too.
				for i := len(prev) - 1; i >= 0; i-- {
					pre := pc - prev[i]
					if pre > maxPre {
						break
					}
					if pre+2+n >= 7 && pre+n <= maxDisp { // (the trampoline has room for maxDisp)
						out[pc] = found{nr: prevNr, disp: n, pre: pre}
						got = append(got, pc)
						break
					}
				}
			}
		}
		if preMovable(inst) {
			prev = append(prev, pc)
		} else {
			prev = prev[:0]
		}
		switch {
		case inst.Len == 5 && data[pc] == 0xb8: // mov $imm32, %eax
			prevNr = int(binary.LittleEndian.Uint32(data[pc+1:]))
		case inst.Len == 2 && data[pc] == 0x31 && data[pc+1] == 0xc0: // xor %eax, %eax
			prevNr = 0
		case inst.Len == 3 && data[pc] == 0x48 && data[pc+1] == 0x89 && data[pc+2] == 0xf8: // mov %rdi, %rax
			prevNr = DynNr
		case inst.Op == x86asm.MOV && inst.Args[0] == x86asm.RAX && isStackSlot(inst.Args[1]): // mov N(%rsp), %rax
			prevNr = DynNr
		case inst.Op == x86asm.MOV && !targets[pc] && !writesRAX(inst):
			// A move into another register keeps eax's number.
		case inst.Op == x86asm.XOR && !targets[pc] && inst.Args[0] == inst.Args[1] && !writesRAX(inst):
			// So does zeroing another register (glibc's getrlimit:
			// `mov $302, %eax; xor %edi, %edi; syscall`).
		default:
			prevNr = -1
		}
		pc += inst.Len
	}
	for _, c := range got {
		n := siteLen
		if d := out[c].disp; d > 0 {
			n = 2 + d + out[c].tailLen
		}
		if out[c].vsys {
			n = 7 // only the mov's immediate changes
		}
		for k := 1 - out[c].pre; k < n; k++ {
			if targets[c+k] {
				delete(out, c)
			}
		}
	}
}

// preMovable tells whether inst can run in a trampoline before the
// stub's call: a move that neither branches, addresses memory other than
// through rsp, nor changes rsp.
func preMovable(inst x86asm.Inst) bool {
	if inst.Op != x86asm.MOV {
		return false
	}
	for _, a := range inst.Args {
		switch a := a.(type) {
		case x86asm.Rel:
			return false
		case x86asm.Mem:
			if !isStackSlot(a) {
				return false
			}
		case x86asm.Reg:
			if a == x86asm.RSP || a == x86asm.ESP || a == x86asm.SP {
				return false
			}
		}
	}
	return true
}

// jmpTail returns, for code that is moves (as preMovable allows them)
// followed by a direct unconditional jump, at least 5 bytes in all, the
// moves' length, the jump's and its displacement; zeros if it is not.
func jmpTail(code []byte) (n, jl, rel int) {
	for n < maxDisp {
		inst, err := x86decode.Decode(code[n:])
		if err != nil || inst.Len == 0 || n+inst.Len > maxDisp {
			return 0, 0, 0
		}
		if r, ok := inst.Args[0].(x86asm.Rel); ok && inst.Op == x86asm.JMP {
			if n == 0 || n+inst.Len < 5 {
				return 0, 0, 0
			}
			return n, inst.Len, int(r)
		}
		if !preMovable(inst) {
			return 0, 0, 0
		}
		n += inst.Len
	}
	return 0, 0, 0
}

// retTail returns the length of code that is moves (as displaced allows
// them) ending with a plain ret, at most maxDisp bytes; 0 if it is not.
func retTail(code []byte) int {
	for n := 0; n < maxDisp; {
		inst, err := x86decode.Decode(code[n:])
		if err != nil || inst.Len == 0 || n+inst.Len > maxDisp {
			return 0
		}
		if inst.Op == x86asm.RET && inst.Args[0] == nil {
			return n + inst.Len
		}
		if !preMovable(inst) {
			return 0
		}
		n += inst.Len
	}
	return 0
}

// displaced returns how many bytes of code (what follows a syscall
// instruction) the trampoline can run in their place: whole instructions,
// at least 5 bytes and at most maxDisp, that do not branch, move to or
// from memory only through a register (so they run the same anywhere:
// the trampoline runs them with the site's registers) or relative to rip
// as ripMoveLen allows (the trampoline uses the same address), and of
// which one sets the flags before any reads them (the stub changes the
// flags a syscall keeps): moves, neg, cmp and test; or moves ending with
// the function's ret (the flags are dead after it: Go's `MOVL AX,
// ret+N(FP); RET`). 0 if there are none such.
func displaced(code []byte) int {
	n, grown, setFlags := 0, 0, false
	for n < 5 || !setFlags {
		inst, err := x86decode.Decode(code[n:])
		if err != nil || inst.Len == 0 || n+inst.Len > maxDisp {
			return 0
		}
		if inst.Op == x86asm.RET && inst.Args[0] == nil {
			if n+inst.Len < 5 {
				return 0
			}
			return n + inst.Len
		}
		if l, more := ripMoveLen(code[n:]); l > 0 {
			// Trampoline moves it, more bytes longer (glibc's brk
			// functions store their result so).
			if grown += more; n+inst.Len+grown > maxMoved {
				return 0
			}
			n += inst.Len
			continue
		}
		for _, a := range inst.Args {
			switch a.(type) {
			case x86asm.Rel:
				return 0
			case x86asm.Mem:
				if inst.Op != x86asm.MOV || !isRegRelative(a) {
					return 0
				}
			}
		}
		switch inst.Op {
		case x86asm.MOV:
		case x86asm.NEG, x86asm.CMP, x86asm.TEST:
			setFlags = true
		default:
			return 0
		}
		n += inst.Len
	}
	return n
}

// isRetSite tells whether code starts with `mov $nr, %eax; syscall; ret`
// for a buffered nr.
func isRetSite(code []byte) bool {
	return len(code) >= siteLen && code[0] == 0xb8 && code[5] == 0x0f && code[6] == 0x05 && code[7] == 0xc3 &&
		IsBuffered(int(binary.LittleEndian.Uint32(code[1:])))
}

// ScanMem finds the `mov $nr, %eax; syscall; ret` functions in code
// that gorr wrote itself (the rewritten vDSO), as sites at offsets into
// code.
func ScanMem(code []byte) []Site {
	var out []Site
	for i := 0; i+siteLen <= len(code); i++ {
		if isRetSite(code[i:]) {
			out = append(out, Site{Off: uint64(i), Nr: int(binary.LittleEndian.Uint32(code[i+1:])), Ret: true})
		}
	}
	return out
}

// maxMoved bounds the displaced instructions as a trampoline holds them
// (moveRipRelative): what is left of trampLen besides the slots, the
// call and the jump back.
const maxMoved = trampLen - 41

// ripMoveLen tells whether the instruction at the start of code is a
// RIP-relative move that a trampoline (far from the code) makes to the
// same absolute address instead (moveRipRelative), and returns its
// length and how many bytes longer it gets: `mov %rax, disp32(%rip)` or
// `mov %eax, disp32(%rip)` (48 89 05 or 89 05, then the displacement),
// made `movabs %rax|%eax, addr64` (48 a3 or a3, then the address), and
// `mov disp32(%rip), %reg64` (REX.W [REX.R] 8b, ModRM 00 reg 101) into a
// register other than rsp, rbp, r12 and r13, made `movabs $addr64, %reg;
// mov (%reg), %reg`. 0 for any other instruction.
func ripMoveLen(code []byte) (n, more int) {
	switch {
	case len(code) >= 7 && code[0] == 0x48 && code[1] == 0x89 && code[2] == 0x05:
		return 7, 3
	case len(code) >= 6 && code[0] == 0x89 && code[1] == 0x05:
		return 6, 3
	case len(code) >= 7 && (code[0] == 0x48 || code[0] == 0x4c) && code[1] == 0x8b && code[2]&0xc7 == 0x05:
		switch code[2] >> 3 & 7 {
		case 4, 5: // rsp, rbp, r12, r13: (%reg) needs another encoding
			return 0, 0
		}
		return 7, 6
	}
	return 0, 0
}

// moveRipRelative returns disp, the instructions displaced from addr
// on, with each RIP-relative move (ripMoveLen) replaced by the move to
// or from the same absolute address, and every other instruction as it
// is.
func moveRipRelative(disp []byte, addr uint64) []byte {
	// Most displaced instructions hold no such move at any offset; they
	// are copied without decoding them (a recorder patches every site of
	// libc in each process it starts).
	plain := true
	for i := range disp {
		if n, _ := ripMoveLen(disp[i:]); n > 0 {
			plain = false
			break
		}
	}
	if plain {
		return disp
	}
	var out []byte
	for i := 0; i < len(disp); {
		if n, _ := ripMoveLen(disp[i:]); n > 0 {
			target := addr + uint64(i+n) + uint64(int64(int32(binary.LittleEndian.Uint32(disp[i+n-4:]))))
			switch {
			case disp[i+n-6] == 0x8b: // a load into a register
				rex, reg := disp[i], disp[i+2]>>3&7
				out = append(out, 0x48|rex>>2&1, 0xb8+reg) // movabs $target, %reg (REX.B for r8-r15)
				out = binary.LittleEndian.AppendUint64(out, target)
				rm := rex >> 2 & 1                                 // the same register as base: REX.B
				out = append(out, 0x48|rex&4|rm, 0x8b, reg<<3|reg) // mov (%reg), %reg
			default: // a store of rax or eax
				if n == 7 {
					out = append(out, 0x48)
				}
				out = append(out, 0xa3)
				out = binary.LittleEndian.AppendUint64(out, target)
			}
			i += n
			continue
		}
		inst, err := x86decode.Decode(disp[i:])
		if err != nil || inst.Len == 0 {
			return append(out, disp[i:]...) // displaced() decoded it all before
		}
		out = append(out, disp[i:i+inst.Len]...)
		i += inst.Len
	}
	return out
}

// isStackSlot tells whether a is a memory operand addressed by rsp and a
// displacement only (no segment, no index).
func isStackSlot(a x86asm.Arg) bool {
	m, ok := a.(x86asm.Mem)
	return ok && m.Segment == 0 && m.Base == x86asm.RSP && m.Index == 0
}

// isRegRelative tells whether a is a memory operand addressed by a
// general register and a displacement only (no segment, no index, not
// rip): the same memory from anywhere.
func isRegRelative(a x86asm.Arg) bool {
	m, ok := a.(x86asm.Mem)
	return ok && m.Segment == 0 && m.Base >= x86asm.RAX && m.Base <= x86asm.R15 && m.Index == 0
}

func writesRAX(inst x86asm.Inst) bool {
	r, ok := inst.Args[0].(x86asm.Reg)
	if !ok {
		return false // a store to memory
	}
	switch r {
	case x86asm.AL, x86asm.AH, x86asm.AX, x86asm.EAX, x86asm.RAX:
		return true
	}
	return false
}

// Patch returns the memory writes that redirect the sites of a file
// mapped at start from file offset off (length n) to new trampolines,
// allocated from *next (TrampBase at first); sites outside the mapping
// are skipped, and so are all once the trampoline area is full.
func Patch(sites []Site, start, off, n uint64, next *uint64) []trace.MemWrite {
	if *next == 0 {
		*next = TrampBase
	}
	// The trampolines are consecutive: they are built in one buffer
	// and written as one write, the jumps that replace the sites in
	// another (a recorder patches libc's few hundred sites in every
	// process it starts: a buffer of its own for each had the allocator
	// take a tenth of a shell loop's recorder time).
	first := *next
	room := int((TrampEnd - first) / trampLen)
	area := make([]byte, 0, min(len(sites), max(room, 0))*trampLen)
	jumps := make([]byte, 0, 16*len(sites))
	out := make([]trace.MemWrite, 1, len(sites)+1) // out[0]: the trampolines, once built
	for _, s := range sites {
		if s.Off < off || s.Off+s.Len() > off+n {
			continue
		}
		if s.TailLen > 0 && (s.Tail < off || s.Tail >= off+n) {
			continue // the jump's target is not in this mapping
		}
		if *next+trampLen > TrampEnd {
			break
		}
		site := start + s.Off - off
		t := *next
		*next += trampLen
		at := len(area)
		switch {
		case s.Vsys:
			area = appendVsysTrampoline(area, t, s.Nr)
		case s.Vclock: // (a Ret site too)
			area = appendVclockTrampoline(area, t)
		case s.Ret:
			area = appendRetTrampoline(area, t, s.Nr)
		default:
			area = appendTrampoline(area, t, site, s.Pre, s.Disp)
			if s.TailLen > 0 {
				binary.LittleEndian.PutUint64(area[at+8:], start+s.Tail-off)
			}
		}
		if len(area)-at != trampLen {
			panic(fmt.Sprintf("syscallbuf: trampoline for the site at 0x%x is %d bytes, not %d", site, len(area)-at, trampLen))
		}
		j := len(jumps)
		if s.Vsys {
			jumps = binary.LittleEndian.AppendUint32(jumps, uint32(t+16))
			out = append(out, trace.MemWrite{Addr: site + 3, Data: jumps[j:len(jumps):len(jumps)]})
			continue
		}
		jumps = appendJump(jumps, t, s.Len())
		out = append(out, trace.MemWrite{Addr: site, Data: jumps[j:len(jumps):len(jumps)]})
	}
	if len(area) == 0 {
		return out[1:]
	}
	out[0] = trace.MemWrite{Addr: first, Data: area}
	return out
}

// Trampoline is the block at t for the site at site: the slots, then
// code that runs the instructions displaced from before the syscall
// (pre), steps over the red zone, calls the stub, steps back, runs the
// displaced instructions disp and jumps back through the second slot
// (unless disp returned). Libraries lie far beyond a rel32 from Base, so
// both long jumps go through absolute 32-bit slot addresses (Base is
// below 2 GiB).
func Trampoline(t, site uint64, pre, disp []byte) []byte {
	return appendTrampoline(make([]byte, 0, trampLen), t, site, pre, disp)
}

func appendTrampoline(b []byte, t, site uint64, pre, disp []byte) []byte {
	base := len(b)
	b = binary.LittleEndian.AppendUint64(b, t+16)
	b = binary.LittleEndian.AppendUint64(b, site+uint64(len(pre))+2+uint64(len(disp)))
	b = append(b, pre...)
	b = append(b, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -128(%rsp), %rsp
	b = append(b, 0xe8)                         // call Entry
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(int64(Entry)-int64(t+uint64(len(b)-base)+4))))
	b = append(b, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00) // lea 128(%rsp), %rsp
	b = append(b, moveRipRelative(disp, site+uint64(len(pre))+2)...)
	b = append(b, 0xff, 0x24, 0x25) // jmp *(t+8)
	b = binary.LittleEndian.AppendUint32(b, uint32(t+8))
	return pad(b, base, trampLen, 0xcc)
}

// RetTrampoline is the block at t for a `mov $nr, %eax; syscall; ret`
// function: the stub is called in the function's place (the red zone
// below a function's entry is its own).
func RetTrampoline(t uint64, nr int) []byte {
	return appendRetTrampoline(make([]byte, 0, trampLen), t, nr)
}

func appendRetTrampoline(b []byte, t uint64, nr int) []byte {
	base := len(b)
	b = binary.LittleEndian.AppendUint64(b, t+16)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, 0xb8) // mov $nr, %eax
	b = binary.LittleEndian.AppendUint32(b, uint32(nr))
	b = append(b, 0xe9) // jmp Entry: its ret returns to the caller
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(int64(Entry)-int64(t+uint64(len(b)-base)+4))))
	return pad(b, base, trampLen, 0xcc)
}

// VclockTrampoline is the block at t for the vDSO's clock_gettime (a
// `mov $228, %eax; syscall; ret` function once rewritten): it jumps to
// VclockEntry, which returns to the function's caller.
func VclockTrampoline(t uint64) []byte {
	return appendVclockTrampoline(make([]byte, 0, trampLen), t)
}

func appendVclockTrampoline(b []byte, t uint64) []byte {
	base := len(b)
	b = binary.LittleEndian.AppendUint64(b, t+16)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, 0xe9) // jmp VclockEntry
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(int64(VclockEntry)-int64(t+uint64(len(b)-base)+4))))
	return pad(b, base, trampLen, 0xcc)
}

// VsysTrampoline is the block at t for a vsyscall call site, whose mov
// now loads t+16: called in place of the page's entry, it steps over the
// caller's red zone (the call's own return address is in it already),
// makes call nr through the stub and returns with every register but
// rax as it was, as the kernel's emulation of the page does (the stub,
// like syscall, clobbers rcx and r11).
func VsysTrampoline(t uint64, nr int) []byte {
	return appendVsysTrampoline(make([]byte, 0, trampLen), t, nr)
}

func appendVsysTrampoline(b []byte, t uint64, nr int) []byte {
	base := len(b)
	b = binary.LittleEndian.AppendUint64(b, t+16)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -128(%rsp), %rsp
	b = append(b, 0x51, 0x41, 0x53)             // push %rcx; push %r11
	b = append(b, 0xb8)                         // mov $nr, %eax
	b = binary.LittleEndian.AppendUint32(b, uint32(nr))
	b = append(b, 0xe8) // call Entry
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(int64(Entry)-int64(t+uint64(len(b)-base)+4))))
	b = append(b, 0x41, 0x5b, 0x59)                               // pop %r11; pop %rcx
	b = append(b, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00) // lea 128(%rsp), %rsp
	b = append(b, 0xc3)                                           // ret
	return pad(b, base, trampLen, 0xcc)
}

// pad appends fill to b until what was appended since base is n bytes
// long (int3s after a trampoline, nops after a site's jump).
func pad(b []byte, base, n int, fill byte) []byte {
	for len(b)-base < n {
		b = append(b, fill)
	}
	return b
}

// Jump is what replaces the n bytes of a site: jmp *(t) (7 bytes),
// then nops.
func Jump(t, n uint64) []byte {
	return appendJump(nil, t, n)
}

func appendJump(b []byte, t, n uint64) []byte {
	base := len(b)
	b = append(b, 0xff, 0x24, 0x25)
	b = binary.LittleEndian.AppendUint32(b, uint32(t))
	return pad(b, base, int(n), 0x90)
}
