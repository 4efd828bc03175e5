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

// The start of the vDSO's clock_gettime that the rewrite overwrites is
// kept, to be run from elsewhere, only when it runs the same there.
func TestDisplacedEntry(t *testing.T) {
	prologue := []byte{
		0x55,             // push %rbp
		0x48, 0x89, 0xe5, // mov %rsp,%rbp
		0x41, 0x56, // push %r14
		0x53,                   // push %rbx
		0x48, 0x83, 0xe4, 0xf0, // and $-16,%rsp
	}
	tail := []byte{0x31, 0xc0, 0xc3} // xor %eax,%eax; ret
	for _, c := range []struct {
		name string
		fn   []byte
		want int // bytes displaced; 0: not displaceable
	}{
		{"prologue", append(bytes.Clone(prologue), tail...), 11},
		// lea 0x10(%rip),%rax within the first 8 bytes.
		{"rip-relative", append([]byte{0x55, 0x48, 0x8d, 0x05, 0x10, 0, 0, 0, 0x53}, tail...), 0},
		// jne back to offset 4, inside the displaced bytes.
		{"branch into it", append(append(bytes.Clone(prologue), 0x75, 0xf7), tail...), 0},
		// a branch as the first instruction.
		{"branch", append([]byte{0xeb, 0x00}, append(bytes.Clone(prologue), tail...)...), 0},
	} {
		got := displacedEntry(c.fn, 8)
		if c.want == 0 && got != nil || c.want != 0 && !bytes.Equal(got, c.fn[:c.want]) {
			t.Errorf("%s: displaced % x, want %d bytes", c.name, got, c.want)
		}
	}
	// This machine's vDSO: what the recorder will use (reported only:
	// kernels differ).
	var p VDSOPatcher
	if err := p.plan(ownVDSO(t)); err != nil {
		t.Fatal(err)
	}
	c := p.Clock()
	t.Logf("clock_gettime at %#x (%d bytes): displaced % x", c.Off, c.Size, c.Displaced)
	if c.Displaced != nil && len(c.Displaced) < 8 {
		t.Fatalf("only %d bytes displaced", len(c.Displaced))
	}
}
