package tracee

import (
	"bytes"
	"debug/elf"
	"fmt"
)

// vdso functions rewritten into plain system calls, so that time and CPU
// queries made through the vDSO reach the recorder.
var vdsoSyscalls = map[string]uint32{
	"clock_gettime": 228,
	"gettimeofday":  96,
	"time":          201,
	"getcpu":        309,
	"clock_getres":  229,
}

// PatchVDSO rewrites the vDSO of an address space whose mapping is m:
// each time function becomes `mov eax, NR; syscall; ret`, and getrandom
// returns -ENOSYS so callers fall back to the getrandom system call. It
// returns the address of one `syscall` instruction inside the vDSO.
func PatchVDSO(mem *Mem, m Map) (uint64, error) {
	img := make([]byte, m.Size())
	if err := mem.ReadMem(m.Start, img); err != nil {
		return 0, fmt.Errorf("read vdso: %w", err)
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return 0, fmt.Errorf("parse vdso: %w", err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return 0, fmt.Errorf("vdso symbols: %w", err)
	}
	var base uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			base = p.Vaddr - p.Off
			break
		}
	}
	var scAddr uint64
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
			continue
		}
		name := s.Name
		if len(name) > 7 && name[:7] == "__vdso_" {
			name = name[7:]
		}
		addr := m.Start + s.Value - base
		var code []byte
		if nr, ok := vdsoSyscalls[name]; ok {
			code = []byte{0xb8, byte(nr), byte(nr >> 8), 0, 0, 0x0f, 0x05, 0xc3}
			scAddr = addr + 5
		} else if name == "getrandom" {
			// mov rax, -38 (ENOSYS); ret
			code = []byte{0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3}
		} else {
			continue
		}
		if s.Size != 0 && s.Size < uint64(len(code)) {
			return 0, fmt.Errorf("vdso function %s is only %d bytes", s.Name, s.Size)
		}
		if err := mem.WriteMem(addr, code); err != nil {
			return 0, fmt.Errorf("patch vdso %s: %w", s.Name, err)
		}
	}
	if scAddr == 0 {
		return 0, fmt.Errorf("vdso has no clock_gettime to patch")
	}
	return scAddr, nil
}
