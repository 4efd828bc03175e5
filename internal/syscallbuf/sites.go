package syscallbuf

import (
	"encoding/binary"
	"io"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/trace"
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
type Site struct {
	Off  uint64
	Nr   int
	Disp []byte
	Ret  bool
	Vsys bool `json:",omitempty"`
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
	return 2 + uint64(len(s.Disp))
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

// maxDisp bounds the displaced instructions.
const maxDisp = 16

// trampLen is the space each trampoline takes: two 8-byte slots (the
// trampoline's code address, the address to return to) and the code.
const trampLen = 64

// Scan finds the sites in the executable sections of an ELF file. Each
// is confirmed by decoding its function from the start, and skipped when
// a direct branch of the function lands inside the replaced bytes.
func Scan(r io.ReaderAt) ([]Site, error) {
	sections, err := patch.CodeSections(r)
	if err != nil {
		return nil, err
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
		// Each candidate's function, from its start to the next one.
		ends := map[int]int{}
		for c := range cands {
			b, e := s.Func(c)
			ends[b] = e
		}
		found := map[int]found{} // syscall offset -> number, displaced bytes
		for b, e := range ends {
			decodeSites(data, b, e, cands, found)
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
			out = append(out, st)
		}
	}
	return out, nil
}

// found is a confirmed site: its number and how many bytes after the
// syscall instruction are displaced (0: a `mov; syscall; ret` function,
// or with vsys a vsyscall call site).
type found struct {
	nr, disp int
	vsys     bool
}

// decodeSites decodes the function [start, end), noting each candidate
// that is a real syscall instruction preceded by an instruction that sets
// eax to a buffered number (or copies it from rdi) and followed by
// instructions that can be displaced, unless a branch in the function
// lands inside the replaced bytes.
func decodeSites(data []byte, start, end int, cands map[int]bool, out map[int]found) {
	prevNr := -1
	targets := map[int]bool{}
	var got []int
	for pc := start; pc < end && pc < len(data); {
		inst, err := x86asm.Decode(data[pc:], 64)
		if err != nil || inst.Len == 0 {
			pc++
			prevNr = -1
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
			}
		}
		switch {
		case inst.Len == 5 && data[pc] == 0xb8: // mov $imm32, %eax
			prevNr = int(binary.LittleEndian.Uint32(data[pc+1:]))
		case inst.Len == 2 && data[pc] == 0x31 && data[pc+1] == 0xc0: // xor %eax, %eax
			prevNr = 0
		case inst.Len == 3 && data[pc] == 0x48 && data[pc+1] == 0x89 && data[pc+2] == 0xf8: // mov %rdi, %rax
			prevNr = DynNr
		case inst.Op == x86asm.MOV && !targets[pc] && !writesRAX(inst):
			// A move into another register keeps eax's number.
		default:
			prevNr = -1
		}
		pc += inst.Len
	}
	for _, c := range got {
		n := siteLen
		if d := out[c].disp; d > 0 {
			n = 2 + d
		}
		if out[c].vsys {
			n = 7 // only the mov's immediate changes
		}
		for k := 1; k < n; k++ {
			if targets[c+k] {
				delete(out, c)
			}
		}
	}
}

// displaced returns how many bytes of code (what follows a syscall
// instruction) the trampoline can run in their place: whole instructions,
// at least 5 bytes and at most maxDisp, that neither branch nor address
// memory (so they run the same anywhere) and of which one sets the flags
// before any reads them (the stub changes the flags a syscall keeps):
// register moves, neg, cmp and test. 0 if there are none such.
func displaced(code []byte) int {
	n, setFlags := 0, false
	for n < 5 {
		inst, err := x86asm.Decode(code[n:], 64)
		if err != nil || inst.Len == 0 || n+inst.Len > maxDisp {
			return 0
		}
		for _, a := range inst.Args {
			switch a.(type) {
			case x86asm.Mem, x86asm.Rel:
				return 0
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
	if !setFlags {
		return 0
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
	var out []trace.MemWrite
	for _, s := range sites {
		if s.Off < off || s.Off+s.Len() > off+n {
			continue
		}
		if *next+trampLen > TrampEnd {
			break
		}
		site := start + s.Off - off
		t := *next
		*next += trampLen
		if s.Vsys {
			out = append(out, trace.MemWrite{Addr: t, Data: VsysTrampoline(t, s.Nr)},
				trace.MemWrite{Addr: site + 3, Data: binary.LittleEndian.AppendUint32(nil, uint32(t+16))})
			continue
		}
		tr := Trampoline(t, site, s.Disp)
		if s.Ret {
			tr = RetTrampoline(t, s.Nr)
		}
		out = append(out, trace.MemWrite{Addr: t, Data: tr},
			trace.MemWrite{Addr: site, Data: Jump(t, s.Len())})
	}
	return out
}

// Trampoline is the block at t for the site at site: the slots, then
// code that steps over the red zone, calls the stub, steps back, runs
// the displaced instructions disp and jumps back through the second slot. Libraries
// lie far beyond a rel32 from Base, so both long jumps go through
// absolute 32-bit slot addresses (Base is below 2 GiB).
func Trampoline(t, site uint64, disp []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, t+16)
	b = binary.LittleEndian.AppendUint64(b, site+2+uint64(len(disp)))
	b = append(b, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -128(%rsp), %rsp
	b = append(b, 0xe8)                         // call Entry
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(int64(Entry)-int64(t+uint64(len(b))+4))))
	b = append(b, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00) // lea 128(%rsp), %rsp
	b = append(b, disp...)
	b = append(b, 0xff, 0x24, 0x25) // jmp *(t+8)
	b = binary.LittleEndian.AppendUint32(b, uint32(t+8))
	for len(b) < trampLen {
		b = append(b, 0xcc)
	}
	return b
}

// RetTrampoline is the block at t for a `mov $nr, %eax; syscall; ret`
// function: the stub is called in the function's place (the red zone
// below a function's entry is its own).
func RetTrampoline(t uint64, nr int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, t+16)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, 0xb8) // mov $nr, %eax
	b = binary.LittleEndian.AppendUint32(b, uint32(nr))
	b = append(b, 0xe9) // jmp Entry: its ret returns to the caller
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(int64(Entry)-int64(t+uint64(len(b))+4))))
	for len(b) < trampLen {
		b = append(b, 0xcc)
	}
	return b
}

// VsysTrampoline is the block at t for a vsyscall call site, whose mov
// now loads t+16: called in place of the page's entry, it steps over the
// caller's red zone (the call's own return address is in it already),
// makes call nr through the stub and returns with every register but
// rax as it was, as the kernel's emulation of the page does (the stub,
// like syscall, clobbers rcx and r11).
func VsysTrampoline(t uint64, nr int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, t+16)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -128(%rsp), %rsp
	b = append(b, 0x51, 0x41, 0x53)             // push %rcx; push %r11
	b = append(b, 0xb8)                         // mov $nr, %eax
	b = binary.LittleEndian.AppendUint32(b, uint32(nr))
	b = append(b, 0xe8) // call Entry
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(int64(Entry)-int64(t+uint64(len(b))+4))))
	b = append(b, 0x41, 0x5b, 0x59)                               // pop %r11; pop %rcx
	b = append(b, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00) // lea 128(%rsp), %rsp
	b = append(b, 0xc3)                                           // ret
	for len(b) < trampLen {
		b = append(b, 0xcc)
	}
	return b
}

// Jump is what replaces the n bytes of a site: jmp *(t) (7 bytes),
// then nops.
func Jump(t, n uint64) []byte {
	b := []byte{0xff, 0x24, 0x25}
	b = binary.LittleEndian.AppendUint32(b, uint32(t))
	for uint64(len(b)) < n {
		b = append(b, 0x90)
	}
	return b
}
