package patch

import (
	"debug/elf"
	"encoding/binary"
	"io"
	"sort"

	"golang.org/x/arch/x86/x86asm"
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
		upto := map[int]int{}
		for _, c := range candidates(data) {
			if data[c+1] != 0xa2 {
				continue
			}
			start, _ := s.Func(c)
			if c+1 > upto[start] {
				upto[start] = c + 1
			}
		}
		found := map[int]CpuidSite{}
		for start, end := range upto {
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

// decodeCpuid decodes [start, end) linearly and notes, by the offset of
// their mov, the cpuids preceded by `mov $leaf, %eax` and an optional
// constant setting of ecx.
func decodeCpuid(data []byte, start, end int, found map[int]CpuidSite) {
	movAt, midAt := -1, -1 // the last `mov $imm32, %eax`, and what follows it
	for pc := start; pc < end && pc < len(data); {
		inst, err := x86asm.Decode(data[pc:], 64)
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
