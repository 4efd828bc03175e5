package tracee

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"
)

// ownVDSO returns this process's vDSO image (read, not patched).
func ownVDSO(t *testing.T) []byte {
	t.Helper()
	maps, err := Maps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, mp := range maps {
		if mp.Name == "[vdso]" {
			img := make([]byte, mp.Size())
			if err := m.ReadMem(mp.Start, img); err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Skip("no vDSO in this process")
	return nil
}

func TestVDSOPlan(t *testing.T) {
	img := ownVDSO(t)
	var p VDSOPatcher
	if err := p.plan(bytes.Clone(img)); err != nil {
		t.Fatal(err)
	}
	patched := p.Patched()
	if len(patched) != len(img) {
		t.Fatalf("patched image of %d bytes, want %d", len(patched), len(img))
	}
	if !bytes.Equal(patched[p.sc:p.sc+2], []byte{0x0f, 0x05}) {
		t.Fatalf("the syscall instruction's offset %#x holds %x", p.sc, patched[p.sc:p.sc+2])
	}
	// Every time function reads `mov $nr, %eax; syscall; ret`, getrandom
	// returns -ENOSYS, and nothing else changed.
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var base uint64
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_LOAD {
			base = ph.Vaddr - ph.Off
			break
		}
	}
	want := bytes.Clone(img)
	seen := 0
	for _, s := range syms {
		name := s.Name
		if len(name) > 7 && name[:7] == "__vdso_" {
			name = name[7:]
		}
		off := s.Value - base
		if nr, ok := vdsoSyscalls[name]; ok && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			code := patched[off : off+8]
			if code[0] != 0xb8 || binary.LittleEndian.Uint32(code[1:]) != nr || !bytes.Equal(code[5:], []byte{0x0f, 0x05, 0xc3}) {
				t.Errorf("%s: %x", s.Name, code)
			}
			copy(want[off:], code)
			seen++
		} else if name == "getrandom" && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			copy(want[off:], []byte{0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3})
		}
	}
	if seen == 0 {
		t.Fatal("no time function in the vDSO")
	}
	if !bytes.Equal(patched, want) {
		t.Fatal("the rewrite changed bytes outside the functions it rewrites")
	}
	if !bytes.Equal(p.img, img) {
		t.Fatal("plan kept another image than it was given")
	}
}

func TestVDSOPlanRejectsGarbage(t *testing.T) {
	var p VDSOPatcher
	if err := p.plan(make([]byte, 8192)); err == nil {
		t.Fatal("a zero image was planned")
	}
	if p.Patched() != nil {
		t.Fatal("a failed plan left a patched image")
	}
}
