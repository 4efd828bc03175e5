package tracee

import (
	"bytes"
	"debug/elf"
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/x86decode"
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
	var p VDSOPatcher
	return p.Patch(mem, m)
}

// VDSOPatcher does what PatchVDSO does, working the rewrite out once per
// vDSO image: every process of a kernel maps the same one, so a recorder
// that keeps a VDSOPatcher parses the ELF image once, and then only reads
// each new process's vDSO to compare it and writes the rewrite.
type VDSOPatcher struct {
	img     []byte // the image the rewrite was worked out for
	patched []byte // img rewritten
	writes  []vdsoWrite
	sc      uint64 // offset in the image of a syscall instruction
	clock   VDSOClock
}

// VDSOClock is where the rewrite leaves the vDSO's own clock_gettime
// callable: the function lies at Off (Size bytes) in the image, and its
// instructions Displaced, which the rewrite overwrote, run as well from
// anywhere (no branch, nothing relative to rip, no branch of the
// function lands inside them), the rest of the function following them
// at Off+len(Displaced). Displaced is nil when that is not so.
type VDSOClock struct {
	Off, Size uint64
	Displaced []byte
}

// vdsoWrite is code written at an offset into the vDSO image.
type vdsoWrite struct {
	off  uint64
	code []byte
}

// Patch rewrites the vDSO mapped at m in mem's address space as
// PatchVDSO does and returns the address of a syscall instruction in it.
func (p *VDSOPatcher) Patch(mem *Mem, m Map) (uint64, error) {
	img := make([]byte, m.Size())
	if err := mem.ReadMem(m.Start, img); err != nil {
		return 0, fmt.Errorf("read vdso: %w", err)
	}
	if p.img == nil || !bytes.Equal(img, p.img) {
		if err := p.plan(img); err != nil {
			return 0, err
		}
	}
	ws := make([]trace.MemWrite, len(p.writes))
	for i, w := range p.writes {
		ws[i] = trace.MemWrite{Addr: m.Start + w.off, Data: w.code}
	}
	if err := mem.WriteCode(ws); err != nil {
		return 0, fmt.Errorf("patch vdso: %w", err)
	}
	return m.Start + p.sc, nil
}

// Clock returns where the last vDSO Patch rewrote keeps its own
// clock_gettime (Displaced nil: not callable).
func (p *VDSOPatcher) Clock() VDSOClock { return p.clock }

// Patched returns the rewritten image of the last vDSO Patch rewrote
// (what that process's vDSO holds until something else writes it), nil
// before any. The caller must not modify it.
func (p *VDSOPatcher) Patched() []byte { return p.patched }

// plan works out the rewrite of img.
func (p *VDSOPatcher) plan(img []byte) error {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return fmt.Errorf("parse vdso: %w", err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("vdso symbols: %w", err)
	}
	var base uint64
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_LOAD {
			base = ph.Vaddr - ph.Off
			break
		}
	}
	var writes []vdsoWrite
	var clock VDSOClock
	sc, found := uint64(0), false
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
			continue
		}
		name := s.Name
		if len(name) > 7 && name[:7] == "__vdso_" {
			name = name[7:]
		}
		off := s.Value - base
		var code []byte
		if nr, ok := vdsoSyscalls[name]; ok {
			code = []byte{0xb8, byte(nr), byte(nr >> 8), 0, 0, 0x0f, 0x05, 0xc3}
			sc, found = off+5, true
			if name == "clock_gettime" && off+s.Size <= uint64(len(img)) {
				clock = VDSOClock{Off: off, Size: s.Size, Displaced: displacedEntry(img[off:off+s.Size], len(code))}
			}
		} else if name == "getrandom" {
			// mov rax, -38 (ENOSYS); ret
			code = []byte{0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3}
		} else {
			continue
		}
		if s.Size != 0 && s.Size < uint64(len(code)) {
			return fmt.Errorf("vdso function %s is only %d bytes", s.Name, s.Size)
		}
		if off+uint64(len(code)) > uint64(len(img)) {
			return fmt.Errorf("vdso function %s lies outside the vdso", s.Name)
		}
		writes = append(writes, vdsoWrite{off: off, code: code})
	}
	if !found {
		return fmt.Errorf("vdso has no clock_gettime to patch")
	}
	patched := bytes.Clone(img)
	for _, w := range writes {
		copy(patched[w.off:], w.code)
	}
	p.img, p.patched, p.writes, p.sc, p.clock = img, patched, writes, sc, clock
	return nil
}

// displacedEntry returns the instructions at the start of fn that cover
// its first n bytes, if they run the same from anywhere: none is a
// branch or addresses memory relative to rip, and no branch of fn (a
// decoded, linear function) lands inside them. Otherwise nil.
func displacedEntry(fn []byte, n int) []byte {
	end := 0
	for end < n {
		inst, err := x86decode.Decode(fn[end:])
		if err != nil || inst.Len == 0 || !relocatable(inst) {
			return nil
		}
		end += inst.Len
	}
	for pc := 0; pc < len(fn); {
		inst, err := x86decode.Decode(fn[pc:])
		if err != nil || inst.Len == 0 {
			return nil
		}
		for _, a := range inst.Args {
			if rel, ok := a.(x86asm.Rel); ok {
				if to := pc + inst.Len + int(rel); to > 0 && to < end {
					return nil
				}
			}
		}
		pc += inst.Len
	}
	return bytes.Clone(fn[:end])
}

// relocatable tells whether inst does the same wherever it is: no
// control transfer, no operand relative to rip.
func relocatable(inst x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.JMP, x86asm.CALL, x86asm.RET, x86asm.LRET, x86asm.JRCXZ, x86asm.JECXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE,
		x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE, x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE,
		x86asm.JO, x86asm.JNO, x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS, x86asm.SYSCALL, x86asm.INT, x86asm.UD2:
		return false
	}
	for _, a := range inst.Args {
		switch a := a.(type) {
		case x86asm.Rel:
			return false
		case x86asm.Mem:
			if a.Base == x86asm.RIP {
				return false
			}
		}
	}
	return true
}
