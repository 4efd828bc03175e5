package tracee

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

func TestStubELF(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(StubELF()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Entry != StubEntry || f.Type != elf.ET_EXEC || f.Machine != elf.EM_X86_64 {
		t.Fatalf("entry 0x%x type %v machine %v", f.Entry, f.Type, f.Machine)
	}
	// The kernel must accept it: run it; it executes `syscall` with rax=0
	// (read from fd 0) then int3, so it dies of SIGTRAP.
	p, err := WriteStub(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p)
	cmd.Stdin = bytes.NewReader(nil)
	err = cmd.Run()
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("trace/breakpoint trap")) {
		t.Fatalf("stub run: %v", err)
	}
}

func TestMapsSelf(t *testing.T) {
	maps, err := Maps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	var sawExe, sawStack bool
	for _, m := range maps {
		if m.End <= m.Start {
			t.Errorf("bad range %x-%x", m.Start, m.End)
		}
		sawExe = sawExe || m.Name == exe && m.Inode != 0
		sawStack = sawStack || m.Name == "[stack]"
	}
	if !sawExe || !sawStack {
		t.Fatalf("exe %v stack %v in %d mappings", sawExe, sawStack, len(maps))
	}
}

func TestFindGap(t *testing.T) {
	a := []Map{{Start: 0x100000, End: 0x200000}}
	b := []Map{{Start: 0x200000, End: 0x201000}, {Start: 0x300000, End: 0x400000}}
	if g := FindGap(0x1000, a, b); g != 0x201000 {
		t.Fatalf("gap 0x%x", g)
	}
	if g := FindGap(0x100000, a, b); g != 0x400000 {
		t.Fatalf("big gap 0x%x", g)
	}
}

func TestMemSelfChild(t *testing.T) {
	// Reading our own memory through the same interfaces as a tracee's.
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	src := []byte("gorr reads tracee memory")
	buf := make([]byte, len(src))
	if err := m.ReadMem(addrOf(src), buf); err != nil || !bytes.Equal(buf, src) {
		t.Fatalf("read %q %v", buf, err)
	}
	if n := m.ReadPartial(0, buf); n != 0 {
		t.Fatalf("read of page 0 returned %d bytes", n)
	}
}

// WriteAll makes every write, adjacent ones merged, whatever their order.
func TestWriteAllSelf(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	defer m.Close()
	buf := make([]byte, 32)
	base := addrOf(buf)
	ws := []trace.MemWrite{
		{Addr: base + 4, Data: []byte{3, 4}},
		{Addr: base + 20, Data: []byte{9}},
		{Addr: base + 2, Data: []byte{1, 2}},
		{Addr: base + 6, Data: []byte{5}},
	}
	if err := m.WriteAll(ws); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 32)
	copy(want[2:], []byte{1, 2, 3, 4, 5})
	want[20] = 9
	if !bytes.Equal(buf, want) {
		t.Fatalf("memory % x, want % x", buf, want)
	}
	if ws[0].Addr != base+4 {
		t.Fatal("WriteAll reordered its argument")
	}
}

// WriteCode merges near writes through one read-modify-write and keeps
// the bytes between them.
func TestWriteCodeSelf(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	defer m.Close()
	buf := make([]byte, 3*4096)
	for i := range buf {
		buf[i] = byte(i)
	}
	want := append([]byte(nil), buf...)
	base := addrOf(buf)
	var ws []trace.MemWrite
	for _, off := range []uint64{100, 7, 2000, 5000, 3*4096 - 1} {
		ws = append(ws, trace.MemWrite{Addr: base + off, Data: []byte{0xcc}})
		want[off] = 0xcc
	}
	if err := m.WriteCode(ws); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, want) {
		t.Fatal("memory differs after WriteCode")
	}
}
