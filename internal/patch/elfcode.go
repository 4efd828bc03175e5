package patch

import (
	"debug/elf"
	"io"
	"iter"
	"sort"
)

// CodeSection is an executable section of an ELF file (SHT_PROGBITS with
// SHF_EXECINSTR), with what the scanners need to decode it: its code
// and the file's function starts.
type CodeSection struct {
	Addr   uint64 // the address of Data[0]
	Offset uint64 // the file offset of Data[0]
	Data   []byte
	starts []uint64 // the function starts of the whole file (FuncStarts)
}

// CodeSections reads the ELF file r and returns its executable sections,
// in the file's order, for decoding from function starts (Func); a
// section whose data cannot be read is skipped.
func CodeSections(r io.ReaderAt) (iter.Seq[*CodeSection], error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	starts := FuncStarts(f)
	return func(yield func(*CodeSection) bool) {
		for _, s := range f.Sections {
			if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 {
				continue
			}
			data, err := s.Data()
			if err != nil {
				continue
			}
			if !yield(&CodeSection{Addr: s.Addr, Offset: s.Offset, Data: data, starts: starts}) {
				return
			}
		}
	}, nil
}

// Func returns the bounds [begin, end) in Data of the function that holds
// the byte at off: from the start of the enclosing function symbol (0,
// the section's start, when no symbol in the section encloses off) to
// the next function start within the section (len(Data) when none).
func (s *CodeSection) Func(off int) (begin, end int) {
	addr := s.Addr + uint64(off)
	i := sort.Search(len(s.starts), func(i int) bool { return s.starts[i] > addr }) - 1
	begin, end = 0, len(s.Data)
	if i >= 0 && s.starts[i] >= s.Addr {
		begin = int(s.starts[i] - s.Addr)
	}
	if i+1 < len(s.starts) && s.starts[i+1] < s.Addr+uint64(len(s.Data)) {
		end = int(s.starts[i+1] - s.Addr)
	}
	return begin, end
}

// Starts returns the offsets in Data of the function starts that lie
// inside the section after its first byte, in order.
func (s *CodeSection) Starts() []int {
	var out []int
	for _, a := range s.starts {
		if a > s.Addr && a < s.Addr+uint64(len(s.Data)) {
			out = append(out, int(a-s.Addr))
		}
	}
	return out
}
