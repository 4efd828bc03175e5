// Package patch finds the instructions whose results gorr must record
// but that the CPU may not let it trap (rdtsc and rdtscp when PR_SET_TSC
// is not honoured, cpuid without cpuid faulting, as on AMD machines and
// many VMs), so the recorder can replace their first byte with int3.
// The int3 turns each execution into a stop that the recorder emulates
// and records and that replay meets at the same instruction.
package patch

import (
	"debug/elf"
	"io"
	"slices"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/x86decode"
)

// Kind is a patched instruction.
type Kind uint8

const (
	Rdtsc  Kind = iota + 1 // 0f 31
	Rdtscp                 // 0f 01 f9
	Cpuid                  // 0f a2
)

// Len is the instruction's length.
func (k Kind) Len() uint64 {
	if k == Rdtscp {
		return 3
	}
	return 2
}

// Site is an instruction at a file offset.
type Site struct {
	Off  uint64
	Kind Kind
}

// Identify recognises a patched instruction from the bytes at the int3
// (the first byte replaced by 0xcc).
func Identify(code []byte) Kind {
	switch {
	case len(code) >= 2 && code[0] == 0xcc && code[1] == 0x31:
		return Rdtsc
	case len(code) >= 2 && code[0] == 0xcc && code[1] == 0xa2:
		return Cpuid
	case len(code) >= 3 && code[0] == 0xcc && code[1] == 0x01 && code[2] == 0xf9:
		return Rdtscp
	}
	return 0
}

// Scan returns the rdtsc, rdtscp and cpuid instructions in the executable
// sections of an ELF file. Candidates are found by byte pattern and
// confirmed by decoding from the start of the enclosing function (or of
// the section when no symbol encloses them), so bytes inside other
// instructions are never patched.
func Scan(r io.ReaderAt) ([]Site, error) {
	sections, err := CodeSections(r)
	if err != nil {
		return nil, err
	}
	var out []Site
	for s := range sections {
		cands := candidates(s.Data)
		if len(cands) == 0 {
			continue
		}
		// Group candidates by the start of their enclosing function (the
		// section start when no symbol encloses them) and decode each
		// group's function up to its last candidate.
		upto := map[int]int{}
		for _, c := range cands {
			start, _ := s.Func(c)
			if c+1 > upto[start] {
				upto[start] = c + 1
			}
		}
		verified := map[int]Kind{}
		for start, end := range upto {
			decodeFrom(s.Data, start, end, verified)
		}
		for _, c := range cands {
			if k, ok := verified[c]; ok {
				out = append(out, Site{Off: s.Offset + uint64(c), Kind: k})
			}
		}
	}
	return out, nil
}

// candidates lists offsets where one of the opcodes appears.
func candidates(data []byte) []int {
	var out []int
	for i := 0; i+1 < len(data); i++ {
		if data[i] != 0x0f {
			continue
		}
		switch data[i+1] {
		case 0x31, 0xa2:
			out = append(out, i)
		case 0x01:
			if i+2 < len(data) && data[i+2] == 0xf9 {
				out = append(out, i)
			}
		}
	}
	return out
}

// decodeFrom decodes linearly over [start, end), noting the
// instructions of interest.
func decodeFrom(data []byte, start, end int, found map[int]Kind) {
	for pc := start; pc < end && pc < len(data); {
		inst, err := x86decode.Decode(data[pc:])
		if err != nil || inst.Len == 0 {
			pc++
			continue
		}
		switch inst.Op {
		case x86asm.RDTSC:
			found[pc] = Rdtsc
		case x86asm.RDTSCP:
			found[pc] = Rdtscp
		case x86asm.CPUID:
			found[pc] = Cpuid
		}
		pc += inst.Len
	}
}

// FuncStarts returns the sorted addresses of an ELF file's function
// symbols (static and dynamic), where linear decoding of its code starts.
func FuncStarts(f *elf.File) []uint64 {
	var out []uint64
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				out = append(out, s.Value)
			}
		}
	}
	if s, err := f.Symbols(); err == nil {
		add(s)
	}
	if s, err := f.DynamicSymbols(); err == nil {
		add(s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// BranchTargets returns the file offsets, sorted, that direct jumps,
// conditional jumps and calls in the executable sections of the ELF file
// r lead to. Code is decoded linearly from each function symbol (or from
// the start of a section without symbols), as Scan does. Indirect
// branches (jump tables) are not followed. Decoding takes 100-600 ms for
// a Go binary, libc or python3: callers keep the result (CachedScan).
func BranchTargets(r io.ReaderAt) ([]uint64, error) {
	sections, err := CodeSections(r)
	if err != nil {
		return nil, err
	}
	out := map[uint64]bool{}
	for s := range sections {
		data := s.Data
		begin := append([]int{0}, s.Starts()...)
		for i, b := range begin {
			end := len(data)
			if i+1 < len(begin) {
				end = begin[i+1]
			}
			for pc := b; pc < end; {
				inst, err := x86decode.Decode(data[pc:])
				if err != nil || inst.Len == 0 {
					pc++
					continue
				}
				if rel, ok := inst.Args[0].(x86asm.Rel); ok {
					t := int64(pc) + int64(inst.Len) + int64(rel)
					if t >= 0 && t < int64(len(data)) {
						out[s.Offset+uint64(t)] = true
					}
				}
				pc += inst.Len
			}
		}
	}
	list := make([]uint64, 0, len(out))
	for off := range out {
		list = append(list, off)
	}
	slices.Sort(list)
	return list, nil
}
