package patch

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"io"
	"slices"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/x86decode"
)

// A CpuidSite is a cpuid whose inputs are constants set by the
// instructions just before it, so that its answer is known before it
// runs: at Off (a file offset) `mov $Leaf, %eax`, then Mid (nothing,
// `xor %ecx, %ecx` or `mov $imm32, %ecx`), then the cpuid. Without Mid,
// Leaf is one whose answer does not depend on ecx (ld.so's cpu-feature
// code is mostly of these forms, ~30 of the ~50 cpuids it runs in every
// process).
//
// The recorder replaces the 5-byte mov, a whole instruction, with a jump
// to a trampoline that sets the four registers to the recorded answer,
// replays Mid's effect on the flags, and jumps back behind the cpuid
// (CpuidTrampoline). No other instruction boundary moves: the cpuid
// itself keeps the int3 Scan's site gets, so code that reaches it by
// another way (a jump to it or to Mid) still traps and is emulated.
type CpuidSite struct {
	Off  uint64 // file offset of the mov
	Leaf uint32
	Sub  uint32 // ecx as Mid sets it (0 without Mid)
	Mid  []byte `json:",omitempty"`
}

// Len is the length from the mov to the end of the cpuid.
func (s *CpuidSite) Len() uint64 { return 5 + uint64(len(s.Mid)) + 2 }

// ecxFree tells whether cpuid leaf ignores ecx (its answer is the same for
// any subleaf): the basic leaves 0-3, 5 and 6 and the extended leaves up
// to 0x80000008.
func ecxFree(leaf uint32) bool {
	switch {
	case leaf <= 3, leaf == 5, leaf == 6:
		return true
	case leaf >= 0x80000000 && leaf <= 0x80000008:
		return true
	}
	return false
}

// ScanCpuid returns the constant-input cpuid sites (CpuidSite) in the
// executable sections of an ELF file, found by decoding each function
// that holds a cpuid from its start (as Scan).
func ScanCpuid(r io.ReaderAt) ([]CpuidSite, error) {
	sections, err := CodeSections(r)
	if err != nil {
		return nil, err
	}
	var out []CpuidSite
	for s := range sections {
		data := s.Data
		found := map[int]CpuidSite{}
		for start, end := range cpuidFuncs(s) {
			decodeCpuid(data, start, end, found)
		}
		offs := make([]int, 0, len(found))
		for o := range found {
			offs = append(offs, o)
		}
		sort.Ints(offs)
		for _, o := range offs {
			site := found[o]
			site.Off = s.Offset + uint64(o)
			out = append(out, site)
		}
	}
	return out, nil
}

// cpuidFuncs returns, by the offset of their start in s, the functions of
// s that hold a cpuid, each with the offset just past its last cpuid's
// first byte: how far to decode.
func cpuidFuncs(s *CodeSection) map[int]int {
	upto := map[int]int{}
	for _, c := range candidates(s.Data) {
		if s.Data[c+1] != 0xa2 {
			continue
		}
		start, _ := s.Func(c)
		if c+1 > upto[start] {
			upto[start] = c + 1
		}
	}
	return upto
}

// decodeCpuid decodes [start, end) linearly and notes, by the offset of
// their mov, the cpuids preceded by `mov $leaf, %eax` and an optional
// constant setting of ecx.
func decodeCpuid(data []byte, start, end int, found map[int]CpuidSite) {
	movAt, midAt := -1, -1 // the last `mov $imm32, %eax`, and what follows it
	for pc := start; pc < end && pc < len(data); {
		inst, err := x86decode.Decode(data[pc:])
		if err != nil || inst.Len == 0 {
			pc++
			movAt, midAt = -1, -1
			continue
		}
		switch {
		case inst.Op == x86asm.CPUID && movAt >= 0:
			leaf := binary.LittleEndian.Uint32(data[movAt+1:])
			mid := data[midAt:pc]
			var sub uint32
			ok := false
			switch {
			case len(mid) == 0:
				ok = ecxFree(leaf)
			case len(mid) == 2 && mid[0] == 0x31 && mid[1] == 0xc9: // xor %ecx, %ecx
				ok = true
			case len(mid) == 5 && mid[0] == 0xb9: // mov $imm32, %ecx
				sub, ok = binary.LittleEndian.Uint32(mid[1:]), true
			}
			if ok {
				found[movAt] = CpuidSite{Leaf: leaf, Sub: sub, Mid: append([]byte(nil), mid...)}
			}
			movAt, midAt = -1, -1
		case inst.Len == 5 && data[pc] == 0xb8: // mov $imm32, %eax
			movAt, midAt = pc, pc+5
		case movAt >= 0 && midAt == movAt+5 && pc == midAt:
			// The one instruction allowed between the mov and the
			// cpuid (checked at the cpuid).
		default:
			movAt, midAt = -1, -1
		}
		pc += inst.Len
	}
}

// CpuidTrampoline is the code at t that stands for the constant cpuid
// site mapped at site: Mid (for its effect on the flags; the mov it
// replaces and cpuid set none), the answer into eax, ebx, ecx and edx
// (zero-extended, as cpuid does), and a jump back behind the cpuid. It
// must lie within a rel32 of the site (CpuidJump).
func CpuidTrampoline(t, site uint64, s *CpuidSite, a, b, c, d uint32) []byte {
	code := append([]byte(nil), s.Mid...)
	for _, v := range []struct {
		op  byte
		val uint32
	}{{0xb8, a}, {0xbb, b}, {0xb9, c}, {0xba, d}} {
		code = append(code, v.op)
		code = binary.LittleEndian.AppendUint32(code, v.val)
	}
	code = append(code, 0xe9)
	back := site + s.Len()
	return binary.LittleEndian.AppendUint32(code, uint32(int32(int64(back)-int64(t+uint64(len(code))+4))))
}

// CpuidTrampolineLen bounds the length of a CpuidTrampoline.
const CpuidTrampolineLen = 5 + 4*5 + 5

// CpuidJump is the `jmp rel32` from the site's mov to the trampoline at t.
func CpuidJump(site, t uint64) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(int32(int64(t)-int64(site+5))))
}

// InRel32 tells whether a jmp rel32 at from (5 bytes) reaches to.
func InRel32(from, to uint64) bool {
	d := int64(to) - int64(from+5)
	return d >= -1<<31 && d < 1<<31
}

// CodePadding returns the file range [off, off+n) that follows the end of
// an executable PT_LOAD segment up to the end of its last page: the
// kernel maps it executable with the segment, and nothing in the file
// refers to it (the bytes there are the file's padding, zeros when the
// next segment starts on a page of its own). The recorder puts cpuid
// trampolines there when they fit. n is 0 when there is no such range.
func CodePadding(r io.ReaderAt) (off, n uint64) {
	f, err := elf.NewFile(r)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	const page = 4096
	var best, bestN uint64
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 || p.Memsz != p.Filesz || p.Filesz == 0 {
			continue
		}
		end := p.Off + p.Filesz
		pad := (end+page-1)&^(page-1) - end
		// Another segment may begin in the same page of the file.
		for _, q := range f.Progs {
			if q.Type == elf.PT_LOAD && q.Off >= end && q.Off < end+pad {
				pad = q.Off - end
			}
		}
		if pad > bestN {
			best, bestN = end, pad
		}
	}
	return best, bestN
}

// EcxFree tells whether cpuid leaf ignores ecx (see ecxFree).
func EcxFree(leaf uint32) bool { return ecxFree(leaf) }

// A CpuidRegSite is a cpuid whose inputs are not known before it runs
// (eax or ecx come from registers: ld.so's loops over the subleaves of
// leaves 4, 0xb and 0xd, and the like). The instructions just before it,
// at least 5 bytes in at most 3 whole instructions that are neither
// branches nor the like, are displaced into a trampoline: the recorder
// replaces them with a jump (and int3s for the bytes left over) to code
// that runs them and then looks eax and ecx up in a table of answers
// written with it (CpuidLookup); on a miss it jumps to the cpuid itself,
// which keeps the int3 Scan's site gets, and is emulated as before. The
// boundaries between the displaced instructions must not be targets of
// a direct branch in the file (BranchTargets); jump tables are not
// followed, as for the system-call sites of internal/syscallbuf.
type CpuidRegSite struct {
	Off  uint64 // file offset of the first displaced instruction
	Disp []byte // the displaced instructions; the cpuid follows them
	// PCRel holds the offsets in Disp of rel32 displacements of
	// RIP-relative operands, which move with the code.
	PCRel []byte `json:",omitempty"`
}

// Cpuid is the file offset of the site's cpuid.
func (s *CpuidRegSite) Cpuid() uint64 { return s.Off + uint64(len(s.Disp)) }

// ScanCpuidRegs returns the CpuidRegSites of the executable sections of
// an ELF file (decoded from function starts, as Scan), other than the
// constant ones of ScanCpuid. Files without them are not decoded for
// branch targets.
func ScanCpuidRegs(r io.ReaderAt) ([]CpuidRegSite, error) {
	sections, err := CodeSections(r)
	if err != nil {
		return nil, err
	}
	var out []CpuidRegSite
	for s := range sections {
		data := s.Data
		constant := map[int]CpuidSite{}
		found := map[int]CpuidRegSite{}
		for start, end := range cpuidFuncs(s) {
			decodeCpuid(data, start, end, constant)
			decodeCpuidRegs(data, start, end, found)
		}
		for at, c := range constant {
			delete(found, at+int(c.Len())-2)
		}
		for _, site := range found {
			site.Off += s.Offset
			out = append(out, site)
		}
	}
	return unbranched(r, out, func(s CpuidRegSite) (uint64, []byte) { return s.Off, s.Disp })
}

// decodeCpuidRegs decodes [start, end) linearly and notes, by the offset
// of their cpuid, the cpuids preceded by instructions that can be
// displaced (see CpuidRegSite).
func decodeCpuidRegs(data []byte, start, end int, found map[int]CpuidRegSite) {
	type dec struct {
		at  int
		ins x86asm.Inst
	}
	var last []dec // the instructions just before pc, up to 3
	for pc := start; pc < end && pc < len(data); {
		inst, err := x86decode.Decode(data[pc:])
		if err != nil || inst.Len == 0 {
			pc++
			last = last[:0]
			continue
		}
		if inst.Op == x86asm.CPUID {
			// The shortest run of whole instructions ending at the cpuid
			// that is at least 5 bytes long.
			k := -1
			for i := len(last) - 1; i >= 0; i-- {
				if pc-last[i].at >= 5 {
					k = i
					break
				}
			}
			if k >= 0 {
				site := CpuidRegSite{Off: uint64(last[k].at), Disp: append([]byte(nil), data[last[k].at:pc]...)}
				ok := true
				for _, d := range last[k:] {
					if !displaceable(d.ins) {
						ok = false
						break
					}
					if d.ins.PCRel != 0 {
						if d.ins.PCRel != 4 {
							ok = false
							break
						}
						site.PCRel = append(site.PCRel, byte(d.at-last[k].at+d.ins.PCRelOff))
					}
				}
				if ok {
					found[pc] = site
				}
			}
		}
		last = append(last, dec{pc, inst})
		if len(last) > 3 {
			last = last[1:]
		}
		pc += inst.Len
	}
}

// displaceable tells whether inst can run in a trampoline instead of
// where it is: no branch, call or return, nothing that traps or reads the
// instruction pointer other than a RIP-relative operand.
func displaceable(inst x86asm.Inst) bool {
	for _, a := range inst.Args {
		if _, rel := a.(x86asm.Rel); rel {
			return false
		}
	}
	switch inst.Op {
	case x86asm.CALL, x86asm.JMP, x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.SYSCALL, x86asm.SYSENTER, x86asm.INT, x86asm.UD2, x86asm.HLT,
		x86asm.CPUID, x86asm.RDTSC, x86asm.RDTSCP, x86asm.XBEGIN, x86asm.XABORT, x86asm.XEND:
		return false
	}
	return true
}

// cpuidLookupCode is the routine CpuidRegTrampolines call (with rsp
// moved below the red zone): it looks eax and ecx up in the table that
// follows it (CpuidEntry records, the last of kind CpuidEnd) and, on a
// hit, sets eax, ebx, ecx and edx (zero-extended, as cpuid does) and
// returns; on a miss it returns 13 bytes further on (to the trampoline's
// miss path), eax and ecx unchanged. It keeps the flags and clobbers rbx
// and rdx (which the cpuid sets anyway).
//
//	pushfq
//	lea table(%rip), %rbx
//	1: cmpl $2, 8(%rbx); je 4f
//	cmp (%rbx), %eax; jne 2f
//	cmpl $1, 8(%rbx); je 3f
//	cmp 4(%rbx), %ecx; je 3f
//	2: add $28, %rbx; jmp 1b
//	3: mov 12(%rbx), %eax; mov 20(%rbx), %ecx; mov 24(%rbx), %edx; mov 16(%rbx), %ebx
//	popfq; ret
//	4: addq $13, 8(%rsp); popfq; ret
//	table:
var cpuidLookupCode = []byte{
	0x9c,
	0x48, 0x8d, 0x1d, 0x31, 0x00, 0x00, 0x00,
	0x83, 0x7b, 0x08, 0x02, 0x74, 0x23,
	0x3b, 0x03, 0x75, 0x0b,
	0x83, 0x7b, 0x08, 0x01, 0x74, 0x0b,
	0x3b, 0x4b, 0x04, 0x74, 0x06,
	0x48, 0x83, 0xc3, 0x1c, 0xeb, 0xe5,
	0x8b, 0x43, 0x0c, 0x8b, 0x4b, 0x14, 0x8b, 0x53, 0x18, 0x8b, 0x5b, 0x10,
	0x9d, 0xc3,
	0x48, 0x83, 0x44, 0x24, 0x08, 0x0d, 0x9d, 0xc3,
}

// Kinds of CpuidEntry.
const (
	CpuidExact  = 0 // the answer for Leaf and Sub
	CpuidAnySub = 1 // the answer for Leaf, whatever ecx is (EcxFree)
	CpuidEnd    = 2 // the end of the table
)

// A CpuidEntry is one answer of a CpuidLookup table.
type CpuidEntry struct {
	Leaf, Sub, Kind uint32
	A, B, C, D      uint32
}

// CpuidLookup is the lookup routine followed by its table of entries
// (and the end mark): position independent, for anywhere in the
// trampolines' area.
func CpuidLookup(entries []CpuidEntry) []byte {
	code := slices.Clone(cpuidLookupCode)
	for _, e := range append(entries, CpuidEntry{Kind: CpuidEnd}) {
		for _, v := range []uint32{e.Leaf, e.Sub, e.Kind, e.A, e.B, e.C, e.D} {
			code = binary.LittleEndian.AppendUint32(code, v)
		}
	}
	return code
}

// CpuidRegTrampoline is the code at t that stands for the site mapped at
// site (the first displaced instruction): the displaced instructions
// (their RIP-relative operands adjusted), then a call of the lookup
// routine at lookup below the red zone, then a jump behind the cpuid on
// a hit or to the cpuid (its int3) on a miss. ok is false when an
// adjusted operand or a jump does not reach (rel32).
func CpuidRegTrampoline(t, site uint64, s *CpuidRegSite, lookup uint64) (code []byte, ok bool) {
	code = slices.Clone(s.Disp)
	for _, o := range s.PCRel {
		d := int64(int32(binary.LittleEndian.Uint32(code[o:]))) + int64(site) - int64(t)
		if d != int64(int32(d)) {
			return nil, false
		}
		binary.LittleEndian.PutUint32(code[o:], uint32(int32(d)))
	}
	rel := func(to uint64) bool {
		d := int64(to) - int64(t+uint64(len(code))+4)
		code = binary.LittleEndian.AppendUint32(code, uint32(int32(d)))
		return d == int64(int32(d))
	}
	code = append(code, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -128(%rsp), %rsp
	code = append(code, 0xe8)                         // call lookup
	ok = rel(lookup)
	up := []byte{0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00} // lea 128(%rsp), %rsp
	code = append(append(code, up...), 0xe9)
	ok = rel(s.Cpuid()-s.Off+site+2) && ok // behind the cpuid
	code = append(append(code, up...), 0xe9)
	ok = rel(s.Cpuid()-s.Off+site) && ok // the cpuid, which traps
	return code, ok
}

// cpuidRegOwn is the length of a CpuidRegTrampoline's own code (after
// the displaced instructions): the red-zone step and call (10 bytes),
// then the hit and miss paths (13 each).
const cpuidRegOwn = 36

// CpuidRegTrampolineMax bounds the length of a CpuidRegTrampoline (3
// instructions of at most 15 bytes, and its own code).
const CpuidRegTrampolineMax = 45 + cpuidRegOwn

// TrampolineLen is the length of the site's CpuidRegTrampoline.
func (s *CpuidRegSite) TrampolineLen() uint64 { return uint64(len(s.Disp)) + cpuidRegOwn }

// CpuidRegJump is what replaces the displaced instructions of s mapped at
// site: a jump to the trampoline at t, then int3s.
func CpuidRegJump(site, t uint64, s *CpuidRegSite) []byte {
	b := CpuidJump(site, t)
	for len(b) < len(s.Disp) {
		b = append(b, 0xcc)
	}
	return b
}

// unbranched returns sites, sorted by offset, without those a direct
// branch in the file r leads into (branchedInto): each site's offset and
// the instructions its jump replaces come from code. Without sites, the
// file is not decoded for branch targets.
func unbranched[T any](r io.ReaderAt, sites []T, code func(T) (uint64, []byte)) ([]T, error) {
	if len(sites) == 0 {
		return nil, nil
	}
	targets, err := BranchTargets(r)
	if err != nil {
		return nil, err
	}
	sites = slices.DeleteFunc(sites, func(s T) bool {
		at, b := code(s)
		return branchedInto(targets, at, b)
	})
	slices.SortFunc(sites, func(a, b T) int {
		x, _ := code(a)
		y, _ := code(b)
		return cmp.Compare(x, y)
	})
	return sites, nil
}

// branchedInto tells whether a direct branch (targets, sorted file
// offsets) leads between two of the whole instructions code holds at
// file offset at, where a jump replacing them would land mid-way (or
// whether code does not decode).
func branchedInto(targets []uint64, at uint64, code []byte) bool {
	for pc := 0; pc < len(code); {
		inst, err := x86decode.Decode(code[pc:])
		if err != nil || inst.Len == 0 {
			return true
		}
		pc += inst.Len
		if _, hit := slices.BinarySearch(targets, at+uint64(pc)); hit && pc < len(code) {
			return true
		}
	}
	return false
}
